// The store-and-forward switch: learning and flooding, store-and-forward latency, tail drops at an
// oversubscribed port, PAUSE termination / honouring / emission, FCS checks, frame-pool reuse,
// kernel events per frame and configuration.
#include "models/net/eth_switch.h"
#include "models/net/link.h"
#include "models/sim_context.h"
#include "models/sim_stats.h"
#include "config/config.h"
#include "tests/net/net_bench.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <memory>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using test::host_mac;
using test::recorder;
using test::source;

double byte_ns(double mbps) { return 8e3 / mbps; }
double frame_end_ns(size_t size, double mbps) { return (net::preamble_bytes + size) * byte_ns(mbps); }
double wire_ns(size_t size, double mbps) { return (net::preamble_bytes + size + net::ifg_bytes) * byte_ns(mbps); }

// N hosts, each on its own link to one switch port: host i is side a of link i, port i side b.
struct star {
    std::vector<std::unique_ptr<net::link>> links;
    std::vector<std::unique_ptr<recorder>> hosts;
    std::unique_ptr<net::eth_switch> sw;

    star(const net::switch_params& p, const std::vector<net::link_params>& lp) {
        sw = std::make_unique<net::eth_switch>("sw", p, lp.size());
        for (size_t i = 0; i < lp.size(); ++i) {
            links.push_back(std::make_unique<net::link>(("link" + std::to_string(i)).c_str(), lp[i]));
            hosts.push_back(std::make_unique<recorder>());
            links[i]->bind(*hosts[i], sw->port(i));
            sw->attach(i, links[i]->end_b());
        }
    }
    net::eth_tx& host_tx(size_t i) { return links[i]->end_a(); }
};

// Sends one frame from a host at a given time (one-shot method).
void send_at(net::eth_tx& tx, sc_time at, std::function<net::frame_ptr()> make) {
    auto ev = std::make_shared<sc_core::sc_event>();
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(ev.get());
    o.dont_initialize();
    sc_core::sc_spawn([&tx, make, ev] { tx.send(make()); }, sc_core::sc_gen_unique_name("send_at"), &o);
    ev->notify(at);
}

net::switch_params base_params() {
    net::switch_params p;
    p.forwarding_latency_ns = 1500;
    p.queue_bytes = 65536;
    return p;
}

TEST(eth_switch, floods_unknown_destinations_then_forwards_to_the_learned_port) {
    fresh_simulation();
    star s(base_params(), {{1000, 0}, {1000, 0}, {1000, 0}});
    const sc_time gap(100, sc_core::SC_US);
    // 1: A -> B, B unknown: flooded to B and C.  2: B -> A, A learned: A only.
    // 3: A -> B, B learned from 2: B only.  4: C -> broadcast: A and B.
    send_at(s.host_tx(0), gap * 0.0, [] { return test::make_frame(host_mac(2), host_mac(1), 64, 0x0800, 1); });
    send_at(s.host_tx(1), gap * 1.0, [] { return test::make_frame(host_mac(1), host_mac(2), 64, 0x0800, 2); });
    send_at(s.host_tx(0), gap * 2.0, [] { return test::make_frame(host_mac(2), host_mac(1), 64, 0x0800, 3); });
    send_at(s.host_tx(2), gap * 3.0, [] { return test::make_frame(test::broadcast, host_mac(3), 64, 0x0800, 4); });
    sc_core::sc_start(1, sc_core::SC_MS);

    auto tags = [&](size_t h) {
        std::vector<uint32_t> t;
        for (auto& a : s.hosts[h]->log) t.push_back(a.tag);
        return t;
    };
    EXPECT_EQ(tags(0), (std::vector<uint32_t>{2, 4}));
    EXPECT_EQ(tags(1), (std::vector<uint32_t>{1, 3, 4}));
    EXPECT_EQ(tags(2), (std::vector<uint32_t>{1}));
    EXPECT_EQ(s.sw->stats().flooded, 2u);
    EXPECT_EQ(s.sw->stats().forwarded, 2u);
    const auto m1 = host_mac(1), m3 = host_mac(3);
    EXPECT_EQ(s.sw->learned_port(m1.data()), std::optional<size_t>(0));
    EXPECT_EQ(s.sw->learned_port(m3.data()), std::optional<size_t>(2));
    // Frames carry their bytes unchanged (FCS still valid after the copy made for flooding).
    for (auto& h : s.hosts) EXPECT_EQ(h->log[0].size, 64u);
}

