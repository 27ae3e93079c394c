// The pktgen model under simulated time: rate control (ratep, rate, delay) within 0.1% over one
// simulated second, CPU-bound and wire-bound rates, burst and clone_skb semantics, count and the
// Result line, a generator that receives the bounced stream sending slower by its RX cost,
// PAUSE frames honoured, the kernel-event budget, and received frames it only counts taken when
// the link sends them.
#include "models/net/eth_switch.h"
#include "models/net/link.h"
#include "models/process.h"
#include "models/sim_context.h"
#include "models/sim_stats.h"
#include "tests/traffic/test_wire.h"
#include "traffic/pktgen.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

namespace fecsim::traffic {
namespace {

using sc_core::SC_NS;
using sc_core::SC_SEC;
using sc_core::SC_US;
using sc_core::sc_time;
using test::collector;
using test::test_wire;

constexpr double gbit = 1000;

// Costs chosen for easy arithmetic (not the calibrated defaults).
pktgen_cpu_params test_cpu() {
    pktgen_cpu_params c;
    c.per_packet_ns = 1000;
    c.per_burst_ns = 200;
    c.build_ns = 300;
    c.rx_per_packet_ns = 2000;
    return c;
}

pktgen_model_params model(std::initializer_list<const char*> cmds, pktgen_cpu_params cpu = test_cpu()) {
    pktgen_model_params p;
    for (const char* l : cmds) apply_pktgen_command(p.cmd, l);
    p.dev = {{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001};
    p.cpu = cpu;
    return p;
}

// generator -> wire -> collector (or a reflector that sends everything back to the generator).
struct bench {
    std::unique_ptr<pktgen> gen;
    std::unique_ptr<test_wire> out, back;
    collector rx;
    sink reflector;

    explicit bench(const pktgen_model_params& p, bool reflect = false, size_t keep = 0)
        : rx(keep), reflector(sent_macs{}) {
        gen = std::make_unique<pktgen>("gen", p);
        out = std::make_unique<test_wire>("out", gbit, reflect ? static_cast<net::eth_sink*>(&reflector) : &rx);
        back = std::make_unique<test_wire>("back", gbit, gen.get());
        gen->connect(*out);
        if (reflect) reflector.reflect_to(*back);
    }
};

void expect_within(double got, double want, double rel, const char* what) {
    EXPECT_NEAR(got, want, want * rel) << what << ": got " << got << ", want " << want;
}

TEST(pktgen, ratep_sets_the_call_rate) {
    fresh_simulation();
    bench b(model({"count 0", "ratep 100000"}));
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 100000, 0.001, "frames sent in 1 s");
    expect_within(double(b.rx.count), 100000, 0.001, "frames received in 1 s");
}

TEST(pktgen, ratep_applies_once_per_call_not_per_packet) {
    fresh_simulation();
    bench b(model({"count 0", "burst 8", "ratep 50000"}));
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 8 * 50000, 0.001, "burst 8 x ratep 50000");
}

TEST(pktgen, rate_in_megabits_uses_min_pkt_size) {
    fresh_simulation();
    // delay = 60 * 8 * 1000 / 300 = 1600 ns per call; the CPU needs 200 + 300 + 1000 = 1500 ns.
    bench b(model({"count 0", "pkt_size 60", "rate 300M"}));
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 1e9 / 1600, 0.001, "rate 300M");
}

TEST(pktgen, delay_in_nanoseconds) {
    fresh_simulation();
    bench b(model({"count 0", "delay 20000"}));
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 50000, 0.001, "delay 20000");
}

TEST(pktgen, cpu_bound_rate_follows_the_costs) {
    fresh_simulation();
    bench b(model({"count 0", "burst 32"}));
    sc_core::sc_start(1, SC_SEC);
    // One call: build 300 + doorbell 200 + 32 x 1000 ns.
    expect_within(double(b.gen->sofar()), 32e9 / (300 + 200 + 32 * 1000), 0.001, "CPU-bound");
}

