// Host cost of the hot paths a DUT packet takes through the core and the DMA port: a cached
// load that hits, the cache-maintenance loop of one page-pool sync, one descriptor fetch.
// The firmware loops run inside the core's thread, as the driver's code does.
#include "models/process.h"
#include "tests/cpu/cpu_bench.h"

#include <benchmark/benchmark.h>

namespace {

using namespace fecsim;

// Runs `fw` as the core's firmware once.
void on_core(test::cpu_bench& b, std::function<void(cpu::core_api&)> fw) {
    b.core.set_firmware(std::move(fw));
    sc_core::sc_start();
}

// One 4-byte load that hits L1 (region decode, tag lookup, charge, sync check).
void cache_lookup(benchmark::State& state) {
    fresh_simulation();
    test::cpu_bench b;
    on_core(b, [&](cpu::core_api& c) {
        c.read32(test::dram_base);
        for (auto _ : state) benchmark::DoNotOptimize(c.read32(test::dram_base + 8));
    });
}
BENCHMARK(cache_lookup);

// dma_sync_single_for_device of a 3520-byte page-pool buffer: 55 DC CIVAC and one DSB, over
// lines the core has dirtied (the XDP_TX case: xdp2 rewrote the headers).
void maintenance_loop(benchmark::State& state) {
    fresh_simulation();
    test::cpu_bench b;
    const uint32_t line = 64, lines = 3520 / line;
    on_core(b, [&](cpu::core_api& c) {
        for (auto _ : state) {
            c.write32(test::dram_base, 1);
            for (uint32_t i = 0; i < lines; ++i) c.dc_civac(test::dram_base + i * line);
            c.dsb();
        }
    });
    state.SetItemsProcessed(state.iterations() * lines);
}
BENCHMARK(maintenance_loop);

// The MAC reading one 32-byte enhanced descriptor from the uncached ring: coherency tap, router
// and DDR, as every RX and TX frame does. Simulated time advances every 16 fetches (a DMA
// engine's pace; the DDR forgets bookings that ended), so 1/16 of a thread wait is included.
void descriptor_fetch(benchmark::State& state) {
    fresh_simulation();
    test::cpu_bench b;
    spawn_thread("engine", [&] {
        uint8_t bd[32];
        uint64_t a = test::nc_base;
        unsigned n = 0;
        for (auto _ : state) {
            b.dma_read(a, bd, sizeof bd);
            a = test::nc_base + ((a + sizeof bd) & 0xffff);  // around a ring, as the engine walks it
            if (++n % 16 == 0) sc_core::wait(sc_core::sc_time(200, sc_core::SC_NS));
        }
    });
    sc_core::sc_start();
}
BENCHMARK(descriptor_fetch);

}  // namespace
