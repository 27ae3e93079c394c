#include "platform/simulation.h"

#include "models/sim_context.h"
#include "models/sim_stats.h"
#include "platform/live_monitor.h"
#include "platform/run_warnings.h"
#include "platform/soc.h"
#include "platform/telemetry.h"

#include <systemc>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace fecsim {

namespace {

// Runs the simulation for `t`. A stop inside it (a strict coherency violation, a firmware
// failure) leaves sc_start as an sc_report or through sc_stop; check() rethrows the original.
void advance(soc& chip, const sc_core::sc_time& t) {
    try {
        sc_core::sc_start(t);
    } catch (...) {
        chip.finish();
        throw;
    }
    chip.check();
}

}  // namespace

nlohmann::json run_simulation(const config& cfg, const run_options& opt) {
    fresh_simulation();
    const double warmup_s = cfg.tree().at("warmup_s"), duration_s = cfg.tree().at("duration_s");
    sim_stats::kernel_events = 0;
    const auto wall_start = std::chrono::steady_clock::now();

    soc chip(cfg, opt);
    std::unique_ptr<telemetry_server> server;
    std::unique_ptr<telemetry_sampler> sampler;
    live_monitor::line_sink to_telemetry;
    if (telemetry_params tp; telemetry_params_from(cfg, tp)) {
        server = std::make_unique<telemetry_server>(cfg, tp);
        sampler = std::make_unique<telemetry_sampler>("telemetry", chip, *server, tp.interval_s, warmup_s,
                                                      warmup_s + duration_s);
        to_telemetry = [&](const std::vector<std::string>& lines) { sampler->add_lines(lines); };
        if (!opt.quiet)
            std::fprintf(stderr, "fecsim: telemetry on %s (fecsim watch %s)\n", server->address().c_str(),
                         server->address().c_str());
    }
    // Live output covers the measurement window, as the modelled tool started with it would.
    live_monitor monitor("live", [&](double interval_s) { return chip.live_lines(interval_s); }, warmup_s,
                         warmup_s + duration_s, opt.quiet, to_telemetry);
    advance(chip, sc_core::sc_time(warmup_s, sc_core::SC_SEC));
    // Statistics of a DUT that is still opening its interface would mix boot and steady state.
    if (!chip.firmware_booted())
        throw cfg.error_at("/warmup_s", "the driver is still opening the interface at the end of the warm-up (" +
                                            sc_core::sc_time(warmup_s, sc_core::SC_SEC).to_string() +
                                            "); use a longer warm-up");
    chip.reset_stats();
    if (sampler) sampler->window_started();
    if (auto* bridge = chip.bridge(); bridge && !opt.quiet)  // a host tool can start now
        std::fprintf(stderr, "fecsim: bridge ready: %s on the %s port, %s pacing, %g s measured\n",
                     bridge->socket().description().c_str(), bridge->params().port.c_str(),
                     bridge->params().realtime ? "realtime" : "as_fast_as_possible", duration_s);
    const uint64_t events_at_window = sim_stats::kernel_events;
    advance(chip, sc_core::sc_time(duration_s, sc_core::SC_SEC));

    monitor.finish();
    if (sampler) sampler->finish();
    chip.finish();
    if (server) server->close();
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const double simulated_s = sc_core::sc_time_stamp().to_seconds();

    nlohmann::json result = chip.report(duration_s);
    result["sim"] = {
        {"simulated_s", simulated_s},
        {"window_s", duration_s},
        {"wall_s", wall_s},
        {"speed", wall_s > 0 ? simulated_s / wall_s : 0.0},
        {"kernel_events", sim_stats::kernel_events - events_at_window},
    };
    if (server) result["telemetry"]["dropped_lines"] = server->dropped_lines();
    result["config"] = cfg.tree();
    result["warnings"] = run_warnings(result);
    return result;
}

void check_assembly(const config& cfg) {
    fresh_simulation();
    soc chip(cfg);
    // Every profile opens its interface within a few simulated milliseconds.
    const sc_core::sc_time step(1, sc_core::SC_MS), limit(100, sc_core::SC_MS);
    while (!chip.firmware_booted() && sc_core::sc_time_stamp() < limit) advance(chip, step);
}

void write_result(const std::string& path, const nlohmann::json& result) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write result file");
    out << result.dump(2) << '\n';
    if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace fecsim
