// Receive-side analysis and the reflector/sink peer: MAC swap check, loss and reordering from
// pktgen sequence numbers, latency histogram.
#include "models/sim_context.h"
#include "tests/traffic/test_wire.h"
#include "traffic/pktgen.h"
#include "traffic/pktgen_builder.h"
#include "traffic/sink.h"

#include <gtest/gtest.h>

namespace fecsim::traffic {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

const pktgen_device dev{{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001};
const mac_addr dut{0x90, 0xe2, 0xba, 0xff, 0xff, 0xff};

net::frame_ptr pktgen_frame(uint32_t seq, sc_time sent, std::initializer_list<const char*> extra = {}) {
    pktgen_params p;
    apply_pktgen_command(p, "dst_mac 90:e2:ba:ff:ff:ff");
    apply_pktgen_command(p, "dst_min 198.18.0.42");
    for (const char* l : extra) apply_pktgen_command(p, l);
    pktgen_builder b(p, dev, 1);
    auto f = net::frame_pool::instance().get();
    b.build(*f, seq, sent);
    return f;
}

TEST(traffic_sink, swap_macs_swaps_and_keeps_the_fcs_valid) {
    fresh_simulation();
    auto f = pktgen_frame(1, sc_time(0, SC_NS));
    swap_macs(*f);
    EXPECT_TRUE(net::fcs_ok(*f));
    EXPECT_TRUE(std::equal(dev.mac.begin(), dev.mac.end(), f->bytes.begin()));
    EXPECT_TRUE(std::equal(dut.begin(), dut.end(), f->bytes.begin() + 6));
}

TEST(traffic_sink, mac_swap_is_checked_against_what_was_sent) {
    fresh_simulation();
    rx_analyzer a(sent_macs{dev.mac, dut});
    auto swapped = pktgen_frame(1, sc_time(0, SC_NS));
    swap_macs(*swapped);
    a.analyse(*swapped, sc_time(10, SC_NS));
    a.analyse(*pktgen_frame(2, sc_time(0, SC_NS)), sc_time(10, SC_NS));  // came back unswapped
    EXPECT_EQ(a.stats().macs_swapped, 1u);
    EXPECT_EQ(a.stats().macs_not_swapped, 1u);
}

TEST(traffic_sink, loss_and_reordering_from_sequence_numbers) {
    fresh_simulation();
    rx_analyzer a;
    // A burst of 4 copies per sequence number (seq counts sent packets: 1, 5, 9, 13, 17).
    // Burst 9 is lost entirely, one copy of 13 is lost, and one copy of 5 arrives late.
    const uint32_t arrivals[] = {1, 1, 1, 1, 5, 5, 5, 13, 13, 13, 5, 17, 17, 17, 17};
    for (uint32_t s : arrivals) a.analyse(*pktgen_frame(s, sc_time(0, SC_NS)), sc_time(1, SC_NS));
    EXPECT_EQ(a.stats().pktgen_frames, 15u);
    EXPECT_EQ(a.lost(), 20u - 15u);  // 5 missing out of seq 1..20
    EXPECT_EQ(a.stats().reordered, 1u);
    EXPECT_EQ(a.flows(), 1u);
}

TEST(traffic_sink, non_pktgen_and_bad_fcs_are_counted_apart) {
    fresh_simulation();
    rx_analyzer a;
    auto bad = pktgen_frame(1, sc_time(0, SC_NS));
    bad->bytes[20] ^= 1;
    a.analyse(*bad, sc_time(0, SC_NS));
    auto arp = net::frame_pool::instance().get(60);
    std::fill(arp->bytes.begin(), arp->bytes.end(), 0);
    arp->bytes[12] = 0x08, arp->bytes[13] = 0x06;
    net::append_fcs(*arp);
    a.analyse(*arp, sc_time(0, SC_NS));
    auto runt = net::frame_pool::instance().get(3);
    a.analyse(*runt, sc_time(0, SC_NS));
    EXPECT_EQ(a.stats().fcs_errors, 2u);  // the corrupted frame and the 3-byte runt
    EXPECT_EQ(a.stats().non_pktgen, 1u);
    EXPECT_EQ(a.stats().pktgen_frames, 0u);
}

TEST(traffic_sink, latency_from_timestamp_or_created) {
    fresh_simulation();
    rx_analyzer a;
    // With timestamps: microsecond resolution of the pktgen header.
    a.analyse(*pktgen_frame(1, sc_time(2000500, SC_NS)), sc_time(2010500, SC_NS));
    EXPECT_EQ(a.latency().count(), 1u);
    EXPECT_EQ(a.latency().quantile(1.0), 10500u);  // sent 2.0005 ms stored as 2000 us
    nlohmann::json ja;
    a.report(ja);
    EXPECT_EQ(ja["latency_ns"]["measures"], "generator_tx_to_receive");
    // NO_TIMESTAMP: frame.created.
    rx_analyzer b;
    for (int i = 1; i <= 100; ++i)
        b.analyse(*pktgen_frame(uint32_t(i), sc_time(1000, SC_NS), {"flag NO_TIMESTAMP"}), sc_time(1000 + 100 * i, SC_NS));
    EXPECT_EQ(b.latency().count(), 100u);
    // Quantiles are bucket edges: within 12.5% above the exact value.
    EXPECT_GE(b.latency().quantile(0.5), 5000u);
    EXPECT_LE(b.latency().quantile(0.5), 5000u * 1125 / 1000);
    EXPECT_GE(b.latency().quantile(0.99), 9900u);
    EXPECT_LE(b.latency().quantile(0.99), 10000u);  // capped by the max
    nlohmann::json j;
    b.report(j);
    EXPECT_EQ(j["latency_ns"]["min"], 100);
    EXPECT_EQ(j["latency_ns"]["max"], 10000);
    EXPECT_DOUBLE_EQ(j["latency_ns"]["mean"].get<double>(), 5050.0);
    EXPECT_EQ(j["latency_ns"]["measures"], "dut_tx_to_receive") << "labelled: not the DUT's latency";
    uint64_t total = 0;
    for (auto& bucket : j["latency_ns"]["histogram"]) total += bucket[1].get<uint64_t>();
    EXPECT_EQ(total, 100u);
}

TEST(traffic_sink, histogram_edges_are_monotonic_and_cover_values) {
    fresh_simulation();
    for (uint64_t v : {0ull, 1ull, 7ull, 8ull, 9ull, 15ull, 16ull, 1000ull, 123456789ull, 1ull << 40}) {
        const int i = latency_histogram::index_of(v);
        EXPECT_LE(latency_histogram::lower_edge(i), v) << v;
        if (i + 1 < latency_histogram::buckets) {
            EXPECT_GT(latency_histogram::lower_edge(i + 1), v) << v;
        }
    }
    for (int i = 1; i < latency_histogram::buckets; ++i)
        EXPECT_GT(latency_histogram::lower_edge(i), latency_histogram::lower_edge(i - 1));
}

TEST(traffic_sink, reflector_sends_back_with_macs_swapped) {
    fresh_simulation();
    // generator -> wire -> reflector -> wire -> collector, 64-byte frames at 1 Gbit/s.
    pktgen_model_params p;
    for (const char* l : {"count 100", "dst_mac 90:e2:ba:ff:ff:ff", "flag NO_TIMESTAMP", "burst 4"})
        apply_pktgen_command(p.cmd, l);
    p.dev = dev;
    pktgen gen("gen", p);
    test::collector back_end(100);
    sink reflector(sent_macs{dev.mac, dut});
    test::test_wire out("out", 1000, &reflector), back("back", 1000, &back_end);
    gen.connect(out);
    reflector.reflect_to(back);
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_EQ(reflector.reflected(), 100u);
    ASSERT_EQ(back_end.count, 100u);
    for (auto& f : back_end.kept) {
        EXPECT_TRUE(net::fcs_ok(*f));
        EXPECT_TRUE(std::equal(dev.mac.begin(), dev.mac.end(), f->bytes.begin()));
    }
    nlohmann::json j;
    reflector.report(j);
    EXPECT_EQ(j["pktgen_frames"], 100);
    EXPECT_EQ(j["macs_not_swapped"], 100);  // what reached the reflector was not yet swapped
    EXPECT_EQ(j["lost"], 0);
    // Latency from frame.created (NO_TIMESTAMP): at least one 64-byte serialisation (576 ns to the last bit).
    EXPECT_GE(j["latency_ns"]["min"].get<uint64_t>(), 576u);
}

}  // namespace
}  // namespace fecsim::traffic
