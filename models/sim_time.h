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

}  // namespace fecsim
