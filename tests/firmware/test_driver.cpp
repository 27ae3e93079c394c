// The fec driver port on the fake core (a test double) with the FEC played by hand: bring-up
// programming, XDP verdicts, XDP_TX variants and their cache-line operations, TX completion,
// NAPI budget, doorbell strategies, redirect, the stack path, the legacy path, fault knobs.
#include "tests/firmware/rig.h"

#include "firmware/kernel/swiotlb.h"

#include <nlohmann/json.hpp>

#include <fstream>

using namespace fecsim::test;

namespace {

// The pool balance: pages taken from the buddy allocator = cache + ring + in flight, and in
// flight = the pages the RX ring holds + those on the TX ring / in skbs (`extra`).
void expect_pool_balanced(rig& r, uint64_t extra) {
    page_pool* pool = r.fec().rx_queue(0).pool;
    EXPECT_EQ(pool->hold_cnt() - pool->release_cnt(), pool->cached() + pool->in_ring() + pool->inflight());
    EXPECT_EQ(pool->inflight(), r.fec().rx_ring_size() + extra);
}

// The core's instructions for `frames` UDP frames passed up the stack (XDP_PASS, no socket) in
// one NAPI poll, with the cost table `costs`.
uint64_t pass_instructions(const std::string& costs, int frames) {
    uint64_t instructions = 0;
    on_core_thread([&] {
        rig r([&](system_params& p) {
            p.xdp_prog = "pass";
            p.costs_file = costs;
        });
        r.boot();
        r.core.c = {};
        for (int i = 0; i < frames; ++i) ASSERT_TRUE(r.deliver(make_frame()));
        r.irq();
        EXPECT_EQ(r.fec().driver_stats().napi_polls, 1u);
        EXPECT_EQ(r.sys->stack().stats.udp_no_socket, uint64_t(frames));
        instructions = r.core.c.instructions;
    });
    return instructions;
}

}  // namespace

TEST(fec_driver, open_programs_the_mac_as_fec_restart) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "drop"; });
        r.boot();
        auto reg = [&](uint32_t off) { return r.core.reg(REGS + off); };
        EXPECT_EQ(reg(FEC_ECNTRL), FEC_ECR_ETHEREN | FEC_ECR_EN1588 | FEC_ECR_SPEED | FEC_ECR_BYTESWP);
        EXPECT_EQ(reg(FEC_R_BUFF_SIZE(0)), PKT_MAXBUF_SIZE);
        EXPECT_EQ(reg(FEC_FTRL), PKT_MAXBUF_SIZE);
        EXPECT_EQ(reg(FEC_RACC) & FEC_RACC_SHIFT16, FEC_RACC_SHIFT16);
        EXPECT_EQ(reg(FEC_R_CNTRL), OPT_FRAME_SIZE | 0x04 | FEC_RCR_NLC | (1u << 6));  // no pause: FCE off
        EXPECT_EQ(reg(FEC_X_CNTRL), 0x04u);
        EXPECT_EQ(reg(FEC_X_WMRK), FEC_TXWMRK_STRFWD);
        EXPECT_EQ(reg(FEC_IMASK), FEC_DEFAULT_IMASK);
        EXPECT_EQ(reg(FEC_ADDR_LOW), 0x00049f00u);
        EXPECT_EQ(reg(FEC_ADDR_HIGH), 0x00010000u);
        // coalescing: 200 frames / 1000 us at a 266 MHz AHB clock, in units of 64 AHB cycles:
        // 1000 us x 4156 units/ms (266e6 / 64000, truncated as the driver does) / 1000
        const uint32_t ictt = 4156;
        EXPECT_EQ(reg(FEC_RXIC0), FEC_ITR_EN | FEC_ITR_CLK_SEL | FEC_ITR_ICFT(200) | FEC_ITR_ICTT(ictt));
        EXPECT_EQ(reg(FEC_TXIC0), reg(FEC_RXIC0));
        EXPECT_EQ(reg(FEC_RXIC1), reg(FEC_RXIC0));  // MULTI_QUEUES: rings 1/2 too
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_R_DES_ACTIVE_0], 1u);  // fec_enet_active_rxring
        // Rings: contiguous coherent memory, RX then TX, 32-byte enhanced descriptors.
        EXPECT_EQ(reg(FEC_R_DES_START(0)), POOL);
        EXPECT_EQ(reg(FEC_X_DES_START(0)), POOL + 256 * 32);
        for (uint32_t i = 0; i < 256; ++i) {
            const addr_t bd = r.rx_bd(i);
            const uint16_t sc = r.core.h16(bd + BD_SC);
            EXPECT_EQ(sc, BD_ENET_RX_EMPTY | (i == 255 ? BD_ENET_RX_WRAP : 0)) << i;
            EXPECT_EQ(r.core.h32(bd + BD_ESC), BD_ENET_RX_INT);
            EXPECT_EQ(r.core.h32(bd + BD_BUFADDR) % PAGE_SIZE, 256u);
            EXPECT_GE(r.core.h32(bd + BD_BUFADDR), DRAM);
        }
        EXPECT_EQ(r.core.h16(r.tx_bd(1023) + BD_SC), BD_ENET_TX_WRAP);
        EXPECT_EQ(r.fec().rx_queue(0).pool->params().dma_dir, DMA_BIDIRECTIONAL);
        expect_pool_balanced(r, 0);
        EXPECT_TRUE(r.core.irq_enabled[IRQ]);
    });
}

