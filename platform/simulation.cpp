#include "platform/simulation.h"

#include "models/sim_context.h"
#include "models/activity.h"
#include "models/process.h"
#include "models/sim_stats.h"
#include "platform/live_monitor.h"
#include "platform/run_warnings.h"
#include "platform/soc.h"
#include "platform/telemetry.h"
#include "traffic/pktgen_commands.h"

#include <systemc>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

namespace fecsim {

namespace {

// Runs the simulation for `t`. A stop inside it (a strict coherency violation, a firmware
// failure) leaves sc_start as an sc_report or through sc_stop; check() rethrows the original.
void advance(soc& chip, const sc_core::sc_time& t) {
    try {
        run_for(t);
    } catch (...) {
        chip.finish();
        throw;
    }
    chip.check();
}

// --max-wall-s: stops the simulation once the host has spent that long. It looks at the wall
// clock every 10 simulated ms and touches no model, so the run up to the stop is unchanged.
class wall_guard : public sc_core::sc_module {
public:
    wall_guard(sc_core::sc_module_name name, double max_wall_s)
        : sc_module(name), limit_s_(max_wall_s), start_(std::chrono::steady_clock::now()) {
        spawn_method("check", check_, [this] { check(); });
        check_.notify(period);
    }
    bool stopped() const { return stopped_; }

private:
    static inline const sc_core::sc_time period{10, sc_core::SC_MS};
    void check() {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() < limit_s_) {
            check_.notify(period);
            return;
        }
        stopped_ = true;
        sc_core::sc_stop();
    }
    double limit_s_;
    std::chrono::steady_clock::time_point start_;
    timed_event check_;
    bool stopped_ = false;
};

// Statistics of a DUT that is still opening its interface would mix boot and steady state.
config_error warmup_too_short(const config& cfg) {
    const sc_core::sc_time warmup(cfg.tree().at("warmup_s").get<double>(), sc_core::SC_SEC);
    return cfg.error_at("/warmup_s", "the driver is still opening the interface at the end of the warm-up (" +
                                         warmup.to_string() + "); use a longer warm-up");
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
        // Printed even with --quiet: with port 0 it is the only way to learn where to connect.
        std::fprintf(stderr, "fecsim: telemetry on %s (fecsim watch %s)%s\n", server->address().c_str(),
                     server->address().c_str(),
                     tp.wait_clients ? ("; waiting for " + std::to_string(tp.wait_clients) + " client(s)").c_str() : "");
        server->wait_for_clients(tp.wait_clients);
    }
    // Live output covers the measurement window, as the modelled tool started with it would.
    live_monitor monitor("live", [&](double interval_s) { return chip.live_lines(interval_s); }, warmup_s,
                         warmup_s + duration_s, opt.quiet, to_telemetry);
    std::unique_ptr<wall_guard> guard;
    if (opt.max_wall_s > 0) guard = std::make_unique<wall_guard>("wall_guard", opt.max_wall_s);
    advance(chip, sc_core::sc_time(warmup_s, sc_core::SC_SEC));
    if (guard && guard->stopped())
        throw std::runtime_error("--max-wall-s: the limit was reached during the warm-up; nothing was measured");
    if (!chip.firmware_booted()) throw warmup_too_short(cfg);
    chip.reset_stats();
    if (sampler) sampler->window_started();
    if (auto* bridge = chip.bridge())  // a host tool can start now (its port, too; --quiet or not)
        std::fprintf(stderr, "fecsim: bridge ready: %s on the %s port, %s pacing, %g s measured\n",
                     bridge->socket().description().c_str(), bridge->params().port.c_str(),
                     bridge->params().realtime ? "realtime" : "as_fast_as_possible", duration_s);
    const uint64_t events_at_window = sim_stats::kernel_events;
    sim_stats::unrecorded_activity = sim_stats::quantum_syncs = sim_stats::register_syncs = 0;
    advance(chip, sc_core::sc_time(duration_s, sc_core::SC_SEC));

    monitor.finish();
    if (sampler) sampler->finish();
    chip.finish();
    if (server) server->close();
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const double simulated_s = sc_core::sc_time_stamp().to_seconds();
    const bool incomplete = guard && guard->stopped();
    const double window_s = incomplete ? simulated_s - warmup_s : duration_s;
    if (window_s <= 0)
        throw std::runtime_error("--max-wall-s: the limit was reached during the warm-up; nothing was measured");