TEST(pktgen, default_costs_reproduce_the_e1_generator) {
    fresh_simulation();
    // pktgen_sample03 defaults on the i.MX8MP generator board: ~935,397 pps of 64-byte frames.
    pktgen_model_params p = model({}, pktgen_cpu_params{});
    for (const auto& l : sample03_commands("")) apply_pktgen_command(p.cmd, l);
    bench b(p);
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 935397, 0.001, "E1 generator send rate");
}

TEST(pktgen, default_costs_reproduce_e2_when_the_generator_receives) {
    fresh_simulation();
    // E2: the generator also processes every bounced frame and drops to ~258.8 k pps.
    pktgen_model_params p = model({}, pktgen_cpu_params{});
    for (const auto& l : sample03_commands("")) apply_pktgen_command(p.cmd, l);
    p.rx_enabled = true;
    bench b(p, true);
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 258800, 0.001, "E2 generator send rate");
}

TEST(pktgen, wire_bound_when_the_cpu_is_faster_than_the_line) {
    fresh_simulation();
    pktgen_cpu_params fast = test_cpu();
    fast.per_packet_ns = 100;
    bench b(model({"count 0", "burst 32"}, fast));
    sc_core::sc_start(1, SC_SEC);
    // 64-byte frames at 1 Gbit/s: (8 + 64 + 12) x 8 ns each.
    expect_within(double(b.rx.count), 1e9 / (84 * 8), 0.001, "line rate");
    EXPECT_GT(b.gen->stats().tx_busy, 0u) << "the TX ring must have filled";
    EXPECT_LE(b.gen->sofar() - b.rx.count, 1024u + 32u) << "no more in flight than the ring holds";
}

TEST(pktgen, random_sizes_keep_changing_when_the_ring_is_full) {
    // A CPU faster than the line fills the TX ring. pktgen_xmit() builds the next frame before
    // it finds the queue stopped, so every size keeps being drawn; the model used to return
    // first and clear last_ok, which froze whichever size was current.
    fresh_simulation();
    pktgen_cpu_params fast = test_cpu();
    fast.per_packet_ns = 100;
    bench b(model({"count 0", "burst 8", "flag TXSIZE_RND", "min_pkt_size 60", "max_pkt_size 1500"}, fast), false, 20000);
    sc_core::sc_start(200, sc_core::SC_MS);  // ~780-byte frames at line rate: ~30 000
    ASSERT_GT(b.gen->stats().tx_busy, 100u) << "the TX ring must have filled";
    ASSERT_EQ(b.rx.kept.size(), 20000u);
    std::set<size_t> sizes;
    size_t changes = 0;
    for (size_t i = 0; i < b.rx.kept.size(); ++i) {
        sizes.insert(b.rx.kept[i]->size());
        changes += i > 0 && b.rx.kept[i]->size() != b.rx.kept[i - 1]->size();
    }
    EXPECT_GT(sizes.size(), 1000u);
    EXPECT_GT(changes, 20000u / 8 * 9 / 10) << "about one new size per burst";
}

uint32_t seq_of(const net::frame& f) {
    return uint32_t(f.bytes[46]) << 24 | uint32_t(f.bytes[47]) << 16 | uint32_t(f.bytes[48]) << 8 | f.bytes[49];
}
int udp_dst_of(const net::frame& f) { return f.bytes[36] << 8 | f.bytes[37]; }

