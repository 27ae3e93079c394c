// The point-to-point link: line-rate timing at 10/100/1000 Mbit/s, propagation, queueing behind a
// busy transmitter, one kernel event per frame, taps, stats, frame-pool reuse and configuration.
#include "models/net/link.h"
#include "models/process.h"
#include "models/sim_context.h"
#include "models/sim_stats.h"
#include "config/config.h"
#include "tests/net/net_bench.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using test::recorder;
using test::source;

// Bit-time arithmetic the tests derive their figures from: 8 bits per byte at `mbps`.
double byte_ns(double mbps) { return 8e3 / mbps; }
double frame_end_ns(size_t size, double mbps) { return (net::preamble_bytes + size) * byte_ns(mbps); }
double wire_ns(size_t size, double mbps) { return (net::preamble_bytes + size + net::ifg_bytes) * byte_ns(mbps); }

struct line_rate_case {
    double mbps;
    size_t size;
};

class link_line_rate : public ::testing::TestWithParam<line_rate_case> {};

// Back-to-back frames for one simulated second: the k-th frame (from 0) arrives at
// k * wire + end-of-frame, so floor((1 s - end) / wire) + 1 frames arrive; that is the nominal
// rate 1 s / wire (1,488,095 frames/s for 64 B at 1 Gbit/s, 81,274 for 1518 B) within one frame.
TEST_P(link_line_rate, back_to_back_frames_for_one_second) {
    fresh_simulation();
    const auto c = GetParam();
    net::link l("link", {c.mbps, 0});
    recorder a, b;
    b.keep = false;
    l.bind(a, b);
    source s("src");
    s.tx = &l.end_a();
    s.frame_size = c.size;
    const uint64_t events_before = sim_stats::kernel_events;
    sc_core::sc_start(1, sc_core::SC_SEC);

    const uint64_t exact = uint64_t(std::floor((1e9 - frame_end_ns(c.size, c.mbps)) / wire_ns(c.size, c.mbps))) + 1;
    EXPECT_EQ(b.count, exact);
    EXPECT_NEAR(double(b.count), 1e9 / wire_ns(c.size, c.mbps), 1.0);
    if (c.mbps == 1000 && c.size == 64) {
        EXPECT_NEAR(double(b.count), 1488095, 1);
    }
    if (c.mbps == 1000 && c.size == 1518) {
        EXPECT_NEAR(double(b.count), 81274, 1);
    }
    // The link costs exactly one kernel event per delivered frame (the test source counts none).
    EXPECT_EQ(sim_stats::kernel_events - events_before, b.count);
    EXPECT_EQ(l.stats(net::link::a_to_b).frames, b.count);
    EXPECT_EQ(l.stats(net::link::a_to_b).bytes, b.count * c.size);
    EXPECT_EQ(a.count, 0u);
}

INSTANTIATE_TEST_SUITE_P(speeds, link_line_rate,
                         ::testing::Values(line_rate_case{1000, 64}, line_rate_case{1000, 1518},
                                           line_rate_case{100, 64}, line_rate_case{100, 1518},
                                           line_rate_case{10, 64}, line_rate_case{10, 1518}),
                         [](const auto& info) {
                             return std::to_string(int(info.param.mbps)) + "mbps_" + std::to_string(info.param.size) + "B";
                         });

TEST(link, propagation_delay_is_added_and_taps_see_sender_times) {
    fresh_simulation();
    const double prop_ns = 5000;
    net::link l("link", {1000, prop_ns});
    recorder a, b;
    l.bind(a, b);
    struct tap_rec { int dir; size_t size; sc_time start, end, called; };
    std::vector<tap_rec> taps;
    l.add_tap([&](int dir, const net::frame& f, sc_time start, sc_time end) {
        taps.push_back({dir, f.size(), start, end, sc_core::sc_time_stamp()});
    });
    source s("src");
    s.tx = &l.end_b();  // b -> a this time
    s.limit = 1;
    s.frame_size = 64;
    s.start = sc_time(1000, SC_NS);
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(a.log.size(), 1u);
    EXPECT_EQ(b.count, 0u);
    EXPECT_EQ(a.log[0].at, sc_time(1000 + frame_end_ns(64, 1000) + prop_ns, SC_NS));
    ASSERT_EQ(taps.size(), 1u);
    EXPECT_EQ(taps[0].dir, net::link::b_to_a);
    EXPECT_EQ(taps[0].start, sc_time(1000, SC_NS));
    EXPECT_EQ(taps[0].end, sc_time(1000 + frame_end_ns(64, 1000), SC_NS));
    EXPECT_EQ(taps[0].called, a.log[0].at);
}

