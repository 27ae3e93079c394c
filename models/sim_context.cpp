#include "models/sim_context.h"

#include "models/activity.h"

#include <systemc>

#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// libsystemc's own main() calls sc_main(); fecsim and the tests bring their own main(), so
// this definition only satisfies the library's reference and is never called.
int sc_main(int, char*[]) { return 1; }

namespace fecsim {

namespace {

#if defined(__SANITIZE_ADDRESS__)
// libsystemc tells ASan about every coroutine switch, but gives the main stack's bounds as 0
// (it does not know them). Back on the main stack ASan then ignores every throw ("ignoring
// requested __asan_handle_no_return") and leaves the redzones of the frames it unwinds behind,
// which a later call trips over as a false stack-buffer-overflow (a run that stops on a
// violation, then another run in the same test). Give ASan the bounds again and clear the dead
// part of the stack below this frame.
void resume_main_stack() {
    pthread_attr_t attr;
    void* bottom = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    pthread_attr_getstack(&attr, &bottom, &size);
    pthread_attr_destroy(&attr);
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
    char here;
    __asan_unpoison_memory_region(bottom, size_t(&here - static_cast<char*>(bottom)));
}
#else
void resume_main_stack() {}
#endif

}  // namespace

void fresh_simulation() {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    auto* ctx = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = ctx;
    sc_core::sc_default_global_context = ctx;
    activity::recording = true;
    activity::defer_steps = true;
    activity::defer_ends = true;
    // SystemC's own notes ("Simulation stopped by user." after sc_stop) are not fecsim output.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

void run_for(const sc_core::sc_time& t) {
    timed_event end;  // no process waits for it: it only marks the time (in the shared record)
    end.notify(t);
    try {
        sc_core::sc_start(t);
    } catch (...) {
        resume_main_stack();  // before the exception unwinds further
        throw;
    }
    resume_main_stack();
}

}  // namespace fecsim
