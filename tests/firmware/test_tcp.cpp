// The DUT's TCP receive path on the fake core: a hand-built client's segments go in through the
// RX ring, the DUT's ACKs come out of the TX ring, and the reader's bytes are checked against
// the payload pattern in the user buffer.
#include "tests/firmware/rig.h"

#include <optional>

namespace fecsim::test {
namespace {

constexpr uint32_t MSS = 1448;
constexpr uint32_t CLIENT_ISN = 0x10000000;

uint8_t payload_byte(uint64_t k) { return uint8_t(uint32_t(k / 4) >> (8 * (3 - k % 4))); }
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v)); }
uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
uint32_t get32(const uint8_t* p) { return uint32_t(get16(p)) << 16 | get16(p + 2); }

// What the DUT sent, parsed.
struct dut_seg {
    uint8_t flags = 0;
    uint32_t seq = 0, ack = 0, window = 0, tsecr = 0;
    uint16_t mss = 0;
    int wscale = -1;
    bool sack_perm = false;
    std::vector<std::pair<uint32_t, uint32_t>> sack;
};

std::optional<dut_seg> parse(const std::vector<uint8_t>& f) {
    if (f.size() < 54 || f[12] != 0x08 || f[13] != 0 || f[23] != 6) return std::nullopt;
    const uint8_t* th = f.data() + 34;
    dut_seg s;
    s.seq = get32(th + 4), s.ack = get32(th + 8), s.flags = th[13], s.window = get16(th + 14);
    const uint32_t doff = (th[12] >> 4) * 4u;
    for (uint32_t i = 20; i < doff;) {
        const uint8_t k = th[i];
        if (k == 1) { ++i; continue; }
        if (k == 0) break;
        const uint8_t len = th[i + 1];
        if (k == 2) s.mss = get16(th + i + 2);
        if (k == 3) s.wscale = th[i + 2];
        if (k == 4) s.sack_perm = true;
        if (k == 8) s.tsecr = get32(th + i + 6);
        if (k == 5)
            for (uint32_t b = i + 2; b + 8 <= i + len; b += 8) s.sack.push_back({get32(th + b), get32(th + b + 4)});
        i += len;
    }
    return s;
}

// The client end: builds frames as Linux sends them (NOP NOP TS on every segment after the SYN).
struct client {
    rig& r;
    uint32_t tsval = 1000;
    std::vector<uint8_t> read;  // what the DUT's reader got, in order

    explicit client(rig& rr) : r(rr) {
        r.sys->stack().tcp_proto().on_read = [this](addr_t a, uint32_t n) {
            const uint8_t* b = r.core.host(a, n);
            read.insert(read.end(), b, b + n);
        };
    }

    std::vector<uint8_t> frame(uint8_t flags, uint32_t seq, uint32_t ack, uint64_t off, uint32_t len, bool syn_opts = false) {
        const uint32_t optlen = syn_opts ? 20 : 12;
        std::vector<uint8_t> f(14 + 20 + 20 + optlen + len, 0);
        const uint8_t dst[6] = {0x00, 0x04, 0x9f, 0x00, 0x00, 0x01}, src[6] = {0x00, 0x04, 0x9f, 0x00, 0x00, 0x02};
        std::memcpy(f.data(), dst, 6);
        std::memcpy(f.data() + 6, src, 6);
        f[12] = 0x08;
        uint8_t* ip = f.data() + 14;
        ip[0] = 0x45, put16(ip + 2, uint16_t(f.size() - 14)), ip[6] = 0x40, ip[8] = 64, ip[9] = 6;
        put32(ip + 12, 0xc6120001), put32(ip + 16, 0xc612002a);
        uint8_t* th = ip + 20;
        put16(th, 41000), put16(th + 2, 5001), put32(th + 4, seq), put32(th + 8, ack);
        th[12] = uint8_t((20 + optlen) / 4 << 4), th[13] = flags, put16(th + 14, syn_opts ? 64240 : 502);
        uint8_t* o = th + 20;
        if (syn_opts) {
            const uint8_t so[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 7};
            std::memcpy(o, so, sizeof so);
            put32(o + 8, tsval);
        } else {
            o[0] = o[1] = 1, o[2] = 8, o[3] = 10, put32(o + 4, tsval), put32(o + 8, 0);
        }
        for (uint32_t i = 0; i < len; ++i) th[20 + optlen + i] = payload_byte(off + i);
        return f;
    }

