// The iperf2-like TCP sender against a minimal TCP receiver on the wire (tests/traffic/
// tcp_receiver.h): the segments' bytes, every byte delivered in order, recovery from a drop by
// fast retransmit with SACK and from a tail drop by the retransmission timer, the 1 Gbit/s
// goodput ceiling, a receiver-window-limited rate, 64-byte writes coalesced, a capture that
// tshark reads without complaints, and the configuration keys.
#include "config/config.h"
#include "models/sim_context.h"
#include "tests/traffic/tcp_receiver.h"
#include "tests/traffic/test_util.h"
#include "tests/traffic/test_wire.h"
#include "traffic/live_report.h"
#include "traffic/pcap_writer.h"
#include "traffic/tcp_sender.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <regex>

namespace fecsim::traffic {
namespace {

using sc_core::SC_MS;
using sc_core::SC_US;
using sc_core::sc_time;

constexpr double mss = 1448;
// MSS 1448 with timestamps: 1448 + 32 (TCP) + 20 (IPv4) + 14 + 4 (Ethernet, FCS) + 8 + 12
// (preamble, IFG) = 1538 bytes on the wire per 1448 of payload.
constexpr double ceiling_mbps = 1000.0 * 1448 / 1538;

tcp_sender_params sender_params() {
    tcp_sender_params p;
    p.src_mac = {0x00, 0x04, 0x9f, 0x00, 0x00, 0x02};
    p.dst_mac = {0x00, 0x04, 0x9f, 0x07, 0x9f, 0x01};
    p.src_ip = 0xc6120001;  // 198.18.0.1
    p.dst_ip = 0xc612002a;  // 198.18.0.42
    return p;
}

// Sender and receiver joined by a 1 Gbit/s wire in each direction.
struct rig {
    test::test_wire fwd, back;
    tcp_sender tx;
    test::tcp_receiver rx;
    rig(const tcp_sender_params& sp, const test::tcp_receiver_params& rp, sc_time propagation = sc_core::SC_ZERO_TIME)
        : fwd("fwd", 1000), back("back", 1000), tx("tx", sp), rx("rx", rp) {
        fwd.propagation = back.propagation = propagation;
        tx.connect(fwd);
        fwd.connect(rx);
        rx.connect(back);
        back.connect(tx);
    }
    // Goodput (bytes the receiver has in order) over the next `span`, Mbit/s.
    double goodput_mbps(sc_time span) {
        const uint64_t before = rx.in_order_bytes();
        sc_core::sc_start(span);
        return double(rx.in_order_bytes() - before) * 8 / span.to_seconds() / 1e6;
    }
};

TEST(tcp_segment, syn_carries_linux_options_and_round_trips) {
    fresh_simulation();
    tcp_segment s;
    s.src_mac = {0, 4, 0x9f, 0, 0, 2};
    s.dst_mac = {0, 4, 0x9f, 7, 0x9f, 1};
    s.src_ip = 0xc6120001, s.dst_ip = 0xc612002a;
    s.src_port = 41000, s.dst_port = 5001;
    s.seq = 0xfffffff0, s.flags = tcp_flags::syn, s.window = 64240;
    s.mss = 1460, s.sack_permitted = true, s.wscale = 7, s.has_timestamps = true, s.tsval = 0x01020304;
    net::frame f;
    build_tcp_frame(f, s);
    ASSERT_EQ(f.size(), 14u + 20 + 40 + 4);
    const uint8_t linux_syn_options[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7};
    EXPECT_EQ(std::memcmp(f.data() + 14 + 20 + 20, linux_syn_options, sizeof linux_syn_options), 0);
    EXPECT_EQ(f.data()[14 + 6], 0x40) << "DF";
    EXPECT_TRUE(net::fcs_ok(f));
    const auto p = parse_tcp_frame(f);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->checksums_ok);
    EXPECT_EQ(p->seq, s.seq);
    EXPECT_EQ(p->mss, 1460);
    EXPECT_EQ(p->wscale, 7);
    EXPECT_TRUE(p->sack_permitted);
    EXPECT_EQ(p->tsval, 0x01020304u);
    EXPECT_EQ(p->seq_len(), 1u);