TEST(link, sends_while_busy_queue_behind_the_current_frame) {
    fresh_simulation();
    const double prop_ns = 50, t0 = 100;
    net::link l("link", {1000, prop_ns});
    recorder a, b;
    l.bind(a, b);
    const size_t sizes[3] = {64, 1518, 100};
    std::vector<sc_time> returned;
    sc_core::sc_event go;
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&go);
    o.dont_initialize();
    sc_core::sc_spawn([&] {
        for (size_t n : sizes) returned.push_back(l.end_a().send(test::make_frame(test::host_mac(2), test::host_mac(1), n)));
        EXPECT_EQ(l.end_a().tx_free_at(), returned.back());
    }, "burst", &o);
    go.notify(sc_time(t0, SC_NS));
    sc_core::sc_start(1, sc_core::SC_MS);

    ASSERT_EQ(returned.size(), 3u);
    ASSERT_EQ(b.log.size(), 3u);
    double start = t0;
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(b.log[i].size, sizes[i]);
        EXPECT_EQ(b.log[i].at, sc_time(start + frame_end_ns(sizes[i], 1000) + prop_ns, SC_NS)) << i;
        EXPECT_EQ(returned[i], sc_time(start + wire_ns(sizes[i], 1000), SC_NS)) << i;
        start += wire_ns(sizes[i], 1000);
    }
}

// Sending ahead: a frame sent at 0 to start at 2 us arrives as if sent at 2 us; one withdrawn
// before its start is never delivered and frees the transmitter as if never sent.
TEST(link, frames_sent_ahead_start_at_their_time_and_can_be_withdrawn) {
    fresh_simulation();
    const double prop_ns = 10;
    net::link l("link", {1000, prop_ns});
    recorder a, b;
    l.bind(a, b);
    ASSERT_TRUE(l.end_a().sends_ahead());
    net::frame_ptr back;
    sc_core::sc_event go;
    spawn_method("ahead", go, [&] {
        const sc_time t0 = sc_core::sc_time_stamp();
        l.end_a().send_at(test::make_frame(test::host_mac(2), test::host_mac(1), 64, 0x0800, 1), t0 + sc_time(2, sc_core::SC_US));
        const sc_time free_before = l.end_a().tx_free_at();
        l.end_a().send_at(test::make_frame(test::host_mac(2), test::host_mac(1), 64, 0x0800, 2), t0 + sc_time(5, sc_core::SC_US));
        EXPECT_EQ(l.end_a().withdraw_last(t0 + sc_time(5, sc_core::SC_US)), nullptr);  // starts at 5 us, not after
        back = l.end_a().withdraw_last(t0 + sc_time(4, sc_core::SC_US));
        EXPECT_EQ(l.end_a().tx_free_at(), free_before);
        EXPECT_EQ(l.end_a().withdraw_last(t0 + sc_time(2, sc_core::SC_US)), nullptr);  // the first one starts at 2 us
    });
    go.notify(sc_time(100, SC_NS));
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_TRUE(back);
    EXPECT_EQ(test::tag_of(*back), 2u);
    ASSERT_EQ(b.log.size(), 1u);
    EXPECT_EQ(b.log[0].tag, 1u);
    EXPECT_EQ(b.log[0].at, sc_time(2100 + frame_end_ns(64, 1000) + prop_ns, SC_NS));
    EXPECT_EQ(l.stats(net::link::a_to_b).frames, 1u);
    EXPECT_EQ(l.books(net::link::a_to_b).in, 1u);
}

// A frame sent ahead enters the link (the books' `in`) when it starts, as if sent then. One that
// starts exactly at the warm-up's end enters in the window, as a send() at that time does: sc_start
// returns at its end time before running the processes due then. The books of the window, the
// frame sent ahead (from 100 ns, to start at 2 us) or sent at 2 us.
std::vector<uint64_t> books_of_a_frame_starting_at_the_warm_up_end(bool ahead) {
    fresh_simulation();
    net::link l("link", {1000, 0});
    recorder a, b;
    l.bind(a, b);
    const sc_time start(2, sc_core::SC_US);
    sc_core::sc_event go;
    spawn_method("sender", go, [&] {
        l.end_a().send_at(test::make_frame(test::host_mac(2), test::host_mac(1), 64, 0x0800, 1), start);
    });
    go.notify(ahead ? sc_time(100, SC_NS) : start);
    run_for(start);  // the warm-up
    l.reset_stats();
    run_for(sc_time(1, sc_core::SC_MS));
    const ledger books = l.books(net::link::a_to_b);
    EXPECT_TRUE(books.balanced());
    return {books.in_flight_start, books.in, books.out, books.in_flight_end, l.stats(net::link::a_to_b).sent};
}