    std::vector<dut_seg> drain() {
        std::vector<dut_seg> out;
        for (auto& f : r.transmit())
            if (auto s = parse(f)) out.push_back(*s);
        return out;
    }

    uint32_t dut_isn = 0;
    std::vector<dut_seg> handshake() {
        EXPECT_TRUE(r.deliver(frame(TCPHDR_SYN, CLIENT_ISN, 0, 0, 0, true)));
        r.irq();
        auto synack = drain();
        EXPECT_EQ(synack.size(), 1u);
        if (synack.empty()) return synack;
        dut_isn = synack[0].seq;
        EXPECT_TRUE(r.deliver(frame(TCPHDR_ACK, CLIENT_ISN + 1, dut_isn + 1, 0, 0)));
        r.irq();
        EXPECT_TRUE(drain().empty());
        return synack;
    }

    // Data segment `i` (stream offset i * MSS) into the RX ring.
    void segment(uint32_t i, uint8_t flags = TCPHDR_ACK) {
        ASSERT_TRUE(r.deliver(frame(flags, CLIENT_ISN + 1 + i * MSS, dut_isn + 1, uint64_t(i) * MSS, MSS)));
    }
    uint32_t seq_end(uint32_t i) const { return CLIENT_ISN + 1 + (i + 1) * MSS; }

    void expect_read_in_order(uint64_t bytes) {
        ASSERT_EQ(read.size(), bytes);
        for (uint64_t k = 0; k < bytes; ++k)
            if (read[k] != payload_byte(k)) FAIL() << "byte " << k << " read as " << int(read[k]);
    }
};

class tcp_rx : public ::testing::TestWithParam<const char*> {};

// The TCP receiver (no XDP program) booted with `configure`'s settings and a client past its
// handshake; `body` then runs on the core's thread.
void connected(const std::function<void(system_params&)>& configure,
               const std::function<void(rig&, client&)>& body) {
    on_core_thread([&] {
        rig r([&](system_params& p) {
            p.xdp_prog = "none";
            configure(p);
        });
        r.boot();
        client c(r);
        c.handshake();
        body(r, c);
    });
}
void connected(const std::function<void(rig&, client&)>& body) {
    connected([](system_params&) {}, body);
}

TEST_P(tcp_rx, handshake_then_every_byte_in_order_through_gro) {
    const std::string mode = GetParam();
    on_core_thread([&] {
        rig r([&](system_params& p) {
            p.xdp_prog = "none";
            p.driver.rx_buffers = mode == "legacy" ? rx_buffer_mode::legacy
                                  : mode == "page_pool" ? rx_buffer_mode::page_pool
                                                        : rx_buffer_mode::page_pool_no_recycle;
        });
        r.boot();
        const uint64_t ring_skbs = r.sys->skbs().live();  // legacy: the RX ring's skbs
        client c(r);
        auto synack = c.handshake();
        ASSERT_EQ(synack.size(), 1u);
        EXPECT_EQ(synack[0].flags, TCPHDR_SYN | TCPHDR_ACK);
        EXPECT_EQ(synack[0].ack, CLIENT_ISN + 1);
        EXPECT_EQ(synack[0].mss, 1460);
        EXPECT_TRUE(synack[0].sack_perm);
        EXPECT_EQ(synack[0].wscale, 7);  // ilog2(tcp_rmem[2] = 6 MiB) - 15
        EXPECT_EQ(synack[0].tsecr, c.tsval);
        EXPECT_EQ(synack[0].window, 65160u);  // tcp_rmem[1] / 2 rounded down to the MSS

        const uint32_t n = 240, batch = 8;
        uint32_t last_ack = 0;
        for (uint32_t i = 0; i < n; i += batch) {
            for (uint32_t j = i; j < i + batch; ++j) c.segment(j);
            r.irq();
            for (auto& s : c.drain()) last_ack = s.ack;
        }
        auto& tcp = r.sys->stack().tcp_proto();
        c.expect_read_in_order(uint64_t(n) * MSS);
        // GRO merged each interrupt's consecutive segments (same timestamp) into one skb
        EXPECT_EQ(tcp.stats.gro_merged, uint64_t(n - n / batch));
        EXPECT_EQ(tcp.stats.bytes_read, uint64_t(n) * MSS);
        EXPECT_EQ(last_ack, c.seq_end(n - 1));  // every batch ACKed at once (more than one segment)
        EXPECT_EQ(tcp.sock().sk_rmem_alloc, 0);
        r.irq();  // TX completion of the last ACK
        EXPECT_EQ(r.sys->skbs().live(), ring_skbs);  // ACKs completed, data skbs freed after the read
    });
}