TEST(eth_switch, unicast_back_to_its_own_port_is_filtered_and_entries_age_out) {
    fresh_simulation();
    net::switch_params p = base_params();
    p.aging_s = 1e-3;
    star s(p, {{1000, 0}, {1000, 0}, {1000, 0}});
    // Host 2 is learned on port 0 by a frame from port 0; a frame to host 2 from port 0 is filtered.
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_frame(test::broadcast, host_mac(2), 64); });
    send_at(s.host_tx(0), sc_time(10, sc_core::SC_US), [] { return test::make_frame(host_mac(2), host_mac(1), 64, 0x0800, 7); });
    // After the entry has aged out (1 ms), the same frame is flooded again.
    send_at(s.host_tx(0), sc_time(2, sc_core::SC_MS), [] { return test::make_frame(host_mac(2), host_mac(1), 64, 0x0800, 8); });
    sc_core::sc_start(3, sc_core::SC_MS);
    EXPECT_EQ(s.sw->stats().filtered, 1u);
    EXPECT_EQ(s.sw->stats().flooded, 2u);
    ASSERT_EQ(s.hosts[1]->log.size(), 2u);
    EXPECT_EQ(s.hosts[1]->log[1].tag, 8u);
}

// Store and forward: the output starts forwarding_latency after the input's last bit, so the far
// host sees the frame after two full serialisations, two propagations and the latency.
TEST(eth_switch, store_and_forward_latency_is_full_reception_plus_forwarding_latency) {
    fresh_simulation();
    const net::switch_params p = base_params();
    const double prop0 = 30, prop1 = 70;
    star s(p, {{1000, prop0}, {100, prop1}});
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_frame(host_mac(2), host_mac(1), 1518); });
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(s.hosts[1]->log.size(), 1u);
    const double expected = frame_end_ns(1518, 1000) + prop0 + p.forwarding_latency_ns + frame_end_ns(1518, 100) + prop1;
    EXPECT_EQ(s.hosts[1]->log[0].at, sc_time(expected, SC_NS));
}

// 1000 -> 100 Mbit/s with equal frames: the output drains one frame per 10 arriving. Frame k
// (from 0) arrives at t0 + k*T (T = 1 Gbit/s wire time); the output starts its m-th frame at
// t0 + L + 10*m*T with L = T/2, never at an arrival instant. A frame leaves the queue when its
// transmission starts, so once the queue holds Q frames every start frees one slot that the next
// arrival takes: accepted = Q + (starts before the last arrival) = Q + floor((N-2)/10) + 1.
class eth_switch_tail_drop : public ::testing::TestWithParam<bool> {};

TEST_P(eth_switch_tail_drop, oversubscribed_slow_port_drops_the_exact_count) {
    fresh_simulation();
    const bool by_bytes = GetParam();
    const size_t size = 200, queue = 50;
    const uint64_t n = 1000;
    net::switch_params p;
    p.forwarding_latency_ns = wire_ns(size, 1000) / 2;
    p.queue_frames = by_bytes ? 0 : queue;
    p.queue_bytes = by_bytes ? queue * size : 0;
    star s(p, {{1000, 0}, {100, 0}});
    s.hosts[1]->keep = false;
    source src("src");
    src.tx = &s.host_tx(0);
    src.dst = host_mac(2);  // unknown, flooded to the only other port
    src.frame_size = size;
    src.limit = n;
    sc_core::sc_start(1, sc_core::SC_SEC);

    const uint64_t accepted = queue + (n - 2) / 10 + 1;
    EXPECT_EQ(s.sw->stats().tail_drops, n - accepted);
    EXPECT_EQ(s.sw->port_stats(1).tail_drops, n - accepted);
    EXPECT_EQ(s.hosts[1]->count, accepted);
    EXPECT_EQ(s.sw->port_stats(1).max_queue_frames, queue);
    EXPECT_EQ(s.sw->queue_frames(1), 0u);
    nlohmann::json j;
    s.sw->report(j);
    EXPECT_EQ(j["tail_drops"], n - accepted);
    EXPECT_EQ(j["ports"][1]["tx_frames"], accepted);
    EXPECT_EQ(j["ports"][0]["rx_frames"], n);
}

INSTANTIATE_TEST_SUITE_P(limits, eth_switch_tail_drop, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "queue_bytes" : "queue_frames"; });

