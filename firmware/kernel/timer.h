// Kernel timers (kernel/time/timer.c, as far as the stack uses them): timer_list entries armed
// with mod_timer and run from the timer softirq once expired; the earliest pending expiry
// programs the core's clockevent device (the generic timer, cpu::timer_api). Expiry is in
// simulated time, not jiffies: the kernel's jiffy rounding (HZ=250) and the periodic tick are
// not modelled. Without a timer device (nullptr) timers still run when the softirq finds them
// expired, but nothing wakes the core for them.
#pragma once

#include "firmware/kernel/kernel.h"
#include "models/cpu/timer_api.h"

#include <functional>
#include <vector>

namespace fecsim::firmware {

struct timer_list {
    std::function<void()> function;
    sc_core::sc_time expires;
    bool pending = false;
};

class timer_base {
public:
    timer_base(kernel& k, cpu::timer_api* dev) : k_(k), dev_(dev) {}

    void add(timer_list& t);
    // mod_timer: (re)arm `t` for `expires`; returns whether it was pending.
    bool mod_timer(timer_list& t, sc_core::sc_time expires);
    bool del_timer(timer_list& t);
    // run_timer_softirq: every expired timer's function (after the timer interrupt).
    void run_timers();
    int irq_line() const { return dev_ ? dev_->irq_line() : -1; }

private:
    void program();  // tick_program_event: the device interrupts at the earliest expiry

    kernel& k_;
    cpu::timer_api* dev_;
    std::vector<timer_list*> timers_;
};

}  // namespace fecsim::firmware