INSTANTIATE_TEST_SUITE_P(fec_rx_buffers, tcp_rx, ::testing::Values("page_pool", "legacy", "page_pool_no_recycle"));

TEST(tcp_rx, delayed_ack_every_second_segment_and_the_40ms_timer) {
    connected([&](rig& r, client& c) {
        auto& tcp = r.sys->stack().tcp_proto();
        std::vector<bool> acked;
        for (uint32_t i = 0; i < 60; ++i) {  // one segment per interrupt
            c.segment(i);
            ++c.tsval;
            r.irq();
            auto out = c.drain();
            acked.push_back(!out.empty());
            if (!out.empty()) {
                EXPECT_EQ(out.size(), 1u);
                EXPECT_EQ(out.back().ack, c.seq_end(i));
            }
        }
        // quick-ACK mode at the start: the first 16 segments each ACKed at once
        for (int i = 0; i < 16; ++i) EXPECT_TRUE(acked[i]) << "segment " << i;
        // then an ACK for every second full segment
        int from = 20;
        while (acked[from]) ++from;  // the first one held back
        for (int i = from; i < 60; ++i) EXPECT_EQ(acked[i], (i - from) % 2 == 1) << "segment " << i;
        EXPECT_GE(tcp.stats.quick_acks, 15u);

        // an odd segment waits for the delayed-ACK timer: 40 ms (TCP_ATO_MIN)
        const uint32_t last = (60 - from) % 2 == 0 ? 60 : 61;
        if (last == 61) {
            c.segment(60);
            r.irq();
            c.drain();
        }
        c.segment(last);
        const sc_core::sc_time sent = sc_core::sc_time_stamp();
        r.irq();
        EXPECT_TRUE(c.drain().empty());
        ASSERT_TRUE(r.timer.armed);
        EXPECT_EQ(r.timer.at - sent, sc_core::sc_time(40, sc_core::SC_MS));
        r.timer_irq();
        auto out = c.drain();
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].ack, c.seq_end(last));
        EXPECT_EQ(tcp.stats.delayed_acks, 1u);
        c.expect_read_in_order(uint64_t(last + 1) * MSS);
    });
}

TEST(tcp_rx, out_of_order_segments_wait_for_the_hole_then_go_up_in_order) {
    connected([&](rig& r, client& c) {
        auto& tcp = r.sys->stack().tcp_proto();
        c.segment(0);
        r.irq();
        c.drain();
        for (uint32_t i : {2u, 3u}) {  // segment 1 is lost
            c.segment(i);
            ++c.tsval;
            r.irq();
            auto out = c.drain();
            ASSERT_EQ(out.size(), 1u) << "a duplicate ACK at once for segment " << i;
            EXPECT_EQ(out[0].ack, c.seq_end(0));
            ASSERT_EQ(out[0].sack.size(), 1u);
            EXPECT_EQ(out[0].sack[0].first, c.seq_end(1));
            EXPECT_EQ(out[0].sack[0].second, c.seq_end(i));
        }
        c.expect_read_in_order(MSS);  // only what is in order reached the reader
        EXPECT_EQ(tcp.stats.ofo_queued, 2u);
        c.segment(1);  // the retransmission fills the hole
        r.irq();
        auto out = c.drain();
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].ack, c.seq_end(3));
        EXPECT_TRUE(out[0].sack.empty());
        EXPECT_EQ(tcp.stats.ofo_delivered, 2u);
        c.expect_read_in_order(4 * MSS);
        r.irq();
        EXPECT_EQ(r.sys->skbs().live(), 0u);
    });
}

