#include "platform/live_monitor.h"

#include "models/process.h"
#include "traffic/live_report.h"

#include <cstdio>

namespace fecsim {

namespace {
const sc_core::sc_time interval(1, sc_core::SC_SEC);
// How often the progress check looks at the wall clock, in simulated time: rare enough to cost
// nothing, frequent enough for a line every few wall seconds even in slow runs.
const sc_core::sc_time progress_check(10, sc_core::SC_MS);
constexpr double progress_every_wall_s = 5.0;
}  // namespace

live_monitor::live_monitor(sc_core::sc_module_name name, interval_fn lines, double start_s, double total_s,
                           bool quiet, line_sink sink)
    : sc_module(name), lines_(std::move(lines)), sink_(std::move(sink)), total_s_(total_s), quiet_(quiet),
      wall_start_(std::chrono::steady_clock::now()), last_progress_(wall_start_) {
    if (quiet_ && !sink_) return;
    spawn_method("tick", tick_event_, [this] { tick(); });
    next_tick_ = sc_core::sc_time(start_s, sc_core::SC_SEC) + interval;
    tick_event_.notify(next_tick_);
    if (quiet_) return;
    spawn_method("progress", progress_event_, [this] { progress(); });
    progress_event_.notify(progress_check);
}

void live_monitor::print_interval() {
    const std::vector<std::string> lines = lines_(interval.to_seconds());
    if (!quiet_) {
        for (const std::string& l : lines) std::printf("%s\n", l.c_str());
        std::fflush(stdout);
    }
    if (sink_) sink_(lines);
    next_tick_ += interval;
}

// The monitor's own wake-ups are not counted in sim.kernel_events (they exist only with live
// output); a core may still sync once more because a tick is due (models/cpu/core.h), so the
// count can differ by a few with and without --quiet, the modelled figures not at all.
void live_monitor::tick() {
    print_interval();
    tick_event_.notify(interval);
}

void live_monitor::finish() {
    if ((!quiet_ || sink_) && next_tick_ == sc_core::sc_time_stamp()) print_interval();
}

void live_monitor::progress() {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_progress_).count() >= progress_every_wall_s) {
        last_progress_ = now;
        const double wall = std::chrono::duration<double>(now - wall_start_).count();
        std::fprintf(stderr, "%s\n",
                     traffic::progress_line(sc_core::sc_time_stamp().to_seconds(), total_s_, wall).c_str());
    }
    progress_event_.notify(progress_check);
}

}  // namespace fecsim