    // Data with SACK blocks; a flipped payload bit breaks the TCP checksum.
    tcp_segment d = s;
    d.flags = tcp_flags::ack, d.sack_count = 2, d.sack[0] = {100, 200}, d.sack[1] = {300, 400};
    uint8_t payload[100];
    fill_tcp_payload(payload, 6, sizeof payload);
    d.payload = payload, d.payload_len = sizeof payload;
    build_tcp_frame(f, d);
    auto q = parse_tcp_frame(f);
    ASSERT_TRUE(q);
    EXPECT_TRUE(q->checksums_ok);
    EXPECT_EQ(q->sack_count, 2);
    EXPECT_EQ(q->sack[1].right, 400u);
    EXPECT_EQ(q->mss, 0) << "MSS only on a SYN";
    for (uint32_t i = 0; i < q->payload_len; ++i) ASSERT_EQ(q->payload[i], tcp_payload_byte(6 + i));
    EXPECT_EQ(tcp_payload_byte(4 * 0x01020304ull + 1), 0x02);
    f.data()[f.size() - 10] ^= 1;
    EXPECT_FALSE(parse_tcp_frame(f)->checksums_ok);
}

TEST(tcp_sender, loss_free_transfer_delivers_every_byte_in_order) {
    fresh_simulation();
    rig r(sender_params(), {}, sc_time(100, SC_US));
    sc_core::sc_start(50, SC_MS);
    EXPECT_EQ(r.tx.connection(), tcp_sender::state::established);
    EXPECT_EQ(r.tx.mss(), 1448u) << "MTU 1500 less IPv4, TCP and the timestamp option";
    EXPECT_EQ(r.rx.syn.mss, 1460);
    EXPECT_TRUE(r.rx.syn.sack_permitted && r.rx.syn.has_timestamps);
    EXPECT_EQ(r.rx.syn.wscale, 7);
    EXPECT_GT(r.rx.in_order_bytes(), 3'000'000u);
    EXPECT_EQ(r.rx.payload_errors, 0u);
    EXPECT_EQ(r.rx.duplicates, 0u);
    EXPECT_EQ(r.tx.totals().retransmissions, 0u);
    EXPECT_EQ(r.tx.totals().timeouts, 0u);
    // The first flight is the initial window: ten segments before the first ACK comes back.
    ASSERT_GE(r.rx.arrivals.size(), 11u);
    for (size_t i = 0; i < r.rx.arrivals.size(); ++i) {
        EXPECT_EQ(r.rx.arrivals[i].len, 1448u) << i;
        EXPECT_EQ(r.rx.arrivals[i].offset, i * 1448) << i;
        if (i > 50) break;
    }
    EXPECT_LT(r.rx.arrivals[9].at - r.rx.arrivals[0].at, sc_time(9 * 12.31, SC_US)) << "back to back";
    EXPECT_GT(r.rx.arrivals[10].at - r.rx.arrivals[9].at, sc_time(60, SC_US)) << "the 11th waits for the first ACK";
}

TEST(tcp_sender, reaches_the_goodput_ceiling_of_1g_within_one_percent) {
    fresh_simulation();
    rig r(sender_params(), {});
    sc_core::sc_start(50, SC_MS);  // slow start is over long before
    r.tx.reset_stats();
    const double mbps = r.goodput_mbps(sc_time(200, SC_MS));
    EXPECT_NEAR(mbps, ceiling_mbps, ceiling_mbps * 0.01);
    nlohmann::json rates;
    r.tx.report_rates(rates, 0.2);
    EXPECT_NEAR(rates["tcp_goodput_mbps"].get<double>(), ceiling_mbps, ceiling_mbps * 0.01);
    EXPECT_EQ(r.tx.stats().retransmissions, 0u);
    // iperf's total line for the window.
    const std::string total = r.tx.final_summary();
    EXPECT_TRUE(std::regex_match(total, std::regex(R"(\[  1\] 0\.0000-0\.2000 sec  (22\.[0-9]) MBytes   9[34][0-9] Mbits/sec)")))
        << total;
}

TEST(tcp_sender, without_sack_three_duplicate_acks_start_newreno_recovery) {
    fresh_simulation();
    test::tcp_receiver_params rp;
    rp.sack = false;
    // Two holes in one window: the partial ACK after the first retransmission starts the second.
    const uint64_t lost = 300 * 1448, lost2 = 320 * 1448;
    rp.drop = [&](uint64_t offset, uint32_t, unsigned seen) { return (offset == lost || offset == lost2) && seen == 0; };
    rig r(sender_params(), rp);
    sc_core::sc_start(60, SC_MS);
    EXPECT_EQ(r.rx.dropped, 2u);
    EXPECT_EQ(r.rx.payload_errors, 0u);
    EXPECT_EQ(r.rx.duplicates, 0u);
    EXPECT_GT(r.rx.in_order_bytes(), lost + 1'000'000);
    const tcp_sender_stats& t = r.tx.totals();
    EXPECT_EQ(t.retransmissions, 2u);
    EXPECT_EQ(t.fast_recoveries, 1u);
    EXPECT_EQ(t.timeouts, 0u);
    EXPECT_EQ(t.sack_blocks, 0u);
    EXPECT_GE(t.dup_acks, 3u);
}

TEST(tcp_sender, a_dropped_segment_is_recovered_by_fast_retransmit_with_sack) {
    fresh_simulation();
    test::tcp_receiver_params rp;
    const uint64_t lost = 300 * 1448;
    rp.drop = [&](uint64_t offset, uint32_t, unsigned seen) { return offset == lost && seen == 0; };
    rig r(sender_params(), rp);
    sc_core::sc_start(60, SC_MS);
    EXPECT_EQ(r.rx.dropped, 1u);
    EXPECT_EQ(r.rx.payload_errors, 0u);
    EXPECT_GT(r.rx.in_order_bytes(), lost + 1'000'000);
    const tcp_sender_stats& t = r.tx.totals();
    EXPECT_EQ(t.retransmissions, 1u) << "only the lost segment is sent again";
    EXPECT_EQ(t.fast_recoveries, 1u);
    EXPECT_EQ(t.timeouts, 0u);
    EXPECT_GT(t.sack_blocks, 0u);
    EXPECT_EQ(r.tx.congestion_state(), tcp_sender::ca_state::open) << "recovery is over";
    sc_time dropped_at, again_at;
    for (const auto& a : r.rx.arrivals)
        if (a.offset == lost) (a.dropped ? dropped_at : again_at) = a.at;
    EXPECT_LT(again_at - dropped_at, sc_time(2, SC_MS)) << "three SACKed segments later, not a timeout";
    EXPECT_LT(r.tx.cwnd(), 2 * 300u) << "the window was reduced";
}

TEST(tcp_sender, a_tail_drop_is_recovered_by_the_retransmission_timer_after_200ms) {
    fresh_simulation();
    test::tcp_receiver_params rp;
    rp.wscale = -1;
    rp.window = 10 * 1448;  // the whole window in flight is lost: no segment after it to SACK
    const uint64_t first = 100 * 1448, end = first + rp.window;
    rp.drop = [&](uint64_t offset, uint32_t, unsigned seen) { return offset >= first && offset < end && seen == 0; };
    rig r(sender_params(), rp);
    sc_core::sc_start(400, SC_MS);
    EXPECT_EQ(r.rx.dropped, 10u);
    EXPECT_EQ(r.rx.payload_errors, 0u);
    EXPECT_GT(r.rx.in_order_bytes(), end + 100'000);
    const tcp_sender_stats& t = r.tx.totals();
    EXPECT_EQ(t.timeouts, 1u);
    EXPECT_EQ(t.fast_recoveries, 0u);
    EXPECT_EQ(t.retransmissions, 10u);
    sc_time dropped_at, again_at;
    for (const auto& a : r.rx.arrivals)
        if (a.offset == first) (a.dropped ? dropped_at : again_at) = a.at;
    const sc_time waited = again_at - dropped_at;
    EXPECT_GE(waited, sc_time(200, SC_MS)) << "Linux's minimum RTO";
    EXPECT_LT(waited, sc_time(210, SC_MS)) << "SRTT is tens of microseconds";
}

TEST(tcp_sender, the_receivers_window_limits_the_rate) {
    fresh_simulation();
    test::tcp_receiver_params rp;
    rp.wscale = -1;
    rp.window = 40 * 1448;
    const sc_time one_way(500, SC_US);
    rig r(sender_params(), rp, one_way);
    sc_core::sc_start(100, SC_MS);
    const double mbps = r.goodput_mbps(sc_time(200, SC_MS));
    // A window per round trip: the cable both ways, a segment, and the ACK every second one waits for.
    const double segment_s = 1538 * 8 / 1e9;
    const double expected = rp.window * 8 / (2 * one_way.to_seconds() + 2 * segment_s) / 1e6;
    EXPECT_NEAR(mbps, expected, expected * 0.03);
    EXPECT_LT(mbps, 0.6 * ceiling_mbps);
    EXPECT_EQ(r.tx.rwnd(), uint64_t(rp.window));
    EXPECT_LE(r.tx.cwnd(), 2 * 40u + 10) << "cwnd does not grow while the peer's window limits (tcp_is_cwnd_limited)";
    EXPECT_EQ(r.rx.payload_errors, 0u);
}

TEST(tcp_sender, small_writes_coalesce_into_full_segments) {
    fresh_simulation();
    tcp_sender_params p = sender_params();
    p.write_bytes = 64;  // iperf -l 64
    p.cpu.per_write_ns = 1000;
    p.cpu.per_segment_ns = p.cpu.per_ack_ns = 0;
    const sc_time one_way(25, SC_US);
    rig r(p, {}, one_way);
    sc_core::sc_start(20, SC_MS);
    const size_t from = r.rx.arrivals.size();
    const double mbps = r.goodput_mbps(sc_time(100, SC_MS));
    EXPECT_NEAR(mbps, 512, 512 * 0.01) << "one 64-byte write per microsecond";
    const auto& a = r.rx.arrivals;
    size_t full = 0, pushed = 0, n = a.size() - from;
    for (size_t i = from; i < a.size(); ++i) {
        full += a[i].len == 1448;
        pushed += a[i].push;
    }
    EXPECT_LT(n, 2 * r.rx.in_order_bytes() / 1448) << "coalesced, not one segment per write";
    EXPECT_LE(n - full, size_t(0.1 / (2 * one_way.to_seconds())) + 1) << "at most one small segment per round trip";
    // PSH on the last segment of each skb a write ended in: every small segment (it empties the
    // queue), not every full one (64-byte writes share their skb).
    size_t small_pushed = 0;
    for (size_t i = from; i < a.size(); ++i) small_pushed += a[i].len < 1448 && a[i].push;
    EXPECT_EQ(small_pushed, n - full);
    EXPECT_LT(pushed, n);
    EXPECT_EQ(r.rx.payload_errors, 0u);
    // Nagle (Minshall): a small segment leaves only after the previous small one was ACKed.
    // Bits from the first to the last at 1 Gbit/s: preamble + frame (Ethernet, IPv4, TCP with timestamps, FCS).
    auto bits = [](uint32_t payload) { return sc_time((8 + 70 + payload) * 8, sc_core::SC_NS); };
    size_t prev_small = SIZE_MAX, checked = 0;
    auto ack = r.rx.ack_log.begin();
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].len == 1448) continue;
        if (prev_small != SIZE_MAX) {
            const uint64_t needed = a[prev_small].offset + a[prev_small].len;
            while (ack != r.rx.ack_log.end() && ack->second < needed) ++ack;
            ASSERT_NE(ack, r.rx.ack_log.end());
            EXPECT_LE(ack->first + bits(0), a[i].at - bits(a[i].len))
                << "small segment at offset " << a[i].offset << " left before the previous one was ACKed";
            ++checked;
        }
        prev_small = i;
    }
    EXPECT_GT(checked, 10u);
}