// 6.1's socket memory accounting: a segment whose truesize exceeds sk_forward_alloc leaves
// header prediction for the slow path, which raises sk_forward_alloc by whole pages before
// tcp_queue_rcv charges the skb; the reader's sock_rfree uncharges it and gives every whole
// page back, so the next GRO skb finds less than a page again.
TEST(tcp_rx, gro_skb_beyond_the_forward_allocation_takes_the_slow_path_and_the_reader_returns_it) {
    connected([&](rig& r, client& c) {  // page_pool: 4,096 + 256 per first segment
        auto& tcp = r.sys->stack().tcp_proto();
        int64_t charged = -1, forward = -1;
        auto reader = tcp.on_read;
        tcp.on_read = [&](addr_t a, uint32_t n) {  // the reader's first copy: the skb is queued and charged
            if (charged < 0) charged = tcp.sock().sk_rmem_alloc, forward = tcp.sock().sk_forward_alloc;
            reader(a, n);
        };
        for (uint32_t j = 0; j < 8; ++j) c.segment(j);  // one GRO skb of 8 segments
        r.irq();
        const int64_t truesize = 4352 + 7 * 4096;
        EXPECT_EQ(tcp.stats.gro_merged, 7u);
        EXPECT_EQ(tcp.stats.slow_path, 1u);
        EXPECT_EQ(tcp.stats.fast_path, 0u);
        EXPECT_EQ(tcp.stats.mem_schedules, 1u);
        EXPECT_EQ(charged, truesize);
        EXPECT_EQ(forward, 9 * 4096 - truesize);  // raised by whole pages, less the charge
        c.expect_read_in_order(8 * MSS);
        EXPECT_EQ(tcp.sock().sk_rmem_alloc, 0);
        EXPECT_EQ(tcp.sock().sk_forward_alloc, 0);  // every whole page reclaimed by the free
        EXPECT_EQ(tcp.stats.mem_reclaims, 1u);
    });
}

TEST(tcp_rx, a_segment_that_fits_the_forward_allocation_takes_the_fast_path) {
    const auto configure = [&](system_params& p) { p.driver.rx_buffers = rx_buffer_mode::legacy; };  // page_frag heads: truesize 2,688
    connected(configure, [&](rig& r, client& c) {
        auto& tcp = r.sys->stack().tcp_proto();
        for (uint32_t j = 0; j < 3; ++j) c.segment(j, TCPHDR_ACK | TCPHDR_PSH);  // PSH: GRO passes each up alone
        r.irq();
        // 0: the empty queue takes it (sk_forced_mem_schedule: one page, 1,408 left); 1: 2,688 > 1,408,
        // slow (__sk_mem_schedule: one more page, 2,816 left); 2: fits, header prediction's fast path
        EXPECT_EQ(tcp.stats.gro_merged, 0u);
        EXPECT_EQ(tcp.stats.slow_path, 2u);
        EXPECT_EQ(tcp.stats.fast_path, 1u);
        EXPECT_EQ(tcp.stats.mem_schedules, 2u);
        c.expect_read_in_order(3 * MSS);
        // the reader's frees: 128 + 2,688 (kept), + 2,688 = 5,504 (a page back), + 2,688 = 4,096 (a page back)
        EXPECT_EQ(tcp.stats.mem_reclaims, 2u);
        EXPECT_EQ(tcp.sock().sk_rmem_alloc, 0);
        EXPECT_EQ(tcp.sock().sk_forward_alloc, 0);
    });
}

