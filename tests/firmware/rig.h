// Bench for firmware tests: the fake core (a test double, see fake_core.h) with a DRAM window,
// a coherent pool and an FEC register block; a linux_system on top; and a hand-played FEC that
// fills RX descriptors with real frames and "transmits" ready TX descriptors.
#pragma once

#include <systemc>

#include "firmware/system.h"
#include "models/sim_context.h"
#include "tests/firmware/fake_core.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <exception>
#include <fstream>
#include <functional>

namespace fecsim::test {

using namespace fecsim::firmware;
using namespace fecsim::firmware::fec;

constexpr addr_t DRAM = 0x40000000, DRAM_SIZE = 16u << 20;
constexpr addr_t POOL = 0x7c000000, POOL_SIZE = 1u << 20;
// DRAM above 4 GiB (a second zone, beyond the FEC's 32-bit DMA mask) and a small swiotlb pool
// (swiotlb=2048: 4 MiB) that fits the low window
constexpr addr_t HIGH_DRAM = 0x880000000, HIGH_DRAM_SIZE = 16u << 20;
constexpr uint64_t SMALL_SWIOTLB = 4u << 20;
constexpr addr_t REGS = 0x30be0000, REGS_SIZE = 0x10000;
constexpr int IRQ = 120;
constexpr int TIMER_IRQ = 121;

// The core's generic timer as the firmware programs it; tests fire it by hand (timer_irq()).
struct fake_timer : cpu::timer_api {
    bool armed = false;
    sc_core::sc_time at;
    void set_next_event(sc_core::sc_time t) override { armed = true, at = t; }
    void shutdown() override { armed = false; }
    int irq_line() const override { return TIMER_IRQ; }
};

// Runs `body` on a SystemC thread, as the platform runs firmware on the core's thread.
inline void on_core_thread(const std::function<void()>& body) {
    fecsim::fresh_simulation();
    std::exception_ptr err;
    sc_core::sc_spawn([&] {
        try {
            body();
        } catch (...) {
            err = std::current_exception();
        }
    }, "core0");
    sc_core::sc_start();
    if (err) std::rethrow_exception(err);
}

inline std::string costs_path() { return std::string(FECSIM_SOURCE_CONFIG_DIR) + "/costs/linux-6.6.json"; }

// The cost table with `key` 1000 instructions dearer, as a file the rig loads.
inline std::string costs_with_dearer(const std::string& key) {
    std::ifstream in(costs_path());
    nlohmann::json t = nlohmann::json::parse(in);
    t["paths"][key]["instructions"] = t["paths"][key]["instructions"].get<uint64_t>() + 1000;
    const std::string file = testing::TempDir() + "costs-dearer-" + key + ".json";
    std::ofstream(file) << t.dump();
    return file;
}

// The bench's DRAM window and coherent pool, with `dram_size` bytes of DRAM.
inline kernel_memory test_memory(uint64_t dram_size = DRAM_SIZE) {
    kernel_memory m;
    m.dram = {{DRAM, dram_size}};
    m.coherent_base = POOL, m.coherent_size = POOL_SIZE;
    return m;
}

inline system_params default_params() {
    system_params p;
    p.mem = test_memory();
    fec_instance f;
    f.hw.regs = REGS;
    fec_quirks_for("fsl,imx8mq-fec", &f.hw.quirks);
    f.irqs = {IRQ};
    p.fecs.push_back(f);
    p.costs_file = costs_path();
    return p;
}

// A 64-byte (60 + FCS) IPv4 frame with protocol `proto` (17 = UDP), as pktgen builds it.
inline std::vector<uint8_t> make_frame(size_t len = 60, uint8_t proto = 17) {
    std::vector<uint8_t> f(len, 0);
    const uint8_t dst[6] = {0x00, 0x04, 0x9f, 0x00, 0x00, 0x01}, src[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    std::memcpy(f.data(), dst, 6);
    std::memcpy(f.data() + 6, src, 6);
    f[12] = 0x08, f[13] = 0x00;
    f[14] = 0x45;
    const uint16_t tot = uint16_t(len - 14);
    f[16] = uint8_t(tot >> 8), f[17] = uint8_t(tot);
    f[22] = 64, f[23] = proto;
    f[26] = 10, f[29] = 1, f[30] = 10, f[33] = 2;
    f[34] = 0, f[35] = 9, f[36] = 0, f[37] = 9;
    for (size_t i = 42; i < len; ++i) f[i] = uint8_t(i);
    return f;
}

struct rig {
    fake_core core;
    fake_timer timer;
    system_params p;
    std::unique_ptr<linux_system> sys;
    uint32_t rx_idx = 0, tx_idx = 0;
    std::function<void(addr_t, uint32_t)> user_hook;  // sees every MMIO write

    explicit rig(const std::function<void(system_params&)>& customize = {}, uint32_t line = 64, bool outer = false)
        : core(line, outer), p(default_params()) {
        core.add_region(POOL, POOL_SIZE, fake_core::attr::noncacheable);
        core.add_region(REGS, REGS_SIZE, fake_core::attr::device);
        core.set_w1c(REGS + FEC_IEVENT);
        // TDAR stays set while the (hand-played) transmitter has work, as the FEC does.
        core.on_mmio_write = [this](addr_t a, uint32_t v) {
            if (a == REGS + FEC_X_DES_ACTIVE_0) core.reg(a) = 1u << 24;
            if (user_hook) user_hook(a, v);
        };
        if (customize) customize(p);
        for (const auto& r : p.mem.dram) core.add_region(r.base, r.size, fake_core::attr::cacheable);
        sys = std::make_unique<linux_system>(core, p, &timer);
    }

    void boot() { sys->boot(); }
    fec_enet_private& fec() { return sys->fec(0); }
    uint32_t dsize() { return (core.reg(REGS + FEC_ECNTRL) & FEC_ECR_EN1588) ? 32 : 8; }
    addr_t rx_bd(uint32_t i) { return core.reg(REGS + FEC_R_DES_START(0)) + i * dsize(); }
    addr_t tx_bd(uint32_t i) { return core.reg(REGS + FEC_X_DES_START(0)) + i * dsize(); }

    // The FEC receives `frame` (no FCS): SHIFT16 pad + frame + FCS into the next empty BD.
    bool deliver(const std::vector<uint8_t>& frame) {
        const addr_t bd = rx_bd(rx_idx);
        const uint16_t sc = core.h16(bd + BD_SC);
        if (!(sc & BD_ENET_RX_EMPTY)) return false;
        const addr_t buf = core.h32(bd + BD_BUFADDR);
        uint8_t* dst = core.host(buf, frame.size() + 6);
        dst[0] = dst[1] = 0;
        std::memcpy(dst + 2, frame.data(), frame.size());
        std::memset(dst + 2 + frame.size(), 0xfc, 4);
        core.hw16(bd + BD_DATLEN, uint16_t(frame.size() + 6));
        core.hw16(bd + BD_SC, uint16_t((sc & BD_ENET_RX_WRAP) | BD_ENET_RX_LAST));
        rx_idx = (sc & BD_ENET_RX_WRAP) ? 0 : rx_idx + 1;
        core.reg(REGS + FEC_IEVENT) |= FEC_ENET_RXF_0;
        return true;
    }

    // The FEC sends every ready TX BD; returns the frames (bytes as read from memory).
    std::vector<std::vector<uint8_t>> transmit() {
        std::vector<std::vector<uint8_t>> out;
        for (;;) {
            const addr_t bd = tx_bd(tx_idx);
            const uint16_t sc = core.h16(bd + BD_SC);
            if (!(sc & BD_ENET_TX_READY)) break;
            const uint16_t len = core.h16(bd + BD_DATLEN);
            const uint8_t* b = core.host(core.h32(bd + BD_BUFADDR), len);
            out.emplace_back(b, b + len);
            core.hw16(bd + BD_SC, uint16_t(sc & ~BD_ENET_TX_READY));
            tx_idx = (sc & BD_ENET_TX_WRAP) ? 0 : tx_idx + 1;
        }
        core.reg(REGS + FEC_X_DES_ACTIVE_0) = 0;  // ring drained: TDAR clears
        if (!out.empty()) core.reg(REGS + FEC_IEVENT) |= FEC_ENET_TXF_0;
        return out;
    }

    // Waits (simulated time) until the programmed timer expiry and takes the timer interrupt.
    void timer_irq() {
        ASSERT_TRUE(timer.armed);
        if (timer.at > sc_core::sc_time_stamp()) sc_core::wait(timer.at - sc_core::sc_time_stamp());
        core.pending_irqs.insert(TIMER_IRQ);
        const int l = core.poll_irq();
        ASSERT_EQ(l, TIMER_IRQ);
        sys->handle_irq(l);
    }

    // Raises the FEC line and lets the system take it (hard IRQ, softirq, user tasks).
    void irq() {
        core.pending_irqs.insert(IRQ);
        const int l = core.poll_irq();
        ASSERT_EQ(l, IRQ);
        sys->handle_irq(l);
    }
};

}  // namespace fecsim::test
