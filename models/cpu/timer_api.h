// What firmware may ask of a core's timer (the kernel's clockevent device): interrupt at an
// absolute time, or not at all. The interrupt line stays high until reprogrammed or shut down.
#pragma once

#include <systemc>

namespace fecsim::cpu {

class timer_api {
public:
    virtual ~timer_api() = default;
    // Interrupt once the time reaches `at` (at once if it already has).
    virtual void set_next_event(sc_core::sc_time at) = 0;
    // Disable the timer and lower its line.
    virtual void shutdown() = 0;
    // The core interrupt input the timer drives.
    virtual int irq_line() const = 0;
};

}  // namespace fecsim::cpu
