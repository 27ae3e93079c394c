// TCP into the DUT end to end (E6's setup, short windows): the iperf2 client on the wire, the
// DUT's receive path on the CPU model. Figures with tolerances; the byte-exact checks are the
// firmware tests' (tests/firmware/test_tcp.cpp).
#include "config/config.h"
#include "platform/simulation.h"

#include <gtest/gtest.h>

namespace fecsim {
namespace {

using nlohmann::json;
const std::string e6 = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx8qxp-iperf-rx.json";

json run_e6(std::vector<std::string> sets, double warmup_s = 0.15, double duration_s = 0.1) {
    run_options o;
    o.quiet = true;
    sets.push_back("warmup_s=" + std::to_string(warmup_s));
    sets.push_back("duration_s=" + std::to_string(duration_s));
    json r = run_simulation(config::load(e6, sets), o);
    for (const std::string& line : unbalanced_books(r)) ADD_FAILURE() << line;
    return r;
}

// MSS 1448 with timestamps: 1448 payload bytes per 1538 on the wire (preamble, headers, FCS, IFG).
constexpr double ceiling_mbps = 1000.0 * 1448 / 1538;

TEST(tcp_rx, page_pool_reaches_the_line_rate_ceiling_and_the_books_agree) {
    const json r = run_e6({});
    const double goodput = r["rates"]["tcp_goodput_mbps"];
    EXPECT_NEAR(goodput, ceiling_mbps, ceiling_mbps * 0.01);
    const json& t = r["dut"]["tcp"];
    EXPECT_EQ(t["rcvq_drops"], 0);
    EXPECT_EQ(r["generator"]["tcp"]["retransmissions"], 0);
    EXPECT_GT(t["gro_merged"].get<double>(), 5 * t["gro_flushes"].get<double>());  // GRO merges most segments
    // what the reader consumed is what arrived (one 128 KiB read or less behind)
    EXPECT_NEAR(t["bytes_read"].get<double>(), t["bytes_received"].get<double>(), 131072 + 64 * 1448);
    EXPECT_GT(t["acks_sent"].get<uint64_t>(), 100u);
    // The ACKs left their checksums to the ENET (PINS | IINS): the client, which drops a frame with a
    // bad one, took them all
    EXPECT_EQ(r["generator"]["tcp"]["rx_bad_checksum"], 0);
    // early demux gave every segment after the handshake its socket and cached route
    EXPECT_GT(t["early_demux"].get<double>(), 0.9 * t["gro_flushes"].get<double>());
}

// The same on the i.MX6SX (E7: ARMv7, its own ENET), from the handshake on: with no checksums
// inserted the SYN-ACK would be dropped and no connection made.
TEST(tcp_rx, the_imx6sx_enet_inserts_the_checksums_of_the_acks) {
    run_options o;
    o.quiet = true;
    const json r = run_simulation(config::load(std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx6sx-iperf-rx.json",
                                               {"warmup_s=0.05", "duration_s=0.02"}), o);
    const json& g = r["generator"]["tcp"];
    EXPECT_GE(g["established_s"].get<double>(), 0.0);
    EXPECT_EQ(g["rx_bad_checksum"], 0);
    EXPECT_GT(r["dut"]["tcp"]["acks_sent"].get<uint64_t>(), 10u);
    EXPECT_GT(r["rates"]["tcp_goodput_mbps"].get<double>(), 100.0);
}

TEST(tcp_rx, a_slow_cpu_makes_the_run_cpu_bound_and_the_breakdown_shows_where) {
    const json r = run_e6({"cpu.cpi=9"});
    const double goodput = r["rates"]["tcp_goodput_mbps"];
    EXPECT_LT(goodput, 0.8 * ceiling_mbps);
    EXPECT_GT(goodput, 100.0);
    const json& ns = r["cpu"]["core0"]["ns_per_packet"];
    EXPECT_LT(ns["idle"].get<double>(), 0.02 * ns["compute"].get<double>());  // no idle time left
    EXPECT_GT(ns["compute"].get<double>(), ns["cache_miss"].get<double>());
    // the receive path, the ACKs and the reader's copy each show up by kernel function
    const json& fns = r["cpu"]["core0"]["functions"];
    for (const char* f : {"tcp_rcv_established", "inet_gro_receive", "__tcp_send_ack", "tcp_recvmsg", "skb_copy_datagram_iter"})
        EXPECT_TRUE(fns.contains(f)) << f;
}

TEST(tcp_rx, a_16_entry_ring_loses_frames_and_tcp_recovers) {
    const json r = run_e6({"driver.rx_ring_size=16"}, 0.3, 0.2);
    // no descriptor free: the MAC's RX FIFO holds frames, then overflows
    const json& dropped = r["accounting"]["dut.fec.rx"]["dropped"];
    EXPECT_GT(dropped.value("fifo_overflow", 0ull) + dropped.value("no_descriptor", 0ull), 0u);
    const json& g = r["generator"]["tcp"];
    EXPECT_GT(g["retransmissions"].get<uint64_t>(), 0u);          // and TCP repaired the losses
    EXPECT_GT(r["dut"]["tcp"]["ofo_delivered"].get<uint64_t>(), 0u);
    const double goodput = r["rates"]["tcp_goodput_mbps"];
    EXPECT_GT(goodput, 10.0);  // the transfer goes on
    EXPECT_LT(goodput, 0.95 * ceiling_mbps);
}

// The MEK as NXP's U-Boot reports it, 1 GiB above 4 GiB (docs/platforms.md): the legacy skb heads
// land there, beyond the FEC's 32-bit mask, and are bounced through swiotlb, twice a frame (the
// unmap's copy back, the next buffer's map); the copies are CPU work the profile's layout does
// not pay, and the coherency checker, which sees every access, finds nothing wrong.
TEST(tcp_rx, legacy_buffers_above_4g_are_bounced_twice_a_frame) {
    const std::string high = R"(mem.regions.4={"name":"dram_high","base":"0x880000000","size_bytes":"0x3f800000",)"
                             R"("target":"ddr","offset_bytes":"0x40000000","attribute":"normal_cacheable","latency_ns":20})";
    const json below = run_e6({"driver.rx_buffers=legacy"});
    // the page tables at the top of the high GiB, with room for its tables
    const json above = run_e6({"driver.rx_buffers=legacy", "mem.ddr.size_bytes=2147483648", "mem.regions.3.base=0x8bf800000",
                               "mem.regions.3.offset_bytes=0x7f800000", "mem.regions.3.size_bytes=0x800000", high});
    auto busy_per_frame = [](const json& r) {
        double ns = 0;
        for (const auto& [f, v] : r["cpu"]["core0"]["functions"].items())
            for (const auto& [kind, t] : v["time_ns"].items())
                if (kind != "idle") ns += t.get<double>();
        return ns / (r["rates"]["dut_rx_pps"].get<double>() * 0.1);  // the 0.1 s window's frames
    };
    const json& fns = above["cpu"]["core0"]["functions"];
    const double frames = above["rates"]["dut_rx_pps"].get<double>() * 0.1;
    EXPECT_NEAR(fns["swiotlb_bounce"]["calls"].get<double>() / frames, 2.0, 0.1);
    EXPECT_FALSE(below["cpu"]["core0"]["functions"].contains("swiotlb_bounce"));
    EXPECT_GT(busy_per_frame(above), busy_per_frame(below) + 5000);
    EXPECT_EQ(above["coherency"]["violations"], 0);
    const json& t = above["dut"]["tcp"];
    EXPECT_NEAR(t["bytes_read"].get<double>(), t["bytes_received"].get<double>(), 131072 + 64 * 1448);
}

}  // namespace
}  // namespace fecsim
