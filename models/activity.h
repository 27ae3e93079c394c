// Pending timed activity of one board, or of everything that belongs to no board (the shared
// record): what lets a core pass a sync point while only another board has something due
// (models/cpu/core.h, docs/performance.md "Cross-board lookahead").
//
// Every timed notification of a model goes through a timed_event, which notes the notified
// time in the record of the board the model belongs to. The record keeps the noted times in
// order, pruned lazily: an entry of an event later cancelled or re-notified stays until SystemC
// time passes it, which only makes next() earlier (more syncs), never later.
#pragma once

#include "models/sim_time.h"

#include <systemc>

#include <algorithm>
#include <functional>
#include <utility>
#include <cstdint>
#include <vector>

namespace fecsim {

// A step a model leaves to its board's core instead of notifying an event for it: the core's
// thread runs it once the core's time reaches it (at its sync points, passed or taken, and
// before its register accesses: where the core would have synced for the event), or, when
// the core stops for a time it does not know (waiting for an interrupt, its thread ended),
// the model notifies its event for it. Nothing of the board can happen between SystemC time
// and the core's time but through the core, so the step still runs before anything could
// see it, and no record needs its time: the core's own wake-up bounds the board's activity
// for the other boards (models/fec/enet.h, `tx_schedule`).
class deferred_step {
public:
    virtual ~deferred_step() = default;
    // Runs the step now, at its own time `at`, from the core's thread.
    virtual void run_deferred(const sc_core::sc_time& at) = 0;
    // The core will not run it: the model notifies its event for `at`.
    virtual void core_stops(const sc_core::sc_time& at) = 0;
    sc_core::sc_time deferred_at = sc_core::sc_max_time();  // sc_max_time(): nothing deferred
    // A step that changes what the board's core reads (an end of frame's write-back) must also
    // come before everything else due on the board by its time: the core runs it only while
    // nothing else can act on the board by then (activity::set_first_else), and otherwise hands
    // it back to the model's event (core_stops), which runs it in time order with the rest.
    bool only_if_first = false;
};

class activity {
public:
    // What the board's core is doing, for a model that would leave a step to it: none reports
    // (no lookahead: a single board, tests), it runs (the model is reached by its access),
    // it waits in a sync until core_wake(), or it waits for an interrupt or has ended.
    enum class core_state { absent, running, waiting, stopped };
    // The record of everything that is not a board's (switch, generators, monitors, run_for's
    // end marker), one per simulation context. It starts with an entry at time 0, where every
    // process is initialised.
    static activity& shared();
    // Notifications are noted while this is on: fresh_simulation() turns it on, a platform that
    // builds no lookahead off before it builds its models (no record is then read).
    static inline bool recording = true;
    // Models leave steps to their board's core (deferred_step) while this is on
    // (cpu.wire_starts_by_core; fresh_simulation() turns it on).
    static inline bool defer_steps = true;
    // ... ends of frame too (cpu.ends_of_frame_by_core; fresh_simulation() turns it on).
    static inline bool defer_ends = true;
    // What a core's decision to sync read (the kernel's next activity, models/cpu/core.h
    // `kernel_view`) may since have been changed by. A timed or delta notification only makes
    // the next activity earlier, to its time at most: `earliest_notified` keeps the earliest
    // since the core read it. Anything else counts in `changes`: an immediate notification
    // (what it starts depends on who waits), a cancellation, a core's wake-up (SystemC time
    // moved, other processes ran). Nothing else runs while a core's thread runs.
    static inline uint64_t changes = 0;
    static inline sc_core::sc_time earliest_notified = sc_core::sc_max_time();
    // sc_max_time() is a library call; the cores' syncs and decisions read it often.
    static inline const sc_core::sc_time never = sc_core::sc_max_time();

    // Latest first, so that the earliest is at the back: a record holds a handful of times (its
    // board's engines, links and interrupts), and a note moves past the few earlier than it.
    // Pruned here too, so that a record nobody reads (tests without cores) stays that small.
    void note(const sc_core::sc_time& at) {
        drop_past();
        times_.push_back(at);
        for (size_t i = times_.size() - 1; i > 0 && times_[i - 1] < at; --i) std::swap(times_[i - 1], times_[i]);
    }
    // The board's core synced and waits until `at`.
    void core_waits_until(const sc_core::sc_time& at) {
        core_wake_ = at;
        core_ = core_state::waiting;
    }
    // The board's core runs (again): its own wake-up is past, which a noted time could not tell
    // until SystemC time moves.
    void core_runs() {
        core_wake_ = never;
        core_ = core_state::running;
    }
    // The core waits for an interrupt, or its thread has ended: the deferred steps become events.
    void core_stops() {
        core_ = core_state::stopped;
        deferred_by_ = never;
        while (!steps_.empty()) {
            deferred_step* s = steps_.back();
            const sc_core::sc_time at = s->deferred_at;
            cancel(*s);
            s->core_stops(at);
        }
    }
    core_state core() const { return core_; }
    const sc_core::sc_time& core_wake() const { return core_wake_; }
    // The core's answer to: the earliest time anything but its deferred steps could act on the
    // board (models/cpu/core.h `first_else`). Steps that must come first (only_if_first) are left
    // to the core only while it gives one.
    void set_first_else(std::function<sc_core::sc_time()> f) { first_else_ = std::move(f); }
    bool orders_steps() const { return bool(first_else_); }

