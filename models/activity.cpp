#include "models/activity.h"

#include <memory>

namespace fecsim {

void activity::prune() {
    const sc_core::sc_time& now = sim_time();
    while (!heap_.empty() && heap_.front() < now) {
        std::pop_heap(heap_.begin(), heap_.end(), later{});
        heap_.pop_back();
    }
}

activity& activity::shared() {
    // Models of an abandoned simulation (fresh_simulation) never notify again: their record goes.
    static std::unique_ptr<activity> record;
    static sc_core::sc_simcontext* context = nullptr;
    sc_core::sc_simcontext* current = sc_core::sc_get_curr_simcontext();
    if (current != context) {
        record = std::make_unique<activity>();
        record->heap_.push_back(sc_core::SC_ZERO_TIME);
        context = current;
    }
    return *record;
}

}  // namespace fecsim
