// ENET MAC model: register-level benches that play the Linux driver by hand.
#include "tests/fec/bench.h"

#include "models/fec/checksum.h"
#include "models/net/link.h"
#include "models/sim_context.h"
#include "models/sim_stats.h"
#include "config/config.h"

#include <cmath>
#include <fstream>

namespace fecsim::test {
namespace {

using namespace fec;
using sc_core::wait;

const sc_time us1(1, SC_US);

// A MAC control PAUSE frame from the link partner asking for `quanta` (512 bit times each).
std::vector<uint8_t> pause_frame(uint16_t quanta) {
    const uint8_t pause_dst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    auto p = make_frame(64, pause_dst, 0, net::ethertype_mac_control);
    std::fill(p.begin() + 14, p.end(), 0);
    p[15] = 1;  // opcode PAUSE
    p[16] = uint8_t(quanta >> 8), p[17] = uint8_t(quanta);
    return p;
}

TEST(enet, rx_descriptor_writeback_and_flags) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(8, 4);
        b.wr(EIMR, FEC_ENET_RXF);
        const uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        const auto f1 = make_frame(100, bcast, 1);
        const sc_time t0 = sc_core::sc_time_stamp();
        b.inject(f1);
        // Nothing is visible before the MAC latency + descriptor fetch + data DMA have passed.
        wait(sc_time(b.dut.params().rx_mac_latency_ns, SC_NS));
        EXPECT_FALSE(b.rd(EIR) & FEC_ENET_RXF);
        EXPECT_TRUE(b.read_bd(rx_ring_addr).sc & BD_ENET_RX_EMPTY);
        wait(2 * us1);
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_RXF);
        ASSERT_EQ(b.irq_rises[0].size(), 1u);
        EXPECT_GT(b.irq_rises[0][0] - t0, sc_time(b.dut.params().rx_mac_latency_ns + 3 * 15, SC_NS));
        bd d = b.read_bd(rx_ring_addr);
        EXPECT_FALSE(d.sc & BD_ENET_RX_EMPTY);
        EXPECT_TRUE(d.sc & BD_ENET_RX_LAST);
        EXPECT_TRUE(d.sc & BD_ENET_RX_BC);
        EXPECT_FALSE(d.sc & (BD_ENET_RX_CR | BD_ENET_RX_LG | BD_ENET_RX_MC));
        EXPECT_EQ(d.datlen, 100 + 2);  // FCS included, SHIFT16 pad included
        EXPECT_TRUE(d.esc & BD_ENET_RX_INT);
        EXPECT_FALSE(d.esc & (BD_ENET_RX_UC | BD_ENET_RX_ME));
        EXPECT_EQ(d.bdu, BD_ENET_BDU);
        EXPECT_EQ(d.bufaddr, rx_buf_addr);
        auto data = b.mem(rx_buf_addr, 102);
        EXPECT_EQ(data[0], 0);
        EXPECT_EQ(data[1], 0);
        EXPECT_TRUE(std::equal(f1.begin(), f1.end(), data.begin() + 2));
        net::frame check;
        check.bytes.assign(data.begin() + 2, data.end());
        EXPECT_TRUE(net::fcs_ok(check));

        // Unicast to us with a bad FCS: delivered with CR and the enhanced MAC-error bit.
        b.wr(EIR, FEC_ENET_RXF);
        wait(sc_time(1, SC_NS));  // the line follows a delta cycle later
        EXPECT_FALSE(b.irq[0].read());
        b.inject(make_frame(64, dut_mac, 2), false);
        // A VLAN-tagged frame (PCP 5) with a valid IPv4 header but a broken header checksum.
        auto v = make_frame(80, dut_mac, 3, 0x8100);
        v[14] = 0xA0, v[15] = 0x07, v[16] = 0x08, v[17] = 0x00;
        v[18] = 0x45, v[19] = 0, v[20] = 0, v[21] = 80 - 4 - 18;  // total length
        v[27] = 17;                                              // UDP
        b.inject(v);
        // A frame longer than MAX_FL: LG, truncated at FTRL (TR); with the SHIFT16 pad it needs a
        // second buffer of MRBR bytes.
        b.inject(make_frame(2000, dut_mac, 4));
        wait(5 * us1);
        d = b.read_bd(rx_ring_addr + b.bsz());
        EXPECT_TRUE(d.sc & BD_ENET_RX_CR);
        EXPECT_TRUE(d.esc & BD_ENET_RX_ME);
        EXPECT_TRUE(d.esc & BD_ENET_RX_UC);
        EXPECT_EQ(d.datlen, 66);
        d = b.read_bd(rx_ring_addr + 2 * b.bsz());
        EXPECT_TRUE(d.esc & BD_ENET_RX_VLAN);
        EXPECT_EQ((d.esc >> BD_ENET_RX_VPCP_SHIFT) & 7, 5u);
        EXPECT_TRUE(d.esc & BD_ENET_RX_ICE);
        EXPECT_FALSE(d.sc & BD_ENET_RX_CR);
        d = b.read_bd(rx_ring_addr + 3 * b.bsz());
        EXPECT_FALSE(d.sc & (BD_ENET_RX_EMPTY | BD_ENET_RX_LAST));
        EXPECT_EQ(d.datlen, max_fl);
        d = b.read_bd(rx_ring_addr + 4 * b.bsz());
        EXPECT_FALSE(d.sc & BD_ENET_RX_EMPTY);
        EXPECT_TRUE(d.sc & BD_ENET_RX_LAST);
        EXPECT_TRUE(d.sc & BD_ENET_RX_LG);
        EXPECT_TRUE(d.sc & BD_ENET_RX_TR);
        EXPECT_EQ(d.datlen, max_fl + 2);  // the last BD holds the whole frame length
        const auto tail = b.mem(rx_buf_addr + 4 * buf_stride, 2);
        const auto f4 = make_frame(2000, dut_mac, 4);
        EXPECT_EQ(tail[0], f4[max_fl - 2]);
        EXPECT_EQ(tail[1], f4[max_fl - 1]);
        EXPECT_TRUE(b.read_bd(rx_ring_addr + 5 * b.bsz()).sc & BD_ENET_RX_EMPTY);
        EXPECT_EQ(b.dut.stats().rx_frames, 4u);
        EXPECT_EQ(b.rd(IEEE_R_CRC), 1u);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 4u);
        EXPECT_EQ(b.rd(RMON_R_BC_PKT), 1u);
        EXPECT_EQ(b.rd(RMON_R_P1024TO2047), 1u);
        EXPECT_EQ(b.rd(RMON_R_OVERSIZE), 1u);
    });
}

TEST(enet, rx_without_shift16_has_no_pad) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(2, 2, 0);
        const auto f = make_frame(64, dut_mac, 9);
        b.inject(f);
        wait(2 * us1);
        const bd d = b.read_bd(rx_ring_addr);
        EXPECT_EQ(d.datlen, 64);
        auto data = b.mem(rx_buf_addr, 60);
        EXPECT_TRUE(std::equal(f.begin(), f.end(), data.begin()));
    });
}

TEST(enet, rx_follows_wrap_bit) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(2, 2);
        b.inject(make_frame(64, dut_mac, 1));
        wait(us1);
        b.inject(make_frame(64, dut_mac, 2));
        wait(us1);
        // The driver hands BD0 back (fec_enet_rx_queue re-arm) and kicks RDAR.
        b.arm_rx(rx_ring_addr, 0, 2);
        b.wr(RDAR, 0);
        const auto f3 = make_frame(64, dut_mac, 3);
        b.inject(f3);
        wait(us1);
        EXPECT_FALSE(b.read_bd(rx_ring_addr).sc & BD_ENET_RX_EMPTY);
        auto data = b.mem(rx_buf_addr + 2, 60);
        EXPECT_TRUE(std::equal(f3.begin(), f3.end(), data.begin()));
        auto data2 = b.mem(rx_buf_addr + buf_stride + 2, 60);
        const auto f2 = make_frame(64, dut_mac, 2);
        EXPECT_TRUE(std::equal(f2.begin(), f2.end(), data2.begin()));
        EXPECT_EQ(b.dut.stats().rx_fifo_overflow_drops, 0u);
    });
}

// Silicon keeps a frame in the RX FIFO while no descriptor is free, and the uDMA writes it as
// soon as software hands one back and writes RDAR.
TEST(enet, rx_frame_held_without_descriptor_and_written_on_rdar) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(2, 2);
        for (uint8_t i = 0; i < 3; ++i) {
            b.inject(make_frame(64, dut_mac, i));
            wait(us1);
        }
        EXPECT_EQ(b.dut.stats().rx_frames, 2u);
        EXPECT_EQ(b.rd(RDAR), 0u);  // ring full: RDAR cleared
        ledger l = b.dut.rx_ledger();
        EXPECT_EQ(l.in_flight_end, 1u);  // the third frame waits in the FIFO
        EXPECT_EQ(l.dropped_total(), 0u);
        EXPECT_TRUE(l.balanced());
        // A descriptor handed back without RDAR is not seen.
        b.arm_rx(rx_ring_addr, 0, 2);
        wait(10 * us1);
        EXPECT_EQ(b.dut.stats().rx_frames, 2u);
        const sc_time kick = sc_core::sc_time_stamp();
        b.wr(RDAR, 0);
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_frames, 3u);
        const bd d = b.read_bd(rx_ring_addr);
        EXPECT_FALSE(d.sc & BD_ENET_RX_EMPTY);
        EXPECT_GT(d.ts, uint32_t(kick.to_seconds() * 1e9));  // written after the doorbell
        const auto f = make_frame(64, dut_mac, 2);
        const auto data = b.mem(rx_buf_addr + 2, f.size());
        EXPECT_TRUE(std::equal(f.begin(), f.end(), data.begin()));
        l = b.dut.rx_ledger();
        EXPECT_EQ(l.in_flight_end, 0u);
        EXPECT_TRUE(l.balanced());
        EXPECT_EQ(b.rd(IEEE_R_DROP), 0u);
        EXPECT_EQ(b.rd(IEEE_R_MACERR), 0u);
        EXPECT_EQ(b.dut.stats().rx_descriptor_waits, 1u);
        nlohmann::json j;
        b.dut.report(j);
        EXPECT_EQ(j["rx_fifo_peak_bytes"], 64);
    });
}

