// The firmware entry point: a Linux system (kernel services + fec driver instances + an XDP
// program + the stack model) that runs on one simulated core. The platform constructs it
// before simulation starts (parameters and the costs file are validated there) and calls
// run() from the core's thread: boot (probe + open every FEC), then the idle loop
// wait_for_irq -> hard IRQ handler -> irq_return -> softirq (NAPI) -> user tasks, forever.
// With a pktgen device (a board peer) the pktgen kthread runs whenever no interrupt is pending;
// an interrupt taken between two pktgen_xmit calls runs its softirq first, as in Linux (the
// kthread keeps bottom halves off only while it holds the xmit lock).
#pragma once

#include "firmware/fec/fec_main.h"
#include "firmware/kernel/pktgen.h"
#include "firmware/xdp/programs.h"
#include "config/config.h"

#include <nlohmann/json.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fecsim::firmware {

struct fec_instance {
    fec_hw_params hw;      // register base, quirks, queues, coalescing, MAC, link, dma_coherent
    std::vector<int> irqs; // interrupt lines ("int0".."int2"); all go to fec_enet_interrupt
};

struct system_params {
    kernel_memory mem;                          // cacheable DRAM for pages + the coherent pool
    arch_flavour arch = arch_flavour::arm64;    // DMA ops / barrier flavour
    std::vector<fec_instance> fecs;             // eth0, eth1, ...
    driver_params driver;
    std::string xdp_prog = "xdp2";
    int xdp_redirect_ifindex = 0;               // 0: back out of the receiving port
    netstack_params stack;
    std::string costs_file;                     // resolved path of configs/costs/<name>.json
    std::optional<pktgen_dev_params> pktgen;    // a pktgen kthread sending on eth0

    // Reads the `driver` section (schema configs/schema/driver.json) into driver/xdp/stack/
    // costs_file; costs names resolve against `config_dir`/costs/.
    void apply_driver_config(const config_view& driver, const std::string& config_dir = config::default_config_dir());
};

// Reads fec.system_clock_mhz (clk_ahb), fec.mdio_clock_mhz (clk_ipg), fec.descriptor_format
// and fec.{rx,tx}_coalesce.{frames,usecs} when present.
void apply_fec_config(fec_hw_params& hw, const config_view& fec);

class linux_system {
public:
    // Validates the parameters and loads the costs file (config_error / std::invalid_argument
    // on bad input). Does not touch the core: everything timed happens in run().
    // `timer`: the core's clockevent device (the generic timer), which kernel timers (TCP's
    // delayed ACK) need to wake the core; without it they run only when the core is up anyway.
    linux_system(cpu::core_api& core, const system_params& p, cpu::timer_api* timer = nullptr);
    ~linux_system();

    void run();                // boot(), then the idle loop; never returns
    void boot();               // probe + open every FEC, enable its IRQ lines
    void handle_irq(int line); // one interrupt and the softirq/user work it triggers

    void reset_stats();
    // dut.xdp.*, dut.netdev.*, dut.page_pool.*, dut.driver.*, dut.stack.*, dut.packets.
    void report(nlohmann::json& out) const;
    // Frames the driver took off its RX rings (good + errored): the ns_per_packet denominator.
    uint64_t packets() const;
    // Per-protocol counters of xdp1/xdp2 (nullptr for other programs): the live output.
    const std::array<uint64_t, 256>* xdp_proto_counts() const;

    fec_enet_private& fec(size_t i) { return *fecs_.at(i); }
    kernel& kern() { return *kernel_; }
    netstack& stack() { return *stack_; }
    skb_allocator& skbs() { return *skbs_; }
    const cost_table& costs() const { return costs_; }
    bool booted() const { return booted_; }
    const pktgen_thread* pktgen() const { return pktgen_.get(); }

private:
    cpu::core_api& core_;
    cpu::timer_api* timer_;
    system_params p_;
    cost_table costs_;
    std::unique_ptr<kernel> kernel_;
    std::unique_ptr<netdev_registry> devs_;
    std::unique_ptr<xdp_core> xdp_;
    std::unique_ptr<skb_allocator> skbs_;
    std::unique_ptr<softnet> softnet_;
    std::unique_ptr<timer_base> timers_;
    std::unique_ptr<netstack> stack_;
    std::unique_ptr<bpf_prog> prog_;
    std::vector<std::unique_ptr<fec_enet_private>> fecs_;
    std::unique_ptr<pktgen_thread> pktgen_;
    std::vector<int> irq_owner_;  // line -> fec index (-1 none)
    bool booted_ = false;
    uint64_t spurious_irqs_ = 0;
};

}  // namespace fecsim::firmware
