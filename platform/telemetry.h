// Live telemetry (`fecsim run --listen ADDR:PORT`): once per reporting interval of simulated
// time the run publishes one JSON object per line (rates, XDP counters, rings, ns per packet,
// drops by cause, simulated and wall time, the tool's live lines) to every TCP client; `fecsim
// watch ADDR:PORT` shows them. The server runs Boost.Asio on a thread of its own, and each
// client has a bounded queue that drops its oldest line when full, so a slow or stuck client
// never slows the simulation.
#pragma once

#include "models/activity.h"
#include "config/config.h"
#include "platform/soc.h"

#include <nlohmann/json.hpp>
#include <systemc>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace fecsim {

struct telemetry_params {
    std::string host;            // numeric address to bind
    uint16_t port = 0;           // 0: any free port
    double interval_s = 0.1;     // simulated time between two objects
    size_t queue_lines = 256;    // per client
    unsigned wait_clients = 0;   // connected clients the run waits for before simulating
};

// Reads the telemetry section; false when telemetry.listen is empty. A non-loopback address
// without telemetry.allow_remote is a config_error.
bool telemetry_params_from(const config& cfg, telemetry_params& p);

class telemetry_server {
public:
    // Binds and starts listening; config_error naming /telemetry/listen when it cannot.
    telemetry_server(const config& cfg, const telemetry_params& p);
    ~telemetry_server();

    // Blocks until `n` clients have connected (counting those that already left).
    void wait_for_clients(unsigned n);
    // Queues `line` (no newline) for every client; any thread, never blocks.
    void publish(std::string line);
    // Sends what is queued (for at most a second), then closes every connection.
    void close();
    // "127.0.0.1:40000"
    const std::string& address() const { return address_; }
    uint64_t dropped_lines() const { return dropped_.load(); }

private:
    struct io;
    std::unique_ptr<io> io_;
    std::string address_;
    size_t queue_lines_;
    std::atomic<uint64_t> dropped_{0};
    bool closed_ = false;
};

// Samples the SoC once per interval of simulated time and publishes the telemetry object.
class telemetry_sampler : public sc_core::sc_module {
public:
    telemetry_sampler(sc_core::sc_module_name name, soc& chip, telemetry_server& server, double interval_s,
                      double warmup_s, double total_s);

    // The measurement window starts: statistics were reset.
    void window_started();
    // Lines the run printed; they go out with the next object.
    void add_lines(const std::vector<std::string>& lines);
    // The last object, at the end of the run (covers the time since the previous one).
    void finish();

private:
    void sample();

    soc& chip_;
    telemetry_server& server_;
    double interval_s_, warmup_s_, total_s_;
    timed_event tick_;
    nlohmann::json previous_;            // the report at the previous object (this phase)
    uint64_t previous_gen_tx_ = 0, previous_gen_rx_ = 0;
    double previous_s_ = 0, phase_start_s_ = 0;
    std::vector<std::string> lines_;
    std::chrono::steady_clock::time_point wall_start_;
};

}  // namespace fecsim
