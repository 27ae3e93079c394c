// Registering SystemC processes with sc_spawn, which needs neither SC_HAS_PROCESS (deprecated
// in SystemC 3.0) nor the SC_CURRENT_USER_MODULE typedef it relies on (SystemC 2.3). The build
// defines SC_INCLUDE_DYNAMIC_PROCESSES, so <systemc> declares sc_spawn everywhere.
#pragma once

#include <systemc>

#include <initializer_list>
#include <utility>

namespace fecsim {

// A method process run whenever one of `events` is notified (not at initialisation).
template <class F>
sc_core::sc_process_handle spawn_method(const char* name, std::initializer_list<const sc_core::sc_event*> events,
                                        F body) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    for (const sc_core::sc_event* ev : events) o.set_sensitivity(ev);
    o.dont_initialize();
    return sc_core::sc_spawn(std::move(body), name, &o);
}

template <class F>
sc_core::sc_process_handle spawn_method(const char* name, const sc_core::sc_event& ev, F body) {
    return spawn_method(name, {&ev}, std::move(body));
}

// A thread process started at initialisation.
template <class F>
sc_core::sc_process_handle spawn_thread(const char* name, F body) {
    return sc_core::sc_spawn(std::move(body), name);
}

}  // namespace fecsim