// A PAUSE from host 0 is never forwarded; honoured, it holds frames for host 0 until it expires.
class eth_switch_pause : public ::testing::TestWithParam<bool> {};

TEST_P(eth_switch_pause, pause_is_terminated_and_honoured_when_configured) {
    fresh_simulation();
    const bool honour = GetParam();
    net::switch_params p = base_params();
    p.honour_pause = honour;
    const double prop = 20;
    star s(p, {{1000, prop}, {1000, prop}, {1000, prop}});
    const uint16_t quanta = 100;
    // Host 1 and 2 learn host 0 from a first frame; then host 0 pauses its port; host 1 sends to it.
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_frame(test::broadcast, host_mac(1), 64); });
    const sc_time pause_sent(10, sc_core::SC_US), data_sent(11, sc_core::SC_US);
    send_at(s.host_tx(0), pause_sent, [=] { return test::make_pause(host_mac(1), quanta); });
    send_at(s.host_tx(1), data_sent, [] { return test::make_frame(host_mac(1), host_mac(2), 64, 0x0800, 9); });
    sc_core::sc_start(1, sc_core::SC_MS);

    EXPECT_EQ(s.sw->stats().pause_received, 1u);
    EXPECT_EQ(s.hosts[1]->count_type(0x8808) + s.hosts[2]->count_type(0x8808), 0u);  // never forwarded
    ASSERT_EQ(s.hosts[0]->log.size(), 1u);
    const double pause_end = pause_sent.to_seconds() * 1e9 + frame_end_ns(64, 1000) + prop + quanta * 512 * byte_ns(1000) / 8;
    const double ready = data_sent.to_seconds() * 1e9 + frame_end_ns(64, 1000) + prop + p.forwarding_latency_ns;
    ASSERT_LT(ready, pause_end);  // the frame is ready while the port is paused
    const double start = honour ? pause_end : ready;
    EXPECT_EQ(s.hosts[0]->log[0].at, sc_time(start + frame_end_ns(64, 1000) + prop, SC_NS));
    EXPECT_EQ(s.hosts[0]->log[0].tag, 9u);
}

INSTANTIATE_TEST_SUITE_P(modes, eth_switch_pause, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "honoured" : "not_honoured"; });

TEST(eth_switch, xon_resumes_a_paused_port_at_once) {
    fresh_simulation();
    const net::switch_params p = base_params();
    star s(p, {{1000, 0}, {1000, 0}});
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_pause(host_mac(1), 0xFFFF); });
    send_at(s.host_tx(1), sc_time(1, sc_core::SC_US), [] { return test::make_frame(host_mac(1), host_mac(2), 64); });
    const sc_time xon_sent(20, sc_core::SC_US);
    send_at(s.host_tx(0), xon_sent, [] { return test::make_pause(host_mac(1), 0); });
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(s.hosts[0]->log.size(), 1u);
    const double xon_end = xon_sent.to_seconds() * 1e9 + frame_end_ns(64, 1000);
    EXPECT_EQ(s.hosts[0]->log[0].at, sc_time(xon_end + frame_end_ns(64, 1000), SC_NS));
    EXPECT_EQ(s.sw->stats().pause_received, 2u);
}

// A frame the switch sent ahead (its queue was empty) is taken back by a PAUSE received before
// it starts, and leaves when the pause ends, as if it had waited in the queue; an XON received
// meanwhile sends it at its own time.
class eth_switch_withdraw : public ::testing::TestWithParam<uint16_t> {};

TEST_P(eth_switch_withdraw, pause_received_after_a_frame_was_sent_ahead_holds_it) {
    fresh_simulation();
    const net::switch_params p = base_params();  // forwarding latency 1500 ns
    star s(p, {{1000, 0}, {1000, 0}});
    const uint16_t quanta = GetParam();
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_frame(test::broadcast, host_mac(1), 64); });
    const double data_sent = 10000, pause_sent = 10500;  // the PAUSE arrives after the frame, before its start
    send_at(s.host_tx(1), sc_time(data_sent, SC_NS), [] { return test::make_frame(host_mac(1), host_mac(2), 64, 0x0800, 9); });
    send_at(s.host_tx(0), sc_time(pause_sent, SC_NS), [=] { return test::make_pause(host_mac(1), quanta); });
    sc_core::sc_start(1, sc_core::SC_MS);

    const double ready = data_sent + frame_end_ns(64, 1000) + p.forwarding_latency_ns;
    const double pause_end = pause_sent + frame_end_ns(64, 1000) + quanta * 512 * byte_ns(1000) / 8;
    ASSERT_LT(pause_sent + frame_end_ns(64, 1000), ready);
    ASSERT_EQ(s.hosts[0]->log.size(), 1u);
    EXPECT_EQ(s.hosts[0]->log[0].tag, 9u);
    EXPECT_EQ(s.hosts[0]->log[0].at, sc_time(std::max(ready, pause_end) + frame_end_ns(64, 1000), SC_NS));
    EXPECT_EQ(s.sw->port_stats(0).tx_frames, 1u);
    EXPECT_EQ(s.sw->queue_frames(0), 0u);
    EXPECT_EQ(s.sw->queue_bytes(0), 0u);
    EXPECT_EQ(s.links[0]->books(net::link::b_to_a).in, 1u);
}

