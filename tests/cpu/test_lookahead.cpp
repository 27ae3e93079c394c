// The record of a board's pending activity (models/activity.h) and the core's cross-board
// lookahead (models/cpu/core.h): which sync points a core passes while another board has
// activity due, and the fallback when the kernel has activity no record knows of.
#include "tests/cpu/cpu_bench.h"

#include "models/activity.h"
#include "models/process.h"
#include "models/sim_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using test::cpu_bench;
using cpu::core_api;

sc_time ns(double n) { return sc_time(n, SC_NS); }

// ---------------------------------------------------------------------------------------------
// The record

TEST(activity, next_is_the_earliest_noted_time_not_yet_past) {
    fresh_simulation();
    activity a;
    EXPECT_EQ(a.next(), sc_core::sc_max_time());
    a.note(ns(300));
    a.note(ns(100));
    a.note(ns(200));
    EXPECT_EQ(a.next(), ns(100));
    run_for(ns(100));  // an entry at the current time may still be pending: kept
    EXPECT_EQ(a.next(), ns(100));
    run_for(ns(50));
    EXPECT_EQ(a.next(), ns(200));
    run_for(ns(200));
    EXPECT_EQ(a.next(), sc_core::sc_max_time());
    EXPECT_EQ(a.size(), 0u);  // pruned
}

// The record keeps its times in order rather than in a heap: its answers checked against the
// earliest of every time ever noted that SystemC time has not passed (notes in any order, equal
// times, times at and before the present, while time advances).
TEST(activity, next_answers_as_a_scan_of_every_noted_time) {
    fresh_simulation();
    activity a;
    std::vector<sc_time> all;
    uint64_t x = 88172645463325252ull;  // xorshift64
    auto rnd = [&](uint64_t n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return x % n;
    };
    size_t largest = 0;
    for (int step = 0; step < 20000; ++step) {
        if (rnd(4) == 0) run_for(ns(double(rnd(300))));
        const sc_time now = sc_core::sc_time_stamp();
        for (uint64_t k = rnd(4); k > 0; --k) {
            const sc_time at = now + ns(double(rnd(8) == 0 ? rnd(5000) : rnd(600)));
            a.note(at);
            all.push_back(at);
        }
        sc_time earliest = sc_core::sc_max_time();
        for (const sc_time& t : all)
            if (t >= now) earliest = std::min(earliest, t);
        ASSERT_EQ(a.next(), earliest) << "step " << step;
        largest = std::max(largest, a.size());
    }
    EXPECT_GT(largest, 10u);  // the record held many times at once
}

TEST(activity, a_core_waiting_in_a_sync_is_pending_until_it_runs_again) {
    fresh_simulation();
    activity a;
    a.note(ns(500));
    a.core_waits_until(ns(200));
    EXPECT_EQ(a.next(), ns(200));
    a.core_runs();
    EXPECT_EQ(a.next(), ns(500));
}

TEST(activity, re_notified_and_cancelled_events_only_make_next_earlier) {
    fresh_simulation();
    activity a;
    timed_event ev(a);
    int runs = 0;
    spawn_method("count", ev, [&] { ++runs; });
    ev.notify(ns(100));
    ev.notify(ns(50));  // SystemC keeps the earlier notification
    EXPECT_EQ(a.next(), ns(50));
    run_for(ns(60));
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(a.next(), ns(100));  // stale (the event is no longer pending): conservative
    ev.notify(ns(40));             // at 100
    ev.cancel();
    EXPECT_EQ(a.next(), ns(100));  // cancelled: still noted
    run_for(ns(100));
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(a.next(), sc_core::sc_max_time());
}

TEST(activity, a_timed_notification_made_after_a_delta_one_fired_is_noted) {
    fresh_simulation();
    activity a;
    timed_event ev(a);
    int runs = 0;
    spawn_method("count", ev, [&] { ++runs; });
    spawn_thread("notifier", [&] {
        ev.notify(SC_ZERO_TIME);
        ev.notify(ns(100));  // SystemC ignores it: a delta notification is pending
        sc_core::wait(ns(10));
        ev.notify(ns(200));  // nothing pending: due at 210
    });
    run_for(ns(150));
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(a.next(), ns(210));
    run_for(ns(100));
    EXPECT_EQ(runs, 2);
}

