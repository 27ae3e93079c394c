// The current simulation time, read inline: hot paths read it several times per simulated
// packet, and sc_time_stamp() is a library call. SystemC 2.3 defines the context accessors
// inline; any other version takes the library call (same value).
#pragma once

#include <systemc>

namespace fecsim {

inline const sc_core::sc_time& sim_time() {
#if defined(SC_VERSION_MAJOR) && SC_VERSION_MAJOR == 2
    // sc_get_curr_simcontext() is inline but creates the default context when there is none,
    // which makes it big enough that GCC calls it out of line; once models exist there is one.
    sc_core::sc_simcontext* context = sc_core::sc_curr_simcontext;
    return (__builtin_expect(context != nullptr, 1) ? context : sc_core::sc_get_curr_simcontext())->time_stamp();
#else
    return sc_core::sc_time_stamp();
#endif
}

// Whether an event at `t` (a link's delivery, the start of a frame sent ahead) has run for a
// reader at `now`: before `now`, or at `now` inside the simulation, where the models' own work
// and the register accesses run. Between two sc_start calls (the warm-up's end, the report) it
// has not: sc_start returns at its end time before running that time's events, which run at the
// start of the next sc_start, in the next window. Models that count such an event without
// waiting for it (frames taken early, frames sent ahead) count it by this rule.
inline bool happened_by(const sc_core::sc_time& t, const sc_core::sc_time& now) {
    return t < now || (t == now && sc_core::sc_get_status() != sc_core::SC_PAUSED);
}

}  // namespace fecsim
