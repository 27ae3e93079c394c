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

// A request arriving before the busy span (so before the latest end booked so far, with a gap
// on the bus in between or not known to have none): it waits for whatever occupies the
// bus at its start time, until nothing does. One pass in start order suffices: a booking passed
// over ended before the start, which only grows. Bookings that start later stay where they are
// (they were answered already). A booking that started more than the longest transfer before the
// arrival ended before it: the pass starts at the first one that may not have, found by a scan
// back from the last booking. The requests that come here arrive ahead of SystemC time, after most
// bookings start (on E1 that one is two of eleven from the end, where a binary search took four
// steps), and the scan passes only bookings that the pass or the insertion then pass again.
sc_time ddr::book_behind(const sc_time& arrival, const sc_time& transfer) {
    const sc_time from = arrival > longest_ ? arrival - longest_ : sc_core::SC_ZERO_TIME;
    auto it = booked_.end();
    while (it != booked_.begin() && (it - 1)->start >= from) --it;
    sc_time start = arrival;
    for (; it != booked_.end() && it->start <= start; ++it)
        if (it->end > start) start = it->end;
    booked_.insert(it, booking{start, start + transfer});  // it: the first starting later
    // A transfer from before the busy span into it extends the span back to its start (start is
    // before the span: the pass stops where no transfer holds the bus).
    if (start < busy_from_ && start + transfer >= busy_from_) busy_from_ = start;
    return start;
}

// The bookings before the first that has not ended by now go, in one erase per 64 bookings.
void ddr::drop_ended(const sc_time& now) {
    auto live = booked_.begin();
    while (live != booked_.end() && live->end <= now) ++live;
    booked_.erase(booked_.begin(), live);
    trim_at_ = booked_.size() + trim_every;
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