TEST(fec_driver, legacy_descriptors_and_no_coalescing_when_configured) {
    on_core_thread([] {
        rig r([](system_params& p) {
            p.xdp_prog = "none";
            p.fecs[0].hw.ptp_clock = false;  // fec.descriptor_format = legacy
            p.fecs[0].hw.rx_coalesce_frames = 0;
            p.fecs[0].hw.pause = true;
        });
        r.boot();
        EXPECT_EQ(r.core.reg(REGS + FEC_ECNTRL) & FEC_ECR_EN1588, 0u);
        EXPECT_EQ(r.dsize(), 8u);
        EXPECT_EQ(r.core.reg(REGS + FEC_RXIC0), 0u);
        EXPECT_EQ(r.core.reg(REGS + FEC_R_CNTRL) & FEC_ENET_FCE, FEC_ENET_FCE);
        EXPECT_EQ(r.core.reg(REGS + FEC_OPD), FEC_ENET_OPD_V);
        EXPECT_EQ(r.fec().rx_queue(0).pool->params().dma_dir, DMA_FROM_DEVICE);
        EXPECT_EQ(r.core.reg(REGS + FEC_X_DES_START(0)), POOL + 256 * 8);
    });
}

TEST(fec_driver, xdp_drop_counts_rearms_and_recycles) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "drop"; });
        r.boot();
        std::vector<uint32_t> buf_before;
        for (uint32_t i = 0; i < 10; ++i) buf_before.push_back(r.core.h32(r.rx_bd(i) + BD_BUFADDR));
        r.core.c = {};
        for (int i = 0; i < 10; ++i) ASSERT_TRUE(r.deliver(make_frame()));
        r.irq();
        EXPECT_EQ(r.fec().xdp_stat(RX_XDP_DROP), 10u);
        EXPECT_EQ(r.fec().stats.rx_packets, 10u);
        EXPECT_EQ(r.fec().stats.rx_bytes, 10u * 66);  // pad + frame + FCS, as the page-pool driver counts
        EXPECT_EQ(r.sys->packets(), 10u);
        // prefetch(page_address(page)) once per frame: the page's first (headroom) line.
        uint64_t prefetches = 0;
        for (const auto& [a, n] : r.core.c.prefetch_at) {
            EXPECT_EQ(a % PAGE_SIZE, 0u) << std::hex << a;
            prefetches += n;
        }
        EXPECT_EQ(prefetches, 10u);
        for (uint32_t i = 0; i < 10; ++i) {
            const addr_t bd = r.rx_bd(i);
            EXPECT_EQ(r.core.h16(bd + BD_SC), BD_ENET_RX_EMPTY) << i;  // re-armed, stats bits cleared
            EXPECT_EQ(r.core.h32(bd + BD_ESC), BD_ENET_RX_INT);
            EXPECT_EQ(r.core.h32(bd + BD_BUFADDR) % PAGE_SIZE, 256u);
        }
        // Each frame's refill pops the alloc cache before its XDP_DROP pushes the old page
        // (LIFO), so descriptor i gets the page descriptor i-1 held before.
        for (uint32_t i = 1; i < 10; ++i) EXPECT_EQ(r.core.h32(r.rx_bd(i) + BD_BUFADDR), buf_before[i - 1]) << i;
        expect_pool_balanced(r, 0);
        EXPECT_EQ(r.fec().rx_queue(0).pool->stats().recycle_cached, 10u);
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_R_DES_ACTIVE_0], 10u);  // RDAR once per packet
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_IEVENT], 10u + 1 + 1);  // per packet + IRQ + poll loop
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_IMASK], 2u);            // mask in IRQ, unmask at complete
        EXPECT_EQ(r.core.reg(REGS + FEC_IMASK), FEC_DEFAULT_IMASK);
        EXPECT_EQ(r.core.reg(REGS + FEC_IEVENT), 0u);
        // Per packet: sync_for_cpu of 66 bytes (IVAC + CIVAC) and a drop put of 60 bytes (1 CVAC).
        // The first refill took the slow path: 64 fresh pages x 55 lines.
        EXPECT_EQ(r.core.c.ivac, 10u);
        EXPECT_EQ(r.core.c.civac, 10u);
        EXPECT_EQ(r.core.c.cvac, 10u + 64 * 55);
        // A bad frame (CRC) is counted, not synced, and its buffer reused.
        r.core.c = {};
        const uint32_t idx = r.rx_idx;
        const uint32_t buf = r.core.h32(r.rx_bd(idx) + BD_BUFADDR);
        ASSERT_TRUE(r.deliver(make_frame()));
        r.core.hw16(r.rx_bd(idx) + BD_SC, uint16_t(r.core.h16(r.rx_bd(idx) + BD_SC) | BD_ENET_RX_CR));
        r.irq();
        EXPECT_EQ(r.fec().stats.rx_crc_errors, 1u);
        EXPECT_EQ(r.fec().stats.rx_errors, 1u);
        EXPECT_EQ(r.core.c.line_ops(), 0u);
        EXPECT_EQ(r.core.h32(r.rx_bd(idx) + BD_BUFADDR), buf);
        EXPECT_EQ(r.core.h16(r.rx_bd(idx) + BD_SC), BD_ENET_RX_EMPTY);
    });
}

