// Live output while a run goes on: once per simulated second, the lines of the tool being
// modelled (xdp2's "proto 17: N pkt/s", xdp_redirect's "Summary ...", ...) on stdout; every
// few wall seconds a progress line on stderr for long runs.
#pragma once

#include "models/activity.h"

#include <systemc>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace fecsim {

class live_monitor : public sc_core::sc_module {
public:
    // Called once per simulated second with the interval length; returns the lines to print.
    using interval_fn = std::function<std::vector<std::string>(double interval_s)>;

    // Also handed the lines of each interval (live telemetry), printed or not.
    using line_sink = std::function<void(const std::vector<std::string>& lines)>;

    // Prints every simulated second from `start_s` on; `total_s` is the simulated time the run
    // will reach (for the progress line). With `quiet`, prints nothing but still feeds `sink`.
    live_monitor(sc_core::sc_module_name name, interval_fn lines, double start_s, double total_s, bool quiet,
                 line_sink sink = {});

    // Prints the interval that ends exactly at the current time, which sc_start() stops before.
    void finish();

private:
    void tick();
    void print_interval();
    void progress();

    interval_fn lines_;
    line_sink sink_;
    double total_s_;
    bool quiet_;
    timed_event tick_event_, progress_event_;
    sc_core::sc_time next_tick_;
    std::chrono::steady_clock::time_point wall_start_, last_progress_;
};

}  // namespace fecsim