// The FIFO overflows only when a frame no longer fits: capacity less the RAFL reserve.
TEST(enet, rx_fifo_overflows_only_when_full) {
    fresh_simulation();
    run_bench([](bench& b) {
        constexpr unsigned n = 4, size = 128;
        b.restart(n, 2);
        b.wr(RAFL, 8);  // FEC_ENET_RAFL_V: 64 bytes kept free
        const unsigned fit = (test_params().rx_fifo_bytes - 8 * 8) / size;  // 31 held
        unsigned sent = 0;
        for (; sent < n + fit; ++sent) {
            b.inject(make_frame(size, dut_mac, uint8_t(sent)));
            wait(us1);
        }
        EXPECT_EQ(b.dut.stats().rx_frames, n);
        EXPECT_EQ(b.dut.stats().rx_fifo_overflow_drops, 0u);
        EXPECT_EQ(b.dut.rx_ledger().in_flight_end, fit);
        b.inject(make_frame(size, dut_mac, uint8_t(sent++)));  // one more: no room
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_fifo_overflow_drops, 1u);
        EXPECT_EQ(b.rd(IEEE_R_MACERR), 1u);
        EXPECT_EQ(b.dut.rx_ledger().in_flight_end, fit);
        // The driver refills the ring: held frames come out in arrival order.
        for (unsigned i = 0; i < n; ++i) b.arm_rx(rx_ring_addr, i, n);
        b.wr(RDAR, 0);
        wait(5 * us1);
        EXPECT_EQ(b.dut.stats().rx_frames, 2 * n);
        for (unsigned i = 0; i < n; ++i) {
            const auto f = make_frame(size, dut_mac, uint8_t(n + i));
            const auto data = b.mem(rx_buf_addr + i * buf_stride + 2, f.size());
            EXPECT_TRUE(std::equal(f.begin(), f.end(), data.begin())) << i;
        }
        const ledger l = b.dut.rx_ledger();
        EXPECT_EQ(l.in, sent);
        EXPECT_EQ(l.in_flight_end, fit - n);
        EXPECT_TRUE(l.balanced());
    });
}

// Back-to-back frames leave at exactly one wire time apart: 1,488,095 64-byte frames/s and
// 81,274 1518-byte frames/s at 1 Gbit/s.
void line_rate(size_t size, uint64_t expected_fps) {
    fresh_simulation();
    constexpr unsigned n = 64;
    run_bench([&](bench& b) {
        b.restart(2, n);
        for (unsigned i = 0; i < n; ++i) b.queue_tx(i, n, make_frame(size, peer_mac, uint8_t(i)));
        const uint64_t events0 = sim_stats::kernel_events;
        b.wr(TDAR, 0);
        wait(sc_time(double(n + 2) * net::wire_time(size, 1000).to_seconds(), sc_core::SC_SEC));
        ASSERT_EQ(b.wire.log.size(), n);
        const sc_time spacing = net::wire_time(size, 1000);
        for (unsigned i = 1; i < n; ++i) EXPECT_EQ(b.wire.log[i].start - b.wire.log[i - 1].start, spacing) << i;
        const double span = (b.wire.log[n - 1].start - b.wire.log[0].start).to_seconds();
        EXPECT_EQ(uint64_t((n - 1) / span), expected_fps);
        for (unsigned i = 0; i < n; ++i) {
            const auto& bytes = b.wire.log[i].bytes;
            ASSERT_EQ(bytes.size(), size);
            net::frame f;
            f.bytes = bytes;
            EXPECT_TRUE(net::fcs_ok(f));
            EXPECT_EQ(bytes[20], uint8_t(20 * 3 + i));
            EXPECT_FALSE(b.read_bd(tx_ring_addr + i * b.bsz()).sc & BD_ENET_TX_READY);
        }
        EXPECT_EQ(b.rd(RMON_T_PACKETS), n);
        EXPECT_EQ(b.rd(size == 64 ? RMON_T_P64 : RMON_T_P1024TO2047), n);
        EXPECT_EQ(b.rd(IEEE_T_OCTETS_OK), n * size);
        EXPECT_EQ(b.dut.stats().tx_frames, n);
        // A handful of kernel events per frame (docs/design.md §2), here without coalescing.
        EXPECT_LE(double(sim_stats::kernel_events - events0) / n, 4.0);
    });
}
TEST(enet, tx_line_rate_64_byte_frames) { line_rate(64, 1488095); }
TEST(enet, tx_line_rate_1518_byte_frames) { line_rate(1518, 81274); }

TEST(enet, tdar_self_clears_when_ring_runs_empty) {
    fresh_simulation();
    run_bench([](bench& b) {
        constexpr unsigned n = 8;
        b.restart(2, n);
        b.wr(EIMR, FEC_ENET_TXF);
        for (unsigned i = 0; i < 3; ++i) b.queue_tx(i, n, make_frame(64, peer_mac, uint8_t(i)));
        b.wr(TDAR, 0);
        EXPECT_EQ(b.rd(TDAR), DES_ACTIVE);
        wait(10 * us1);
        EXPECT_EQ(b.rd(TDAR), 0u);
        EXPECT_EQ(b.wire.log.size(), 3u);
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_TXF);
        EXPECT_TRUE(b.irq[0].read());
        for (unsigned i = 0; i < 3; ++i) {
            const bd d = b.read_bd(tx_ring_addr + i * b.bsz());
            EXPECT_FALSE(d.sc & BD_ENET_TX_READY);
            EXPECT_TRUE(d.sc & BD_ENET_TX_LAST);
            EXPECT_EQ(d.bdu, BD_ENET_BDU);
        }
        // A BD armed without a doorbell is not seen: TDAR is idle.
        b.queue_tx(3, n, make_frame(64, peer_mac, 3));
        wait(10 * us1);
        EXPECT_EQ(b.wire.log.size(), 3u);
        // ERR006358 keep-alive (fec_enet_tx_queue): ring not empty and TDAR reads 0 -> write TDAR.
        if (!(b.read_bd(tx_ring_addr + 3 * b.bsz()).sc & BD_ENET_TX_READY)) ADD_FAILURE();
        if (b.rd(TDAR) == 0) b.wr(TDAR, 0);
        wait(10 * us1);
        EXPECT_EQ(b.wire.log.size(), 4u);
        EXPECT_EQ(b.rd(TDAR), 0u);
    });
}

TEST(enet, rx_coalescing_after_n_frames_or_timeout) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(16, 2);
        b.wr(EIMR, FEC_ENET_RXF);
        const double clk = b.dut.params().system_clock_mhz;
        const uint32_t ticks = uint32_t(50 * clk / ic_clocks_per_tick);  // ~50 us, as fec_enet_us_to_itr_clock
        const sc_time timeout(ticks * ic_clocks_per_tick * 1e3 / clk, SC_NS);
        b.wr(RXIC0, IC_EN | IC_CS | 4u << IC_FT_SHIFT | ticks);
        // Four frames 1 us apart: one interrupt, right after the fourth.
        sc_time last;
        for (uint8_t i = 0; i < 4; ++i) {
            EXPECT_FALSE(b.irq[0].read()) << int(i);
            last = sc_core::sc_time_stamp();
            b.inject(make_frame(64, dut_mac, i));
            wait(us1);
        }
        ASSERT_EQ(b.irq_rises[0].size(), 1u);
        EXPECT_LT(b.irq_rises[0][0] - last, us1);
        b.wr(EIR, FEC_ENET_RXF);
        // One frame alone: the interrupt comes from the timer, ICTT x 64 clocks after it landed.
        const sc_time t = sc_core::sc_time_stamp();
        b.inject(make_frame(64, dut_mac, 9));
        wait(timeout + 2 * us1);
        ASSERT_EQ(b.irq_rises[0].size(), 2u);
        const sc_time d = b.irq_rises[0][1] - t;
        EXPECT_GE(d, timeout);
        EXPECT_LT(d, timeout + us1);
        // The same frame pattern with coalescing off interrupts per frame.
        b.wr(EIR, FEC_ENET_RXF);
        b.wr(RXIC0, 0);
        b.inject(make_frame(64, dut_mac, 10));
        wait(us1);
        EXPECT_EQ(b.irq_rises[0].size(), 3u);
    });
}

// The coalescing timer runs from the first frame counted, whatever wakes the interrupt process
// before its deadline: the frames counted after the first leave the deadline alone, and a run of
// irq_method in between (an MII interrupt raised and cleared) keeps it.
TEST(enet, rx_coalescing_timer_fires_from_the_first_frame_through_other_interrupts) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(16, 2);
        b.wr(EIMR, FEC_ENET_RXF | FEC_ENET_MII);
        const double clk = b.dut.params().system_clock_mhz;
        const uint32_t ticks = uint32_t(20 * clk / ic_clocks_per_tick);  // ~20 us
        const sc_time timeout(ticks * ic_clocks_per_tick * 1e3 / clk, SC_NS);
        b.wr(RXIC0, IC_EN | IC_CS | 4u << IC_FT_SHIFT | ticks);
        const sc_time t = sc_core::sc_time_stamp();
        for (uint8_t i = 0; i < 2; ++i) {  // two of the four: the timer decides
            b.inject(make_frame(64, dut_mac, i));
            wait(us1);
        }
        b.wr(MSCR, 1 << 1);
        b.wr(MMFR, 0x60000000);  // MII within a microsecond
        wait(us1);
        ASSERT_EQ(b.irq_rises[0].size(), 1u);
        b.wr(EIR, FEC_ENET_MII);
        wait(us1);
        EXPECT_FALSE(b.irq[0].read());
        wait(timeout);
        ASSERT_EQ(b.irq_rises[0].size(), 2u);
        const sc_time d = b.irq_rises[0][1] - t;
        EXPECT_GE(d, timeout);
        EXPECT_LT(d, timeout + us1);
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_RXF);
    });
}

TEST(enet, tx_coalescing_counts_frames) {
    fresh_simulation();
    run_bench([](bench& b) {
        constexpr unsigned n = 8;
        b.restart(2, n);
        b.wr(EIMR, FEC_ENET_TXF);
        b.wr(TXIC0, IC_EN | IC_CS | 3u << IC_FT_SHIFT | 0xFFFF);
        for (unsigned i = 0; i < 6; ++i) b.queue_tx(i, n, make_frame(64, peer_mac, uint8_t(i)));
        b.wr(TDAR, 0);
        wait(20 * us1);
        // Threshold 3: the line rises once, after the third frame's write-back (frames 4-6 fire
        // again while EIR.TXF is still set, which leaves the line high).
        ASSERT_EQ(b.irq_rises[0].size(), 1u);
        const sc_time third_end = b.wire.log[2].start + net::wire_time(64, 1000) - sc_time(96, SC_NS);
        EXPECT_GE(b.irq_rises[0][0], third_end);
        EXPECT_LT(b.irq_rises[0][0], b.wire.log[3].start + net::wire_time(64, 1000));
        // After the driver clears EIR, two frames are not enough; the third interrupts.
        b.wr(EIR, FEC_ENET_TXF);
        for (unsigned i = 6; i < 8; ++i) b.queue_tx(i, n, make_frame(64, peer_mac, uint8_t(i)));
        b.wr(TDAR, 0);
        wait(20 * us1);
        EXPECT_EQ(b.wire.log.size(), 8u);
        EXPECT_EQ(b.irq_rises[0].size(), 1u);
        b.queue_tx(0, n, make_frame(64, peer_mac, 8));
        b.wr(TDAR, 0);
        wait(20 * us1);
        EXPECT_EQ(b.irq_rises[0].size(), 2u);
    });
}