TEST(fec_driver, xdp2_swaps_macs_and_builds_tx_descriptors) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "xdp2"; });
        r.boot();
        const auto in = make_frame();
        const uint32_t rx_buf = r.core.h32(r.rx_bd(0) + BD_BUFADDR);
        ASSERT_TRUE(r.deliver(in));
        ASSERT_TRUE(r.deliver(make_frame(60, 6)));  // TCP: xdp2 drops it
        r.core.c = {};
        r.irq();
        EXPECT_EQ(r.fec().xdp_stat(RX_XDP_TX), 1u);
        EXPECT_EQ(r.fec().xdp_stat(RX_XDP_DROP), 1u);
        ASSERT_NE(r.sys->xdp_proto_counts(), nullptr);
        EXPECT_EQ((*r.sys->xdp_proto_counts())[17], 1u);
        EXPECT_EQ((*r.sys->xdp_proto_counts())[6], 1u);
        const addr_t bd = r.tx_bd(0);
        EXPECT_EQ(r.core.h16(bd + BD_SC), BD_ENET_TX_READY | BD_ENET_TX_INTR | BD_ENET_TX_LAST | BD_ENET_TX_TC);
        EXPECT_EQ(r.core.h32(bd + BD_BUFADDR), rx_buf + 2);  // page + 258: past the SHIFT16 pad
        EXPECT_EQ(r.core.h16(bd + BD_DATLEN), 60u);
        EXPECT_EQ(r.core.h32(bd + BD_ESC), BD_ENET_TX_INT | FEC_TX_BD_FTYPE(0));
        EXPECT_EQ(r.core.h32(bd + BD_BDU), 0u);
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], 1u);
        const auto out = r.transmit();
        ASSERT_EQ(out.size(), 1u);
        std::vector<uint8_t> want = in;
        std::swap_ranges(want.begin(), want.begin() + 6, want.begin() + 6);
        EXPECT_EQ(out[0], want);  // byte for byte: MACs swapped, the rest untouched
        expect_pool_balanced(r, 1);  // the TX ring holds one page
        r.irq();                      // TXF: completion returns the page
        EXPECT_EQ(r.fec().stats.tx_packets, 1u);
        EXPECT_EQ(r.fec().stats.tx_bytes, 60u);
        expect_pool_balanced(r, 0);
        EXPECT_EQ(r.core.h32(bd + BD_BUFADDR), 0u);
    });
}

// Each xdp_tx_variant issues exactly the line operations of fec-driver.md §11 per packet.
class xdp_tx_variants : public ::testing::TestWithParam<const char*> {};

TEST_P(xdp_tx_variants, line_operations_per_packet) {
    const std::string v = GetParam();
    on_core_thread([&] {
        rig r([&](system_params& p) {
            p.xdp_prog = "xdp2";
            p.driver.tx_variant = v == "v4" ? xdp_tx_variant::v4 : v == "sync_len" ? xdp_tx_variant::sync_len
                                                                                   : xdp_tx_variant::merged;
        });
        r.boot();
        // Warm-up: the first refill takes the pool's slow path.
        ASSERT_TRUE(r.deliver(make_frame()));
        r.irq();
        r.transmit();
        r.irq();
        constexpr int n = 8;
        r.core.c = {};
        std::vector<uint32_t> pages;
        for (int i = 0; i < n; ++i) {
            pages.push_back(r.core.h32(r.rx_bd(r.rx_idx) + BD_BUFADDR) - 256);
            ASSERT_TRUE(r.deliver(make_frame()));
        }
        r.irq();
        const auto xmit = r.core.c;
        EXPECT_EQ(xmit.ivac, uint64_t(n));   // RX sync_for_cpu(66): 1 IVAC + 1 CIVAC
        EXPECT_EQ(xmit.civac, uint64_t(n));
        EXPECT_EQ(xmit.cvac, uint64_t(n));   // XDP_TX sync_for_device: 60 bytes from +258 = 1 line
        for (uint32_t pg : pages) EXPECT_EQ(xmit.cvac_at.count(pg + 256), 1u);
        r.core.c = {};
        ASSERT_EQ(r.transmit().size(), size_t(n));
        r.irq();
        const auto done = r.core.c;
        // Completion: v4 returns the frame with a full max_len sync (55 lines), the others put 0 (1 line).
        EXPECT_EQ(done.cvac, uint64_t(n) * (v == "v4" ? 55 : 1));
        EXPECT_EQ(done.ivac + done.civac, 0u);
        if (v == "v4")
            for (uint32_t pg : pages) {
                EXPECT_EQ(done.cvac_at.count(pg + 256), 1u);
                EXPECT_EQ(done.cvac_at.count(pg + 3776 - 64), 1u);
                EXPECT_EQ(done.cvac_at.count(pg + 3776), 0u);
            }
        // The conversion wrote a real xdp_frame at page+0 (data = page+258, len 60, headroom 216).
        for (uint32_t pg : pages) {
            uint64_t data;
            std::memcpy(&data, r.core.host(pg, 8), 8);
            uint16_t len, headroom;
            std::memcpy(&len, r.core.host(pg + 8, 2), 2);
            std::memcpy(&headroom, r.core.host(pg + 10, 2), 2);
            if (v == "merged") {
                EXPECT_EQ(data, 0u) << "merged must not convert";
            } else {
                EXPECT_EQ(data, pg + 258u);
                EXPECT_EQ(len, 60u);
                EXPECT_EQ(headroom, 258u - SIZEOF_XDP_FRAME);
            }
        }
        EXPECT_EQ(r.fec().xdp_stat(RX_XDP_TX), uint64_t(n) + 1);
        expect_pool_balanced(r, 0);
    });
}
INSTANTIATE_TEST_SUITE_P(fec_driver, xdp_tx_variants, ::testing::Values("v4", "sync_len", "merged"));

