// The Arm generic timer of a core (the virtual timer, CNTV_CVAL_EL0 / CNTV_CTL_EL0): a compare
// value in absolute time and a level-sensitive interrupt (its PPI) that is high while the timer
// is enabled and the count has reached the compare value. The kernel's clockevent device
// (arch_timer_set_next_event_virt) programs it for the earliest pending kernel timer.
#pragma once

#include "models/activity.h"
#include "models/cpu/timer_api.h"

#include <systemc>

namespace fecsim::cpu {

class arch_timer : public sc_core::sc_module, public timer_api {
public:
    sc_core::sc_out<bool> irq;

    // `board`: the record of the board the core is on (models/activity.h).
    arch_timer(sc_core::sc_module_name name, int line, activity& board = activity::shared());

    void set_next_event(sc_core::sc_time at) override;
    void shutdown() override;
    int irq_line() const override { return line_; }

private:
    void update();  // the only writer of `irq`

    int line_;
    bool enabled_ = false;
    sc_core::sc_time compare_;
    timed_event changed_;
};

}  // namespace fecsim::cpu
