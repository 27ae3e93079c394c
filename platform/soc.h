// SoC assembly: builds the models a configuration describes and wires them together:
//
//   generator ── link ── [switch ── link] ── FEC ── router ── DDR
//                                             │ irq    │
//                                             └──── core0 (+ coherency checker, tap on FEC DMA)
//                                                   runs firmware::linux_system (driver port)
#pragma once

#include "models/cpu/coherency.h"
#include "models/cpu/coherency_tap.h"
#include "models/cpu/arch_timer.h"
#include "models/cpu/core.h"
#include "models/fec/enet.h"
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/net/eth_switch.h"
#include "models/net/link.h"
#include "firmware/system.h"
#include "config/config.h"
#include "platform/trace.h"
#include "traffic/generator.h"
#include "traffic/host_bridge.h"
#include "traffic/pcap_writer.h"

#include <nlohmann/json.hpp>

#include <array>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace fecsim {

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
    bool firmware_booted() const { return system_->booted(); }
    // Descriptors in use per ring of eth0 as they stand: RX filled by the FEC and not yet taken
    // by NAPI, TX queued by the driver and not yet cleaned ({"rx": [..], "tx": [..], sizes}).
    nlohmann::json ring_occupancy() const;
    // The live output of the tool the experiment models, for the last `interval_s` seconds.
    std::vector<std::string> live_lines(double interval_s);

    mem::ddr& ddr() { return *ddr_; }
    mem::router& bus() { return *bus_; }
    fec::enet& fec0() { return *fec_; }
    cpu::core& core0() { return *core_; }
    cpu::coherency_checker& checker() { return *checker_; }
    traffic::generator& generator() { return *generator_; }
    // The wire bridge (bridge.tap / bridge.udp) in the generator's place or on a switch port, or null.
    traffic::host_bridge* bridge() { return bridge_; }

private:
    void build_memory(const config& cfg);
    void build_host(const config& cfg);
    void build_device(const config& cfg);
    void build_address_map(const config& cfg);
    void build_network(const config& cfg, const soc_options& opt);
    void build_firmware(const config& cfg);
    config_error memory_error(const firmware::memory_exhausted& e) const;

    std::unique_ptr<mem::ddr> ddr_;
    std::unique_ptr<mem::router> bus_;
    std::vector<mem::region> regions_;  // mem.regions in configuration order
    mem::ddr_stats ddr_base_;

    std::unique_ptr<cpu::coherency_checker> checker_;
    std::unique_ptr<cpu::core> core_;
    std::unique_ptr<cpu::arch_timer> timer_;  // core 0's generic timer, on the core's last input
    sc_core::sc_signal<bool> timer_irq_{"timer0_irq"};

    std::unique_ptr<fec::enet> fec_;
    std::unique_ptr<cpu::coherency_tap> dma_tap_;
    std::vector<std::unique_ptr<sc_core::sc_signal<bool>>> irq_wires_;

    const config* cfg_ = nullptr;  // for errors found while running

    std::unique_ptr<traffic::generator> generator_;
    traffic::host_bridge* bridge_ = nullptr;                // generator_, or bridge_owned_ on a switch port
    std::unique_ptr<traffic::host_bridge> bridge_owned_;    // bridge.port switch
    std::vector<std::unique_ptr<net::link>> links_;  // [0] is the DUT's own link
    std::unique_ptr<net::eth_switch> switch_;
    std::unique_ptr<traffic::pcap_writer> capture_;
    bool capturing_ = false;  // the capture is on (from reset_stats(), or from the start with pcap_warmup)
    std::unique_ptr<trace_writer> trace_;
    std::unique_ptr<tracing_core> traced_core_;  // what the firmware talks to under --trace

    std::unique_ptr<firmware::linux_system> system_;
    std::exception_ptr firmware_failure_;             // what stopped the firmware, if anything
    std::string dram_region_, coherent_region_;       // JSON pointers of the kernel's memory
    std::string xdp_prog_;
    // Cumulative counters at the previous live_lines() call.
    std::array<uint64_t, 256> last_proto_{};
    uint64_t last_runs_ = 0, last_errors_ = 0, last_tx_ = 0;
};

}  // namespace fecsim