TEST(fec_driver, napi_budget_is_respected) {
    on_core_thread([] {
        rig r([](system_params& p) {
            p.xdp_prog = "drop";
            p.driver.napi_budget = 16;
        });
        r.boot();
        for (int i = 0; i < 40; ++i) ASSERT_TRUE(r.deliver(make_frame()));
        std::vector<uint64_t> per_poll;
        uint64_t last = 0;
        r.user_hook = [&](addr_t a, uint32_t v) {
            if (a == REGS + FEC_IMASK && v == FEC_DEFAULT_IMASK) per_poll.push_back(r.sys->packets() - last);
        };
        r.irq();
        r.user_hook = nullptr;
        EXPECT_EQ(r.fec().driver_stats().napi_polls, 3u);  // 16 + 16 + 8
        EXPECT_EQ(per_poll, std::vector<uint64_t>{40});    // unmasked once, after the last poll
        nlohmann::json j;
        r.sys->report(j);
        EXPECT_EQ(j["dut"]["driver"]["napi_budget_exhausted"], 2);
        EXPECT_EQ(j["dut"]["xdp"]["drop"], 40);
        EXPECT_EQ(j["dut"]["packets"], 40);
    });
}

TEST(fec_driver, tdar_per_frame_versus_per_poll) {
    for (auto mode : {tx_doorbell_mode::per_frame, tx_doorbell_mode::per_poll}) {
        on_core_thread([&] {
            rig r([&](system_params& p) {
                p.xdp_prog = "tx";
                p.driver.tx_doorbell = mode;
            });
            r.boot();
            for (int i = 0; i < 10; ++i) ASSERT_TRUE(r.deliver(make_frame()));
            r.core.c = {};
            r.irq();
            EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], mode == tx_doorbell_mode::per_frame ? 10u : 1u);
            EXPECT_EQ(r.transmit().size(), 10u);
        });
    }
}

TEST(fec_driver, err006358_keepalive_and_err007885_check) {
    on_core_thread([] {
        rig r([](system_params& p) {
            p.xdp_prog = "tx";
            p.driver.err007885_xdp_tdar_check = true;
        });
        r.boot();
        ASSERT_TRUE(r.deliver(make_frame()));
        r.core.reg(REGS + FEC_X_DES_ACTIVE_0) = 1u << 24;  // TDAR busy: the check skips the write
        r.core.c = {};
        r.irq();
        EXPECT_EQ(r.core.c.mmio_reads_at[FEC_X_DES_ACTIVE_0], 4u + 1);  // 4 checks + ERR006358 read
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], 0u);
        // TDAR now reads 0 with a frame still queued: the next TX clean kicks it (ERR006358).
        r.core.reg(REGS + FEC_X_DES_ACTIVE_0) = 0;
        r.core.reg(REGS + FEC_IEVENT) |= FEC_ENET_TXF_0;
        r.core.c = {};
        r.irq();
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], 1u);
        EXPECT_EQ(r.fec().driver_stats().err006358_kicks, 1u);
    });
}

// 6.1's fec_enet_txq_submit_skb on an ERR007885 SoC (i.MX8MQ/8MP): wmb, ready bit, wmb, bd.cur,
// then TDAR read up to 4 times and written only when a read returns 0, per frame (the compiled
// driver never reads xmit_more: pktgen's burst saves no doorbell).
TEST(fec_driver, start_xmit_doorbell_has_the_err007885_check) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "none"; });
        r.boot();
        skb_allocator& skbs = r.sys->skbs();
        auto send = [&] {
            sk_buff* skb = skbs.netdev_alloc_skb(60);
            skb->len = 60;
            r.core.c = {};
            EXPECT_EQ(r.fec().ndo_start_xmit(skb), NETDEV_TX_OK);
        };
        send();  // TDAR idle: one read, one write
        EXPECT_EQ(r.core.c.mmio_reads_at[FEC_X_DES_ACTIVE_0], 1u);
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], 1u);
        EXPECT_EQ(r.core.c.dsb, 3u);  // the map's clean + the two wmb
        r.core.reg(REGS + FEC_X_DES_ACTIVE_0) = 1u << 24;  // the uDMA still busy: no write
        send();
        EXPECT_EQ(r.core.c.mmio_reads_at[FEC_X_DES_ACTIVE_0], 4u);
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], 0u);
        EXPECT_EQ(r.fec().driver_stats().tdar_reads, 5u);
        EXPECT_EQ(r.fec().driver_stats().tdar_writes, 1u);
    });
}