TEST(pktgen, burst_sends_identical_frames_back_to_back) {
    fresh_simulation();
    bench b(model({"count 12", "burst 4", "udp_dst_min 9", "udp_dst_max 12", "ratep 1000"}), false, 12);
    sc_core::sc_start(10, sc_core::SC_MS);
    ASSERT_EQ(b.rx.kept.size(), 12u);
    const uint32_t want_seq[] = {1, 5, 9};  // seq_num counts sent packets
    const int want_port[] = {10, 11, 9};
    for (int burst = 0; burst < 3; ++burst) {
        for (int i = 0; i < 4; ++i) {
            const auto& f = *b.rx.kept[size_t(burst * 4 + i)];
            EXPECT_EQ(f.bytes, b.rx.kept[size_t(burst * 4)]->bytes) << "frame " << i << " of burst " << burst;
            EXPECT_EQ(seq_of(f), want_seq[burst]);
            EXPECT_EQ(udp_dst_of(f), want_port[burst]);
            if (i > 0) {  // one doorbell: the NIC sends the burst back to back
                EXPECT_EQ(b.rx.times[size_t(burst * 4 + i)] - b.rx.times[size_t(burst * 4 + i - 1)], net::wire_time(64, gbit));
            }
        }
    }
    // ratep 1000: one burst per millisecond.
    EXPECT_EQ(b.rx.times[4] - b.rx.times[0], sc_time(1, sc_core::SC_MS));
}

TEST(pktgen, clone_skb_sends_each_frame_clone_skb_plus_one_times) {
    fresh_simulation();
    bench b(model({"count 9", "clone_skb 2"}), false, 9);
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(b.rx.kept.size(), 9u);
    std::vector<uint32_t> seq;
    for (auto& f : b.rx.kept) seq.push_back(seq_of(*f));
    EXPECT_EQ(seq, (std::vector<uint32_t>{1, 1, 1, 4, 4, 4, 7, 7, 7}));
}

TEST(pktgen, count_stops_and_prints_the_result_line) {
    fresh_simulation();
    bench b(model({"count 1000", "ratep 100000"}));
    sc_core::sc_start(20, sc_core::SC_MS);
    EXPECT_TRUE(b.gen->finished());
    EXPECT_EQ(b.gen->sofar(), 1000u);
    EXPECT_EQ(b.rx.count, 1000u);
    // Last call at 999 x 10 us, done 1.5 us later; each call waited 10 - 1.5 us for its slot.
    EXPECT_EQ(b.gen->final_summary(),
              "Result: OK: 9991(c1500+d8491) usec, 1000 (60byte,0frags)\n"
              "  100085pps 48Mb/sec (48040800bps) errors: 0");
}

TEST(pktgen, receiving_the_bounced_stream_slows_the_sender_by_the_rx_cost) {
    fresh_simulation();
    bench b(model({"count 0", "burst 32"}), true);
    b.gen->reset_stats();
    sc_core::sc_start(1, SC_SEC);
    const double no_rx = 32e9 / (300 + 200 + 32 * 1000);
    expect_within(double(b.gen->sofar()), no_rx, 0.001, "rx disabled: bounced frames are filtered");
    EXPECT_EQ(b.gen->stats().rx_frames, 0u);
    EXPECT_GT(b.gen->stats().rx_ignored, 0u);

    fresh_simulation();
    pktgen_model_params p = model({"count 0", "burst 32"});
    p.rx_enabled = true;
    bench r(p, true);
    sc_core::sc_start(1, SC_SEC);
    // Every frame sent comes back and costs 2000 ns on the same CPU.
    const double with_rx = 32e9 / (300 + 200 + 32 * 1000 + 32 * 2000);
    expect_within(double(r.gen->sofar()), with_rx, 0.001, "rx enabled");
    expect_within(double(r.gen->stats().rx_frames), with_rx, 0.001, "frames received back");
    const auto& a = r.gen->rx_analysis().stats();
    EXPECT_EQ(a.macs_swapped, r.gen->stats().rx_frames);
    EXPECT_EQ(a.macs_not_swapped, 0u);
    EXPECT_EQ(r.gen->rx_analysis().lost(), 0u);
    EXPECT_EQ(a.reordered, 0u);
}

TEST(pktgen, rx_work_fills_idle_time_before_it_slows_the_sender) {
    fresh_simulation();
    pktgen_model_params p = model({"count 0", "ratep 10000"});
    p.rx_enabled = true;
    bench b(p, true);
    sc_core::sc_start(1, SC_SEC);
    expect_within(double(b.gen->sofar()), 10000, 0.001, "rate-limited sender with spare CPU");
    expect_within(double(b.gen->stats().rx_frames), 10000, 0.001, "frames received back");
}