// tcp_grow_window takes the branch 6.1 takes (arm64 6.1.0-50: "no room" at +0x54, the truesize
// test at +0xa4, __tcp_grow_window's loop at +0x1d0), and each branch charges its own key. One
// poll of 8 full segments (one GRO skb), then a 300-byte PSH segment, with the buffer `rmem`
// (tcp_rmem[1]) and the cost table `costs`.
struct grow_run {
    tcp_stats stats;
    uint64_t instructions = 0;
};
grow_run grow_window_run(rx_buffer_mode mode, uint32_t rmem, const std::string& costs = costs_path(),
                         uint32_t rmem_max = tcp_params{}.rmem_max) {
    grow_run out;
    const auto configure = [&](system_params& p) {
        p.driver.rx_buffers = mode;
        p.stack.tcp.rmem_default = rmem;
        p.stack.tcp.rmem_max = rmem_max;
        p.costs_file = costs;
    };
    connected(configure, [&](rig& r, client& c) {
        auto& tcp = r.sys->stack().tcp_proto();
        r.core.c = {};
        for (uint32_t j = 0; j < 8; ++j) c.segment(j);
        r.irq();
        ASSERT_TRUE(r.deliver(c.frame(TCPHDR_ACK | TCPHDR_PSH, CLIENT_ISN + 1 + 8 * MSS, c.dut_isn + 1, 8 * MSS, 300)));
        r.irq();
        c.expect_read_in_order(8 * MSS + 300);
        EXPECT_EQ(tcp.stats.gro_merged, 7u);
        out.stats = tcp.stats;
        out.instructions = r.core.c.instructions;
    });
    return out;
}

constexpr uint32_t RMEM_1M = 1u << 20;  // room above the first window (65,160) for rcv_ssthresh to grow

TEST(tcp_rx, grow_window_page_pool_skbs_fail_the_truesize_test_and_scale) {
    // 8 segments: truesize 4,352 + 7 x 4,096 = 33,024, half of it (16,512) above the 11,584 bytes:
    // __tcp_grow_window, whose first test (8,256 <= 11,584) finds 2 * rcv_mss. The short segment
    // (4,352 for 300 bytes): 1,088 and 544 are above 300, 272 is not: two halvings.
    const grow_run g = grow_window_run(rx_buffer_mode::page_pool, RMEM_1M);
    EXPECT_EQ(g.stats.grow_scaled, 2u);
    EXPECT_EQ(g.stats.grow_halvings, 2u);
    EXPECT_EQ(g.stats.grow_advmss + g.stats.grow_no_room + g.stats.grow_none, 0u);
    for (const char* key : {"tcp_grow_window_scaled", "tcp_grow_window_halve", "tcp_grow_window_adjust"})
        EXPECT_EQ(grow_window_run(rx_buffer_mode::page_pool, RMEM_1M, costs_with_dearer(key)).instructions,
                  g.instructions + 2 * 1000) << key;  // every call from tcp_event_data_recv adjusts
    EXPECT_EQ(grow_window_run(rx_buffer_mode::page_pool, RMEM_1M, costs_with_dearer("tcp_grow_window")).instructions,
              g.instructions);
}

TEST(tcp_rx, grow_window_finds_no_increment_once_rcv_ssthresh_is_above_half_the_largest_window) {
    // tcp_rmem[1] = tcp_rmem[2] = 224 KiB: room below tcp_space (114,688 less half the queue), but
    // __tcp_grow_window's window, a quarter of it (57,344), is below rcv_ssthresh (65,160), so the
    // page_pool skbs that fail the truesize test find no increment (E6 page_pool's steady state, where
    // rcv_ssthresh has passed 1.5 MB, a quarter of tcp_rmem[2])
    constexpr uint32_t rmem = 224 << 10;
    const grow_run g = grow_window_run(rx_buffer_mode::page_pool, rmem, costs_path(), rmem);
    EXPECT_EQ(g.stats.grow_none, 2u);
    EXPECT_EQ(g.stats.grow_advmss + g.stats.grow_scaled + g.stats.grow_no_room + g.stats.grow_halvings, 0u);
    EXPECT_EQ(grow_window_run(rx_buffer_mode::page_pool, rmem, costs_with_dearer("tcp_grow_window_none"), rmem).instructions,
              g.instructions + 2 * 1000);
}

TEST(tcp_rx, grow_window_legacy_skbs_pass_the_truesize_test) {
    // 8 segments of legacy page_frag heads: 2,688 + 7 x 2,432 = 19,712, half of it (9,856) within the
    // 11,584 bytes: 2 * advmss. The short segment (2,688 for 300 bytes): 672 and 336, then 168: two halvings.
    const grow_run g = grow_window_run(rx_buffer_mode::legacy, RMEM_1M);
    EXPECT_EQ(g.stats.grow_advmss, 1u);
    EXPECT_EQ(g.stats.grow_scaled, 1u);
    EXPECT_EQ(g.stats.grow_halvings, 2u);
    EXPECT_EQ(g.stats.grow_no_room + g.stats.grow_none, 0u);
    EXPECT_EQ(grow_window_run(rx_buffer_mode::legacy, RMEM_1M, costs_with_dearer("tcp_grow_window")).instructions,
              g.instructions + 1000);
}