bool is_pause(const std::vector<uint8_t>& f, uint16_t quanta) {
    const uint8_t dst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    net::frame fr;
    fr.bytes = f;
    return f.size() == 64 && std::equal(dst, dst + 6, f.begin()) && std::equal(dut_mac, dut_mac + 6, f.begin() + 6) &&
           f[12] == 0x88 && f[13] == 0x08 && f[14] == 0 && f[15] == 1 && f[16] == (quanta >> 8) &&
           f[17] == (quanta & 0xFF) && std::all_of(f.begin() + 18, f.end() - 4, [](uint8_t x) { return x == 0; }) &&
           net::fcs_ok(fr);
}

// fec_restart with flow control: RSEM 0x84 words (1056 bytes), RAFL 8, OPD 0xFFF0. The ring
// fills, frames wait in the FIFO; the one that takes the FIFO to 1056 bytes sends XOFF with the
// programmed quanta; refilling the ring drains the FIFO below the threshold: XON.
TEST(enet, pause_sent_at_the_programmed_threshold_and_xon_when_drained) {
    fresh_simulation();
    run_bench([](bench& b) {
        constexpr unsigned n = 2;
        b.restart(n, 2, RACC_SHIFT16, RCR_FCE);
        b.wr(RSEM, 0x84), b.wr(RAFL, 8), b.wr(OPD, 0xFFF0);
        const unsigned threshold_frames = (0x84 * 8 + 63) / 64;  // 17 held 64-byte frames
        for (unsigned i = 0; i < n + threshold_frames - 1; ++i) {
            b.inject(make_frame(64, dut_mac, uint8_t(i)));
            wait(us1);
        }
        EXPECT_TRUE(b.wire.log.empty());  // 16 held: 1024 bytes, below the threshold
        const sc_time crossing = sc_core::sc_time_stamp();
        b.inject(make_frame(64, dut_mac, 99));
        wait(us1);
        ASSERT_EQ(b.wire.log.size(), 1u);
        EXPECT_TRUE(is_pause(b.wire.log[0].bytes, 0xFFF0));
        EXPECT_EQ(b.wire.log[0].start, crossing);  // idle wire: at once
        EXPECT_EQ(b.rd(IEEE_T_FDXFC), 1u);
        b.inject(make_frame(64, dut_mac, 100));  // still above: no second XOFF yet
        wait(us1);
        EXPECT_EQ(b.wire.log.size(), 1u);
        for (unsigned i = 0; i < n; ++i) b.arm_rx(rx_ring_addr, i, n);
        const sc_time refill = sc_core::sc_time_stamp();
        b.wr(RDAR, 0);  // two frames leave: 16 x 64 = 1024 bytes < 1056
        wait(5 * us1);
        ASSERT_EQ(b.wire.log.size(), 2u);
        EXPECT_TRUE(is_pause(b.wire.log[1].bytes, 0));
        EXPECT_GT(b.wire.log[1].start, refill);
        EXPECT_EQ(b.dut.stats().pause_frames_sent, 2u);
        EXPECT_EQ(b.dut.stats().rx_fifo_overflow_drops, 0u);
        EXPECT_EQ(b.rd(IEEE_T_FDXFC), 2u);
    });
}

// While the FIFO stays above the threshold, XOFF goes again half-way through the pause it asked
// for; without RCR.FCE nothing is sent.
TEST(enet, xoff_refreshed_while_the_fifo_stays_full) {
    for (bool fce : {true, false}) {
        fresh_simulation();
        run_bench([fce](bench& b) {
            b.restart(1, 2, RACC_SHIFT16, fce ? RCR_FCE : 0);
            b.wr(RSEM, 8), b.wr(OPD, 0x100);  // 64 bytes; 256 quanta = 131.072 us
            b.inject(make_frame(64, dut_mac, 0));
            b.inject(make_frame(64, dut_mac, 1));  // held: 64 bytes, XOFF
            wait(300 * us1);
            b.wr(ECR, 0);  // ends the refreshes (and the simulation)
            if (!fce) {
                EXPECT_TRUE(b.wire.log.empty());
                return;
            }
            ASSERT_EQ(b.wire.log.size(), 5u);  // 0, 65.5, 131, 196.6, 262.1 us
            const sc_time half(256 * 512 / 2, SC_NS);
            for (size_t i = 0; i < b.wire.log.size(); ++i) {
                EXPECT_TRUE(is_pause(b.wire.log[i].bytes, 0x100)) << i;
                if (i > 0) {
                    EXPECT_EQ(b.wire.log[i].start - b.wire.log[i - 1].start, half) << i;
                }
            }
        });
    }
}

TEST(enet, pause_sent_when_rx_fifo_passes_threshold) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2, RACC_SHIFT16, RCR_FCE);
        b.wr(OPD, 0x0040);
        b.wr(RSEM, 16);  // 128 bytes
        b.inject(make_frame(64, dut_mac, 1));
        b.inject(make_frame(64, dut_mac, 2));  // two frames queued: 128 bytes in the FIFO
        wait(us1);
        ASSERT_EQ(b.wire.log.size(), 2u);
        EXPECT_TRUE(is_pause(b.wire.log[0].bytes, 0x0040));
        EXPECT_TRUE(is_pause(b.wire.log[1].bytes, 0));  // drained: XON
        EXPECT_EQ(b.dut.stats().rx_frames, 2u);
    });
}

// A frame that arrives exactly when a refresh is due sends it (or finds it sent); either way
// the refreshes go on at the same pace while the FIFO stays full.
TEST(enet, xoff_refresh_keeps_its_pace_when_a_frame_arrives_at_the_refresh_time) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(1, 2, RACC_SHIFT16, RCR_FCE);
        b.wr(RSEM, 8), b.wr(OPD, 0x100);  // 64 bytes; refresh every 65.536 us
        const sc_time half(256 * 512 / 2, SC_NS);
        b.inject(make_frame(64, dut_mac, 0));
        b.inject(make_frame(64, dut_mac, 1));  // XOFF now
        wait(half);
        b.inject(make_frame(64, dut_mac, 2));  // at the first refresh's time
        wait(3.5 * half);
        b.wr(ECR, 0);
        ASSERT_EQ(b.wire.log.size(), 5u);
        for (size_t i = 1; i < b.wire.log.size(); ++i) {
            EXPECT_TRUE(is_pause(b.wire.log[i].bytes, 0x100)) << i;
            EXPECT_EQ(b.wire.log[i].start - b.wire.log[i - 1].start, half) << i;
        }
    });
}

// RSEM b20..16 (STAT_SECTION_EMPTY) counts frames: XOFF when that many are in the FIFO.
TEST(enet, pause_sent_when_the_fifo_holds_rsem_frames) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(1, 2, RACC_SHIFT16, RCR_FCE);
        b.wr(RSEM, 3u << 16), b.wr(OPD, 0x0010);
        for (uint8_t i = 0; i < 3; ++i) {  // one written, two held
            b.inject(make_frame(64, dut_mac, i));
            wait(us1);
        }
        EXPECT_TRUE(b.wire.log.empty());
        b.inject(make_frame(64, dut_mac, 3));  // three held
        wait(us1);
        ASSERT_FALSE(b.wire.log.empty());
        EXPECT_TRUE(is_pause(b.wire.log[0].bytes, 0x0010));
        b.wr(ECR, 0);  // ends the XOFF refreshes
    });
}

TEST(enet, received_pause_stops_tx_for_the_quanta) {
    fresh_simulation();
    run_bench([](bench& b) {
        constexpr unsigned n = 16;
        b.restart(2, n, RACC_SHIFT16, RCR_FCE);
        for (unsigned i = 0; i < n; ++i) b.queue_tx(i, n, make_frame(64, peer_mac, uint8_t(i)));
        b.wr(TDAR, 0);
        const sc_time frame = net::wire_time(64, 1000);
        wait(sc_time(3.5 * frame.to_seconds(), sc_core::SC_SEC));  // frame 3 is on the wire
        const size_t before = b.wire.log.size();
        const auto p = pause_frame(100);  // 51.2 us at 1 Gbit/s
        const sc_time t = sc_core::sc_time_stamp();
        b.inject(p);
        EXPECT_TRUE(b.rd(TCR) & TCR_RFC_PAUSE);
        wait(100 * us1);
        ASSERT_GT(b.wire.log.size(), before + 1);
        // The frame in progress finished; the next one starts when the pause expires.
        EXPECT_EQ(b.wire.log[before].start, t + sc_time(100 * 512, SC_NS));
        EXPECT_EQ(b.wire.log[before + 1].start - b.wire.log[before].start, frame);
        EXPECT_EQ(b.rd(IEEE_R_FDXFC), 1u);
        EXPECT_EQ(b.dut.stats().pause_frames_received, 1u);
        EXPECT_EQ(b.dut.stats().rx_frames, 0u);  // consumed by the MAC

        // A long pause cut short by XON (pause time 0).
        for (unsigned i = 0; i < 4; ++i) b.queue_tx(i, n, make_frame(64, peer_mac, uint8_t(100 + i)));
        const sc_time long_pause = sc_core::sc_time_stamp();
        b.inject(pause_frame(0xFFFF));
        const size_t held = b.wire.log.size();
        b.wr(TDAR, 0);
        wait(10 * us1);
        EXPECT_EQ(b.wire.log.size(), held);
        const sc_time xon = sc_core::sc_time_stamp();
        b.inject(pause_frame(0));
        wait(10 * us1);
        ASSERT_EQ(b.wire.log.size(), held + 4);
        EXPECT_EQ(b.wire.log[held].start, xon);
        nlohmann::json j;
        b.dut.report(j);  // the pause timer ran 51.2 us, then from the long pause to the XON
        EXPECT_NEAR(j["tx_paused_s"].get<double>(), 100 * 512e-9 + (xon - long_pause).to_seconds(), 1e-12);
    });
}

