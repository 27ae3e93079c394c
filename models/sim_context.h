// Starting a simulation from scratch: fecsim runs and tests elaborate a fresh SystemC context
// each time, so one process can build and run several independent simulations.
#pragma once

namespace fecsim {

// Replaces the current SystemC simulation context by a new, empty one (the old one is
// abandoned, not destroyed: SystemC 2.3 cannot tear a context down safely).
void fresh_simulation();

}  // namespace fecsim