// Sends PAUSE frames towards the generator at given times.
struct pause_injector : sc_core::sc_module {
    std::vector<std::pair<sc_time, uint16_t>> plan;
    net::eth_tx* tx;
    pause_injector(sc_core::sc_module_name n, net::eth_tx& t, std::vector<std::pair<sc_time, uint16_t>> p)
        : sc_module(n), plan(std::move(p)), tx(&t) {
        spawn_thread("run", [this] { run(); });
    }
    void run() {
        for (auto& [t, quanta] : plan) {
            wait(t - sc_core::sc_time_stamp());
            auto f = net::frame_pool::instance().get(60);
            std::fill(f->bytes.begin(), f->bytes.end(), 0);
            const uint8_t hdr[] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 1, 0x88, 0x08, 0x00, 0x01,
                                   uint8_t(quanta >> 8), uint8_t(quanta)};
            std::copy(std::begin(hdr), std::end(hdr), f->bytes.begin());
            net::append_fcs(*f);
            tx->send(std::move(f));
        }
    }
};

// Largest gap between consecutive arrivals and the arrival time that ends it.
std::pair<sc_time, sc_time> largest_gap(const collector& c) {
    sc_time gap, end;
    for (size_t i = 1; i < c.times.size(); ++i)
        if (c.times[i] - c.times[i - 1] > gap) gap = c.times[i] - c.times[i - 1], end = c.times[i];
    return {gap, end};
}

TEST(pktgen, pause_frames_stop_the_transmitter_when_flow_control_is_on) {
    const sc_time frame = net::wire_time(64, gbit);  // 672 ns
    const sc_time pause_sent(100, SC_US);
    const sc_time pause_arrives = pause_sent + sc_time((8 + 64) * 8, SC_NS);
    const sc_time quantum(512, SC_NS);               // 512 bit-times at 1 Gbit/s
    for (bool fc : {true, false}) {
        fresh_simulation();
        pktgen_cpu_params fast = test_cpu();
        fast.per_packet_ns = 100;  // wire-bound: the transmitter is always busy
        pktgen_model_params p = model({"count 0", "burst 32"}, fast);
        p.flow_control = fc;
        bench b(p, false, 100000);
        pause_injector inj("inj", *b.back, {{pause_sent, 1000}});
        sc_core::sc_start(2, sc_core::SC_MS);
        EXPECT_EQ(b.gen->pause_frames_received(), 1u);
        const auto [gap, end] = largest_gap(b.rx);
        if (fc) {
            // The frame on the wire finishes, then the line is silent for 1000 quanta.
            EXPECT_GE(gap, 1000 * quantum) << "flow control on";
            EXPECT_LE(gap, 1000 * quantum + 2 * frame) << "flow control on";
            EXPECT_GE(end, pause_arrives + 1000 * quantum);
            EXPECT_LE(end, pause_arrives + 1000 * quantum + 2 * frame);
        } else {
            EXPECT_EQ(gap, frame) << "flow control off: PAUSE ignored";
        }
    }
}

TEST(pktgen, pause_time_zero_resumes_at_once) {
    fresh_simulation();
    pktgen_cpu_params fast = test_cpu();
    fast.per_packet_ns = 100;
    pktgen_model_params p = model({"count 0", "burst 32"}, fast);
    p.flow_control = true;
    bench b(p, false, 100000);
    pause_injector inj("inj", *b.back, {{sc_time(100, SC_US), 0xffff}, {sc_time(300, SC_US), 0}});
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_EQ(b.gen->pause_frames_received(), 2u);
    const auto [gap, end] = largest_gap(b.rx);
    EXPECT_NEAR(gap.to_seconds(), 200e-6, 2e-6);  // not 0xffff x 512 ns = 33.6 ms
}