// Random losses (first transmissions and retransmissions alike) with both congestion
// controls: recovery never stalls and every byte arrives in order.
TEST(tcp_sender, random_losses_are_all_recovered) {
    for (congestion_algorithm cc : {congestion_algorithm::cubic, congestion_algorithm::reno}) {
        for (bool sack : {true, false}) {
            fresh_simulation();
            tcp_sender_params p = sender_params();
            p.cc = cc;
            test::tcp_receiver_params rp;
            rp.sack = sack;
            std::mt19937 rng(7);
            rp.drop = [&](uint64_t, uint32_t, unsigned) { return rng() % 100 == 0; };
            rig r(p, rp, sc_time(50, SC_US));
            sc_core::sc_start(300, SC_MS);
            const uint64_t mid = r.rx.in_order_bytes();
            sc_core::sc_start(300, SC_MS);
            SCOPED_TRACE(std::string(cc == congestion_algorithm::cubic ? "cubic" : "reno") + (sack ? " sack" : " newreno"));
            EXPECT_GT(r.rx.dropped, 100u);
            EXPECT_GT(r.rx.in_order_bytes(), mid + 1'000'000) << "still moving";
            EXPECT_EQ(r.rx.payload_errors, 0u);
            const tcp_sender_stats& t = r.tx.totals();
            EXPECT_GE(t.retransmissions, r.rx.dropped - 10) << "the last drops may still wait";
            EXPECT_GT(t.fast_recoveries, 10u);
            EXPECT_LE(t.timeouts, 5u) << "recovery does it, not the timer";
            // SACK sends again what was lost; without it, a timeout's go-back-N resends what
            // the receiver already holds, as Linux's NewReno does.
            if (sack) {
                EXPECT_LT(t.retransmissions, 2 * r.rx.dropped);
            }
            if (!t.timeouts) {
                EXPECT_EQ(r.rx.duplicates, 0u);
            }
        }
    }
}