INSTANTIATE_TEST_SUITE_P(quanta, eth_switch_withdraw, ::testing::Values(uint16_t(100), uint16_t(0)),
                         [](const auto& info) { return info.param ? "pause" : "xon"; });

TEST(eth_switch, link_local_and_mac_control_frames_are_never_forwarded) {
    fresh_simulation();
    star s(base_params(), {{1000, 0}, {1000, 0}});
    // LLDP (01:80:C2:00:00:0E) and a PFC-like MAC control frame (0x8808, opcode 0x0101).
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_frame({0x01, 0x80, 0xC2, 0, 0, 0x0E}, host_mac(1), 64, 0x88CC); });
    send_at(s.host_tx(0), sc_time(1, sc_core::SC_US), [] {
        auto f = test::make_frame({0x01, 0x80, 0xC2, 0, 0, 0x01}, host_mac(1), 64, 0x8808);
        f->bytes.resize(60);
        f->data()[14] = 0x01, f->data()[15] = 0x01;
        net::append_fcs(*f);
        return f;
    });
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_EQ(s.hosts[1]->count, 0u);
    EXPECT_EQ(s.sw->stats().control_filtered, 2u);
    EXPECT_EQ(s.sw->stats().pause_received, 0u);
}

// With emit_pause, the switch pauses the fast sender when the slow output queue passes the
// threshold, and sends XON when it has drained to the resume level.
TEST(eth_switch, emits_pause_towards_the_sender_of_a_congested_queue) {
    fresh_simulation();
    net::switch_params p = base_params();
    p.emit_pause = true;
    p.queue_bytes = 128 * 1024;  // holds the whole excess of the burst below: no drops
    p.pause_threshold_bytes = 16 * 1024;
    p.pause_resume_bytes = 4 * 1024;
    p.pause_quanta = 1000;
    star s(p, {{1000, 0}, {100, 0}});
    s.hosts[1]->keep = false;
    source src("src");
    src.tx = &s.host_tx(0);
    src.dst = host_mac(2);
    const size_t size = 1024;
    src.frame_size = size;
    src.limit = 100;  // ignores the PAUSE: a peer without flow control
    sc_core::sc_start(100, sc_core::SC_MS);

    const auto& log = s.hosts[0]->log;
    ASSERT_GE(log.size(), 2u);
    EXPECT_EQ(log.front().type, 0x8808);
    EXPECT_EQ(log.front().size, 64u);
    EXPECT_EQ(log.front().pause_quanta, 1000);
    EXPECT_EQ(log.back().pause_quanta, 0);  // XON once the queue drained
    EXPECT_EQ(s.sw->stats().xon_sent, 1u);
    EXPECT_EQ(s.sw->stats().pause_sent + s.sw->stats().xon_sent, log.size());
    EXPECT_EQ(s.sw->port_stats(0).tx_frames, log.size());
    EXPECT_EQ(s.sw->stats().tail_drops, 0u);
    EXPECT_EQ(s.hosts[1]->count, 100u);

    // Frame k reaches the switch at end + k*T_in and is queued; the output starts frame m at
    // end + latency + m*T_out and dequeues it then. The PAUSE goes out at the first arrival
    // that leaves 16 KiB (16 frames) queued.
    const double end = frame_end_ns(size, 1000), t_in = wire_ns(size, 1000), t_out = wire_ns(size, 100);
    uint64_t k = 0;
    auto queued_after = [&](uint64_t arrival) {
        const double at = end + arrival * t_in;
        const uint64_t started = at >= end + p.forwarding_latency_ns
            ? uint64_t((at - end - p.forwarding_latency_ns) / t_out) + 1 : 0;
        return (arrival + 1) - started;
    };
    while (queued_after(k) * size < p.pause_threshold_bytes) ++k;
    EXPECT_EQ(log.front().at, sc_time(end + k * t_in + frame_end_ns(64, 1000), SC_NS)) << "k=" << k;
}

