// DDR memory controller + DRAM: sparse simulated physical memory with a latency and a data-bus
// occupancy model. Concurrent requesters (CPU misses, FEC DMA) queue behind each other on the
// data bus in the order of their simulated timestamps, not of their calls: with temporal
// decoupling a core issues requests ahead of SystemC time (docs/models/mem.md).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace fecsim::mem {

struct ddr_params {
    uint64_t size_bytes = 1ull << 30;
    double read_latency_ns = 0;    // first-data latency of a read (row access, controller, PHY)
    double write_latency_ns = 0;   // acceptance latency of a write
    double bandwidth_mb_per_s = 1; // peak data-bus bandwidth, MB = 1e6 bytes
    uint32_t burst_bytes = 64;     // smallest transfer: every access occupies whole bursts
};

struct ddr_stats {
    uint64_t reads = 0, writes = 0;
    uint64_t bytes_read = 0, bytes_written = 0;
    sc_core::sc_time busy;          // total data-bus occupancy
    sc_core::sc_time queueing;      // total time requests waited for the bus
};

class ddr : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<ddr> socket;

    ddr(sc_core::sc_module_name name, const ddr_params& p);

    const ddr_params& params() const { return p_; }
    const ddr_stats& stats() const { return stats_; }

    // Functional (untimed) access for loaders, tests and debuggers; addresses are local offsets.
    void peek(uint64_t addr, void* dst, size_t len) const;
    void poke(uint64_t addr, const void* src, size_t len);

    // Bus occupancy of one access of `bytes` arriving at `arrival`: returns the delay from
    // arrival to completion (queueing + latency + transfer) and books the bus. The access waits
    // only for transfers that occupy the bus at its own timestamp (and, in a chain, at the
    // moment each of those ends); a transfer booked earlier by a call but starting later in
    // simulated time does not delay it.
    sc_core::sc_time access(const sc_core::sc_time& arrival, size_t bytes, bool is_write);

    static constexpr uint64_t chunk_bytes = 64 * 1024;  // allocation and DMI granule

private:
    friend class router;  // calls b_transport without the socket hop (router.h)
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    // The checks and the bytes of an access (ddr.cpp, inlined into b_transport: the hot path).
    inline bool copy(tlm::tlm_generic_payload& gp);
    void parts(uint64_t addr, uint8_t* data, size_t len, bool write);
    inline void part(uint64_t addr, uint8_t* data, size_t n, bool write);
    uint8_t* chunk(uint64_t index);

    ddr_params p_;
    sc_core::sc_time burst_time_, read_latency_, write_latency_;
    // burst_time_ * n for the burst counts of lines and frames, computed once (same rounding).
    std::array<sc_core::sc_time, 64> transfer_time_;
    int burst_shift_ = -1;  // log2(burst_bytes) when a power of two: no division per access
    // Booked transfers [start, end), by start, from head_ on; those before head_ ended before
    // SystemC time (no request can arrive before the current time).
    struct booking {
        sc_core::sc_time start, end;
    };
    std::vector<booking> booked_;
    size_t head_ = 0;
    sc_core::sc_time longest_;     // the longest transfer booked so far
    sc_core::sc_time latest_end_;  // the latest end of any transfer booked so far
    std::vector<std::unique_ptr<uint8_t[]>> chunks_;  // allocated on first touch
    ddr_stats stats_;
};

}  // namespace fecsim::mem