TEST(tcp_sender, bulk_writes_set_psh_once_per_write_at_the_end_of_its_skb) {
    fresh_simulation();
    rig r(sender_params(), {});
    sc_core::sc_start(20, SC_MS);
    size_t pushed = 0;
    const uint64_t skb = 45 * 1448;  // the size goal: a 64 KB GSO skb
    for (const auto& a : r.rx.arrivals) {
        if (!a.push) continue;
        ++pushed;
        const uint64_t end = a.offset + a.len;
        EXPECT_EQ(end % skb, 0u) << "the skb's last segment";
        EXPECT_GT(end / 131072, (end - skb) / 131072) << "a write ended in the skb";
    }
    EXPECT_NEAR(double(pushed), double(r.rx.in_order_bytes()) / 131072, 2.0);
}

TEST(tcp_sender, iperf_prints_an_interval_line_per_second) {
    EXPECT_EQ(iperf_interval_line(1, 0, 1, 116391936), "[  1] 0.0000-1.0000 sec   111 MBytes   931 Mbits/sec");
    EXPECT_EQ(iperf_interval_line(1, 0, 10, 1170000000), "[  1] 0.0000-10.0000 sec  1.09 GBytes   936 Mbits/sec");
    EXPECT_EQ(iperf_interval_line(1, 1, 2, 5000000), "[  1] 1.0000-2.0000 sec  4.77 MBytes  40.0 Mbits/sec");
    fresh_simulation();
    rig r(sender_params(), {});
    sc_core::sc_start(100, SC_MS);
    r.tx.reset_stats();
    sc_core::sc_start(1, sc_core::SC_SEC);
    const auto lines = r.tx.live_lines(1.0);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(std::regex_match(lines[0], std::regex(R"(\[  1\] 0\.0000-1\.0000 sec   11[23] MBytes   94[012] Mbits/sec)")))
        << lines[0];
}

