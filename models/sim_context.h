// Starting a simulation from scratch: fecsim runs and tests elaborate a fresh SystemC context
// each time, so one process can build and run several independent simulations.
#pragma once

#include <systemc>

namespace fecsim {

// Replaces the current SystemC simulation context by a new, empty one (the old one is
// abandoned, not destroyed: SystemC 2.3 cannot tear a context down safely).
void fresh_simulation();

// sc_start(t) with the end marked as pending activity: a process that runs ahead of the kernel
// while nothing else is due (the core, models/cpu/core.h) stops there as at any other event.
void run_for(const sc_core::sc_time& t);

}  // namespace fecsim