TEST(eth_switch, frames_with_a_bad_fcs_are_dropped) {
    fresh_simulation();
    star s(base_params(), {{1000, 0}, {1000, 0}});
    send_at(s.host_tx(0), sc_time(0, SC_NS), [] {
        auto f = test::make_frame(host_mac(2), host_mac(1), 64);
        f->bytes[20] ^= 0x40;
        return f;
    });
    send_at(s.host_tx(0), sc_time(1, sc_core::SC_US), [] {
        auto f = net::frame_pool::instance().get(10);  // shorter than a header
        return f;
    });
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_EQ(s.hosts[1]->count, 0u);
    EXPECT_EQ(s.sw->stats().fcs_errors, 1u);
    EXPECT_EQ(s.sw->stats().malformed, 1u);
}

// Flooding to 3 ports copies frames, yet steady state allocates nothing; and a forwarded frame
// costs two kernel events: the ingress link and the egress link (an uncongested output sends it
// ahead, without a scheduler event).
TEST(eth_switch, steady_state_allocates_no_frames_and_costs_two_events_per_frame) {
    fresh_simulation();
    star s(base_params(), {{1000, 0}, {1000, 0}, {1000, 0}, {1000, 0}});
    for (auto& h : s.hosts) h->keep = false;
    source flood("flood"), uni("uni");
    flood.tx = &s.host_tx(0);  // broadcast to 3 ports
    flood.frame_size = 1518;
    uni.tx = &s.host_tx(1);
    uni.src = host_mac(2);
    uni.dst = host_mac(1);  // learned on port 0 from the flood source
    uni.start = sc_time(5, sc_core::SC_US);
    sc_core::sc_start(50, sc_core::SC_US);
    const size_t allocated = net::frame_pool::instance().allocated();
    sc_core::sc_start(2, sc_core::SC_MS);
    EXPECT_EQ(net::frame_pool::instance().allocated(), allocated);
    EXPECT_GT(s.hosts[2]->count, 100u);

    // Unicast-only window: stop the flood, let the queues drain, count events per frame.
    flood.limit = 0;
    sc_core::sc_start(1, sc_core::SC_MS);
    const uint64_t events = sim_stats::kernel_events, before = s.hosts[0]->count;
    sc_core::sc_start(1, sc_core::SC_MS);
    const uint64_t frames = s.hosts[0]->count - before;
    EXPECT_GT(frames, 1000u);
    EXPECT_NEAR(double(sim_stats::kernel_events - events) / frames, 2.0, 0.01);
}

// A two-port switch takes a data frame between learned stations from its ingress link when it is
// sent (sparing that link's event) and sends it ahead: one kernel event per frame, the egress
// delivery. Arrival times, counters and queue peaks are those of a switch that handles every
// frame at its arrival (three ports, one idle), across a PAUSE that holds frames taken early.
TEST(eth_switch, two_port_switch_takes_frames_early_with_the_same_timing) {
    struct outcome {
        std::vector<sc_time> at;
        uint64_t forwarded = 0, rx = 0, tx = 0, max_queue = 0;
        double events_per_frame = 0;
    };
    auto run = [](size_t ports) {
        fresh_simulation();
        star s(base_params(), std::vector<net::link_params>(ports, {1000, 20}));
        send_at(s.host_tx(0), sc_time(0, SC_NS), [] { return test::make_frame(test::broadcast, host_mac(1), 64); });
        send_at(s.host_tx(1), sc_time(1, sc_core::SC_US), [] { return test::make_frame(test::broadcast, host_mac(2), 64); });
        send_at(s.host_tx(0), sc_time(60, sc_core::SC_US), [] { return test::make_pause(host_mac(1), 50); });
        source uni("uni");
        uni.tx = &s.host_tx(1);
        uni.src = host_mac(2);
        uni.dst = host_mac(1);
        uni.start = sc_time(10, sc_core::SC_US);
        uni.limit = 300;
        sc_core::sc_start(9, sc_core::SC_US);
        const uint64_t events = sim_stats::kernel_events;
        sc_core::sc_start(46, sc_core::SC_US);  // until 55 us, before the PAUSE
        outcome o;
        o.events_per_frame = double(sim_stats::kernel_events - events) / double(uni.sent);
        sc_core::sc_start(1, sc_core::SC_MS);
        for (auto& a : s.hosts[0]->log) o.at.push_back(a.at);
        o.forwarded = s.sw->stats().forwarded;
        o.rx = s.sw->port_stats(1).rx_frames;
        o.tx = s.sw->port_stats(0).tx_frames;
        o.max_queue = s.sw->port_stats(0).max_queue_frames;
        EXPECT_EQ(s.sw->queue_frames(0), 0u);
        return o;
    };
    const outcome two = run(2), three = run(3);
    ASSERT_EQ(two.at.size(), 301u);  // the learning broadcast from host 1, then 300 frames
    EXPECT_EQ(two.at, three.at);
    EXPECT_EQ(two.forwarded, three.forwarded);
    EXPECT_EQ(two.rx, three.rx);
    EXPECT_EQ(two.tx, three.tx);
    EXPECT_EQ(two.max_queue, three.max_queue);
    EXPECT_GT(two.max_queue, 1u);
    EXPECT_NEAR(two.events_per_frame, 1.0, 0.1);
    EXPECT_NEAR(three.events_per_frame, 2.0, 0.1);
}