    // Deferred steps (deferred_step): the record holds a step while it is deferred; the core
    // runs those due by its time `by`, before it decides to sync and before it waits.
    void defer(deferred_step& s, const sc_core::sc_time& at, bool only_if_first = false) {
        if (s.deferred_at == never) steps_.push_back(&s);
        s.deferred_at = at;
        s.only_if_first = only_if_first;
        if (at < deferred_by_) deferred_by_ = at;
    }
    void cancel(deferred_step& s) {
        if (s.deferred_at == never) return;
        s.deferred_at = never;
        steps_.erase(std::find(steps_.begin(), steps_.end(), &s));
    }
    void run_steps_due(const sc_core::sc_time& by) {
        while (deferred_by_ <= by) {  // the earliest deferred (or an earlier, cancelled one)
            deferred_by_ = never;
            for (size_t i = 0; i < steps_.size();) {
                deferred_step* s = steps_[i];
                if (s->deferred_at > by) {
                    deferred_by_ = std::min(deferred_by_, s->deferred_at);
                    ++i;
                    continue;
                }
                const sc_core::sc_time at = s->deferred_at;
                const bool first = !s->only_if_first || (first_else_ && at < first_else_());
                cancel(*s);
                if (first) s->run_deferred(at);  // may defer it again (pushed at the back)
                else s->core_stops(at);
            }
        }
    }
    // The earliest noted time not before SystemC time; sc_max_time() when there is none.
    sc_core::sc_time next() {
        drop_past();
        return times_.empty() || core_wake_ < times_.back() ? core_wake_ : times_.back();
    }
    size_t size() const { return times_.size(); }

private:
    void drop_past() {
        const sc_core::sc_time& now = sim_time();
        while (!times_.empty() && times_.back() < now) times_.pop_back();
    }
    std::vector<sc_core::sc_time> times_;  // noted times, latest first
    sc_core::sc_time core_wake_ = sc_core::sc_max_time();
    core_state core_ = core_state::absent;
    std::vector<deferred_step*> steps_;  // deferred
    sc_core::sc_time deferred_by_ = sc_core::sc_max_time();  // no deferred step is earlier
    std::function<sc_core::sc_time()> first_else_;
};

// An sc_event whose notifications are noted in a board's record: the only way models notify
// events (a raw sc_event::notify would be activity no record knows of; the core's check of
// the kernel's next activity against the records catches it, see core.h, once it reads the
// kernel again: at once for a notification made by another process, only after the core's
// next wake-up for one made by a model the core's own access reached).
class timed_event {
public:
    explicit timed_event(activity& record = activity::shared()) : record_(&record) {}
    // Assembly: the record of the board this event's process acts on.
    void record_in(activity& record) { record_ = &record; }

    // SystemC keeps the earlier of two timed notifications: a later one while a notification
    // after now is pending changes nothing, and is not noted again (most re-notifications).
    // While a delta notification is pending SystemC ignores every timed one: `pending_` stays
    // at now then, or a notification made after the delta fired would be taken for ignored.
    void notify(const sc_core::sc_time& delay) {
        const sc_core::sc_time& now = sim_time();
        const sc_core::sc_time at = now + delay;
        if (at < activity::earliest_notified) activity::earliest_notified = at;
        if (activity::recording && !ignored(at, now)) {
            record_->note(pending_ = at);
            delta_cycle_ = at == now ? sc_core::sc_delta_count() : no_delta;
        }
        ev_.notify(delay);
    }
    void notify() {  // immediate: activity now (and no notification pending after it)
        ++activity::changes;
        if (activity::recording) record_->note(pending_ = sim_time());
        delta_cycle_ = no_delta;
        ev_.notify();
    }
    void cancel() {
        ++activity::changes;
        pending_ = sc_core::SC_ZERO_TIME;
        delta_cycle_ = no_delta;
        ev_.cancel();
    }
    operator const sc_core::sc_event&() const { return ev_; }
    const sc_core::sc_event& event() const { return ev_; }

private:
    static constexpr sc_dt::uint64 no_delta = ~sc_dt::uint64(0);
    // What SystemC ignores: a notification no earlier than the pending timed one, any while a
    // delta notification is pending (it fires at the end of the delta cycle it was made in).
    bool ignored(const sc_core::sc_time& at, const sc_core::sc_time& now) const {
        if (pending_ == now) return delta_cycle_ != no_delta && delta_cycle_ == sc_core::sc_delta_count();
        return at >= pending_ && pending_ > now;
    }

    sc_core::sc_event ev_;
    activity* record_;
    sc_core::sc_time pending_;  // the time last noted: the notification pending if after now
    sc_dt::uint64 delta_cycle_ = no_delta;  // the delta cycle of a delta notification noted at pending_
};

// What a core needs to pass a sync point while other boards have activity due: its own board's
// record, the other boards' records, and the shortest time anything a board does takes to reach
// another board's MAC (a minimum frame's serialisation plus propagation, and the switch's
// store-and-forward). A core without one (own == nullptr) syncs whenever anything is due.
struct lookahead {
    activity* own = nullptr;
    std::vector<activity*> others;
    sc_core::sc_time latency;
};

}  // namespace fecsim
