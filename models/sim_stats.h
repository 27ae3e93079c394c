// Simulation-wide counters shared by all models (reported as sim.* in the result file).
#pragma once

#include <cstdint>

namespace fecsim {

// Every model process activation (a method run, a thread wake-up) adds one, so the result file
// can report how many kernel events a simulated packet costs (docs/design.md §2 "Budget").
struct sim_stats {
    static inline uint64_t kernel_events = 0;
    static void count_event() { ++kernel_events; }
    // Decisions of the cross-board lookahead that found the kernel's next activity in no record
    // (a notification not made through a timed_event, models/activity.h): the core synced instead.
    static inline uint64_t unrecorded_activity = 0;
    // The cores' syncs (each one kernel event) at quantum sync points and before register
    // accesses: where the events per packet go (docs/performance.md).
    static inline uint64_t quantum_syncs = 0, register_syncs = 0;
};

}  // namespace fecsim