    nlohmann::json result = chip.report(window_s);
    result["sim"] = {
        {"simulated_s", simulated_s},
        {"window_s", window_s},
        {"incomplete", incomplete},
        {"wall_s", wall_s},
        {"speed", wall_s > 0 ? simulated_s / wall_s : 0.0},
        {"kernel_events", sim_stats::kernel_events - events_at_window},
        {"unrecorded_activity", sim_stats::unrecorded_activity},
        {"syncs", {{"quantum", sim_stats::quantum_syncs}, {"register", sim_stats::register_syncs}}},
    };
    if (server) result["telemetry"]["dropped_lines"] = server->dropped_lines();
    result["config"] = cfg.tree();
    result["warnings"] = run_warnings(result);
    return result;
}

void check_assembly(const config& cfg) {
    telemetry_params telemetry;  // read when the run starts, not while assembling: checked here too
    (void)telemetry_params_from(cfg, telemetry);
    fresh_simulation();
    soc chip(cfg);
    // Every profile opens its interface within a few simulated milliseconds; run checks that it
    // has by the end of the warm-up, and so does this.
    const sc_core::sc_time warmup(cfg.tree().at("warmup_s").get<double>(), sc_core::SC_SEC);
    const sc_core::sc_time step(1, sc_core::SC_MS), limit = std::min(warmup, sc_core::sc_time(100, sc_core::SC_MS));
    while (!chip.firmware_booted() && sc_core::sc_time_stamp() < limit)
        advance(chip, std::min(step, limit - sc_core::sc_time_stamp()));
    if (!chip.firmware_booted() && limit == warmup) throw warmup_too_short(cfg);
}

void probe_output(const std::string& flag, const std::string& path) {
    const auto refuse = [&](const std::string& why) { throw config_error(flag + " " + path + ": " + why); };
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) refuse("is a directory");
    const bool existed = std::filesystem::exists(path, ec);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);  // no truncation yet
    if (fd < 0) refuse(std::string("cannot write: ") + std::strerror(errno));
    struct stat st {};
    struct statvfs fs {};
    std::string problem;
    if (::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
        // A device says whether it takes data only when written to; a newline is harmless in
        // the JSON outputs, and a terminal or /dev/null does not mind it.
        if (flag != "--pcap" && ::write(fd, "\n", 1) != 1) problem = std::string("cannot write: ") + std::strerror(errno);
    } else if (S_ISREG(st.st_mode) && ::fstatvfs(fd, &fs) == 0 && fs.f_bavail == 0) {
        problem = "no space left on the file system";
    }
    ::close(fd);
    if (!existed) std::filesystem::remove(path, ec);
    if (!problem.empty()) refuse(problem);
}

void probe_outputs(const config& cfg, const std::string& experiment,
                   const std::vector<std::pair<std::string, std::string>>& outputs) {
    namespace fs = std::filesystem;
    const auto same_file = [](const std::string& a, const std::string& b) {
        std::error_code ec, ec_b;
        const fs::path file = fs::weakly_canonical(a, ec);
        return !b.empty() && !ec && !fs::is_character_file(file, ec) && fs::weakly_canonical(b, ec_b) == file && !ec_b;
    };
    std::vector<std::pair<std::string, std::string>> taken = {{"the experiment", experiment}};
    for (const auto& [key, pointer] :
         {std::pair{"generator.pcap_file", "/generator/pcap_file"}, {"generator.pktgen_file", "/generator/pktgen_file"}})
        taken.emplace_back(key, traffic::resolve_config_path(cfg, pointer));
    for (const auto& [flag, path] : outputs) {
        if (path.empty()) continue;
        probe_output(flag, path);
        for (const auto& [what, file] : taken)
            if (same_file(path, file)) throw config_error(flag + " " + path + ": the same file as " + what);
        taken.emplace_back(flag + " " + path, path);
    }
}

std::vector<std::string> unbalanced_books(const nlohmann::json& result) {
    std::vector<std::string> lines;
    for (const auto& [boundary, b] : result.at("accounting").items()) {
        uint64_t dropped = 0;
        for (const auto& [cause, n] : b.at("dropped").items()) dropped += n.get<uint64_t>();
        const uint64_t start = b.at("in_flight_start"), in = b.at("in"), out = b.at("out"), end = b.at("in_flight_end");
        if (start + in == out + dropped + end) continue;
        lines.push_back("accounting: " + boundary + ": " + std::to_string(start) + " inside at the start + " +
                        std::to_string(in) + " in != " + std::to_string(out) + " out + " + std::to_string(dropped) +
                        " dropped + " + std::to_string(end) + " inside at the end");
    }
    return lines;
}

void write_result(const std::string& path, const nlohmann::json& result) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write result file");
    out << result.dump(2) << '\n';
    out.close();  // the last buffer reaches the file here: a full disk shows only now
    if (!out) throw std::runtime_error(path + ": writing the result file failed");
}

}  // namespace fecsim