TEST(fec_driver, redirect_back_out_of_the_same_port) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "redirect"; });
        r.boot();
        const auto in = make_frame();
        for (int i = 0; i < 3; ++i) ASSERT_TRUE(r.deliver(in));
        r.irq();  // warm-up of the pool's slow path
        auto out = r.transmit();
        r.irq();
        r.core.c = {};
        for (int i = 0; i < 4; ++i) ASSERT_TRUE(r.deliver(in));
        r.irq();
        EXPECT_EQ(r.fec().xdp_stat(RX_XDP_REDIRECT), 7u);
        // ndo_xdp_xmit: one dma_map_single(60, TO_DEVICE) clean per frame, TDAR per frame (v6.6)
        EXPECT_EQ(r.core.c.cvac, 4u);
        EXPECT_EQ(r.core.c.mmio_writes_at[FEC_X_DES_ACTIVE_0], 4u);
        out = r.transmit();
        ASSERT_EQ(out.size(), 4u);
        std::vector<uint8_t> want = in;
        std::swap_ranges(want.begin(), want.begin() + 6, want.begin() + 6);
        EXPECT_EQ(out[0], want);
        r.core.c = {};
        r.irq();
        // Completion: unmap (no cache op) + xdp_return_frame_rx_napi: full max_len put, 55 lines.
        EXPECT_EQ(r.core.c.cvac, 4u * 55);
        EXPECT_EQ(r.fec().stats.tx_packets, 7u);
        expect_pool_balanced(r, 0);
    });
}

TEST(fec_driver, xdp_pass_goes_up_the_stack_and_recycles_full_length) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "pass"; });
        r.boot();
        ASSERT_TRUE(r.deliver(make_frame()));
        r.irq();
        r.core.c = {};
        for (int i = 0; i < 5; ++i) ASSERT_TRUE(r.deliver(make_frame()));
        r.irq();
        EXPECT_EQ(r.fec().xdp_stat(RX_XDP_PASS), 6u);
        EXPECT_EQ(r.sys->stack().stats.udp_no_socket, 6u);
        EXPECT_EQ(r.core.c.cvac, 5u * 55);  // skb freed: full-length recycle
        page_pool* pool = r.fec().rx_queue(0).pool;
        EXPECT_EQ(pool->stats().recycle_ring, 6u);  // v6.6 fec sets no pp->p.napi: via the ptr_ring
        expect_pool_balanced(r, 0);
    });
}

// GRO passes a UDP frame up at once: the GRO_NORMAL walk (napi_gro_receive_normal) is charged per
// frame, the TCP merge's (napi_gro_receive) never. Two tables, each one key dearer by 1000.
TEST(fec_driver, gro_passes_udp_up_at_once_on_the_normal_walk) {
    const uint64_t base = pass_instructions(costs_path(), 5);
    EXPECT_EQ(pass_instructions(costs_with_dearer("napi_gro_receive_normal"), 5), base + 5 * 1000);
    EXPECT_EQ(pass_instructions(costs_with_dearer("napi_gro_receive"), 5), base);
}

// gro_normal_one batches what GRO passes up: a list goes up when it holds gro_normal_batch (8)
// skbs, and at the end of the poll. 20 UDP frames in one poll: 8 + 8 + 4, so the list receive's
// per-list part is charged 3 times, its per-skb part (with __netif_receive_skb_core) 20 times,
// and its loops' way back to their heads for every skb but a list's first, 7 + 7 + 3 times.
TEST(fec_driver, gro_passes_udp_up_in_batches_of_eight) {
    const uint64_t base = pass_instructions(costs_path(), 20);
    EXPECT_EQ(pass_instructions(costs_with_dearer("netif_receive_skb_list_internal"), 20), base + 3 * 1000);
    EXPECT_EQ(pass_instructions(costs_with_dearer("netif_receive_skb_core"), 20), base + 20 * 1000);
    EXPECT_EQ(pass_instructions(costs_with_dearer("netif_receive_skb_list_next"), 20), base + 17 * 1000);
}

TEST(fec_driver, page_pool_no_recycle_releases_pages) {
    on_core_thread([] {
        rig r([](system_params& p) {
            p.xdp_prog = "none";
            p.driver.rx_buffers = rx_buffer_mode::page_pool_no_recycle;
            p.stack.sink = stack_sink::udp_socket;
        });
        r.boot();
        const uint64_t free0 = r.sys->kern().pages.free_pages();
        for (int i = 0; i < 5; ++i) ASSERT_TRUE(r.deliver(make_frame()));
        r.irq();
        page_pool* pool = r.fec().rx_queue(0).pool;
        EXPECT_EQ(pool->release_cnt(), 5u);
        EXPECT_EQ(pool->stats().recycle_ring + pool->stats().recycle_cached, 0u);
        EXPECT_EQ(r.sys->stack().stats.user_reads, 5u);
        // 64 fresh pages came from the slow path, 5 were released back after the reads; one
        // more page became the first sk_buff slab.
        EXPECT_EQ(free0 - r.sys->kern().pages.free_pages(), 64u - 5u + 1u);
        expect_pool_balanced(r, 0);
    });
}

