#include "firmware/kernel/timer.h"

#include <algorithm>

namespace fecsim::firmware {

void timer_base::add(timer_list& t) {
    if (std::find(timers_.begin(), timers_.end(), &t) == timers_.end()) timers_.push_back(&t);
}

bool timer_base::mod_timer(timer_list& t, sc_core::sc_time expires) {
    add(t);
    const bool was = t.pending;
    t.expires = expires;
    t.pending = true;
    program();
    return was;
}

bool timer_base::del_timer(timer_list& t) {
    const bool was = t.pending;
    t.pending = false;
    return was;
}

void timer_base::program() {
    if (!dev_) return;
    bool any = false;
    sc_core::sc_time next;
    for (timer_list* t : timers_)
        if (t->pending && (!any || t->expires < next)) next = t->expires, any = true;
    if (any) dev_->set_next_event(next);
    else dev_->shutdown();
}

void timer_base::run_timers() {
    cpu::scope s(k_.core, "run_timer_softirq");
    k_.exec(path::run_timer_softirq);
    const sc_core::sc_time now = k_.core.now();
    for (timer_list* t : timers_)
        if (t->pending && t->expires <= now) {
            t->pending = false;
            t->function();
        }
    program();
}

}  // namespace fecsim::firmware