TEST(link, a_frame_sent_ahead_that_starts_at_the_warm_up_end_enters_in_the_window_as_one_sent_then) {
    const std::vector<uint64_t> sent_then = books_of_a_frame_starting_at_the_warm_up_end(false);
    EXPECT_EQ(sent_then, (std::vector<uint64_t>{0, 1, 1, 0, 1}));
    EXPECT_EQ(books_of_a_frame_starting_at_the_warm_up_end(true), sent_then);
}

// A sink that takes frames when they are sent: the link spends no event on them and still counts
// each at its arrival time (stats, books); a frame it declines is delivered by the event.
TEST(link, frames_a_sink_takes_early_are_counted_at_their_arrival_without_an_event) {
    fresh_simulation();
    struct early_sink : recorder {
        std::vector<sc_time> offered;
        std::vector<net::frame_ptr> taken;
        bool frame_arriving(net::frame_ptr& f, const sc_time& at) override {
            offered.push_back(at);
            if (test::tag_of(*f) == 2) return false;
            taken.push_back(std::move(f));
            return true;
        }
    } b;
    recorder a;
    net::link l("link", {1000, 0});
    l.bind(a, b);
    sc_core::sc_event go;
    spawn_method("burst", go, [&] {
        for (uint32_t tag = 0; tag < 4; ++tag) l.end_a().send(test::make_frame(test::host_mac(2), test::host_mac(1), 64, 0x0800, tag));
    });
    go.notify(sc_time(0, SC_NS));
    const double wire = wire_ns(64, 1000), end = frame_end_ns(64, 1000);
    sc_core::sc_start(sc_time(end + 1, SC_NS));  // the first frame has arrived
    const uint64_t events = sim_stats::kernel_events;
    EXPECT_EQ(l.stats(net::link::a_to_b).frames, 1u);
    EXPECT_EQ(l.books(net::link::a_to_b).in_flight_end, 3u);
    sc_core::sc_start(1, sc_core::SC_MS);
    // Tags 0 and 1 taken early; 2 declined (delivered by the event); 3 not offered: a frame is
    // offered only while none sent before it waits for the event.
    ASSERT_EQ(b.offered.size(), 3u);
    EXPECT_EQ(b.offered[1], sc_time(wire + end, SC_NS));
    EXPECT_EQ(b.taken.size(), 2u);
    ASSERT_EQ(b.log.size(), 2u);  // tag 2 and tag 3 through frame_arrived
    EXPECT_EQ(b.log[0].tag, 2u);
    EXPECT_EQ(b.log[1].tag, 3u);
    EXPECT_EQ(b.log[1].at, sc_time(3 * wire + end, SC_NS));
    EXPECT_EQ(sim_stats::kernel_events - events, 2u);  // one event per frame delivered by it
    EXPECT_EQ(l.stats(net::link::a_to_b).frames, 4u);
    EXPECT_TRUE(l.books(net::link::a_to_b).balanced());
    EXPECT_EQ(l.books(net::link::a_to_b).in_flight_end, 0u);
}

TEST(link, full_duplex_directions_are_independent_and_reported) {
    fresh_simulation();
    net::link l("link", {1000, 0});
    recorder a, b;
    a.keep = b.keep = false;
    l.bind(a, b);
    source s1("s1"), s2("s2");
    s1.tx = &l.end_a();
    s2.tx = &l.end_b();
    s2.frame_size = 1518;
    sc_core::sc_start(1, sc_core::SC_MS);
    const uint64_t n64 = uint64_t((1e6 - frame_end_ns(64, 1000)) / wire_ns(64, 1000)) + 1;
    const uint64_t n1518 = uint64_t((1e6 - frame_end_ns(1518, 1000)) / wire_ns(1518, 1000)) + 1;
    EXPECT_EQ(b.count, n64);
    EXPECT_EQ(a.count, n1518);
    nlohmann::json j;
    l.report(j);
    EXPECT_EQ(j["speed_mbps"], 1000);
    EXPECT_EQ(j["a_to_b"]["frames"], n64);
    EXPECT_EQ(j["a_to_b"]["bytes"], n64 * 64);
    EXPECT_EQ(j["b_to_a"]["frames"], n1518);
    EXPECT_EQ(j["a_to_b"]["runts"], 0);
    EXPECT_NEAR(j["a_to_b"]["utilisation"].get<double>(), n64 * wire_ns(64, 1000) / 1e6, 1e-9);
    EXPECT_NEAR(j["b_to_a"]["utilisation"].get<double>(), n1518 * wire_ns(1518, 1000) / 1e6, 1e-9);

    // A new window counts only what is delivered after it starts.
    l.reset_stats();
    EXPECT_EQ(l.stats(net::link::a_to_b).frames, 0u);
    sc_core::sc_start(1, sc_core::SC_MS);
    const uint64_t n64_2 = uint64_t((2e6 - frame_end_ns(64, 1000)) / wire_ns(64, 1000)) + 1 - n64;
    EXPECT_EQ(l.stats(net::link::a_to_b).frames, n64_2);
    EXPECT_NEAR(l.utilisation(net::link::a_to_b), n64_2 * wire_ns(64, 1000) / 1e6, 1e-9);
}

