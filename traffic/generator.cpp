#include "traffic/generator.h"

#include "config/config.h"
#include "traffic/pcap_replay.h"
#include "traffic/pktgen.h"
#include "traffic/tcp_sender.h"

namespace fecsim::traffic {

bool pause_state::handle(const net::frame& f, double speed_mbps) {
    const int quanta = net::pause_quanta(f);
    if (quanta < 0) return false;
    ++received_;
    if (flow_control_) timer_.start(sc_core::sc_time_stamp(), net::pause_duration(uint16_t(quanta), speed_mbps));
    return true;
}

void pause_state::reset_window() {
    received_ = 0;
    timer_.reset_window(sc_core::sc_time_stamp());
}

void pause_state::report(nlohmann::json& j) const {
    j["pause_frames_received"] = received_;
    if (flow_control_) j["tx_paused_s"] = timer_.paused_time(sc_core::sc_time_stamp()).to_seconds();
}

std::unique_ptr<generator> make_generator(const char* name, const config& cfg, bool flow_control) {
    const std::string& kind = cfg.view("generator").string("kind");
    if (kind == "pktgen") return std::make_unique<pktgen>(name, pktgen_model_params_from(cfg, flow_control));
    if (kind == "pcap") return std::make_unique<pcap_replay>(name, pcap_replay_params_from(cfg, flow_control));
    return std::make_unique<tcp_sender>(name, tcp_sender_params_from(cfg, flow_control));
}

}  // namespace fecsim::traffic