// A register write acts at its annotated time (the LT b_transport delay of a core that did not
// sync first): the interrupt line follows EIMR and EIR then, a TCR.TFC_PAUSE PAUSE starts then.
TEST(enet, register_writes_act_at_their_annotated_time) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(2, 2);
        b.wr(MSCR, 1 << 1);
        b.wr(MMFR, 0x60000000);  // an MDIO write: MII once the frame is out (< 1 us)
        wait(us1);
        ASSERT_TRUE(b.rd(EIR) & FEC_ENET_MII);
        EXPECT_FALSE(b.irq[0].read());
        const sc_time t0 = sc_core::sc_time_stamp(), d(300, SC_NS);
        b.wr_at(EIMR, FEC_ENET_MII, d);
        EXPECT_EQ(b.rd(EIMR), FEC_ENET_MII);  // the register holds the value at once
        wait(d - sc_time(1, SC_NS));
        EXPECT_FALSE(b.irq[0].read());
        wait(sc_time(2, SC_NS));
        EXPECT_TRUE(b.irq[0].read());
        ASSERT_EQ(b.irq_rises[0].size(), 1u);
        EXPECT_EQ(b.irq_rises[0][0], t0 + d);

        const sc_time t1 = sc_core::sc_time_stamp(), d1(200, SC_NS);
        b.wr_at(EIR, FEC_ENET_MII, d1);  // w1c
        wait(d1 - sc_time(1, SC_NS));
        EXPECT_TRUE(b.irq[0].read());
        wait(sc_time(2, SC_NS));
        EXPECT_FALSE(b.irq[0].read());

        const sc_time t2 = sc_core::sc_time_stamp(), d2(250, SC_NS);
        b.wr(OPD, 0x10);
        b.wr_at(TCR, TCR_FDEN | TCR_TFC_PAUSE, d2);
        ASSERT_EQ(b.wire.log.size(), 1u);
        EXPECT_TRUE(is_pause(b.wire.log[0].bytes, 0x10));
        EXPECT_EQ(b.wire.log[0].start, t2 + d2);
        (void)t1;
    });
}

// A TDAR write annotated 400 ns ahead, to an idle TX engine or while a frame is on the wire
// (the engine's own next step, that frame's end, comes later), fetches the new frame at once
// (its DMA carries the write's time) without an event of the engine's own: the frames start on
// the wire, and their descriptors are written back, as when the engine's event handles a write
// made at that time (forced here by a GTS toggle that leaves a wake-up pending).
TEST(enet, tdar_write_runs_the_tx_engine_at_the_annotated_time_without_an_event) {
    for (bool busy : {false, true}) {
        std::vector<sc_time> start[2], stamp[2];
        uint64_t events[2];
        for (bool inline_kick : {false, true}) {
            fresh_simulation();
            run_bench([&](bench& b) {
                b.restart(2, 4);
                if (busy) {
                    b.queue_tx(0, 4, make_frame(1518, peer_mac));  // 12 us on the wire
                    b.wr(TDAR, 0);
                    wait(2 * us1);
                    ASSERT_EQ(b.wire.log.size(), 1u);
                }
                const unsigned i = busy ? 1 : 0;
                b.queue_tx(i, 4, make_frame(64, peer_mac));
                const sc_time d(400, SC_NS);
                const uint64_t e0 = sim_stats::kernel_events;
                const uint64_t fetched = b.dut.stats().tx_fetched;
                if (inline_kick) {
                    b.wr_at(TDAR, 0, d);
                    EXPECT_EQ(b.dut.stats().tx_fetched, fetched + 1);  // fetched during the write
                    EXPECT_EQ(sim_stats::kernel_events, e0);
                } else {
                    wait(d);
                    b.wr(TCR, TCR_FDEN | TCR_GTS);
                    b.wr(TCR, TCR_FDEN);  // the engine has a wake-up pending: TDAR waits for it
                    b.wr(TDAR, 0);
                    EXPECT_EQ(b.dut.stats().tx_fetched, fetched);
                }
                wait(20 * us1);
                ASSERT_EQ(b.wire.log.size(), i + 1);
                for (unsigned k = 0; k <= i; ++k) {
                    start[inline_kick].push_back(b.wire.log[k].start);
                    const bd wb = b.read_bd(tx_ring_addr + k * b.bsz());
                    EXPECT_FALSE(wb.sc & BD_ENET_TX_READY);
                    stamp[inline_kick].push_back(sc_time(double(wb.ts), SC_NS));
                }
                events[inline_kick] = sim_stats::kernel_events - e0;
            });
        }
        EXPECT_GT(start[0].back(), sc_time(busy ? 2400 : 400, SC_NS)) << busy;
        EXPECT_EQ(start[1], start[0]) << busy;
        EXPECT_EQ(stamp[1], stamp[0]) << busy;
        EXPECT_EQ(events[0] - events[1], 1u) << busy;  // the engine's kick event
    }
}

// The pause quantum is 512 bit-times at the link's speed: 5.12 us at 100 Mbit/s. Without
// RCR.FCE the MAC does not act on PAUSE (the frame goes to the address filter like any other).
TEST(enet, received_pause_lasts_512_bit_times_per_quantum_at_the_link_speed) {
    for (bool fce : {true, false}) {
        fresh_simulation();
        run_bench([fce](bench& b) {
            b.wire.mbps = 100;
            b.restart(2, 4, RACC_SHIFT16, fce ? RCR_FCE : 0);
            const auto p = pause_frame(10);
            const sc_time t = sc_core::sc_time_stamp();
            b.inject(p);
            b.queue_tx(0, 4, make_frame(64, peer_mac, 0));
            b.wr(TDAR, 0);
            wait(100 * us1);
            ASSERT_EQ(b.wire.log.size(), 1u);
            if (fce) {
                EXPECT_EQ(b.wire.log[0].start, t + sc_time(10 * 5120, SC_NS));
                EXPECT_EQ(b.dut.stats().pause_frames_received, 1u);
            } else {
                EXPECT_LT(b.wire.log[0].start, t + us1);
                EXPECT_EQ(b.dut.stats().pause_frames_received, 0u);
            }
        });
    }
}

TEST(enet, bus_error_raises_eberr_and_stops_the_ring) {
    fresh_simulation();
    run_bench([](bench& b) {
        constexpr unsigned n = 4;
        b.restart(2, n);
        b.wr(EIMR, FEC_ENET_EBERR);
        // TX buffer outside every region.
        b.queue_tx(0, n, make_frame(64, peer_mac, 0));
        b.write_bd(tx_ring_addr, BD_ENET_TX_READY | BD_ENET_TX_TC | BD_ENET_TX_LAST, 0x10, 60, BD_ENET_TX_INT);
        b.queue_tx(1, n, make_frame(64, peer_mac, 1));
        b.wr(TDAR, 0);
        wait(5 * us1);
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_EBERR);
        EXPECT_TRUE(b.irq[0].read());
        EXPECT_EQ(b.rd(TDAR), 0u);
        EXPECT_TRUE(b.wire.log.empty());
        EXPECT_EQ(b.dut.stats().dma_errors, 1u);
        b.wr(TDAR, 0);  // halted until the MAC is re-enabled
        wait(5 * us1);
        EXPECT_TRUE(b.wire.log.empty());
        EXPECT_EQ(b.rd(TDAR), 0u);
        // RX: a descriptor pointing nowhere.
        b.wr(EIR, FEC_ENET_EBERR);
        b.write_bd(rx_ring_addr, BD_ENET_RX_EMPTY, 0xFFFFFFF0, 0, BD_ENET_RX_INT);
        b.inject(make_frame(64, dut_mac, 1));
        wait(5 * us1);
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_EBERR);
        EXPECT_EQ(b.rd(RDAR), 0u);
        EXPECT_EQ(b.dut.stats().dma_errors, 2u);
        b.inject(make_frame(64, dut_mac, 2));  // held: the halted ring takes nothing
        wait(us1);
        EXPECT_EQ(b.dut.rx_ledger().in_flight_end, 1u);
        // fec_restart: the rings work again.
        b.wr(ECR, 0);
        b.restart(2, n);
        b.queue_tx(0, n, make_frame(64, peer_mac, 5));
        b.wr(TDAR, 0);
        b.inject(make_frame(64, dut_mac, 3));
        wait(5 * us1);
        EXPECT_EQ(b.wire.log.size(), 1u);
        EXPECT_EQ(b.dut.stats().rx_frames, 1u);
        EXPECT_EQ(b.dut.stats().rx_reset_drops, 1u);  // the held frame went with the FIFO flush
    });
}

TEST(enet, legacy_descriptors_are_8_bytes_and_always_interrupt) {
    fresh_simulation();
    run_bench(
        [](bench& b) {
            EXPECT_EQ(b.bsz(), 8u);
            b.restart(4, 4);
            b.wr(EIMR, FEC_ENET_RXF | FEC_ENET_TXF);
            const auto f = make_frame(128, dut_mac, 5);
            b.inject(make_frame(64, dut_mac, 4));
            b.inject(f);
            b.queue_tx(0, 4, make_frame(64, peer_mac, 1));
            b.wr(TDAR, 0);
            wait(5 * us1);
            const bd d = b.read_bd(rx_ring_addr + 8);  // second BD at +8
            EXPECT_FALSE(d.sc & BD_ENET_RX_EMPTY);
            EXPECT_EQ(d.datlen, 130);
            auto data = b.mem(rx_buf_addr + buf_stride + 2, f.size());
            EXPECT_TRUE(std::equal(f.begin(), f.end(), data.begin()));
            EXPECT_TRUE(b.read_bd(rx_ring_addr + 16).sc & BD_ENET_RX_EMPTY);
            EXPECT_EQ(b.rd(EIR) & (FEC_ENET_RXF | FEC_ENET_TXF), FEC_ENET_RXF | FEC_ENET_TXF);
            EXPECT_EQ(b.wire.log.size(), 1u);
        },
        bd_format::legacy);
}

TEST(enet, enhanced_descriptors_gate_interrupts_on_int_bits) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 4);
        b.arm_rx(rx_ring_addr, 0, 4, 0);  // no RX_INT
        b.inject(make_frame(64, dut_mac, 4));
        b.queue_tx(0, 4, make_frame(64, peer_mac, 1));
        b.write_bd(tx_ring_addr, BD_ENET_TX_READY | BD_ENET_TX_TC | BD_ENET_TX_LAST,
                   uint32_t(tx_buf_addr), 60, 0);  // no TX_INT
        b.wr(TDAR, 0);
        wait(5 * us1);
        EXPECT_FALSE(b.read_bd(rx_ring_addr).sc & BD_ENET_RX_EMPTY);
        EXPECT_EQ(b.wire.log.size(), 1u);
        EXPECT_EQ(b.rd(EIR) & (FEC_ENET_RXF | FEC_ENET_TXF), 0u);
    });
}