TEST(pktgen, a_few_kernel_events_per_packet) {
    fresh_simulation();
    pktgen_model_params p = model({}, pktgen_cpu_params{});
    for (const auto& l : sample03_commands("")) apply_pktgen_command(p.cmd, l);
    bench b(p);
    const uint64_t before = sim_stats::kernel_events;
    sc_core::sc_start(100, sc_core::SC_MS);
    const double per_packet = double(sim_stats::kernel_events - before) / double(b.gen->sofar());
    EXPECT_LT(per_packet, 1.5 / 32) << "one event per burst of 32";

    fresh_simulation();
    p.flow_control = true;
    bench f(p);
    const uint64_t before_fc = sim_stats::kernel_events;
    sc_core::sc_start(100, sc_core::SC_MS);
    EXPECT_LT(double(sim_stats::kernel_events - before_fc) / double(f.gen->sofar()), 1.1)
        << "flow control: one NIC event per frame";
}

// A 64-byte frame to a station address that is not the generator's, or a PAUSE frame.
net::frame_ptr frame_for_generator(bool pause) {
    net::frame_ptr f = net::frame_pool::instance().get(60);
    std::fill(f->bytes.begin(), f->bytes.end(), 0);
    const uint8_t other[] = {0x02, 0, 0, 0, 0, 0x33, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
    const uint8_t control[] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 1, 0x88, 0x08, 0x00, 0x01, 0x00, 0x10};
    if (pause) std::copy(std::begin(control), std::end(control), f->bytes.begin());
    else std::copy(std::begin(other), std::end(other), f->bytes.begin());
    net::append_fcs(*f);
    return f;
}

// The generator (rx disabled, flow control off) sending nothing in this run.
pktgen_model_params generator_sending_nothing() {
    pktgen_model_params p = model({"count 0"});
    p.start_delay_ns = 1e9;  // no xmit call in this run
    return p;
}

// The generator sending nothing on side a of a real link with 1 us of propagation: a 64-byte
// frame sent at t arrives at t + 576 ns + 1 us. With `tap`, the link delivers every frame itself
// (one event per arrival). Built after fresh_simulation().
struct generator_behind_a_link {
    pktgen gen;
    net::link l;
    collector far;

    explicit generator_behind_a_link(bool tap) : gen("gen", generator_sending_nothing()), l("l", {gbit, 1000}) {
        l.bind(gen, far);
        gen.connect(l.end_a());
        if (tap) l.add_tap([](int, const net::frame&, sc_time, sc_time) {});
    }
};

// A thread sends frames towards the generator behind a link, reads its counters just before and
// just after their arrivals, and starts its window while a frame is in flight and just after one
// arrived.
struct counted_frames_run {
    std::vector<std::pair<uint64_t, uint64_t>> seen;  // (rx_ignored, pause_frames_received)
    nlohmann::json report;
    uint64_t events = 0;
};

counted_frames_run run_counted_frames(bool tap) {
    fresh_simulation();
    generator_behind_a_link s(tap);
    counted_frames_run r;
    auto at = [](double us) { wait(sc_time(us, SC_US) - sc_core::sc_time_stamp()); };
    auto look = [&] { r.seen.emplace_back(s.gen.stats().rx_ignored, s.gen.pause_frames_received()); };
    spawn_thread("peer", [&] {
        at(10), s.l.end_b().send(frame_for_generator(false));  // arrives at 11.576 us
        at(11.5), look();
        at(11.6), look();
        at(20), s.l.end_b().send(frame_for_generator(true));   // arrives at 21.576 us
        s.l.end_b().send(frame_for_generator(false));          // after it on the wire: 22.248 us
        at(21.5), look();
        at(21.6), look();
        at(22), s.gen.reset_stats(), look();                   // the frame in flight arrives in the window
        at(22.3), look();
        at(30), s.l.end_b().send(frame_for_generator(false));  // arrives at 31.576 us
        at(31.6), s.gen.reset_stats(), look();                 // it arrived before this window
    });
    const uint64_t e0 = sim_stats::kernel_events;
    sc_core::sc_start(40, SC_US);
    r.events = sim_stats::kernel_events - e0;
    s.gen.report(r.report);
    return r;
}