TEST(tcp_rx, grow_window_has_no_room_while_the_first_window_fills_the_buffer) {
    // tcp_rmem[1] 131,072: tcp_space is 65,536 less half of what is queued, window_clamp 65,536, and
    // rcv_ssthresh starts at the first window, 65,160: no room until autotuning raises sk_rcvbuf
    const grow_run g = grow_window_run(rx_buffer_mode::page_pool, 131072);
    EXPECT_EQ(g.stats.grow_no_room, 2u);
    EXPECT_EQ(g.stats.grow_advmss + g.stats.grow_scaled + g.stats.grow_none + g.stats.grow_halvings, 0u);
    EXPECT_EQ(grow_window_run(rx_buffer_mode::page_pool, 131072, costs_with_dearer("tcp_grow_window_no_room")).instructions,
              g.instructions + 2 * 1000);
}

// GRO charges the walk each segment takes: the first of a merge is held (GRO_HELD: no skb of its
// flow to merge into, so the callbacks never reach skb_gro_receive), the 7 after it are merged.
TEST(tcp_rx, gro_charges_the_held_walk_for_the_first_segment_and_the_merge_for_the_rest) {
    auto run = [](const std::string& costs) {
        uint64_t instructions = 0;
        const auto configure = [&](system_params& p) { p.costs_file = costs; };
        connected(configure, [&](rig& r, client& c) {
            r.core.c = {};
            for (uint32_t j = 0; j < 8; ++j) c.segment(j);
            r.irq();
            EXPECT_EQ(r.sys->stack().tcp_proto().stats.gro_merged, 7u);
            instructions = r.core.c.instructions;
        });
        return instructions;
    };
    const uint64_t base = run(costs_path());
    EXPECT_EQ(run(costs_with_dearer("napi_gro_receive_held")), base + 1000);
    EXPECT_EQ(run(costs_with_dearer("inet_gro_receive_held")), base + 1000);
    EXPECT_EQ(run(costs_with_dearer("napi_gro_receive")), base + 7 * 1000);
    EXPECT_EQ(run(costs_with_dearer("inet_gro_receive")), base + 7 * 1000);
    EXPECT_EQ(run(costs_with_dearer("napi_gro_receive_normal")), base);
}

// truesize_adjust: only an skb without linear data, asked to adjust, loses its head's overhead,
// and never below its length.
TEST(tcp_rx, truesize_adjust_discounts_an_empty_head_only) {
    sk_buff skb;
    skb.head = 0x1000, skb.end = 0x1000 + 1728, skb.truesize = 20000;
    skb.len = skb.data_len = 11584;  // all in frags
    EXPECT_EQ(truesize_adjust(true, skb), 20000u - (1728 + 256 + 320));
    EXPECT_EQ(truesize_adjust(false, skb), 20000u);
    skb.data_len = skb.len - 1448;  // the first segment's payload in the head
    EXPECT_EQ(truesize_adjust(true, skb), 20000u);
    skb.data_len = skb.len, skb.truesize = 12000;  // 12,000 - 2,304 < 11,584: kept
    EXPECT_EQ(truesize_adjust(true, skb), 12000u);
}

