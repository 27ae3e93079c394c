#include "models/cpu/arch_timer.h"

#include "models/sim_stats.h"

namespace fecsim::cpu {

arch_timer::arch_timer(sc_core::sc_module_name name, int line, activity& board)
    : sc_module(name), irq("irq"), line_(line), changed_(board) {
    SC_HAS_PROCESS(arch_timer);
    SC_METHOD(update);
    sensitive << changed_.event();
    dont_initialize();
}

// Called from the core's thread (its local time may run ahead of SystemC time): the method
// re-evaluates the line now and, if the compare value lies ahead, when it is reached.
void arch_timer::set_next_event(sc_core::sc_time at) {
    enabled_ = true;
    compare_ = at;
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void arch_timer::shutdown() {
    enabled_ = false;
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void arch_timer::update() {
    sim_stats::count_event();
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const bool fired = enabled_ && compare_ <= now;
    irq.write(fired);
    if (enabled_ && !fired) changed_.notify(compare_ - now);
}

}  // namespace fecsim::cpu
