// The current simulation time, read inline: hot paths read it several times per simulated
// packet, and sc_time_stamp() is a library call. SystemC 2.3 defines the context accessors
// inline; any other version takes the library call (same value).
#pragma once

#include <systemc>

namespace fecsim {

inline const sc_core::sc_time& sim_time() {
#if defined(SC_VERSION_MAJOR) && SC_VERSION_MAJOR == 2
    return sc_core::sc_get_curr_simcontext()->time_stamp();
#else
    return sc_core::sc_time_stamp();
#endif
}

}  // namespace fecsim
