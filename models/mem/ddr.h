// DDR memory controller + DRAM: sparse simulated physical memory with a latency and a data-bus
// occupancy model. Concurrent requesters (CPU misses, FEC DMA) queue behind each other on the
// data bus in the order of their simulated timestamps, not of their calls: with temporal
// decoupling a core issues requests ahead of SystemC time (docs/models/mem.md).
#pragma once

#include "models/sim_time.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
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
    // simulated time does not delay it. Inline (below), as b_transport: every memory access
    // books the bus, most of them without a search.
    sc_core::sc_time access(const sc_core::sc_time& arrival, size_t bytes, bool is_write);

    static constexpr uint64_t chunk_bytes = 64 * 1024;  // allocation and DMI granule

private:
    friend class router;  // calls b_transport without the socket hop (router.h)
    // Inline (below): the router's direct call takes it in, one call less per memory access.
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    // The checks and the bytes of an access (inlined into b_transport: the hot path).
    bool copy(tlm::tlm_generic_payload& gp);
    void parts(uint64_t addr, uint8_t* data, size_t len, bool write);
    void part(uint64_t addr, uint8_t* data, size_t n, bool write);
    uint8_t* chunk(uint64_t index);
    // access(): the start of a request that arrives before the busy span up to the latest end
    // booked so far, booked in start order; and the removal of the first bookings that ended by now.
    sc_core::sc_time book_behind(const sc_core::sc_time& arrival, const sc_core::sc_time& transfer);
    void drop_ended(const sc_core::sc_time& now);

    ddr_params p_;
    sc_core::sc_time burst_time_, read_latency_, write_latency_;
    // burst_time_ * n for the burst counts of lines and frames, computed once (same rounding).
    std::array<sc_core::sc_time, 64> transfer_time_;
    int burst_shift_ = -1;  // log2(burst_bytes) when a power of two: no division per access
    // Booked transfers [start, end), by start, kept until they ended before SystemC time (no
    // request can arrive before the current time; one that ended delays nothing, so keeping a
    // few longer changes no answer).
    struct booking {
        sc_core::sc_time start, end;
    };
    std::vector<booking> booked_;
    static constexpr size_t trim_every = 64;  // bookings booked between two drop_ended()
    size_t trim_at_ = trim_every;            // booked_'s size at which drop_ended() runs next
    sc_core::sc_time longest_;     // the longest transfer booked so far
    sc_core::sc_time latest_end_;  // the latest end of any transfer booked so far
    // The bus is busy without a gap from here to latest_end_: every instant in between lies in a
    // booked transfer (the ones dropped ended before SystemC time, before any arrival). A request
    // arriving in the span waits until latest_end_, which is what book_behind's pass would find.
    sc_core::sc_time busy_from_;
    std::vector<std::unique_ptr<uint8_t[]>> chunks_;  // allocated on first touch
    ddr_stats stats_;
};

// The n bytes at src to dst (apart), inline up to 64 bytes: nearly every access is that small
// (descriptor fields, descriptors, lines, minimum frames), and memcpy's call and size dispatch
// cost more than its moves. Two moves of a word no longer than n, one from each end (they
// overlap when n is not twice the word), cover n up to twice the word.
template <class word> __attribute__((always_inline)) inline void copy_ends(uint8_t* dst, const uint8_t* src, size_t n) {
    word head, tail;
    std::memcpy(&head, src, sizeof head);
    std::memcpy(&tail, src + n - sizeof tail, sizeof tail);
    std::memcpy(dst, &head, sizeof head);
    std::memcpy(dst + n - sizeof tail, &tail, sizeof tail);
}
__attribute__((always_inline)) inline void copy_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
    struct bytes16 { uint8_t b[16]; };
    struct bytes32 { uint8_t b[32]; };
    if (n <= 8) {  // the core's descriptor fields first
        if (n >= 4) copy_ends<uint32_t>(dst, src, n);
        else if (n >= 2) copy_ends<uint16_t>(dst, src, n);
        else if (n == 1) *dst = *src;
    } else if (n <= 16) copy_ends<uint64_t>(dst, src, n);
    else if (n <= 32) copy_ends<bytes16>(dst, src, n);
    else if (n <= 64) copy_ends<bytes32>(dst, src, n);
    else std::memcpy(dst, src, n);
}

// One chunk's part of an access: n bytes at addr, all in addr's chunk. An untouched chunk
// reads as zeros without being allocated.
__attribute__((always_inline)) inline void ddr::part(uint64_t addr, uint8_t* data, size_t n, bool write) {
    const uint64_t off = addr % chunk_bytes;
    uint8_t* c = chunks_[addr / chunk_bytes].get();
    if (write) copy_bytes((c ? c : chunk(addr / chunk_bytes)) + off, data, n);  // chunk(): the first write
    else if (c) copy_bytes(data, c + off, n);
    else std::memset(data, 0, n);
}

__attribute__((always_inline)) inline bool ddr::copy(tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address();
    const size_t len = gp.get_data_length();
    if (addr >= p_.size_bytes || len > p_.size_bytes - addr) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    if (gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return false;
    }
    if (gp.is_read() || gp.is_write()) {
        if (len <= chunk_bytes - addr % chunk_bytes) part(addr, gp.get_data_ptr(), len, gp.is_write());  // most
        else parts(addr, gp.get_data_ptr(), len, gp.is_write());
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return true;
}

__attribute__((always_inline)) inline sc_core::sc_time ddr::access(const sc_core::sc_time& arrival, size_t bytes,
                                                                   bool is_write) {
    using sc_core::sc_time;
    const uint64_t bursts = std::max<uint64_t>(
        1, burst_shift_ >= 0 ? (bytes + p_.burst_bytes - 1) >> burst_shift_ : (bytes + p_.burst_bytes - 1) / p_.burst_bytes);
    const sc_time transfer =
        bursts < transfer_time_.size() ? transfer_time_[bursts] : burst_time_ * static_cast<double>(bursts);
    // Bookings that ended before now delay nothing (no request arrives before now): all are
    // dropped when all have ended, else those ended first once 64 more have been booked.
    const sc_time& now = sim_time();
    if (latest_end_ <= now) booked_.clear(), trim_at_ = trim_every;
    else if (booked_.size() >= trim_at_) drop_ended(now);
    // The bus is free at the arrival (every transfer booked so far ended by then), or busy without
    // a gap from the arrival to the latest end booked: either way the request starts at the later
    // of the two, and its booking goes last in start order, without a search. Most take this path.
    sc_time start;
    if (latest_end_ <= arrival || busy_from_ <= arrival) {
        if (latest_end_ < arrival) busy_from_ = arrival;  // after a gap the busy span starts anew
        start = std::max(arrival, latest_end_);
        booked_.push_back(booking{start, start + transfer});
    } else {
        start = book_behind(arrival, transfer);
    }
    const sc_time end = start + transfer;
    longest_ = std::max(longest_, transfer);
    latest_end_ = std::max(latest_end_, end);
    stats_.busy += transfer;
    stats_.queueing += start - arrival;
    if (is_write) ++stats_.writes, stats_.bytes_written += bytes;
    else ++stats_.reads, stats_.bytes_read += bytes;
    return (start - arrival) + (is_write ? write_latency_ : read_latency_) + transfer;
}

__attribute__((always_inline)) inline void ddr::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!copy(gp)) return;
    if (gp.is_read() || gp.is_write())
        delay += access(sim_time() + delay, gp.get_data_length(), gp.is_write());
    gp.set_dmi_allowed(true);
}

}  // namespace fecsim::mem