// Two hosts on a switch over links without propagation delay, each learned from its broadcast
// (host 1 sends it at 0, host 0 at 1 us). `by_events` (emit_pause, no queue comes near the threshold:
// no PAUSE is sent): the switch handles every frame by its events; otherwise it takes frames
// early and sends them ahead. Built after fresh_simulation().
star two_learned_hosts(bool by_events) {
    net::switch_params p = base_params();
    p.emit_pause = by_events;
    p.pause_threshold_bytes = 49152;
    star s(p, std::vector<net::link_params>(2, {1000, 0}));
    send_at(s.host_tx(1), sc_time(0, SC_NS), [] { return test::make_frame(test::broadcast, host_mac(2), 64); });
    send_at(s.host_tx(0), sc_time(1, sc_core::SC_US), [] { return test::make_frame(test::broadcast, host_mac(1), 64); });
    return s;
}

// Frames from host 0 to host 1 at the run's boundaries (the warm-up ends at 20.576 us, the run at
// 30.576 us): one arriving at the switch exactly at each end and one the switch starts sending
// exactly at each end (1.5 us after its arrival). sc_start returns before running the events of
// its end time, so a switch that handles every frame by its events (emit_pause: it neither takes
// frames early nor sends ahead) receives and sends those after the reset, in the window, or not
// at all. A two-port switch that takes them early and sends them ahead counts the same: the
// ports' counters and the links' before and after the reset and at the end.
std::vector<uint64_t> run_unicast_at_the_run_boundaries(bool by_events) {
    fresh_simulation();
    star s = two_learned_hosts(by_events);
    for (double sent_us : {18.5, 20.0, 28.5, 30.0})  // each arrives 576 ns later
        send_at(s.host_tx(0), sc_time(sent_us, sc_core::SC_US), [] { return test::make_frame(host_mac(2), host_mac(1), 64); });
    std::vector<uint64_t> seen;
    auto look = [&] {
        seen.insert(seen.end(), {s.sw->port_stats(0).rx_frames, s.sw->port_stats(1).tx_frames, s.sw->stats().forwarded,
                                 s.links[0]->stats(net::link::a_to_b).frames, s.links[1]->stats(net::link::b_to_a).sent});
    };
    run_for(sc_time(20576, SC_NS));  // the warm-up
    look(), s.sw->reset_stats(), s.links[0]->reset_stats(), s.links[1]->reset_stats(), look();
    run_for(sc_time(10, sc_core::SC_US));  // the measured window
    look();
    return seen;
}

TEST(eth_switch, frames_taken_early_or_sent_ahead_at_the_warm_up_or_run_end_count_as_its_events_would) {
    const std::vector<uint64_t> by_events = run_unicast_at_the_run_boundaries(true);
    EXPECT_EQ(by_events, (std::vector<uint64_t>{2, 1, 1, 2, 1, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2}))
        << "before the reset: the broadcast and the frame of 19.076 us in, the broadcast out; in the window: "
           "the frames of 20.576 us and 29.076 us in, those of 19.076 us and 20.576 us out";
    EXPECT_EQ(run_unicast_at_the_run_boundaries(false), by_events);
}