TEST(fec_driver, legacy_copybreak_below_256_map_unmap_above) {
    on_core_thread([] {
        rig r([](system_params& p) {
            p.xdp_prog = "none";
            p.driver.rx_buffers = rx_buffer_mode::legacy;
        });
        r.boot();
        EXPECT_EQ(r.fec().rx_ring_size(), 512u);
        const uint32_t buf0 = r.core.h32(r.rx_bd(0) + BD_BUFADDR);
        EXPECT_EQ(buf0 % 64, 0u);  // rx_align 0x3f on MULTI_QUEUES SoCs
        r.core.c = {};
        ASSERT_TRUE(r.deliver(make_frame(200)));  // 200 + 2 pad: length 202 <= 256 -> copybreak
        r.irq();
        EXPECT_EQ(r.fec().driver_stats().legacy_copybreak, 1u);
        EXPECT_EQ(r.fec().driver_stats().legacy_map, 512u);  // only the ones from open
        EXPECT_EQ(r.core.c.ivac + r.core.c.civac, 32u);      // whole-buffer sync_for_cpu (1985 B)
        EXPECT_EQ(r.core.c.cvac, 32u);                       // and sync_for_device back
        EXPECT_EQ(r.core.h32(r.rx_bd(0) + BD_BUFADDR), buf0);  // same buffer stays in the ring
        r.core.c = {};
        ASSERT_TRUE(r.deliver(make_frame(1000)));
        r.irq();
        EXPECT_EQ(r.fec().driver_stats().legacy_map, 513u);
        EXPECT_EQ(r.core.c.ivac + r.core.c.civac, 32u);  // unmap
        EXPECT_EQ(r.core.c.cvac, 32u);                   // map of the new buffer
        EXPECT_NE(r.core.h32(r.rx_bd(1) + BD_BUFADDR), 0u);
        EXPECT_EQ(r.fec().stats.rx_packets, 2u);
        EXPECT_EQ(r.sys->stack().stats.received, 2u);
    });
}

// DRAM above 4 GiB (served first, beyond the FEC's 32-bit mask): every RX buffer the FEC sees is
// a swiotlb slot, and the stack reads the frame's bytes (it parses them: UDP to the socket). Per
// frame in steady state, legacy bounces twice (the unmap's copy back, the new buffer's map) and
// page_pool once (its sync for the CPU: the recycled page keeps its slot). The core's instructions
// per frame, with and without the high zone, differ by exactly what the bounces charge.
TEST(fec_driver, rx_buffers_above_4g_are_bounced) {
    struct run {
        uint64_t instructions = 0, bounces = 0, maps = 0;
    };
    auto receive = [](rx_buffer_mode mode, bool high) {
        run out;
        on_core_thread([&] {
            rig r([&](system_params& p) {
                p.xdp_prog = "none";
                p.driver.rx_buffers = mode;
                p.stack.sink = stack_sink::udp_socket;
                if (high) p.mem.dram.push_back({HIGH_DRAM, HIGH_DRAM_SIZE}), p.mem.swiotlb_bytes = SMALL_SWIOTLB;
            });
            r.boot();
            const auto* tlb = r.sys->kern().io_tlb.get();
            EXPECT_EQ(tlb != nullptr, high);
            for (uint32_t i = 0; i < r.fec().rx_ring_size(); ++i) {
                const uint32_t buf = r.core.h32(r.rx_bd(i) + BD_BUFADDR);
                EXPECT_EQ(tlb && tlb->is_swiotlb_buffer(buf), high) << i;
            }
            for (int i = 0; i < 4; ++i) ASSERT_TRUE(r.deliver(make_frame(1000)));  // warm
            r.irq();
            r.core.c = {};
            r.core.entered.clear();
            for (int i = 0; i < 8; ++i) ASSERT_TRUE(r.deliver(make_frame(1000)));
            r.irq();
            EXPECT_EQ(r.sys->stack().stats.user_reads, 12u);
            EXPECT_EQ(r.sys->stack().stats.non_ip, 0u);
            out.instructions = r.core.c.instructions;
            out.bounces = r.core.entered["swiotlb_bounce"];
            out.maps = r.core.entered["swiotlb_map"];
        });
        return out;
    };
    const run legacy = receive(rx_buffer_mode::legacy, false), legacy_high = receive(rx_buffer_mode::legacy, true);
    const run pool = receive(rx_buffer_mode::page_pool, false), pool_high = receive(rx_buffer_mode::page_pool, true);
    EXPECT_EQ(legacy.bounces + pool.bounces, 0u);
    EXPECT_EQ(legacy_high.bounces, 2u * 8);
    EXPECT_EQ(legacy_high.maps, 8u);
    EXPECT_EQ(pool_high.bounces, 8u);
    EXPECT_EQ(pool_high.maps, 0u);
    const cost_table t = cost_table::load(costs_path());
    // 1985-byte buffers: __memcpy's loop runs 29 times; 1000 + 2 pad + 4 FCS bytes synced: 14.
    // The ring's buffers took slots 0..511 at open and are released in order, slots 4..11 in the
    // measured poll, each merging the free slots before it: 4 + 5 + ... + 11 = 60 passes.
    const uint64_t legacy_bounce = t[path::swiotlb_bounce] + 29 * t[path::swiotlb_bounce_line];
    EXPECT_EQ(legacy_high.instructions - legacy.instructions,
              8 * (t[path::swiotlb_map] + t[path::swiotlb_unmap] + t[path::swiotlb_sync_single] + 2 * legacy_bounce) +
                  60 * t[path::swiotlb_release_merge]);
    EXPECT_EQ(pool_high.instructions - pool.instructions,
              8 * (2 * t[path::swiotlb_sync_single] + t[path::swiotlb_bounce] + 14 * t[path::swiotlb_bounce_line]));
}