TEST(pktgen, frames_it_only_counts_are_taken_when_sent_and_counted_at_their_arrival) {
    const counted_frames_run taken = run_counted_frames(false);
    const std::vector<std::pair<uint64_t, uint64_t>> want = {{0, 0}, {1, 0}, {1, 0}, {1, 1}, {0, 0}, {1, 0}, {0, 0}};
    EXPECT_EQ(taken.seen, want);
    EXPECT_EQ(taken.events, 0u) << "no delivery event for a frame only counted";
    EXPECT_EQ(taken.report["rx_ignored"], 0);
    EXPECT_EQ(taken.report["pause_frames_received"], 0);

    const counted_frames_run delivered = run_counted_frames(true);  // the link's way: one event per arrival
    EXPECT_EQ(delivered.seen, want);
    EXPECT_EQ(delivered.events, 4u);
    EXPECT_EQ(delivered.report, taken.report);
}

// Frames arriving exactly where sc_start returns: the first at the warm-up's end (11.576 us),
// a PAUSE frame at the run's end (21.576 us). SystemC returns before running the events of its
// end time, so the link delivers the first after the reset, in the window, and the second not
// at all. Looks at the counters (rx_ignored, pause_frames_received, the link's frames) before
// and after the reset and at the end, then the report's.
std::vector<uint64_t> run_frames_at_the_run_boundaries(bool tap) {
    fresh_simulation();
    generator_behind_a_link s(tap);
    spawn_thread("peer", [&] {
        wait(sc_time(10, SC_US)), s.l.end_b().send(frame_for_generator(false));
        wait(sc_time(10, SC_US)), s.l.end_b().send(frame_for_generator(true));
    });
    std::vector<uint64_t> seen;
    auto look = [&] {
        seen.insert(seen.end(), {s.gen.stats().rx_ignored, s.gen.pause_frames_received(), s.l.stats(net::link::b_to_a).frames});
    };
    const sc_time arrival = sc_time(11576, SC_NS);
    run_for(arrival);  // the warm-up
    look(), s.gen.reset_stats(), s.l.reset_stats(), look();
    run_for(sc_time(10, SC_US));  // the measured window
    look();
    nlohmann::json j;
    s.gen.report(j);
    const ledger books = s.l.books(net::link::b_to_a);
    EXPECT_TRUE(books.balanced());
    seen.insert(seen.end(), {j["rx_ignored"].get<uint64_t>(), j["pause_frames_received"].get<uint64_t>(),
                             books.in_flight_start, books.in_flight_end});
    return seen;
}

TEST(pktgen, a_frame_it_takes_early_arriving_at_the_warm_up_or_run_end_counts_as_the_link_delivers_it) {
    const std::vector<uint64_t> delivered = run_frames_at_the_run_boundaries(true);
    EXPECT_EQ(delivered, (std::vector<uint64_t>{0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1}))
        << "the first frame counts in the window, the second in none";
    EXPECT_EQ(run_frames_at_the_run_boundaries(false), delivered);
}