TEST(enet, mib_clear_disable_and_software_writes) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 4);
        b.inject(make_frame(64, dut_mac, 1));
        wait(us1);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 1u);
        EXPECT_EQ(b.rd(IEEE_R_OCTETS_OK), 64u);
        b.dut.reset_stats();  // model statistics only
        EXPECT_EQ(b.dut.stats().rx_frames, 0u);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 1u);
        b.wr(MIBC, MIBC_CLEAR);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 0u);
        EXPECT_EQ(b.rd(IEEE_R_OCTETS_OK), 0u);
        b.inject(make_frame(64, dut_mac, 2));  // held at zero while MIB_CLEAR is set
        wait(us1);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 0u);
        b.wr(MIBC, 0);
        b.inject(make_frame(64, dut_mac, 3));
        wait(us1);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 1u);
        // Disabled: no counting; software may write counters (fec_enet_clear_ethtool_stats).
        b.wr(MIBC, MIBC_DIS);
        EXPECT_EQ(b.rd(MIBC), MIBC_DIS | MIBC_IDLE);
        b.arm_rx(rx_ring_addr, 0, 4);
        b.inject(make_frame(64, dut_mac, 4));
        wait(us1);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 1u);
        b.wr(RMON_R_PACKETS, 0);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 0u);
        b.wr(MIBC, 0);
        b.wr(RMON_R_PACKETS, 77);  // ignored while counting
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 0u);
    });
}

TEST(enet, register_access_rules) {
    fresh_simulation();
    run_bench([](bench& b) {
        uint16_t h = 0;
        EXPECT_EQ(b.cpu.read(fec_base + EIR, &h, 2).status, tlm::TLM_GENERIC_ERROR_RESPONSE);
        uint32_t v = 0;
        EXPECT_EQ(b.cpu.read(fec_base + 0x000, &v, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(b.cpu.write(fec_base + 0x3000, &v, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(b.rd(RCR), 0x05EE0001u);
        EXPECT_EQ(b.rd(OPD), 0x00010000u);
        EXPECT_EQ(b.rd(FTRL), 0x7FFu);
        EXPECT_EQ(b.rd(MIBC), MIBC_DIS | MIBC_IDLE);
        b.wr(PAUR, 0xAABB1234);
        EXPECT_EQ(b.rd(PAUR), 0xAABB8808u);  // TYPE field is read-only
        b.wr(MRBR, 0xFFFFFFFF);
        EXPECT_EQ(b.rd(MRBR), 0x3FF0u);
        // RDAR ignored while the MAC is disabled.
        b.wr(RDAR, 0);
        EXPECT_EQ(b.rd(RDAR), 0u);
        // MDIO: a read frame completes with EIR.MII after 64 MDC cycles.
        b.wr(EIMR, FEC_ENET_MII | FEC_ENET_RXF1);
        b.wr(MSCR, 0x1A << 1);
        b.wr(MMFR, 0x60020000);
        EXPECT_FALSE(b.rd(EIR) & FEC_ENET_MII);
        wait(sc_time(64 * 27 * 2 * 1e3 / b.dut.params().mdio_clock_mhz + 1, SC_NS));
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_MII);
        EXPECT_EQ(b.rd(MMFR) & 0xFFFF, 0xFFFFu);
        EXPECT_TRUE(b.irq[0].read());
        // EIR is write-1-to-clear; ring 1 events go to line 1.
        b.wr(EIR, FEC_ENET_MII);
        wait(sc_time(1, SC_NS));
        EXPECT_FALSE(b.irq[0].read());
        EXPECT_EQ(b.rd(EIR), 0u);
        // ECR.RESET restores reset values, keeps the MIB.
        b.wr(RCR, 0);
        b.wr(ECR, ECR_RESET);
        EXPECT_EQ(b.rd(RCR), 0x05EE0001u);
        EXPECT_EQ(b.rd(ECR) & ECR_ETHEREN, 0u);
    });
}

TEST(enet, vlan_priority_classified_to_ring_1_by_rcmr) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2);
        for (unsigned i = 0; i < 2; ++i) b.arm_rx(rx_ring1_addr, i, 2);
        b.wr(RDSR1, uint32_t(rx_ring1_addr));
        b.wr(MRBR1, max_fl);
        b.wr(RCMR1, RCMR_MATCHEN | 0x3210);  // PCP 0..3 -> ring 1, as fec_enet_enable_ring
        b.wr(ECR, 0);
        b.wr(ECR, ECR_ETHEREN | ECR_EN1588 | ECR_DBSWP);
        b.wr(RDAR, 0);
        b.wr(RDAR1, 0);
        b.wr(EIMR, FEC_ENET_RXF | FEC_ENET_RXF1);
        auto v = make_frame(64, dut_mac, 1, 0x8100);
        v[14] = 0x60;  // PCP 3
        b.inject(v);
        wait(us1);
        EXPECT_FALSE(b.read_bd(rx_ring1_addr).sc & BD_ENET_RX_EMPTY);
        EXPECT_TRUE(b.read_bd(rx_ring_addr).sc & BD_ENET_RX_EMPTY);
        EXPECT_EQ(b.rd(EIR), FEC_ENET_RXF1);
        EXPECT_TRUE(b.irq[1].read());
        EXPECT_FALSE(b.irq[0].read());
        v[14] = 0xA0;  // PCP 5: no match -> ring 0
        b.inject(v);
        b.inject(make_frame(64, dut_mac, 2));  // untagged -> ring 0
        wait(us1);
        EXPECT_FALSE(b.read_bd(rx_ring_addr + b.bsz()).sc & BD_ENET_RX_EMPTY);
        EXPECT_TRUE(b.read_bd(rx_ring1_addr + b.bsz()).sc & BD_ENET_RX_EMPTY);
        EXPECT_TRUE(b.irq[0].read());
    });
}

TEST(enet, address_filter_and_promiscuous_mode) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2);
        const uint8_t other[6] = {0x02, 0, 0, 0, 0, 0x33};
        b.inject(make_frame(64, other, 1));
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_filtered, 1u);
        EXPECT_EQ(b.dut.stats().rx_frames, 0u);
        b.wr(RCR, b.rd(RCR) | RCR_PROM);
        b.inject(make_frame(64, other, 2));
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_frames, 1u);
        EXPECT_TRUE(b.read_bd(rx_ring_addr).sc & BD_ENET_RX_MISS);
    });
}

// Besides its own address, the filter accepts a unicast or multicast address whose hash bit (the
// 6 upper bits of the CRC-32 of the address) is set in IAUR/IALR or GAUR/GALR, and broadcast
// unless RCR.BC_REJ; it refuses the rest.
TEST(enet, address_filter_hash_tables_and_broadcast) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(8, 2);
        const uint8_t uni[6] = {0x02, 0, 0, 0, 0, 0x33}, multi[6] = {0x01, 0x00, 0x5E, 0, 0, 0x07};
        const uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        auto set_hash_bit = [&b](const uint8_t* mac, uint32_t hi, uint32_t lo) {
            const uint32_t h = (~net::crc32(mac, 6)) >> 26;
            b.wr(h >= 32 ? hi : lo, b.rd(h >= 32 ? hi : lo) | 1u << (h % 32));
        };
        b.inject(make_frame(64, uni, 1));
        b.inject(make_frame(64, multi, 2));
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_filtered, 2u);
        EXPECT_EQ(b.dut.stats().rx_frames, 0u);
        set_hash_bit(uni, IAUR, IALR);
        set_hash_bit(multi, GAUR, GALR);
        b.inject(make_frame(64, uni, 3));
        b.inject(make_frame(64, multi, 4));
        b.inject(make_frame(64, dut_mac, 5));
        b.inject(make_frame(64, bcast, 6));
        wait(2 * us1);
        EXPECT_EQ(b.dut.stats().rx_filtered, 2u);
        EXPECT_EQ(b.dut.stats().rx_frames, 4u);
        EXPECT_TRUE(b.read_bd(rx_ring_addr + 1 * b.bsz()).sc & BD_ENET_RX_MC);
        EXPECT_TRUE(b.read_bd(rx_ring_addr + 3 * b.bsz()).sc & BD_ENET_RX_BC);
        EXPECT_FALSE(b.read_bd(rx_ring_addr + 0 * b.bsz()).sc & (BD_ENET_RX_MISS | BD_ENET_RX_MC | BD_ENET_RX_BC));
        b.wr(RCR, b.rd(RCR) | RCR_BC_REJ);
        b.inject(make_frame(64, bcast, 7));
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_filtered, 3u);
        EXPECT_EQ(b.dut.stats().rx_frames, 4u);
    });
}

// The descriptor's IP fields describe the bytes written, whether RACC's checks parsed the frame
// on arrival or not: a frame truncated at FTRL no longer holds its IP total length (prot 0).
TEST(enet, rx_descriptor_ip_fields_with_and_without_racc_checks) {
    for (const uint32_t racc : {RACC_SHIFT16, RACC_SHIFT16 | RACC_IPDIS | RACC_PRODIS}) {
        SCOPED_TRACE(racc);
        fresh_simulation();
        run_bench([racc](bench& b) {
            auto udp = [](size_t size_with_fcs) {
                auto f = make_frame(size_with_fcs, dut_mac, 5);
                const size_t total = f.size() - 14, udp_len = total - 20;
                std::fill(f.begin() + 14, f.begin() + 42, 0);
                f[14] = 0x45, f[16] = uint8_t(total >> 8), f[17] = uint8_t(total), f[22] = 64, f[23] = 17;
                f[26] = 10, f[29] = 1, f[30] = 10, f[33] = 2;  // 10.0.0.1 -> 10.0.0.2
                f[35] = 9, f[37] = 9, f[38] = uint8_t(udp_len >> 8), f[39] = uint8_t(udp_len);
                insert_checksums(f.data(), f.size(), true, true);
                return f;
            };
            b.restart(8, 2, racc);
            b.inject(udp(100));
            b.inject(udp(2000));  // truncated at FTRL, in two buffers
            wait(5 * us1);
            EXPECT_EQ(b.dut.stats().rx_frames, 2u);
            bd d = b.read_bd(rx_ring_addr);
            EXPECT_EQ((d.prot >> BD_ENET_RX_PROT_SHIFT) & 0xFF, 17u);
            EXPECT_EQ(d.prot >> BD_ENET_RX_HL_SHIFT, 5u);
            EXPECT_FALSE(d.esc & (BD_ENET_RX_ICE | BD_ENET_RX_PCR));
            d = b.read_bd(rx_ring_addr + 2 * b.bsz());
            EXPECT_TRUE(d.sc & BD_ENET_RX_LAST);
            EXPECT_TRUE(d.sc & BD_ENET_RX_TR);
            EXPECT_EQ(d.prot, 0u);
        });
    }
}