TEST(fec_driver, fault_knobs_change_the_maintenance) {
    auto line_ops = [](bool skip, int tx_bytes, size_t len) {
        fake_core::counters c;
        on_core_thread([&] {
            rig r([&](system_params& p) {
                p.xdp_prog = "tx";
                p.driver.skip_rx_sync = skip;
                p.driver.tx_sync_bytes = tx_bytes;
            });
            r.boot();
            ASSERT_TRUE(r.deliver(make_frame(len)));
            r.irq();
            r.core.c = {};
            ASSERT_TRUE(r.deliver(make_frame(len)));
            r.irq();
            c = r.core.c;
        });
        return c;
    };
    const auto good = line_ops(false, -1, 1514);
    EXPECT_EQ(good.ivac + good.civac, 24u);
    EXPECT_EQ(good.cvac, 24u);
    const auto no_rx_sync = line_ops(true, -1, 1514);
    EXPECT_EQ(no_rx_sync.ivac + no_rx_sync.civac, 0u);
    EXPECT_EQ(no_rx_sync.cvac, 24u);
    const auto short_tx = line_ops(false, 64, 1514);
    EXPECT_EQ(short_tx.cvac, 2u);  // 64 bytes from +258 spans two lines instead of 24
}

TEST(fec_driver, start_xmit_single_bd_and_scatter_gather) {
    on_core_thread([] {
        rig r([](system_params& p) { p.xdp_prog = "none"; });
        r.boot();
        kernel& k = r.sys->kern();
        skb_allocator& skbs = r.sys->skbs();
        const auto f = make_frame(100);
        sk_buff* skb = skbs.netdev_alloc_skb(100);
        k.core.write(skb->data, f.data(), f.size());
        skb->len = 100;
        r.core.c = {};
        EXPECT_EQ(r.fec().ndo_start_xmit(skb), NETDEV_TX_OK);
        EXPECT_EQ(r.core.c.cvac, 2u);  // dma_map_single(100, TO_DEVICE) from a 64-aligned head + 64
        EXPECT_EQ(r.core.h16(r.tx_bd(0) + BD_SC), BD_ENET_TX_READY | BD_ENET_TX_INTR | BD_ENET_TX_LAST | BD_ENET_TX_TC);
        auto out = r.transmit();
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0], f);
        // Scatter-gather: linear 40 bytes + 2 fragments.
        sk_buff* sg = skbs.netdev_alloc_skb(64);
        page* fp = k.pages.alloc_pages();
        k.core.write(sg->data, f.data(), 40);
        k.core.write(fp->addr, f.data() + 40, 60);
        fp->refcount = 3;  // the skb's fragments hold references
        sg->nr_frags = 2;
        sg->frags[0] = {fp->addr, 30};
        sg->frags[1] = {fp->addr + 30, 30};
        sg->len = 100;
        EXPECT_EQ(r.fec().ndo_start_xmit(sg), NETDEV_TX_OK);
        EXPECT_EQ(r.core.h16(r.tx_bd(1) + BD_SC) & (BD_ENET_TX_LAST | BD_ENET_TX_READY), BD_ENET_TX_READY);
        EXPECT_EQ(r.core.h16(r.tx_bd(3) + BD_SC) & (BD_ENET_TX_LAST | BD_ENET_TX_INTR), BD_ENET_TX_LAST | BD_ENET_TX_INTR);
        out = r.transmit();
        ASSERT_EQ(out.size(), 3u);  // the hand-played FEC returns each BD's bytes
        std::vector<uint8_t> joined;
        for (auto& b : out) joined.insert(joined.end(), b.begin(), b.end());
        EXPECT_EQ(joined, f);
        const uint64_t live = skbs.live();
        ASSERT_GE(live, 2u);
        r.irq();  // completion frees both skbs (napi_consume_skb)
        EXPECT_EQ(r.fec().stats.tx_packets, 2u);
        EXPECT_EQ(r.fec().stats.tx_bytes, 200u);
        EXPECT_EQ(skbs.live(), live - 2);
        EXPECT_EQ(fp->refcount, 1);
    });
}

