// Speed of the whole platform on the headline study: host time per simulated second and per
// DUT packet, kernel events per packet (docs/design.md §2 budget). Median over repetitions:
//   build/bench/fecsim_bench --benchmark_filter=e1 --benchmark_repetitions=5
#include "config/config.h"
#include "platform/simulation.h"

#include <benchmark/benchmark.h>

namespace {

void e1(benchmark::State& state, const char* variant) {
    const double simulated_s = 0.05;
    const fecsim::config cfg = fecsim::config::load(
        FECSIM_SOURCE_CONFIG_DIR "/experiments/imx8mp-xdp-tx.json",
        {std::string("driver.xdp_tx_variant=") + variant, "warmup_s=0.002", "duration_s=" + std::to_string(simulated_s)});
    fecsim::run_options quiet;
    quiet.quiet = true;
    double packets = 0, events = 0;
    for (auto _ : state) {
        const nlohmann::json r = fecsim::run_simulation(cfg, quiet);
        packets += r["dut"]["packets"].get<double>();
        events += r["sim"]["kernel_events"].get<double>();
    }
    const double runs = double(state.iterations());
    state.counters["sim_s_per_wall_s"] = benchmark::Counter(simulated_s * runs, benchmark::Counter::kIsRate);
    state.counters["wall_per_dut_packet"] =
        benchmark::Counter(packets, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["events_per_packet"] = events / packets;
}
BENCHMARK_CAPTURE(e1, v4, "v4")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(e1, merged, "merged")->Unit(benchmark::kMillisecond);

}  // namespace
