// SoC assembly: builds the boards and the network a configuration describes:
//
//   generator ── link ── [switch ── link] ── DUT board (platform/board.h: FEC, core0, DDR,
//                                             the driver port core 0 runs)
//
// The generator is a traffic model (traffic/), the wire bridge, or a second board
// (generator.kind=board, platform/board_peer.h).
#pragma once

#include "models/net/eth_switch.h"
#include "models/net/link.h"
#include "config/config.h"
#include "platform/board.h"
#include "platform/trace.h"
#include "traffic/generator.h"
#include "traffic/host_bridge.h"
#include "traffic/pcap_writer.h"

#include <nlohmann/json.hpp>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace fecsim {

class board_peer;

struct soc_options {
    std::string pcap_path;     // capture of the DUT's wire (both directions), empty = none
    std::string trace_path;    // timeline of the measurement window, empty = none
    bool pcap_warmup = false;  // capture the warm-up too, not only the measurement window
};

class soc {
public:
    // Elaborates the models of `cfg` in the current SystemC context. Assembly problems that
    // the schema cannot see (overlapping regions, ...) are reported as config_error.
    soc(const config& cfg, const soc_options& opt = {});
    ~soc();

    // Zeroes every statistic, so reports cover only the time after this call.
    void reset_stats();
    // Model statistics for a measurement window of `window_s` simulated seconds.
    nlohmann::json report(double window_s) const;
    // After every sc_start: turns a stop inside the simulation back into its own exception (a
    // strict coherency stop, a firmware failure; memory too small to boot becomes a
    // config_error naming the region), so the command line can map it to its exit status.
    void check() const;
    // After the last sc_start: flushes the capture, closes the trace (throwing if a write
    // failed), then check().
    void finish();
    bool firmware_booted() const { return dut_->firmware_booted(); }
    // Descriptors in use per ring of eth0 as they stand: RX filled by the FEC and not yet taken
    // by NAPI, TX queued by the driver and not yet cleaned ({"rx": [..], "tx": [..], sizes}).
    nlohmann::json ring_occupancy() const;
    // The live output of the tool the experiment models, for the last `interval_s` seconds.
    std::vector<std::string> live_lines(double interval_s);

    board& dut() { return *dut_; }
    mem::ddr& ddr() { return dut_->ddr(); }
    mem::router& bus() { return dut_->bus(); }
    fec::enet& fec0() { return dut_->fec0(); }
    cpu::core& core0() { return dut_->core0(); }
    cpu::coherency_checker& checker() { return dut_->checker(); }
    traffic::generator& generator() { return *generator_; }
    // The wire bridge (bridge.tap / bridge.udp) in the generator's place or on a switch port, or null.
    traffic::host_bridge* bridge() { return bridge_; }

private:
    void build_network(const config& cfg, const soc_options& opt);
    void build_lookahead(const config& cfg);

    std::unique_ptr<trace_writer> trace_;
    std::unique_ptr<board> dut_;
    std::string xdp_prog_;

    std::unique_ptr<traffic::generator> generator_;
    board_peer* peer_ = nullptr;                            // generator_ when it is a board
    traffic::host_bridge* bridge_ = nullptr;                // generator_, or bridge_owned_ on a switch port
    std::unique_ptr<traffic::host_bridge> bridge_owned_;    // bridge.port switch
    std::vector<std::unique_ptr<net::link>> links_;  // [0] is the DUT's own link
    std::unique_ptr<net::eth_switch> switch_;
    std::unique_ptr<traffic::pcap_writer> capture_;
    bool capturing_ = false;  // the capture is on (from reset_stats(), or from the start with pcap_warmup)

    // Cumulative counters at the previous live_lines() call.
    std::array<uint64_t, 256> last_proto_{};
    uint64_t last_runs_ = 0, last_errors_ = 0, last_tx_ = 0;
};

}  // namespace fecsim