// TCP leaves its checksum to the FEC (NETIF_F_IP_CSUM on FEC_QUIRK_HAS_CSUM SoCs): every ACK's
// descriptor asks the ENET for both checksums (PINS | IINS) and the bytes it reads carry zeroed
// fields, which the driver cleared (fec_enet_clear_csum). The ENET's insertion is checked end to end
// (tests/scenarios/test_tcp_rx.cpp: the client drops a frame with a bad checksum).
TEST(tcp_rx, acks_leave_their_checksums_to_the_fec) {
    on_core_thread([&] {
        rig r([](system_params& p) { p.xdp_prog = "none"; });
        r.boot();
        client c(r);
        ASSERT_TRUE(r.deliver(c.frame(TCPHDR_SYN, CLIENT_ISN, 0, 0, 0, true)));
        r.irq();
        uint32_t frames = 0;
        auto check_ready_bds = [&] {
            for (uint32_t i = r.tx_idx;; ++i) {
                const addr_t bd = r.tx_bd(i);
                if (!(r.core.h16(bd + BD_SC) & BD_ENET_TX_READY)) break;
                EXPECT_EQ(r.core.h32(bd + BD_ESC) & (BD_ENET_TX_PINS | BD_ENET_TX_IINS), BD_ENET_TX_PINS | BD_ENET_TX_IINS);
                const uint8_t* f = r.core.host(r.core.h32(bd + BD_BUFADDR), r.core.h16(bd + BD_DATLEN));
                EXPECT_EQ(get16(f + 14 + 10), 0u);  // IPv4 header checksum
                EXPECT_EQ(get16(f + 34 + 16), 0u);  // TCP checksum
                ++frames;
            }
        };
        check_ready_bds();  // the SYN-ACK
        auto synack = c.drain();
        ASSERT_EQ(synack.size(), 1u);
        c.dut_isn = synack[0].seq;
        ASSERT_TRUE(r.deliver(c.frame(TCPHDR_ACK, CLIENT_ISN + 1, c.dut_isn + 1, 0, 0)));
        r.irq();
        for (uint32_t j = 0; j < 4; ++j) c.segment(j);
        r.irq();
        check_ready_bds();  // the ACK of the data
        EXPECT_EQ(c.drain().size(), 1u);
        EXPECT_EQ(frames, 2u);
    });
}

// Early demux (net.ipv4.ip_early_demux, tcp_early_demux: Debian's defaults): the handshake's last
// ACK caches its input route on the new socket; every later segment takes the socket and that route
// in ip_rcv_finish, so neither the route lookup nor tcp_v4_rcv's socket lookup runs.
TEST(tcp_rx, segments_after_the_handshake_take_the_socket_and_its_cached_route) {
    struct charged {
        uint64_t instructions = 0, early_demux = 0;
    };
    auto run = [](const std::string& costs) {
        charged out;
        const auto configure = [&](system_params& p) { p.costs_file = costs; };
        connected(configure, [&](rig& r, client& c) {
            EXPECT_EQ(r.sys->stack().tcp_proto().stats.early_demux, 0u);  // the handshake found no full socket
            r.core.c = {};
            c.segment(0, TCPHDR_ACK | TCPHDR_PSH);  // PSH: up at once, one skb
            r.irq();
            EXPECT_EQ(r.sys->stack().tcp_proto().stats.data_segs_in, 1u);
            out.early_demux = r.sys->stack().tcp_proto().stats.early_demux;
            out.instructions = r.core.c.instructions;
        });
        return out;
    };
    const charged base = run(costs_path());
    EXPECT_EQ(base.early_demux, 1u);
    for (const char* key : {"tcp_v4_early_demux", "ip_rcv_finish_demuxed", "tcp_v4_rcv_demuxed"})
        EXPECT_EQ(run(costs_with_dearer(key)).instructions, base.instructions + 1000) << key;
    for (const char* key : {"ip_rcv_finish", "tcp_v4_rcv"})  // the route and socket lookups
        EXPECT_EQ(run(costs_with_dearer(key)).instructions, base.instructions) << key;
}

TEST(tcp_rx, no_listener_drops_in_tcp_v4_rcv) {
    on_core_thread([&] {
        rig r([](system_params& p) {
            p.xdp_prog = "none";
            p.stack.tcp.port = 0;
        });
        r.boot();
        client c(r);
        ASSERT_TRUE(r.deliver(c.frame(TCPHDR_SYN, CLIENT_ISN, 0, 0, 0, true)));
        r.irq();
        EXPECT_TRUE(c.drain().empty());
        EXPECT_EQ(r.sys->stack().tcp_proto().stats.no_socket, 1u);
        EXPECT_EQ(r.sys->skbs().live(), 0u);
    });
}

}  // namespace
}  // namespace fecsim::test