// A frame taken early in the warm-up that arrives in the window (sent at 20.276 us, arriving at
// 20.852 us) finds the frame before it still queued (it starts at 21.652 us): the window's peak
// queue is two frames, as with a switch that receives it by its event, though the switch booked
// that peak when it took the frame, before the reset. (Read before the arrival, the peak of a
// switch that takes frames early already holds it, as arriving() books it when it takes one.)
std::vector<uint64_t> peak_queue_of_the_window(bool by_events) {
    fresh_simulation();
    star s = two_learned_hosts(by_events);
    for (double sent_ns : {19576.0, 20276.0})
        send_at(s.host_tx(0), sc_time(sent_ns, SC_NS), [] { return test::make_frame(host_mac(2), host_mac(1), 64); });
    run_for(sc_time(20576, SC_NS));  // the warm-up
    s.sw->reset_stats();
    run_for(sc_time(10, sc_core::SC_US));  // the measured window
    return {s.sw->port_stats(1).max_queue_frames, s.sw->port_stats(1).max_queue_bytes, s.sw->port_stats(0).rx_frames};
}

TEST(eth_switch, a_frame_taken_early_before_the_window_that_arrives_in_it_counts_in_its_peak_queue) {
    const std::vector<uint64_t> by_events = peak_queue_of_the_window(true);
    EXPECT_EQ(by_events, (std::vector<uint64_t>{2, 128, 1}));
    EXPECT_EQ(peak_queue_of_the_window(false), by_events);
}

TEST(eth_switch, bad_parameters_are_clear_errors) {
    fresh_simulation();
    net::switch_params p;
    p.queue_bytes = 0;
    p.queue_frames = 0;
    ASSERT_TRUE(net::check(p));
    EXPECT_EQ(net::check(p)->key, "queue_bytes");
    EXPECT_THROW(net::eth_switch("sw0", p, 2), std::invalid_argument);
    p = net::switch_params{};
    p.emit_pause = true;
    p.pause_resume_bytes = p.pause_threshold_bytes;
    EXPECT_EQ(net::check(p)->key, "pause_resume_bytes");
    p = net::switch_params{};
    p.emit_pause = true;
    p.pause_threshold_bytes = p.queue_bytes;
    EXPECT_EQ(net::check(p)->key, "pause_threshold_bytes");
    EXPECT_FALSE(net::check(net::switch_params{}));
    EXPECT_THROW(net::eth_switch("sw1", net::switch_params{}, 1), std::invalid_argument);

    // A port without a transmitter is a wiring error reported on the first frame.
    net::eth_switch sw("sw2", net::switch_params{}, 2);
    try {
        sw.port(0).frame_arrived(test::make_frame(test::broadcast, host_mac(1), 64));
        FAIL() << "an unattached port must be reported";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("attach"), std::string::npos) << e.what();
    }
    sc_core::sc_start(1, sc_core::SC_NS);
}

TEST(eth_switch, config_section_reads_and_its_defaults_are_usable) {
    fresh_simulation();
    const auto path = std::filesystem::temp_directory_path() / ("fecsim-net-sw-" + std::to_string(::getpid()) + ".json");
    std::ofstream(path) << R"({"platform": "imx8mp", "link": {"switch": {"queue_frames": 64, "emit_pause": true}}})";
    const config c = config::load(path.string(), {"link.switch.forwarding_latency_ns=2500"}, FECSIM_SOURCE_CONFIG_DIR);
    const net::switch_params p = net::switch_params_from(c.view("link.switch"));
    EXPECT_EQ(p.queue_frames, 64u);
    EXPECT_TRUE(p.emit_pause);
    EXPECT_EQ(p.forwarding_latency_ns, 2500);
    EXPECT_FALSE(net::check(p)) << net::check(p)->message;  // schema defaults form a valid switch

    std::string err;
    try {
        config::load(path.string(), {"link.switch.queue_frame=3"}, FECSIM_SOURCE_CONFIG_DIR);
    } catch (const config_error& e) {
        err = e.what();
    }
    EXPECT_NE(err.find("/link/switch/queue_frame: unknown key (did you mean 'queue_frames'?)"), std::string::npos) << err;
    std::filesystem::remove(path);
    sc_core::sc_start(1, sc_core::SC_NS);
}

}  // namespace
}  // namespace fecsim
