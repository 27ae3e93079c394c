// One board assembled from a platform profile: DDR + router, core 0 + coherency checker, the
// FEC behind a coherency tap on its DMA port, and the Linux system core 0 runs (the fec driver
// port, and on a board peer the pktgen kthread). The DUT is a board; with generator.kind=board
// the traffic peer is another, assembled by the same code from generator.platform.
//
//   FEC ── router ── DDR
//    │ irq   │
//    └──── core0 (+ coherency checker, tap on FEC DMA) runs firmware::linux_system
#pragma once

#include "models/activity.h"
#include "models/cpu/coherency.h"
#include "models/cpu/coherency_tap.h"
#include "models/cpu/arch_timer.h"
#include "models/cpu/core.h"
#include "models/fec/enet.h"
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "firmware/system.h"
#include "config/config.h"
#include "platform/trace.h"

#include <nlohmann/json.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fecsim {

// What a board runs besides the driver: the peer's pktgen and its own IPv4 address.
struct board_software {
    std::optional<firmware::pktgen_dev_params> pktgen;
    uint32_t local_ipv4 = 0;        // 0: the stack takes every IPv4 destination as local (the DUT)
    trace_writer* trace = nullptr;  // --trace: the firmware's function spans
};

class board {
public:
    // Elaborates the models of `cfg` in the current SystemC context, their names prefixed with
    // `prefix` ("" for the DUT). Assembly problems are config_error naming cfg's JSON pointer.
    board(const config& cfg, const std::string& prefix, const board_software& sw = {});
    ~board();

    void reset_stats();
    // mem.*, cpu.core0.*, coherency.*, and the FEC's and driver's statistics under "dut"
    // (the DUT's layout; the platform moves a peer's under "generator").
    void report(nlohmann::json& j, double window_s) const;
    // After every sc_start: a stop inside the simulation as its own exception (see soc::check).
    void check() const;

    bool firmware_booted() const { return system_->booted(); }
    nlohmann::json ring_occupancy() const;

    mem::ddr& ddr() { return *ddr_; }
    mem::router& bus() { return *bus_; }
    fec::enet& fec0() { return *fec_; }
    const fec::enet& fec0() const { return *fec_; }
    cpu::core& core0() { return *core_; }
    cpu::coherency_checker& checker() { return *checker_; }
    firmware::linux_system& system() { return *system_; }
    // The board's pending timed activity (its core, timer and FEC; the platform adds the link
    // deliveries into its MAC): other boards' cores look ahead of it (models/activity.h).
    activity& record() { return activity_; }
    const firmware::linux_system& system() const { return *system_; }

private:
    void build_memory(const config& cfg);
    void build_host(const config& cfg);
    void build_device(const config& cfg);
    void build_address_map(const config& cfg);
    void place_page_tables(const config& cfg);
    static constexpr const char* page_tables_region = "page_tables";
    void build_firmware(const config& cfg, const board_software& sw);
    config_error memory_error(const firmware::memory_exhausted& e) const;
    std::string name(const char* n) const { return prefix_ + n; }

    std::string prefix_;
    activity activity_;  // before every model that notes into it
    std::unique_ptr<mem::ddr> ddr_;
    std::unique_ptr<mem::router> bus_;
    std::vector<mem::region> regions_;  // mem.regions in configuration order
    mem::ddr_stats ddr_base_;

    std::unique_ptr<cpu::coherency_checker> checker_;
    std::unique_ptr<cpu::core> core_;
    std::unique_ptr<cpu::arch_timer> timer_;  // core 0's generic timer, on the core's last input
    std::unique_ptr<sc_core::sc_signal<bool>> timer_irq_;

    std::unique_ptr<fec::enet> fec_;
    std::unique_ptr<cpu::coherency_tap> dma_tap_;
    std::vector<std::unique_ptr<sc_core::sc_signal<bool>>> irq_wires_;

    const config* cfg_ = nullptr;  // for errors found while running
    std::unique_ptr<tracing_core> traced_core_;  // what the firmware talks to under --trace
    std::unique_ptr<firmware::linux_system> system_;
    std::exception_ptr firmware_failure_;         // what stopped the firmware, if anything
    std::string dram_region_, coherent_region_;   // JSON pointers of the kernel's memory
};

}  // namespace fecsim
