// Speed of the whole platform on the headline study (E1: xdp2 XDP_TX, 64 B frames, generator at
// ~935 kpps): simulated seconds per wall second, DUT packets per wall second, model events per
// DUT packet (docs/design.md §2 budget), wall ns per DUT packet (one XDP_TX packet end to end),
// peak RSS of the process. `make bench` reports medians of 5 repetitions (docs/performance.md).
#include "config/config.h"
#include "platform/simulation.h"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

namespace {

// `generator`: the peer E1 ships with (board) or the abstract pktgen model, whose difference is
// what the second simulated board costs per simulated second.
void e1(benchmark::State& state, const char* variant, const char* generator) {
    const double warmup_s = 0.002, simulated_s = 0.05;
    const fecsim::config cfg = fecsim::config::load(
        FECSIM_SOURCE_CONFIG_DIR "/experiments/imx8mp-xdp-tx.json",
        {std::string("driver.xdp_tx_variant=") + variant, std::string("generator.kind=") + generator,
         "warmup_s=" + std::to_string(warmup_s), "duration_s=" + std::to_string(simulated_s)});
    fecsim::run_options quiet;
    quiet.quiet = true;
    double packets = 0, events = 0;
    for (auto _ : state) {
        const nlohmann::json r = fecsim::run_simulation(cfg, quiet);
        packets += r["dut"]["packets"].get<double>();  // both counted in the measurement window
        events += r["sim"]["kernel_events"].get<double>();
    }
    const double runs = double(state.iterations());
    using benchmark::Counter;
    state.counters["sim_s_per_wall_s"] = Counter((warmup_s + simulated_s) * runs, Counter::kIsRate);
    state.counters["dut_packets_per_wall_s"] = Counter(packets, Counter::kIsRate);
    state.counters["wall_ns_per_packet"] = Counter(packets * 1e-9, Counter::kIsRate | Counter::kInvert);
    state.counters["events_per_packet"] = events / packets;
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    state.counters["peak_rss_mb"] = double(u.ru_maxrss) / 1024;  // of the whole bench process so far
}
BENCHMARK_CAPTURE(e1, sync_len, "sync_len", "board")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(e1, v4, "v4", "board")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(e1, merged, "merged", "board")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(e1, sync_len_abstract_peer, "sync_len", "pktgen")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