// A frame the address filter refuses changes nothing but counters: the MAC takes it when it is
// sent (frame_arriving), without a delivery event, and counts it at its arrival time, as a frame
// the link delivers then. A frame it accepts, or a PAUSE frame it acts on, is left to the link.
TEST(enet, frames_the_filter_refuses_are_taken_early_and_counted_at_their_arrival) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2, RACC_SHIFT16, RCR_FCE);
        const uint8_t other[6] = {0x02, 0, 0, 0, 0, 0x33};
        auto offer = [&](const std::vector<uint8_t>& bytes, const sc_time& at) {
            net::frame_ptr f = net::frame_pool::instance().get(bytes.size());
            std::copy(bytes.begin(), bytes.end(), f->bytes.begin());
            net::append_fcs(*f);
            const bool taken = b.dut.frame_arriving(f, sc_core::sc_time_stamp() + at);
            EXPECT_EQ(taken, f == nullptr);
            return taken;
        };
        const uint64_t e0 = sim_stats::kernel_events;
        EXPECT_FALSE(offer(make_frame(64, dut_mac, 1), us1));
        const uint8_t pause_dst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
        std::vector<uint8_t> pause = make_frame(64, pause_dst, 0, net::ethertype_mac_control);
        pause[14] = 0, pause[15] = 1;  // opcode PAUSE
        EXPECT_FALSE(offer(pause, us1));
        ASSERT_TRUE(offer(make_frame(64, other, 2), us1));
        ASSERT_TRUE(offer(make_frame(100, other, 3), 2 * us1));
        EXPECT_EQ(b.dut.stats().rx_arrived, 0u);
        uint32_t packets = 0;
        // A register read annotated at the first arrival sees it counted.
        EXPECT_EQ(b.cpu.transport(tlm::TLM_READ_COMMAND, fec_base + RMON_R_PACKETS, &packets, 4, us1).status,
                  tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(packets, 1u);
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_filtered, 1u);
        wait(us1);
        EXPECT_EQ(b.dut.stats().rx_arrived, 2u);
        EXPECT_EQ(b.dut.stats().rx_filtered, 2u);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 2u);
        EXPECT_EQ(b.rd(RMON_R_P65TO127), 1u);
        EXPECT_EQ(b.dut.stats().rx_frames, 0u);
        EXPECT_EQ(sim_stats::kernel_events, e0);  // no event of the MAC's
    });
}

const uint8_t not_ours[6] = {0x02, 0, 0, 0, 0, 0x33};  // a unicast address the filter refuses

// Offers the MAC a 64-byte frame its filter refuses, arriving `at` from now, as the link would
// when sending it; whether the MAC took it early.
bool offer_refused(bench& b, uint8_t seq, const sc_time& at) {
    net::frame_ptr f = net::frame_pool::instance().get(60);
    const auto bytes = make_frame(64, not_ours, seq);
    std::copy(bytes.begin(), bytes.end(), f->bytes.begin());
    net::append_fcs(*f);
    return b.dut.frame_arriving(f, sc_core::sc_time_stamp() + at);
}

// A switch port may take back a frame it sent ahead before it starts (a PAUSE reached it): the
// MAC gives back the newest frame it took, which has not arrived, and never counts it; one that
// has arrived is not given back.
TEST(enet, a_frame_taken_early_and_not_arrived_is_given_back_uncounted) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2, RACC_SHIFT16, RCR_FCE);
        auto offer = [&](uint8_t seq, const sc_time& at) { return offer_refused(b, seq, at); };
        ASSERT_TRUE(offer(1, us1));
        ASSERT_TRUE(offer(2, 2 * us1));
        net::frame_ptr back = b.dut.give_back_last(sc_core::sc_time_stamp());
        ASSERT_TRUE(back);
        EXPECT_EQ(back->bytes[14], make_frame(64, not_ours, 2)[14]) << "the newest frame comes back";
        wait(3 * us1);
        EXPECT_EQ(b.dut.stats().rx_arrived, 1u);
        EXPECT_EQ(b.rd(RMON_R_PACKETS), 1u);
        EXPECT_FALSE(b.dut.give_back_last(sc_core::sc_time_stamp())) << "nothing taken is still to arrive";
    });
}

// The invariant the early take rests on: only a register write can make a frame taken early more
// than counted. A write that does (RCR.PROM here) hands the frames still to arrive to the MAC's
// own event: the frame is received at its arrival time, with the same timing as a frame the link
// delivers then.
TEST(enet, a_register_write_that_accepts_a_frame_taken_early_receives_it_at_its_arrival) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2);
        b.wr(EIMR, FEC_ENET_RXF);
        const sc_time arrival = sc_core::sc_time_stamp() + 2 * us1;
        ASSERT_TRUE(offer_refused(b, 1, 2 * us1));
        b.wr_at(RCR, b.rd(RCR) | RCR_PROM, us1);  // before the arrival: the frame is now accepted
        wait(5 * us1);
        EXPECT_EQ(b.dut.stats().rx_frames, 1u);
        EXPECT_EQ(b.dut.stats().rx_filtered, 0u);
        EXPECT_TRUE(b.read_bd(rx_ring_addr).sc & BD_ENET_RX_MISS);
        ASSERT_EQ(b.irq_rises[0].size(), 1u);
        const sc_time taken_early = b.irq_rises[0][0] - arrival;
        // The same frame delivered at its arrival.
        b.wr(EIR, FEC_ENET_RXF);
        const sc_time arrival2 = sc_core::sc_time_stamp();
        b.inject(make_frame(64, not_ours, 1));
        wait(5 * us1);
        ASSERT_EQ(b.irq_rises[0].size(), 2u);
        EXPECT_EQ(b.irq_rises[0][1] - arrival2, taken_early);
        EXPECT_EQ(b.dut.stats().rx_frames, 2u);
    });
}

// A write that disables the MAC (ECR.ETHEREN clear) while frames it took early are in flight
// receives those that arrived before it first (filtered by the enabled MAC) and leaves the
// later one to arrive at a disabled MAC (a disabled drop), as the link's deliveries would.
TEST(enet, a_frame_taken_early_that_arrives_after_the_mac_is_disabled_is_a_disabled_drop) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(4, 2);
        auto offer = [&](uint8_t seq, const sc_time& at) { return offer_refused(b, seq, at); };
        ASSERT_TRUE(offer(1, us1));
        ASSERT_TRUE(offer(2, 3 * us1));
        b.wr_at(ECR, b.rd(ECR) & ~ECR_ETHEREN, 2 * us1);  // between the two arrivals
        wait(5 * us1);
        EXPECT_EQ(b.dut.stats().rx_arrived, 2u);
        EXPECT_EQ(b.dut.stats().rx_filtered, 1u);
        EXPECT_EQ(b.dut.stats().rx_disabled_drops, 1u);
    });
}

// Frames the filter refuses, from a peer through a real link: one before the warm-up's end, one
// arriving exactly at it (20.576 us), one exactly at the run's end (30.576 us). SystemC returns
// before running the events of its end time, so the link delivers the first after the reset, in
// the window, and the second not at all. The MAC's counters (filtered, the MIB's packets since the
// window, through the report) and the link's frames into the MAC before and after the reset and
// at the end.
struct no_sink : net::eth_sink {
    void frame_arrived(net::frame_ptr) override {}
};

std::vector<uint64_t> run_refused_frames_at_the_run_boundaries(bool tap) {
    fresh_simulation();
    bench b("b");
    net::link l("l", {1000, 0});
    no_sink peer;
    l.bind(peer, b.dut);
    if (tap) l.add_tap([](int, const net::frame&, sc_time, sc_time) {});  // every frame delivered by the link
    b.body = [&](bench&) {
        b.restart(4, 2);
        for (uint8_t seq : {1, 2, 3}) {
            wait(sc_time(10.0 * seq, SC_US) - sc_core::sc_time_stamp());
            net::frame_ptr f = net::frame_pool::instance().get(60);
            const auto bytes = make_frame(64, not_ours, seq);
            std::copy(bytes.begin(), bytes.end(), f->bytes.begin());
            net::append_fcs(*f);
            l.end_a().send(std::move(f));  // arrives 576 ns later
        }
    };
    std::vector<uint64_t> seen;
    auto look = [&] {
        nlohmann::json j;
        b.dut.report(j);
        seen.insert(seen.end(), {b.dut.stats().rx_filtered, j["mib"]["RMON_R_PACKETS"].get<uint64_t>(),
                                 l.stats(net::link::a_to_b).frames});
    };
    run_for(sc_time(20576, SC_NS));  // the warm-up
    look(), b.dut.reset_stats(), l.reset_stats(), look();
    run_for(sc_time(10, SC_US));  // the measured window
    look();
    EXPECT_TRUE(b.dut.rx_ledger().balanced());
    return seen;
}

TEST(enet, a_frame_taken_early_arriving_at_the_warm_up_or_run_end_counts_as_the_link_delivers_it) {
    const std::vector<uint64_t> delivered = run_refused_frames_at_the_run_boundaries(true);
    EXPECT_EQ(delivered, (std::vector<uint64_t>{1, 1, 1, 0, 0, 0, 1, 1, 1}))
        << "the frame at 10.576 us counts before the window, the second in it, the third in none";
    EXPECT_EQ(run_refused_frames_at_the_run_boundaries(false), delivered);
}

