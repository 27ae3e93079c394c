#include "models/mem/ddr.h"

#include "models/sim_time.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fecsim::mem {
using sc_core::sc_time;
using sc_core::SC_NS;

ddr::ddr(sc_core::sc_module_name name, const ddr_params& p)
    : sc_module(name), socket("socket"), p_(p),
      burst_time_(p.burst_bytes * 1e3 / p.bandwidth_mb_per_s, SC_NS),
      read_latency_(p.read_latency_ns, SC_NS), write_latency_(p.write_latency_ns, SC_NS),
      chunks_((p.size_bytes + chunk_bytes - 1) / chunk_bytes) {
    if (p.bandwidth_mb_per_s <= 0 || p.burst_bytes == 0) throw std::invalid_argument("ddr: bad parameters");
    if ((p.burst_bytes & (p.burst_bytes - 1)) == 0) burst_shift_ = __builtin_ctz(p.burst_bytes);
    for (size_t n = 0; n < transfer_time_.size(); ++n) transfer_time_[n] = burst_time_ * static_cast<double>(n);
    socket.register_b_transport(this, &ddr::b_transport);
    socket.register_get_direct_mem_ptr(this, &ddr::get_direct_mem_ptr);
    socket.register_transport_dbg(this, &ddr::transport_dbg);
}

uint8_t* ddr::chunk(uint64_t index) {
    auto& c = chunks_[index];
    if (!c) c.reset(new uint8_t[chunk_bytes]());  // zero-filled on first touch
    return c.get();
}

// One chunk's part of an access: n bytes at addr, all in addr's chunk. An untouched chunk
// reads as zeros without being allocated.
__attribute__((always_inline)) inline void ddr::part(uint64_t addr, uint8_t* data, size_t n, bool write) {
    const uint64_t off = addr % chunk_bytes;
    if (write) std::memcpy(chunk(addr / chunk_bytes) + off, data, n);
    else if (const auto& c = chunks_[addr / chunk_bytes]) std::memcpy(data, c.get() + off, n);
    else std::memset(data, 0, n);
}

// An access in range, chunk by chunk (most lie in one: lines, descriptors, frames).
void ddr::parts(uint64_t addr, uint8_t* data, size_t len, bool write) {
    for (size_t n; len > 0; addr += n, data += n, len -= n)
        part(addr, data, n = std::min<uint64_t>(len, chunk_bytes - addr % chunk_bytes), write);
}

void ddr::peek(uint64_t addr, void* dst, size_t len) const {
    if (addr >= p_.size_bytes || len > p_.size_bytes - addr) throw std::out_of_range("ddr::peek beyond the memory");
    const_cast<ddr*>(this)->parts(addr, static_cast<uint8_t*>(dst), len, false);  // a read allocates nothing
}

void ddr::poke(uint64_t addr, const void* src, size_t len) {
    if (addr >= p_.size_bytes || len > p_.size_bytes - addr) throw std::out_of_range("ddr::poke beyond the memory");
    parts(addr, static_cast<uint8_t*>(const_cast<void*>(src)), len, true);  // a write only reads src
}

sc_time ddr::access(const sc_time& arrival, size_t bytes, bool is_write) {
    const uint64_t bursts = std::max<uint64_t>(
        1, burst_shift_ >= 0 ? (bytes + p_.burst_bytes - 1) >> burst_shift_ : (bytes + p_.burst_bytes - 1) / p_.burst_bytes);
    const sc_time transfer =
        bursts < transfer_time_.size() ? transfer_time_[bursts] : burst_time_ * static_cast<double>(bursts);
    // Bookings that ended before now delay nothing (no request arrives before now): skipped by
    // advancing head_, and dropped at once when all have ended or many have (no copy per access).
    const sc_time& now = sim_time();
    while (head_ < booked_.size() && booked_[head_].end <= now) ++head_;
    if (head_ == booked_.size()) booked_.clear(), head_ = 0;
    else if (head_ >= 64) booked_.erase(booked_.begin(), booked_.begin() + static_cast<std::ptrdiff_t>(head_)), head_ = 0;
    sc_time start = arrival;
    if (latest_end_ <= arrival) {
        // Every transfer booked so far ended by the arrival (and started before it): the bus is
        // free, and the booking goes last in start order. Most accesses take this path.
        booked_.push_back(booking{start, start + transfer});
    } else {
        // Wait for whatever occupies the bus at the start time, until nothing does. One pass in
        // start order suffices: a booking passed over ended before the start, which only grows.
        // Bookings that start later stay where they are (they were answered already).
        // A booking that started more than the longest transfer before the arrival ended before
        // it: the pass starts at the first one that may not have (the core running ahead of
        // SystemC time keeps many bookings between now and its own time).
        const sc_time from = arrival > longest_ ? arrival - longest_ : sc_core::SC_ZERO_TIME;
        auto it = std::lower_bound(booked_.begin() + static_cast<std::ptrdiff_t>(head_), booked_.end(), from,
                                   [](const booking& b, const sc_time& t) { return b.start < t; });
        for (; it != booked_.end() && it->start <= start; ++it)
            if (it->end > start) start = it->end;
        booked_.insert(it, booking{start, start + transfer});  // it: the first starting later
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

void ddr::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    if (!copy(gp)) return;
    if (gp.is_read() || gp.is_write())
        delay += access(sim_time() + delay, gp.get_data_length(), gp.is_write());
    gp.set_dmi_allowed(true);
}

unsigned ddr::transport_dbg(tlm::tlm_generic_payload& gp) { return copy(gp) ? gp.get_data_length() : 0; }

// DMI is granted per allocation chunk: it is for functional bulk copies only. Timing of such
// copies is charged by the initiator through access() or its cache model, never skipped.
bool ddr::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    const uint64_t addr = gp.get_address();
    if (addr >= p_.size_bytes) return false;
    const uint64_t base = addr - addr % chunk_bytes;
    dmi.set_dmi_ptr(chunk(addr / chunk_bytes));
    dmi.set_start_address(base);
    dmi.set_end_address(std::min(base + chunk_bytes, p_.size_bytes) - 1);
    dmi.allow_read_write();
    dmi.set_read_latency(read_latency_);
    dmi.set_write_latency(write_latency_);
    return true;
}

}  // namespace fecsim::mem
