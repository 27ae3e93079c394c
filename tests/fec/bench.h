// Register-level bench for the ENET model: a CPU-side TLM initiator and the MAC's DMA port on a
// router in front of a DDR, a recording test wire, and helpers that play the driver by hand
// (rings, descriptors, doorbells) as fec_main.c does.
#pragma once

#include "models/fec/enet.h"
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/net/frame.h"
#include "models/process.h"
#include "tests/support/test_ddr.h"
#include "tests/support/tlm_initiator.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace fecsim::test {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

constexpr uint64_t fec_base = 0x30BE0000, dram_base = 0x40000000;
constexpr uint64_t rx_ring_addr = dram_base + 0x1000, rx_ring1_addr = dram_base + 0x3000;
constexpr uint64_t tx_ring_addr = dram_base + 0x2000;
constexpr uint64_t rx_buf_addr = dram_base + 0x100000, tx_buf_addr = dram_base + 0x400000;
constexpr uint64_t buf_stride = 2048;
constexpr uint32_t max_fl = 1984;  // PKT_MAXBUF_SIZE, as the driver programs it
constexpr uint8_t dut_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

inline fec::enet_params test_params() {
    fec::enet_params p;
    p.rx_fifo_bytes = 4096;
    p.tx_fifo_bytes = 4096;
    p.tx_prefetch_frames = 1;
    p.desc_fetch_ns = 15;
    p.data_setup_ns = 15;
    p.writeback_ns = 15;
    p.rx_mac_latency_ns = 64;
    p.system_clock_mhz = 266;
    p.mdio_clock_mhz = 266;
    return p;
}

// Link end that records what the MAC transmits and serialises at line rate.
struct test_wire : net::eth_tx {
    struct sent {
        sc_time start;
        std::vector<uint8_t> bytes;
    };
    double mbps = 1000;
    sc_time free_at;
    std::vector<sent> log;

    sc_time send(net::frame_ptr f) override { return send_at(std::move(f), sc_core::sc_time_stamp()); }
    bool sends_ahead() const override { return true; }
    sc_time send_at(net::frame_ptr f, const sc_time& earliest) override {
        const sc_time start = std::max({sc_core::sc_time_stamp(), earliest, free_at});
        log.push_back({start, f->bytes});
        free_at = start + net::wire_time(f->size(), mbps);
        return free_at;
    }
    sc_time tx_free_at() const override { return free_at; }
    double speed_mbps() const override { return mbps; }
};

// Frame bytes without FCS: dst, src, ethertype, then a counting payload.
inline std::vector<uint8_t> make_frame(size_t size_with_fcs, const uint8_t* dst = dut_mac, uint8_t seed = 0,
                                       uint16_t ethertype = 0x0800) {
    std::vector<uint8_t> b(size_with_fcs - net::fcs_bytes);
    std::copy(dst, dst + 6, b.begin());
    std::copy(peer_mac, peer_mac + 6, b.begin() + 6);
    b[12] = uint8_t(ethertype >> 8), b[13] = uint8_t(ethertype);
    for (size_t i = 14; i < b.size(); ++i) b[i] = uint8_t(i * 3 + seed);
    return b;
}

struct bench : sc_core::sc_module {
    mem::ddr dram;
    mem::router bus;
    fec::enet dut;
    tlm_initiator cpu;
    test_wire wire;
    sc_core::sc_signal<bool> irq[fec::max_irq_lines];
    std::vector<sc_time> irq_rises[fec::max_irq_lines];
    std::function<void(bench&)> body;
    fec::bd_format fmt = fec::bd_format::enhanced;

    bench(sc_core::sc_module_name n, const fec::enet_params& p = test_params())
        : sc_module(n), dram("dram", test_ddr()), bus("bus"), dut("dut", p), cpu("cpu") {
        cpu.socket.bind(bus.in);
        dut.dma.bind(bus.in);
        bus.connect("ddr", dram.socket);
        bus.connect("fec", dut.regs);
        mem::region r;
        r.name = "dram", r.base = dram_base, r.size = test_ddr().size_bytes, r.target = "ddr", r.latency_ns = 20;
        bus.add_region(r);
        r.name = "fec", r.base = fec_base, r.size = 0x4000, r.target = "fec", r.latency_ns = 0;
        r.attr = mem::mem_attr::device;
        bus.add_region(r);
        for (unsigned i = 0; i < fec::max_irq_lines; ++i) dut.irq[i].bind(irq[i]);
        dut.attach_wire(wire);
        spawn_thread("run", [this] { run(); });
        spawn_method("watch_irq",
                     {&irq[0].value_changed_event(), &irq[1].value_changed_event(), &irq[2].value_changed_event()},
                     [this] { watch_irq(); });
    }
    void run() { if (body) body(*this); }
    void watch_irq() {
        for (unsigned i = 0; i < fec::max_irq_lines; ++i)
            if (irq[i].event() && irq[i].read()) irq_rises[i].push_back(sc_core::sc_time_stamp());
    }

