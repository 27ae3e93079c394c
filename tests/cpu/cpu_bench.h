// Bench for the CPU model tests: a core against router + DDR, a register-like device, and a
// fake DMA master whose accesses pass through a coherency_tap.
#pragma once

#include "models/cpu/coherency.h"
#include "models/cpu/coherency_tap.h"
#include "models/cpu/core.h"
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/sim_context.h"
#include "tests/support/test_ddr.h"
#include "tests/support/tlm_initiator.h"

#include <systemc>
#include <tlm_utils/simple_target_socket.h>

#include <vector>

namespace fecsim::test {

using sc_core::sc_time;
using sc_core::SC_NS;

constexpr uint64_t dram_base = 0x40000000, nc_base = 0x43000000, regs_base = 0x30be0000;
constexpr double fabric_ns = 20, regs_fabric_ns = 150, reg_latency_ns = 10;
// Posted-write acknowledgements (Normal-NC, Device): distinct from every arrival latency above.
constexpr double nc_write_ack_ns = 36, regs_write_ack_ns = 30;

// Records when (SystemC time + annotated delay) each register access arrives.
struct reg_device : sc_core::sc_module {
    tlm_utils::simple_target_socket<reg_device> socket{"socket"};
    struct access {
        bool write;
        uint64_t addr;
        uint32_t value;
        sc_time at;
    };
    std::vector<access> log;
    uint32_t read_value = 0x1234;
    explicit reg_device(sc_core::sc_module_name n) : sc_module(n) {
        socket.register_b_transport(this, &reg_device::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        uint32_t v = 0;
        if (gp.is_write()) std::memcpy(&v, gp.get_data_ptr(), std::min<size_t>(4, gp.get_data_length()));
        else std::memcpy(gp.get_data_ptr(), &read_value, std::min<size_t>(4, gp.get_data_length()));
        log.push_back({gp.is_write(), gp.get_address(), v, sc_core::sc_time_stamp() + d});
        d += sc_time(reg_latency_ns, SC_NS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

// A53-like parameters with round numbers (1 GHz: one cycle = 1 ns).
inline cpu::core_params test_params() {
    cpu::core_params p;
    p.clock_mhz = 1000;
    p.cpi = 1.5;
    p.quantum_ns = 1000;
    p.line_bytes = 64;
    p.l1d = {32 * 1024, 4, 3, cpu::replacement::lru};
    p.l2 = {512 * 1024, 16, 16, cpu::replacement::lru};
    p.miss_overlap = 1;
    p.evict_writeback_cycles = 4;
    p.write_buffer_entries = 4;
    p.posted_write_cycles = 2;
    p.dmb_cycles = 8;
    p.dsb_cycles = 20;
    p.maint_absent_cycles = 10;
    p.maint_clean_cycles = 12;
    p.maint_dirty_cycles = 16;
    p.irq_lines = 4;
    p.irq_entry_cycles = 600;
    p.irq_exit_cycles = 300;
    return p;
}

struct cpu_bench {
    mem::ddr dram{"dram", test_ddr()};
    mem::router bus{"bus"};
    reg_device dev{"dev"};
    cpu::coherency_checker checker;
    cpu::core core;
    cpu::coherency_tap tap{"tap", checker, bus};
    tlm_initiator dma{"dma"};
    sc_core::sc_signal<bool> irq_sig[2];

    explicit cpu_bench(const cpu::core_params& p = test_params(), cpu::coherency_params cp = {})
        : checker(cp), core("core0", 0, p, bus) {
        dma.socket.bind(tap.in);
        bus.connect("ddr", dram.socket);
        bus.connect("dev", dev.socket);
        bus.add_region({"dram", dram_base, 48 << 20, mem::mem_attr::normal_cacheable, "ddr", 0, fabric_ns});
        bus.add_region({"coherent", nc_base, 16 << 20, mem::mem_attr::normal_noncacheable, "ddr", 48 << 20, fabric_ns, nc_write_ack_ns});
        bus.add_region({"regs", regs_base, 0x4000, mem::mem_attr::device, "dev", 0, regs_fabric_ns, regs_write_ack_ns});
        core.irq[0].bind(irq_sig[0]);
        core.irq[1].bind(irq_sig[1]);
        checker.attach(core);
    }

    // Device (DMA) accesses through the tap, from whichever process calls them.
    void dma_write(uint64_t a, const void* src, size_t len) { dma.write(a, src, len); }
    void dma_read(uint64_t a, void* dst, size_t len) { dma.read(a, dst, len); }

    sc_time cycles(double n) const { return core.cycles(n); }
    static sc_time ns(double n) { return sc_time(n, SC_NS); }
    // Round trip of one 64-byte line read from DDR through the bus (idle bus).
    static sc_time line_read_ns() { return ns(fabric_ns + 90 + 4); }
    static sc_time line_write_ns() { return ns(fabric_ns + 20 + 4); }
    static sc_time nc_write_ack() { return ns(nc_write_ack_ns); }
};

}  // namespace fecsim::test