TEST(enet, tx_inserts_checksums_when_asked) {
    fresh_simulation();
    run_bench([](bench& b) {
        b.restart(2, 2);
        auto f = make_frame(98, peer_mac, 0);
        // IPv4/UDP with zeroed checksums.
        const uint8_t ip[20] = {0x45, 0, 0, 80, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
        std::copy(ip, ip + 20, f.begin() + 14);
        f[34] = 0x12, f[35] = 0x34, f[36] = 0x00, f[37] = 0x09, f[38] = 0, f[39] = 60, f[40] = f[41] = 0;
        b.queue_tx(0, 2, f);
        b.write_bd(tx_ring_addr, BD_ENET_TX_READY | BD_ENET_TX_TC | BD_ENET_TX_LAST, uint32_t(tx_buf_addr),
                   uint16_t(f.size()), BD_ENET_TX_INT | BD_ENET_TX_PINS | BD_ENET_TX_IINS);
        b.wr(TDAR, 0);
        wait(5 * us1);
        ASSERT_EQ(b.wire.log.size(), 1u);
        const auto& out = b.wire.log[0].bytes;
        const l3_info i = inspect(out.data(), out.size() - 4);
        EXPECT_TRUE(i.ipv4);
        EXPECT_TRUE(i.protocol_checked);
        EXPECT_FALSE(i.ip_header_error);
        EXPECT_FALSE(i.protocol_error);
        EXPECT_NE(out[24] | out[25], 0);
    });
}

TEST(enet, params_from_every_platform_profile) {
    for (const char* p : {"imx8mp", "imx8mm", "imx8qxp", "imx6sx", "imx93"}) {
        fresh_simulation();
        const std::string path = std::string("/tmp/fec_test_") + p + ".json";
        std::ofstream(path) << "{\"platform\": \"" << p << "\"}";
        try {
            const config c = config::load(path, {});
            const enet_params ep = enet_params_from(c.view("fec"));
            EXPECT_GE(ep.rx_fifo_bytes, 2048u) << p;
            EXPECT_GE(ep.tx_fifo_bytes, 2048u) << p;
            EXPECT_GT(ep.system_clock_mhz, 0) << p;
            EXPECT_GT(ep.desc_fetch_ns, 0) << p;
            enet dut("dut", ep);  // constructible
            (void)dut;
        } catch (const config_error& e) {
            // Another section still under construction must not fail this model's test.
            const std::string msg = e.what();
            EXPECT_EQ(msg.find("/fec"), std::string::npos) << msg;
        }
    }
}

// The bench thread plays the board's core in the record (models/activity.h), as models/cpu/core.cpp
// does: it runs (its register accesses reach the MAC at their time), or waits in a sync, having
// run the steps left to it that are due by its wake-up.
struct core_player {
    activity& record = activity::shared();
    core_player() { record.core_runs(); }
    void sync_until(const sc_time& wake) {
        record.run_steps_due(wake);
        record.core_waits_until(wake);
        wait(wake - sc_core::sc_time_stamp());
        record.core_runs();
    }
    // Tells the record what else is due on the board (the bench's record holds every event),
    // as a core with a lookahead does: the ends of frame are then left to it too.
    void orders_steps() {
        activity& r = record;
        r.set_first_else([&r] { return r.next(); });
    }
    // Syncs every `quantum` until `end`, as a core whose every sync point finds something due.
    void run_to(const sc_time& end, const sc_time& quantum = sc_time(500, SC_NS)) {
        while (sc_core::sc_time_stamp() < end) sync_until(std::min(end, sc_core::sc_time_stamp() + quantum));
    }
};

// A PAUSE of 10 quanta arriving 40 ns before the wire frees (after frame 0's end, before frame
// 1's start), with the core syncing past the start: frame 1 starts when the pause ends.
void expect_a_pause_before_the_start_to_hold_frame_1(bench& b, core_player& core, const sc_time& wire_free) {
    const auto pause = pause_frame(10);  // 5.12 us at 1 Gbit/s
    const sc_time arrives = wire_free - sc_time(40, SC_NS);
    sc_core::sc_spawn([&b, pause, arrives] {
        wait(arrives - sc_core::sc_time_stamp());
        b.inject(pause);
    });
    core.sync_until(wire_free + 2 * us1);
    core.run_to(sc_core::sc_time_stamp() + 20 * us1);
    ASSERT_EQ(b.wire.log.size(), 2u);
    EXPECT_EQ(b.dut.stats().pause_frames_received, 1u);
    EXPECT_EQ(b.wire.log[1].start, arrives + sc_time(10 * 512, SC_NS));
}

// The first `frames` frames' wire starts and write-back stamps, each descriptor written back:
// what the engine's events and the core's deferred steps must agree on.
void starts_and_stamps(bench& b, unsigned frames, std::vector<sc_time>& start, std::vector<sc_time>& stamp) {
    ASSERT_EQ(b.wire.log.size(), frames);
    for (unsigned k = 0; k < frames; ++k) {
        start.push_back(b.wire.log[k].start);
        const bd wb = b.read_bd(tx_ring_addr + k * b.bsz());
        EXPECT_FALSE(wb.sc & BD_ENET_TX_READY);
        stamp.push_back(sc_time(double(wb.ts), SC_NS));
    }
}

// With the core in the record, no wire start takes an event of its own: the TDAR write's
// start, and each start after the end of the frame before it, run where the core's time
// reaches them. The frames start on the wire, and their descriptors are written back, at the
// same times as with the engine's events, TDAR reads the same in between; per frame, one event
// (its end) instead of two.
TEST(enet, wire_starts_left_to_the_core_keep_their_times_with_one_event_per_frame) {
    std::vector<sc_time> start[2], stamp[2];
    std::vector<uint32_t> tdar[2];
    uint64_t events[2];
    for (bool by_core : {false, true}) {
        fresh_simulation();
        activity::defer_steps = by_core;
        run_bench(
            [&](bench& b) {
                core_player core;
                constexpr unsigned n = 8;
                b.restart(2, n);
                const uint64_t e0 = sim_stats::kernel_events;
                // Four frames back to back, then one more while they are on the wire, then one
                // to an idle engine.
                for (unsigned i = 0; i < 4; ++i) b.queue_tx(i, n, make_frame(64 + 100 * i, peer_mac, uint8_t(i)));
                b.wr(TDAR, 0);
                tdar[by_core].push_back(b.rd(TDAR));
                core.run_to(sc_core::sc_time_stamp() + sc_time(1300, SC_NS));
                tdar[by_core].push_back(b.rd(TDAR));
                b.queue_tx(4, n, make_frame(64, peer_mac, 4));
                b.wr(TDAR, 0);
                core.run_to(sc_core::sc_time_stamp() + 20 * us1);
                tdar[by_core].push_back(b.rd(TDAR));
                b.queue_tx(5, n, make_frame(64, peer_mac, 5));
                b.wr(TDAR, 0);
                tdar[by_core].push_back(b.rd(TDAR));
                core.run_to(sc_core::sc_time_stamp() + 20 * us1);
                tdar[by_core].push_back(b.rd(TDAR));
                starts_and_stamps(b, 6, start[by_core], stamp[by_core]);
                EXPECT_EQ(b.dut.stats().tx_frames, 6u);
                EXPECT_EQ(b.rd(RMON_T_PACKETS), 6u);
                events[by_core] = sim_stats::kernel_events - e0;
            });
    }
    EXPECT_EQ(start[1], start[0]);
    EXPECT_EQ(stamp[1], stamp[0]);
    EXPECT_EQ(tdar[1], tdar[0]);
    EXPECT_EQ(tdar[1], (std::vector<uint32_t>{DES_ACTIVE, DES_ACTIVE, 0, DES_ACTIVE, 0}));
    EXPECT_EQ(events[0] - events[1], 6u);  // every wire start's event
}

// A frame waits for the wire after the end of the one before it; the core, waiting in a sync
// until between that end and the start, then writes GTS, TCR.TFC_PAUSE or ECR (disable): the
// start left to the core sees the write and holds the frame, as the engine's event did (a
// start run at the end of the frame before would have sent it).
TEST(enet, a_register_write_before_a_start_left_to_the_core_holds_the_frame) {
    for (uint32_t what : {TCR_GTS, TCR_TFC_PAUSE, 0u}) {
        fresh_simulation();
        run_bench([what](bench& b) {
            core_player core;
            constexpr unsigned n = 4;
            b.restart(2, n);
            b.queue_tx(0, n, make_frame(1518, peer_mac, 0));  // 12 us on the wire
            b.wr(TDAR, 0);
            core.run_to(sc_core::sc_time_stamp() + 2 * us1);
            ASSERT_EQ(b.wire.log.size(), 1u);
            b.queue_tx(1, n, make_frame(64, peer_mac, 1));
            b.wr(TDAR, 0);  // fetched; waits for the wire
            const sc_time wire_free = b.wire.log[0].start + net::wire_time(1518, 1000);
            core.sync_until(wire_free - sc_time(40, SC_NS));  // after the end of frame 0 (wire_free - IFG)
            if (what) b.wr(TCR, TCR_FDEN | what);
            else b.wr(ECR, 0);
            core.run_to(sc_core::sc_time_stamp() + 20 * us1);
            if (what == TCR_GTS) {
                EXPECT_EQ(b.wire.log.size(), 1u);
                EXPECT_TRUE(b.rd(EIR) & FEC_ENET_GRA);
            } else if (what == TCR_TFC_PAUSE) {
                ASSERT_EQ(b.wire.log.size(), 3u);
                EXPECT_TRUE(is_pause(b.wire.log[1].bytes, 0));  // OPD's reset PAUSE_DUR is 0
                EXPECT_EQ(b.wire.log[1].start, wire_free);
                EXPECT_EQ(b.wire.log[2].start, wire_free + net::wire_time(64, 1000));
            } else {
                EXPECT_EQ(b.wire.log.size(), 1u);
                EXPECT_EQ(b.dut.stats().tx_reset_drops, 1u);
            }
        });
    }
}

// The same frame, with the core waiting in a sync past its start: the end of the frame before
// runs the start itself, unless flow control is on: a PAUSE received before the start (here
// 40 ns before) must still hold it, so the engine's event runs it.
TEST(enet, a_start_run_at_the_end_of_the_frame_before_leaves_a_received_pause_its_event) {
    fresh_simulation();
    run_bench([](bench& b) {
        core_player core;
        constexpr unsigned n = 4;
        b.restart(2, n, RACC_SHIFT16, RCR_FCE);
        b.queue_tx(0, n, make_frame(1518, peer_mac, 0));
        b.wr(TDAR, 0);
        core.run_to(sc_core::sc_time_stamp() + 2 * us1);
        b.queue_tx(1, n, make_frame(64, peer_mac, 1));
        b.wr(TDAR, 0);
        const sc_time wire_free = b.wire.log[0].start + net::wire_time(1518, 1000);
        expect_a_pause_before_the_start_to_hold_frame_1(b, core, wire_free);
    });
}

// The same PAUSE, with flow control turned on only after the end of the frame before left the
// start to the core: the RCR write that sets FCE hands the start back to the engine's event, so
// the PAUSE received before the start still holds the frame (the core, syncing past the start,
// would otherwise run it first).
TEST(enet, setting_flow_control_hands_a_start_left_to_the_core_back_to_its_event) {
    fresh_simulation();
    run_bench([](bench& b) {
        core_player core;
        constexpr unsigned n = 4;
        b.restart(2, n);
        b.queue_tx(0, n, make_frame(1518, peer_mac, 0));
        b.wr(TDAR, 0);
        core.run_to(sc_core::sc_time_stamp() + 2 * us1);
        b.queue_tx(1, n, make_frame(64, peer_mac, 1));
        b.wr(TDAR, 0);  // fetched; waits for the wire
        const sc_time wire_free = b.wire.log[0].start + net::wire_time(1518, 1000);
        // after the end of frame 0 (wire_free - IFG), which left the start to the core
        core.sync_until(wire_free - sc_time(60, SC_NS));
        b.wr(RCR, b.rd(RCR) | RCR_FCE);
        expect_a_pause_before_the_start_to_hold_frame_1(b, core, wire_free);
    });
}

// A TDAR write fetches the only frame of the ring and leaves its start to the core; a TDAR read
// before that start still reads 1 (the start's prefetch, which finds the ring empty, has not
// run), one at or after it reads 0: the start runs first, as the core's sync for its event did.
TEST(enet, tdar_read_before_a_start_left_to_the_core_reads_as_before_it) {
    fresh_simulation();
    run_bench([](bench& b) {
        core_player core;
        b.restart(2, 4);
        b.queue_tx(0, 4, make_frame(64, peer_mac, 0));
        b.wr(TDAR, 0);
        EXPECT_EQ(b.dut.stats().tx_fetched, 1u);
        EXPECT_TRUE(b.wire.log.empty());  // its start is later: the fetch takes DMA time
        uint32_t v = 0;
        ASSERT_EQ(b.cpu.transport(tlm::TLM_READ_COMMAND, fec_base + TDAR, &v, 4, sc_time(10, SC_NS)).status,
                  tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(v, DES_ACTIVE);
        EXPECT_TRUE(b.wire.log.empty());
        ASSERT_EQ(b.cpu.transport(tlm::TLM_READ_COMMAND, fec_base + TDAR, &v, 4, sc_time(1000, SC_NS)).status,
                  tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(v, 0u);
        ASSERT_EQ(b.wire.log.size(), 1u);
        EXPECT_GT(b.wire.log[0].start, sc_core::sc_time_stamp() + sc_time(10, SC_NS));
        core.run_to(sc_core::sc_time_stamp() + 10 * us1);
        EXPECT_FALSE(b.read_bd(tx_ring_addr).sc & BD_ENET_TX_READY);
        EXPECT_EQ(b.dut.stats().tx_frames, 1u);
        EXPECT_EQ(b.dut.tx_ledger().in_flight_end, 0u);
    });
}

// Runs `body` on a fresh bench with a core that orders steps, first with the ends of frame left
// to the engine's events, then to the core; the switch is left on, as shipped.
void with_ends_by_event_then_by_core(const std::function<void(bool by_core, bench& b, core_player& core)>& body) {
    for (bool by_core : {false, true}) {
        fresh_simulation();
        activity::defer_ends = by_core;
        run_bench([&](bench& b) {
            core_player core;
            core.orders_steps();
            body(by_core, b, core);
        });
    }
    activity::defer_ends = true;
}

// With the record telling what else is due on the board (a core with a lookahead), the core runs
// the ends of frame too: the same wire starts, write-back stamps and TDAR and EIR reads as with
// the engine's events, and no TX event at all (each end runs where the core's time reaches it).
TEST(enet, ends_of_frame_left_to_the_core_keep_their_times_without_an_event) {
    std::vector<sc_time> start[2], stamp[2];
    std::vector<uint32_t> reads[2];
    uint64_t events[2];
    with_ends_by_event_then_by_core([&](bool by_core, bench& b, core_player& core) {
        constexpr unsigned n = 8;
        b.restart(2, n);
        const uint64_t e0 = sim_stats::kernel_events;
        for (unsigned i = 0; i < 4; ++i) b.queue_tx(i, n, make_frame(64 + 100 * i, peer_mac, uint8_t(i)));
        b.wr(TDAR, 0);
        core.run_to(sc_core::sc_time_stamp() + sc_time(1300, SC_NS));
        reads[by_core].push_back(b.rd(TDAR));
        reads[by_core].push_back(b.rd(EIR));
        b.queue_tx(4, n, make_frame(64, peer_mac, 4));
        b.wr(TDAR, 0);
        core.run_to(sc_core::sc_time_stamp() + 20 * us1);
        reads[by_core].push_back(b.rd(TDAR));
        reads[by_core].push_back(b.rd(EIR));
        starts_and_stamps(b, 5, start[by_core], stamp[by_core]);
        EXPECT_EQ(b.dut.stats().tx_frames, 5u);
        events[by_core] = sim_stats::kernel_events - e0;
    });
    EXPECT_EQ(start[1], start[0]);
    EXPECT_EQ(stamp[1], stamp[0]);
    EXPECT_EQ(reads[1], reads[0]);
    EXPECT_TRUE(reads[1].back() & FEC_ENET_TXF);
    EXPECT_EQ(events[0] - events[1], 5u);  // every end of frame's event
}

// One 1518-byte frame from an idle engine, the core ordering steps and synced a microsecond on:
// it has run the frame's wire start, and the frame's end is left to it. Returns the end's time
// (before the IFG).
sc_time one_long_frame_started_by_the_core(bench& b, core_player& core) {
    core.orders_steps();
    constexpr unsigned n = 4;
    b.restart(2, n);
    b.queue_tx(0, n, make_frame(1518, peer_mac, 0));
    b.wr(TDAR, 0);
    core.sync_until(sc_core::sc_time_stamp() + us1);
    EXPECT_EQ(b.wire.log.size(), 1u);
    return b.wire.log.at(0).start + net::wire_time(1518, 1000) - sc_time(96, SC_NS);
}

// A 1518-byte frame's end left to the core, with another step due on the board before it (a
// probe 100 ns earlier) when the core syncs past the end: the end is handed back to its event,
// so the probe still finds the descriptor not written back, as with the engine's events (run
// before the sync, the write-back would come before the probe).
TEST(enet, an_end_of_frame_left_to_the_core_waits_for_a_step_due_before_it) {
    fresh_simulation();
    run_bench([](bench& b) {
        core_player core;
        const sc_time end = one_long_frame_started_by_the_core(b, core);
        timed_event probe;  // in the record, as every model's event
        bool ready_at_probe = false;
        sc_core::sc_spawn([&] {
            wait(probe.event());
            ready_at_probe = b.read_bd(tx_ring_addr).sc & BD_ENET_TX_READY;
        });
        probe.notify(end - sc_time(100, SC_NS) - sc_core::sc_time_stamp());
        core.sync_until(end + us1);
        EXPECT_TRUE(ready_at_probe);
        const bd wb = b.read_bd(tx_ring_addr);
        EXPECT_FALSE(wb.sc & BD_ENET_TX_READY);
        EXPECT_EQ(sc_time(double(wb.ts), SC_NS), end);
    });
}

// The same end, with a register read annotated after it while the core's time is before it: the
// core did not sync for the end, so the read leaves it to its event (the write-back still to
// come, as with the engine's event); run at the read, the descriptor would already be written.
TEST(enet, a_register_access_annotated_after_an_end_left_to_the_core_leaves_it_to_its_event) {
    fresh_simulation();
    run_bench([](bench& b) {
        core_player core;
        const sc_time end = one_long_frame_started_by_the_core(b, core);
        uint32_t v = 0;
        const sc_time delay = end + sc_time(10, SC_NS) - sc_core::sc_time_stamp();
        EXPECT_EQ(b.cpu.transport(tlm::TLM_READ_COMMAND, fec_base + EIR, &v, 4, delay).status, tlm::TLM_OK_RESPONSE);
        EXPECT_FALSE(v & FEC_ENET_TXF) << "the end had not run when the read was made";
        EXPECT_TRUE(b.read_bd(tx_ring_addr).sc & BD_ENET_TX_READY);
        core.run_to(end + us1);
        EXPECT_FALSE(b.read_bd(tx_ring_addr).sc & BD_ENET_TX_READY);
        EXPECT_EQ(b.dut.stats().tx_frames, 1u);
    });
}

// GTS written while a frame is on the wire, GRA unmasked: the graceful stop completes at the
// frame's end. Left to the core, the end still raises GRA (and its interrupt) at the end's time,
// not at the SystemC time the core runs it from.
TEST(enet, a_graceful_stop_completed_by_an_end_left_to_the_core_interrupts_at_the_end) {
    std::vector<sc_time> rises[2];
    sc_time end;
    with_ends_by_event_then_by_core([&](bool by_core, bench& b, core_player& core) {
        constexpr unsigned n = 4;
        b.restart(2, n);
        b.wr(EIMR, FEC_ENET_GRA);
        b.queue_tx(0, n, make_frame(1518, peer_mac, 0));  // 12 us on the wire
        b.wr(TDAR, 0);
        core.sync_until(sc_core::sc_time_stamp() + us1);
        ASSERT_EQ(b.wire.log.size(), 1u);
        end = b.wire.log[0].start + net::wire_time(1518, 1000) - sc_time(96, SC_NS);  // last bit, before the IFG
        b.wr(TCR, TCR_FDEN | TCR_GTS);
        core.run_to(sc_core::sc_time_stamp() + 20 * us1);
        EXPECT_TRUE(b.rd(EIR) & FEC_ENET_GRA);
        rises[by_core] = b.irq_rises[0];
    });
    ASSERT_EQ(rises[0].size(), 1u);
    EXPECT_GE(rises[0][0], end);  // not at the GTS write, 11 us before
    EXPECT_LT(rises[0][0], end + us1);
    EXPECT_EQ(rises[1], rises[0]);
}

TEST(enet, bad_parameters_are_rejected) {
    fresh_simulation();
    enet_params p = test_params();
    p.num_queues = 4;
    EXPECT_THROW(enet("a", p), std::invalid_argument);
    p = test_params();
    p.rx_fifo_bytes = 10;
    EXPECT_THROW(enet("b", p), std::invalid_argument);
    p = test_params();
    p.system_clock_mhz = 0;
    EXPECT_THROW(enet("c", p), std::invalid_argument);
}

}  // namespace
}  // namespace fecsim::test