TEST(activity, the_shared_record_starts_at_time_zero_in_every_simulation) {
    fresh_simulation();
    activity& first = activity::shared();
    EXPECT_EQ(first.next(), SC_ZERO_TIME);
    timed_event ev;  // the shared record by default
    ev.notify(ns(70));
    EXPECT_EQ(first.size(), 2u);
    run_for(ns(100));  // its end marker is shared activity too
    EXPECT_EQ(activity::shared().next(), ns(100));
    fresh_simulation();
    EXPECT_EQ(activity::shared().next(), SC_ZERO_TIME);
    EXPECT_EQ(activity::shared().size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// The core's decision. The bench's quantum is 1 us; exec(7) takes 10.5 ns.

// A method re-notifying itself every `period` in `record`: the other board's core syncing.
struct ticker {
    timed_event ev;
    sc_time period;
    ticker(activity& record, sc_time first, sc_time p) : ev(record), period(p) {
        spawn_method("tick", ev, [this] { ev.notify(period); });
        ev.notify(first);
    }
};

// The core's first step and a sync: SystemC time leaves 0, where every process starts (the shared
// record's entry at 0 makes a core sync at its first decision there).
void start(core_api& c) {
    c.exec(7);
    c.sync();
}

// Runs the core until its time reaches `until`; returns its time at its first sync after
// start() (SystemC time moved again), or sc_max_time() if it never synced before `until`.
sc_time first_sync(cpu_bench& b, sc_time until) {
    sc_time at = sc_core::sc_max_time();
    b.core.set_firmware([&](core_api& c) {
        start(c);
        const sc_time started = sc_core::sc_time_stamp();
        while (c.now() < until) {
            c.exec(7);
            if (at == sc_core::sc_max_time() && sc_core::sc_time_stamp() > started) at = c.now();
        }
    });
    sc_core::sc_start(until + ns(1000));
    return at;
}

// The sync point a step ending at or after `point` reaches.
void expect_synced_at(sc_time at, double point_ns) {
    EXPECT_GE(at, ns(point_ns));
    EXPECT_LT(at, ns(point_ns + 10.5));
}

TEST(lookahead, passes_sync_points_while_only_the_other_board_is_due_within_the_lookahead) {
    fresh_simulation();
    cpu_bench b;
    activity own, other;
    ticker peer(other, ns(500), ns(500));  // due at 500 ns: it can reach this board at 3.5 us
    b.core.set_lookahead({&own, {&other}, ns(3000)});
    // Sync points at 1 and 2 us passed (3.5 us >= t + 1 us), the 3 us one not.
    expect_synced_at(first_sync(b, ns(6000)), 3000);
    EXPECT_EQ(sim_stats::unrecorded_activity, 0u);
}

TEST(lookahead, without_it_the_core_syncs_at_the_first_sync_point_anything_is_due) {
    fresh_simulation();
    cpu_bench b;
    activity other;
    ticker peer(other, ns(500), ns(500));
    expect_synced_at(first_sync(b, ns(6000)), 1000);
}

TEST(lookahead, syncs_when_its_own_board_is_due) {
    fresh_simulation();
    cpu_bench b;
    activity own, other;
    bool seen = false;
    timed_event fec(own);  // this board's FEC, due at 1.5 us
    spawn_method("fec", fec, [&] { seen = true; });
    fec.notify(ns(1500));
    b.core.set_lookahead({&own, {&other}, ns(100000)});
    expect_synced_at(first_sync(b, ns(6000)), 2000);
    EXPECT_TRUE(seen);
}

TEST(lookahead, syncs_when_the_other_board_could_reach_it_before_its_next_check) {
    for (double due : {200.0, 600.0}) {
        SCOPED_TRACE(due);
        fresh_simulation();
        cpu_bench b;
        activity own, other;
        ticker peer(other, ns(due), ns(100000));
        b.core.set_lookahead({&own, {&other}, ns(1500)});
        // At the 1 us sync point the core may run to 2 us before it checks again: the other
        // board reaches it at due + 1.5 us, before 2 us for 200 ns, after it for 600 ns.
        expect_synced_at(first_sync(b, ns(6000)), due < 500 ? 1000 : 2000);
    }
}

TEST(lookahead, a_register_access_syncs_for_its_own_board_not_for_the_other_within_the_lookahead) {
    fresh_simulation();
    cpu_bench b;
    activity own, other;
    ticker peer(other, ns(100), ns(100000));  // reaches this board at 2.1 us
    b.core.set_lookahead({&own, {&other}, ns(2000)});
    sc_time started, before_write, kernel_at;
    b.core.set_firmware([&](core_api& c) {
        start(c);
        started = sc_core::sc_time_stamp();
        c.exec(300);  // 450 ns: no sync point yet
        before_write = c.now();
        c.write32(test::regs_base, 1);
        kernel_at = sc_core::sc_time_stamp();
    });
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(kernel_at, started);  // the other board's activity at 100 ns did not make it sync
    ASSERT_EQ(b.dev.log.size(), 1u);
    EXPECT_EQ(b.dev.log[0].at, before_write + ns(test::regs_fabric_ns));  // at its annotated time
    // With this board's own activity due by then, it syncs first.
    fresh_simulation();
    cpu_bench b2;
    activity own2, other2;
    timed_event fec(own2);
    spawn_method("fec", fec, [] {});
    fec.notify(ns(300));
    b2.core.set_lookahead({&own2, {&other2}, ns(2000)});
    b2.core.set_firmware([&](core_api& c) {
        start(c);
        c.exec(300);
        before_write = c.now();
        c.write32(test::regs_base, 1);
        kernel_at = sc_core::sc_time_stamp();
    });
    sc_core::sc_start(ns(10000));
    EXPECT_EQ(kernel_at, before_write);
}

TEST(lookahead, a_notification_no_record_knows_of_makes_the_core_sync_and_is_counted) {
    fresh_simulation();
    sim_stats::unrecorded_activity = 0;
    cpu_bench b;
    activity own, other;
    ticker peer(other, ns(2500), ns(100000));  // alone, the core would pass up to 7 us
    bool seen = false;
    sc_core::sc_event forgotten;  // a raw notification: in no record
    spawn_method("forgotten", forgotten, [&] { seen = true; });
    forgotten.notify(ns(1500));
    b.core.set_lookahead({&own, {&other}, ns(5000)});
    expect_synced_at(first_sync(b, ns(6000)), 2000);
    EXPECT_TRUE(seen);
    EXPECT_GT(sim_stats::unrecorded_activity, 0u);
}

}  // namespace
}  // namespace fecsim