    // ---- MMIO ----
    uint32_t rd(uint32_t off) {
        uint32_t v = 0;
        EXPECT_EQ(cpu.read(fec_base + off, &v, 4).status, tlm::TLM_OK_RESPONSE) << "read " << off;
        return v;
    }
    void wr(uint32_t off, uint32_t v) {
        EXPECT_EQ(cpu.write(fec_base + off, &v, 4).status, tlm::TLM_OK_RESPONSE) << "write " << off;
    }
    // A write annotated `delay` after now, as a temporally decoupled core makes it.
    void wr_at(uint32_t off, uint32_t v, const sc_time& delay) {
        EXPECT_EQ(cpu.transport(tlm::TLM_WRITE_COMMAND, fec_base + off, &v, 4, delay).status, tlm::TLM_OK_RESPONSE);
    }

    // ---- memory + descriptors ----
    void poke(uint64_t a, const void* p, size_t n) { dram.poke(a - dram_base, p, n); }
    void peek(uint64_t a, void* p, size_t n) { dram.peek(a - dram_base, p, n); }
    size_t bsz() const { return fec::bd_bytes(fmt); }
    fec::bd read_bd(uint64_t a) {
        fec::bd d;
        peek(a, d.raw, bsz());
        d.decode(fmt);
        return d;
    }
    void write_bd(uint64_t a, uint16_t sc, uint32_t buf, uint16_t len = 0, uint32_t esc = 0) {
        fec::bd d;
        d.sc = sc, d.bufaddr = buf, d.datlen = len, d.esc = esc;
        d.encode(fmt);
        poke(a, d.raw, bsz());
    }
    std::vector<uint8_t> mem(uint64_t a, size_t n) {
        std::vector<uint8_t> v(n);
        peek(a, v.data(), n);
        return v;
    }

    // RX descriptor i of a ring of n: empty, with its buffer, INT in enhanced mode.
    void arm_rx(uint64_t ring, unsigned i, unsigned n, uint32_t esc = fec::BD_ENET_RX_INT) {
        write_bd(ring + i * bsz(), uint16_t(fec::BD_ENET_RX_EMPTY | (i + 1 == n ? fec::BD_ENET_RX_WRAP : 0)),
                 uint32_t(rx_buf_addr + (ring == rx_ring1_addr ? 0x100000 : 0) + i * buf_stride), 0, esc);
    }
    // TX descriptor i of a ring of n carrying `bytes` (FCS added by the MAC), as fec_enet_txq_submit_skb.
    void queue_tx(unsigned i, unsigned n, const std::vector<uint8_t>& bytes, bool ready = true) {
        const uint64_t buf = tx_buf_addr + i * buf_stride;
        poke(buf, bytes.data(), bytes.size());
        uint16_t sc = fec::BD_ENET_TX_TC | fec::BD_ENET_TX_LAST | fec::BD_ENET_TX_INTR;
        if (ready) sc |= fec::BD_ENET_TX_READY;
        if (i + 1 == n) sc |= fec::BD_ENET_TX_WRAP;
        write_bd(tx_ring_addr + i * bsz(), sc, uint32_t(buf), uint16_t(bytes.size()), fec::BD_ENET_TX_INT);
    }

    // fec_restart, reduced to what the benches need: rings, MAC address, RCR/TCR/RACC, ECR, RDAR.
    void restart(unsigned rx_n, unsigned tx_n, uint32_t racc = fec::RACC_SHIFT16, uint32_t rcr_extra = 0) {
        for (unsigned i = 0; i < rx_n; ++i) arm_rx(rx_ring_addr, i, rx_n);
        for (unsigned i = 0; i < tx_n; ++i)
            write_bd(tx_ring_addr + i * bsz(), uint16_t(i + 1 == tx_n ? fec::BD_ENET_TX_WRAP : 0), 0);
        wr(fec::PALR, uint32_t(dut_mac[0]) << 24 | dut_mac[1] << 16 | dut_mac[2] << 8 | dut_mac[3]);
        wr(fec::PAUR, uint32_t(dut_mac[4]) << 24 | uint32_t(dut_mac[5]) << 16);
        wr(fec::RDSR, uint32_t(rx_ring_addr));
        wr(fec::TDSR, uint32_t(tx_ring_addr));
        wr(fec::MRBR, max_fl);
        wr(fec::RCR, max_fl << 16 | 0x4 /* MII_MODE */ | rcr_extra);
        wr(fec::TCR, fec::TCR_FDEN);
        wr(fec::RACC, racc);
        wr(fec::FTRL, max_fl);
        wr(fec::MIBC, 0);
        wr(fec::ECR, fec::ECR_ETHEREN | fec::ECR_DBSWP | fec::ECR_SPEED |
                         (fmt == fec::bd_format::enhanced ? fec::ECR_EN1588 : 0));
        wr(fec::RDAR, 0);
    }

    // A frame from the peer arriving now (its last bit); `bytes` excludes the FCS.
    void inject(const std::vector<uint8_t>& bytes, bool good_fcs = true) {
        net::frame_ptr f = net::frame_pool::instance().get(bytes.size());
        std::copy(bytes.begin(), bytes.end(), f->bytes.begin());
        net::append_fcs(*f);
        if (!good_fcs) f->bytes.back() ^= 0xFF;
        dut.frame_arrived(std::move(f));
    }
};

// Builds the bench, runs `body` in its thread, runs the simulation to the end.
inline void run_bench(const std::function<void(bench&)>& body, fec::bd_format fmt = fec::bd_format::enhanced,
                      const fec::enet_params& p = test_params()) {
    bench b("b", p);
    b.fmt = fmt;
    b.body = body;
    sc_core::sc_start();
}

}  // namespace fecsim::test
