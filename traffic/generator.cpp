#include "traffic/generator.h"

#include "config/config.h"
#include "traffic/pcap_replay.h"
#include "traffic/pktgen.h"

namespace fecsim::traffic {

namespace {
constexpr uint16_t ethertype_mac_control = 0x8808;
constexpr uint16_t opcode_pause = 0x0001;
constexpr double pause_quantum_bits = 512;
}  // namespace

bool pause_state::handle(const net::frame& f, double speed_mbps) {
    if (f.size() < 18) return false;
    const uint8_t* d = f.data();
    if ((d[12] << 8 | d[13]) != ethertype_mac_control || (d[14] << 8 | d[15]) != opcode_pause) return false;
    ++received;
    if (flow_control_) {
        const unsigned quanta = unsigned(d[16] << 8 | d[17]);
        until_ = sc_core::sc_time_stamp() + sc_core::sc_time(quanta * pause_quantum_bits * 1e3 / speed_mbps, sc_core::SC_NS);
    }
    return true;
}

std::unique_ptr<generator> make_generator(const char* name, const config& cfg, bool flow_control) {
    const std::string& kind = cfg.view("generator").string("kind");
    if (kind == "pktgen") return std::make_unique<pktgen>(name, pktgen_model_params_from(cfg, flow_control));
    if (kind == "pcap") return std::make_unique<pcap_replay>(name, pcap_replay_params_from(cfg, flow_control));
    throw cfg.error_at("/generator/kind", "\"" + kind + "\": not implemented yet (the TCP bulk sender is planned)");
}

}  // namespace fecsim::traffic
