// The DDR the model benches (cpu, fec) run against: 64 MiB of LPDDR4-like memory, 90 ns read
// and 20 ns write latency, 16000 MB/s with 64-byte bursts (one burst occupies the bus 4 ns).
#pragma once

#include "models/mem/ddr.h"

namespace fecsim::test {

inline mem::ddr_params test_ddr() {
    mem::ddr_params d;
    d.size_bytes = 64 << 20;
    d.read_latency_ns = 90;
    d.write_latency_ns = 20;
    d.bandwidth_mb_per_s = 16000;
    d.burst_bytes = 64;
    return d;
}

}  // namespace fecsim::test