TEST(fec_driver, generic_xdp_transmits_through_start_xmit) {
    on_core_thread([] {
        rig r([](system_params& p) {
            p.xdp_prog = "xdp2";
            p.driver.xdp_mode = xdp_attach_mode::generic;
        });
        r.boot();
        EXPECT_EQ(r.fec().rx_queue(0).pool->params().dma_dir, DMA_FROM_DEVICE);
        const auto in = make_frame();
        ASSERT_TRUE(r.deliver(in));
        r.irq();
        nlohmann::json j;
        r.sys->report(j);
        EXPECT_EQ(j["dut"]["xdp"]["tx"], 1);
        const auto out = r.transmit();
        ASSERT_EQ(out.size(), 1u);
        std::vector<uint8_t> want = in;
        std::swap_ranges(want.begin(), want.begin() + 6, want.begin() + 6);
        EXPECT_EQ(out[0], want);
        r.irq();
        expect_pool_balanced(r, 0);
    });
}

TEST(linux_system, bad_parameters_are_clear_errors) {
    on_core_thread([] {
    fake_core core;
    auto make = [&](auto&& change) {
        system_params p = default_params();
        change(p);
        return linux_system(core, p);
    };
    EXPECT_THROW(make([](system_params& p) { p.xdp_prog = "xdp3"; }), std::invalid_argument);
    EXPECT_THROW(make([](system_params& p) { p.driver.rx_buffers = rx_buffer_mode::legacy; }), std::invalid_argument);
    EXPECT_THROW(make([](system_params& p) { p.costs_file = "/nonexistent.json"; }), fecsim::config_error);
    EXPECT_THROW(make([](system_params& p) { p.fecs.clear(); }), std::invalid_argument);
    EXPECT_THROW(make([](system_params& p) { p.xdp_redirect_ifindex = 5; }), std::invalid_argument);
    EXPECT_THROW(make([](system_params& p) { p.fecs[0].hw.rx_coalesce_usecs = 60000; }), std::invalid_argument);
    try {
        make([](system_params& p) { p.xdp_prog = "xdp3"; });
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("xdp2"), std::string::npos) << e.what();
    }
    });
}

TEST(linux_system, driver_section_of_the_config) {
    on_core_thread([] {
    nlohmann::json root = {{"driver", {{"xdp_prog", "redirect"}, {"xdp_mode", "native"}, {"xdp_tx_variant", "v4"},
                                       {"xdp_redirect_ifindex", 1}, {"rx_buffers", "legacy"}, {"tx_doorbell", "per_poll"},
                                       {"napi_budget", 32}, {"rx_ring_size", 128}, {"tx_ring_size", 512},
                                       {"rx_copybreak", 128}, {"err007885_xdp_tdar_check", true}, {"costs", "linux-6.6"},
                                       {"fault", {{"skip_rx_sync", true}, {"tx_sync_bytes", 0}}},
                                       {"stack", {{"sink", "udp_socket"}, {"socket_queue_limit", 9},
                                                  {"tcp", {{"port", 80}, {"rmem_default", 65536}, {"rmem_max", 1 << 20},
                                                           {"moderate_rcvbuf", false}, {"read_bytes", 8192}, {"mtu", 9000}}}}}}},
                           {"fec", {{"descriptor_format", "legacy"}, {"system_clock_mhz", 133.0},
                                    {"rx_coalesce", {{"frames", 1}, {"usecs", 10}}}}}};
    system_params p;
    p.apply_driver_config(fecsim::config_view(root, "driver"), "/cfg");
    EXPECT_EQ(p.xdp_prog, "redirect");
    EXPECT_EQ(p.driver.tx_variant, xdp_tx_variant::v4);
    EXPECT_EQ(p.driver.rx_buffers, rx_buffer_mode::legacy);
    EXPECT_EQ(p.driver.tx_doorbell, tx_doorbell_mode::per_poll);
    EXPECT_EQ(p.driver.napi_budget, 32);
    EXPECT_EQ(p.driver.rx_ring_size, 128);
    EXPECT_EQ(p.driver.tx_sync_bytes, 0);
    EXPECT_TRUE(p.driver.skip_rx_sync);
    EXPECT_EQ(p.stack.sink, stack_sink::udp_socket);
    EXPECT_EQ(p.stack.tcp.port, 80);
    EXPECT_EQ(p.stack.tcp.rmem_default, 65536u);
    EXPECT_EQ(p.stack.tcp.rmem_max, 1u << 20);
    EXPECT_FALSE(p.stack.tcp.moderate_rcvbuf);
    EXPECT_EQ(p.stack.tcp.read_bytes, 8192u);
    EXPECT_EQ(p.stack.tcp.mtu, 9000);
    EXPECT_EQ(p.costs_file, "/cfg/costs/linux-6.6.json");
    fec_hw_params hw;
    apply_fec_config(hw, fecsim::config_view(root, "fec"));
    EXPECT_FALSE(hw.ptp_clock);
    EXPECT_EQ(hw.rx_coalesce_frames, 1u);
    EXPECT_EQ(hw.rx_coalesce_usecs, 10u);
    EXPECT_DOUBLE_EQ(hw.ahb_clock_hz, 133e6);
    });
}