TEST(tcp_sender, capture_opens_in_tshark_with_only_the_drops_explained) {
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed";
    const std::string path = test::scratch_path("tcp.pcapng");
    {
        fresh_simulation();
        test::tcp_receiver_params rp;
        rp.drop = [](uint64_t offset, uint32_t, unsigned seen) { return offset == 200 * 1448 && seen == 0; };
        rig r(sender_params(), rp);
        pcap_writer cap(path);
        r.fwd.tap = [&](const net::frame& f, sc_time t) { cap.write(f, t, pcap_writer::dut_rx); };
        r.back.tap = [&](const net::frame& f, sc_time t) { cap.write(f, t, pcap_writer::dut_tx); };
        sc_core::sc_start(15, SC_MS);
        cap.flush();
    }
    std::string err;
    const std::string out = test::run("tshark -n -r " + path +
                                          " -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE -o tcp.analyze_sequence_numbers:TRUE"
                                          " -q -z expert,note",
                                      &err);
    // Errors (bad checksums, malformed) and warnings (segments not captured, out of order, ...)
    // must not appear; the notes are the retransmission and the duplicate ACKs of the drop.
    EXPECT_EQ(out.find("Errors ("), std::string::npos) << out;
    EXPECT_EQ(out.find("Warns ("), std::string::npos) << out;
    EXPECT_NE(out.find("fast retransmission"), std::string::npos) << out;
    EXPECT_NE(out.find("Duplicate ACK"), std::string::npos) << out;
    const std::string retrans = test::run("tshark -n -r " + path + " -Y tcp.analysis.retransmission -T fields -e tcp.seq_raw");
    EXPECT_EQ(std::count(retrans.begin(), retrans.end(), '\n'), 1) << "one retransmission: " << retrans;
}

