#include "models/fec/coalescer.h"

namespace fecsim::fec {

void coalescer::configure(uint32_t reg, double clock_mhz) {
    reg_ = reg;
    threshold_ = (reg >> IC_FT_SHIFT) & IC_FT_MASK;
    const uint32_t ticks = reg & IC_TT_MASK;
    timeout_ = sc_core::sc_time(ticks * ic_clocks_per_tick * 1e3 / clock_mhz, sc_core::SC_NS);
    if (!enabled()) fired();
}

bool coalescer::frame_done(const sc_core::sc_time& at) {
    // Both thresholds 0 means nothing would ever fire: behave as if coalescing were off.
    if (!enabled() || (threshold_ == 0 && timeout_ == sc_core::SC_ZERO_TIME)) return true;
    ++count_;
    if (count_ == 1 && timeout_ > sc_core::SC_ZERO_TIME) {
        armed_ = true;
        deadline_ = at + timeout_;
    }
    if (threshold_ > 0 && count_ >= threshold_) {
        fired();
        return true;
    }
    return false;
}

}  // namespace fecsim::fec
