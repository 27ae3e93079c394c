#include "models/activity.h"

#include <memory>

namespace fecsim {

activity& activity::shared() {
    // Models of an abandoned simulation (fresh_simulation) never notify again: their record goes.
    static std::unique_ptr<activity> record;
    static sc_core::sc_simcontext* context = nullptr;
    sc_core::sc_simcontext* current = sc_core::sc_get_curr_simcontext();
    if (current != context) {
        record = std::make_unique<activity>();
        record->times_.push_back(sc_core::SC_ZERO_TIME);
        context = current;
    }
    return *record;
}

}  // namespace fecsim