TEST(tcp_sender, configuration_keys_and_bad_values) {
    fresh_simulation();
    const config c = test::load_with_generator(
        {{"kind", "tcp"},
         {"tcp", {{"window", 425984}, {"write_bytes", 64}, {"congestion_control", "reno"}, {"duration_s", 2}}}});
    const tcp_sender_params p = tcp_sender_params_from(c, false);
    EXPECT_EQ(p.sndbuf, 425984u);
    EXPECT_EQ(p.write_bytes, 64u);
    EXPECT_EQ(p.cc, congestion_algorithm::reno);
    EXPECT_EQ(p.dst_mac, (mac_addr{0x00, 0x04, 0x9f, 0x07, 0x9f, 0x01})) << "soc.fec.mac_address";
    EXPECT_EQ(p.dst_ip, 0xc612002au);
    EXPECT_EQ(tcp_sender_params_from(test::load_with_generator({{"kind", "tcp"}}), false).sndbuf, 4194304u);
    auto gen = make_generator("gen", c, false);
    EXPECT_NE(dynamic_cast<tcp_sender*>(gen.get()), nullptr);

    EXPECT_THROW(test::load_with_generator({{"kind", "tcp"}, {"tcp", {{"congestion_control", "bbr"}}}}), config_error);
    EXPECT_THROW(test::load_with_generator({{"kind", "tcp"}, {"tcp", {{"write_bytes", 0}}}}), config_error);
    EXPECT_THROW(test::load_with_generator({{"kind", "tcp"}, {"tcp", {{"windw", 1}}}}), config_error);
    try {
        make_generator("gen", test::load_with_generator({{"kind", "tcp"}, {"tcp", {{"dst_mac", "00:04"}}}}, "mac.json"), false);
        FAIL() << "no error";
    } catch (const config_error& e) {
        EXPECT_EQ(std::string(e.what()), test::scratch_path("mac.json") +
                                             ": /generator/tcp/dst_mac: expected a MAC address aa:bb:cc:dd:ee:ff, got \"00:04\"");
    }
    try {
        make_generator("gen", test::load_with_generator({{"kind", "tcp"}, {"tcp", {{"window", 1000}, {"write_bytes", 2000}}}}, "w.json"),
                       false);
        FAIL() << "no error";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("/generator/tcp/"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("never fits"), std::string::npos) << e.what();
    }
}

TEST(tcp_sender, a_closed_window_is_probed_with_backoff) {
    fresh_simulation();
    test::tcp_receiver_params rp;
    rp.window = 0;
    rig r(sender_params(), rp);
    sc_core::sc_start(1600, SC_MS);
    EXPECT_TRUE(r.rx.arrivals.empty()) << "no data into a closed window";
    ASSERT_EQ(r.rx.probes.size(), 3u) << "after about 0.2, 0.6 and 1.4 s";
    EXPECT_NEAR(r.rx.probes[0].to_seconds(), 0.2, 0.01);
    EXPECT_NEAR((r.rx.probes[1] - r.rx.probes[0]).to_seconds(), 0.4, 0.01);
    EXPECT_NEAR((r.rx.probes[2] - r.rx.probes[1]).to_seconds(), 0.8, 0.02);
}

TEST(tcp_sender, duration_ends_with_a_fin_after_the_last_byte) {
    fresh_simulation();
    tcp_sender_params p = sender_params();
    p.duration_s = 0.01;  // iperf -t
    rig r(p, {});
    sc_core::sc_start(50, SC_MS);
    EXPECT_TRUE(r.rx.fin_received);
    EXPECT_EQ(r.rx.in_order_bytes(), r.tx.totals().bytes_written);
    EXPECT_EQ(r.tx.connection(), tcp_sender::state::done) << "the FIN was acknowledged";
    EXPECT_EQ(r.rx.payload_errors, 0u);
}

}  // namespace
}  // namespace fecsim::traffic
