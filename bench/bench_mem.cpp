// Cost of the memory path per transaction: what a CPU miss or a DMA burst costs the host.
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/sim_context.h"
#include "tests/support/tlm_initiator.h"

#include <benchmark/benchmark.h>

namespace {

using namespace fecsim;

struct system {
    mem::ddr dram{"dram", [] {
                      mem::ddr_params p;
                      p.read_latency_ns = 90;
                      p.write_latency_ns = 20;
                      p.bandwidth_mb_per_s = 16000;
                      return p;
                  }()};
    mem::router bus{"bus"};
    test::tlm_initiator master{"master"};
    system() {
        master.socket.bind(bus.in);
        bus.connect("ddr", dram.socket);
        bus.add_region({"dram", 0x40000000, 512 << 20, mem::mem_attr::normal_cacheable, "ddr", 0, 20});
        bus.add_region({"pool", 0x60000000, 64 << 20, mem::mem_attr::normal_noncacheable, "ddr", 512 << 20, 20});
        // Nothing runs yet, which is what SystemC's W571 says: it would only interleave the table.
        sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_, sc_core::SC_DO_NOTHING);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);  // complete elaboration and binding
    }
};

// One 64-byte line read through router + DDR (a CPU miss or a descriptor fetch).
void line_read(benchmark::State& state) {
    fresh_simulation();
    system s;
    uint8_t buf[64];
    uint64_t addr = 0x40000000;
    for (auto _ : state) {
        s.master.read(addr, buf, sizeof buf);
        addr = 0x40000000 + ((addr + 4096) & 0x0fffffff);
    }
}
BENCHMARK(line_read);

// A 1518-byte DMA write (an RX frame into a page).
void frame_write(benchmark::State& state) {
    fresh_simulation();
    system s;
    uint8_t buf[1518] = {};
    uint64_t addr = 0x40000000;
    for (auto _ : state) {
        s.master.write(addr + 256, buf, sizeof buf);
        addr = 0x40000000 + ((addr + 4096) & 0x0fffffff);
    }
    state.SetBytesProcessed(state.iterations() * sizeof buf);
}
BENCHMARK(frame_write);

void router_decode(benchmark::State& state) {
    fresh_simulation();
    system s;
    uint64_t a = 0x40000000;
    for (auto _ : state) {
        benchmark::DoNotOptimize(s.bus.decode(a));
        a ^= 0x20000000;  // alternate regions: defeats the last-hit cache
    }
}
BENCHMARK(router_decode);

}  // namespace