TEST(link, runts_are_carried_as_given_and_counted) {
    fresh_simulation();
    net::link l("link", {100, 0});
    recorder a, b;
    l.bind(a, b);
    source s("src");
    s.tx = &l.end_a();
    s.frame_size = 60;  // an unpadded minimum frame
    s.limit = 3;
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(b.log.size(), 3u);
    EXPECT_EQ(b.log[0].size, 60u);
    EXPECT_EQ(b.log[2].at, sc_time(2 * wire_ns(60, 100) + frame_end_ns(60, 100), SC_NS));
    EXPECT_EQ(l.stats(net::link::a_to_b).runts, 3u);
}

TEST(link, steady_state_sends_allocate_no_frames) {
    fresh_simulation();
    net::link l("link", {1000, 200});
    recorder a, b;
    b.keep = false;
    l.bind(a, b);
    source s("src");
    s.tx = &l.end_a();
    sc_core::sc_start(10, sc_core::SC_US);
    const size_t allocated = net::frame_pool::instance().allocated();
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_GT(b.count, 1000u);
    EXPECT_EQ(net::frame_pool::instance().allocated(), allocated);
}

TEST(link, bad_parameters_and_misuse_are_clear_errors) {
    fresh_simulation();
    EXPECT_THROW(net::link("zero", {0, 0}), std::invalid_argument);
    EXPECT_THROW(net::link("neg", {1000, -1}), std::invalid_argument);
    net::link l("unbound", {1000, 0});
    try {
        l.end_a().send(test::make_frame(test::broadcast, test::host_mac(1), 64));
        FAIL() << "send before bind must throw";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("before bind"), std::string::npos) << e.what();
    }
    recorder a, b;
    l.bind(a, b);
    EXPECT_THROW(l.end_a().send(nullptr), std::invalid_argument);
    sc_core::sc_start(1, sc_core::SC_NS);
}

// A scratch experiment over the shipped imx8mp profile and the real schema.
struct scratch_experiment {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("fecsim-net-" + std::to_string(::getpid()) + ".json");
    scratch_experiment() { std::ofstream(path) << R"({"platform": "imx8mp"})"; }
    ~scratch_experiment() { std::filesystem::remove(path); }
    config load(const std::vector<std::string>& sets) const { return config::load(path.string(), sets, FECSIM_SOURCE_CONFIG_DIR); }
    std::string error(const std::vector<std::string>& sets) const {
        try {
            load(sets);
        } catch (const config_error& e) {
            return e.what();
        }
        return "";
    }
};

TEST(link, config_section_defaults_overrides_and_bad_values) {
    fresh_simulation();
    scratch_experiment x;
    const config defaults = x.load({});
    const net::link_params d = net::link_params_from(defaults.view("link"));
    EXPECT_EQ(d.speed_mbps, 1000);
    EXPECT_EQ(defaults.view("link").string("topology"), "switch");
    EXPECT_FALSE(defaults.view("link").boolean("flow_control"));

    const net::link_params p = net::link_params_from(x.load({"link.speed_mbps=100", "link.propagation_ns=25"}).view("link"));
    EXPECT_EQ(p.speed_mbps, 100);
    EXPECT_EQ(p.propagation_ns, 25);
    net::link l("link", p);
    EXPECT_EQ(l.end_a().speed_mbps(), 100);

    EXPECT_NE(x.error({"link.speed_mbps=2500"}).find("/link/speed_mbps: expected one of 10, 100, 1000, got 2500"),
              std::string::npos);
    EXPECT_NE(x.error({"link.propagation_ns=-1"}).find("/link/propagation_ns"), std::string::npos);
    EXPECT_NE(x.error({"link.topology=ring"}).find("/link/topology"), std::string::npos);
    EXPECT_NE(x.error({"link.speed=100"}).find("/link/speed: unknown key"), std::string::npos);
    sc_core::sc_start(1, sc_core::SC_NS);
}

}  // namespace
}  // namespace fecsim
