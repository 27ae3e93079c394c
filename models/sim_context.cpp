#include "models/sim_context.h"

#include <systemc>

#include <cstdlib>

// libsystemc's own main() calls sc_main(); fecsim and the tests bring their own main(), so
// this definition only satisfies the library's reference and is never called.
int sc_main(int, char*[]) { return 1; }

namespace fecsim {

void fresh_simulation() {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    auto* ctx = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = ctx;
    sc_core::sc_default_global_context = ctx;
    // SystemC's own notes ("Simulation stopped by user." after sc_stop) are not fecsim output.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

void run_for(const sc_core::sc_time& t) {
    sc_core::sc_event end;  // no process waits for it: it only marks the time
    end.notify(t);
    sc_core::sc_start(t);
}

}  // namespace fecsim