// A switch port sends a frame for the generator ahead (it starts after the forwarding
// latency); a PAUSE from the generator's side reaches the switch before the start, and the
// switch takes the frame back from the link to send it after the pause. The generator, which
// took it early, gives it back: it is counted at the arrival after the pause, as when the link
// delivers every frame (a tap), and never at its first arrival time.
std::vector<uint64_t> run_withdrawn_frame(bool tap) {
    fresh_simulation();
    pktgen gen("gen", generator_sending_nothing());
    net::switch_params sp;
    sp.forwarding_latency_ns = 1500;
    net::eth_switch sw("sw", sp, 2);
    net::link l0("l0", {gbit, 0}), l1("l1", {gbit, 0});
    collector host;
    l0.bind(host, sw.port(0));
    sw.attach(0, l0.end_b());
    l1.bind(gen, sw.port(1));
    sw.attach(1, l1.end_b());
    gen.connect(l1.end_a());
    if (tap) l1.add_tap([](int, const net::frame&, sc_time, sc_time) {});
    std::vector<uint64_t> seen;
    auto at = [](double us) { wait(sc_time(us, SC_US) - sc_core::sc_time_stamp()); };
    spawn_thread("drive", [&] {
        l0.end_a().send(frame_for_generator(false));  // flooded to port 1: sent ahead to start at 2.076 us
        at(0.5), l1.end_a().send(frame_for_generator(true));  // 16 quanta from the generator's side, at the switch at 1.076 us
        at(2.7), seen.push_back(gen.stats().rx_ignored);  // its first arrival would have been 2.652 us
        at(9.8), seen.push_back(gen.stats().rx_ignored);  // sent at 1.076 + 8.192 us, arrives 9.844 us
        at(9.9), seen.push_back(gen.stats().rx_ignored);
    });
    sc_core::sc_start(20, SC_US);
    return seen;
}

TEST(pktgen, a_frame_it_took_that_the_switch_takes_back_is_given_back_and_counted_when_it_arrives) {
    const std::vector<uint64_t> want = {0, 0, 1};
    EXPECT_EQ(run_withdrawn_frame(true), want);   // the link delivers every frame
    EXPECT_EQ(run_withdrawn_frame(false), want);  // taken early, given back
}

// What the generator acts on is left to the link: a PAUSE frame with flow control on (it stops
// the transmitter), any frame with rx enabled (it costs CPU time and is analysed).
TEST(pktgen, frames_it_acts_on_are_left_to_the_link) {
    fresh_simulation();
    pktgen_model_params p = model({"count 0"});
    p.flow_control = true;
    pktgen fc("fc", p);
    net::frame_ptr pause = frame_for_generator(true), other = frame_for_generator(false);
    EXPECT_FALSE(fc.frame_arriving(pause, sc_time(1, SC_US)));
    EXPECT_TRUE(pause);
    EXPECT_TRUE(fc.frame_arriving(other, sc_time(1, SC_US)));
    EXPECT_FALSE(other);

    p.flow_control = false;
    p.rx_enabled = true;
    pktgen rx("rx", p);
    pause = frame_for_generator(true), other = frame_for_generator(false);
    EXPECT_TRUE(rx.frame_arriving(pause, sc_time(1, SC_US)));
    EXPECT_FALSE(rx.frame_arriving(other, sc_time(1, SC_US)));
    EXPECT_TRUE(other);
}

TEST(pktgen, report_has_the_result_keys) {
    fresh_simulation();
    pktgen_model_params p = model({"count 0", "burst 32"});
    p.rx_enabled = true;
    bench b(p, true);
    sc_core::sc_start(10, sc_core::SC_MS);
    b.gen->reset_stats();
    sc_core::sc_start(100, sc_core::SC_MS);
    nlohmann::json j;
    b.gen->report(j);
    const double rate = 32e9 / (300 + 200 + 32 * 1000 + 32 * 2000);
    expect_within(j["tx_frames"].get<double>(), rate * 0.1, 0.002, "window tx_frames");
    expect_within(j["rx_frames"].get<double>(), rate * 0.1, 0.002, "window rx_frames");
    EXPECT_EQ(j["pause_frames_received"], 0);
    EXPECT_NEAR(j["cpu_busy_fraction"].get<double>(), 1.0, 0.002);
    EXPECT_EQ(j["rx"]["macs_not_swapped"], 0);
    EXPECT_EQ(j["rx"]["lost"], 0);
    EXPECT_GT(j["rx"]["latency_ns"]["p50"].get<double>(), 0);
}

}  // namespace
}  // namespace fecsim::traffic
