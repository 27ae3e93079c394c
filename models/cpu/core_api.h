// What firmware (kernel services, the driver port, XDP programs) may ask of the core it runs on.
// Every call charges simulated time to the core (docs/design.md §2) and is attributed to a cost
// category and to the firmware function currently entered; memory calls move real bytes.
#pragma once

#include <systemc>

#include <cstddef>
#include <cstdint>

namespace fecsim::cpu {

using addr_t = uint64_t;

// Where a core's time goes (result JSON cpu.coreN.ns_per_packet.*).
// tlb: the page-table walks of data-side TLB misses (docs/models/cpu.md, "TLB").
enum class cost : uint8_t { compute, cache_miss, tlb, uncached, mmio, cache_maint, barrier, irq, idle };
constexpr size_t cost_count = 9;
const char* to_string(cost c);

class core_api {
public:
    virtual ~core_api() = default;

    // --- compute: a code path of `instructions`, charged at the core's CPI.
    virtual void exec(uint64_t instructions) = 0;

    // --- memory. The attribute of the address's region picks the path: normal_cacheable goes
    // through L1/L2 (hits, misses, write-backs), normal_noncacheable is an uncached DRAM access
    // (reads stall for the round trip, writes are posted), device is MMIO (reads stall, writes
    // are posted; the core syncs with SystemC time first). Unmapped addresses raise
    // std::runtime_error naming the address and the firmware function.
    virtual uint8_t read8(addr_t a) = 0;
    virtual uint16_t read16(addr_t a) = 0;
    virtual uint32_t read32(addr_t a) = 0;
    virtual uint64_t read64(addr_t a) = 0;
    virtual void write8(addr_t a, uint8_t v) = 0;
    virtual void write16(addr_t a, uint16_t v) = 0;
    virtual void write32(addr_t a, uint32_t v) = 0;
    virtual void write64(addr_t a, uint64_t v) = 0;
    // Bulk copies between simulated memory and host buffers, timed line by line.
    virtual void read(addr_t a, void* dst, size_t len) = 0;
    virtual void write(addr_t a, const void* src, size_t len) = 0;
    // memcpy/memmove inside simulated memory.
    virtual void copy(addr_t dst, addr_t src, size_t len) = 0;
    // Cost-only access to the lines of [a, a+len): a struct the code reads or writes whose
    // bytes the model does not need (skb fields, page_pool state, stack).
    virtual void touch(addr_t a, size_t len, bool write) = 0;
    // prefetch() / PRFM PLDL1KEEP of the line holding `a`: starts its fill and returns at once;
    // a later access to the line waits only for what is left of the fill. Ignored for
    // non-cacheable memory (as the hardware ignores it).
    virtual void prefetch(addr_t a) = 0;

    // --- barriers (arm64): DMB orders, DSB also waits for posted writes and maintenance.
    virtual void dmb() = 0;
    virtual void dsb() = 0;
    // A store-release (STLR, as spin_unlock issues it): waits for every earlier write to be
    // acknowledged, as DMB does, then stores to [a, a+len) (cacheable).
    virtual void store_release(addr_t a, size_t len) = 0;
    // The kernel's macros as arm64 defines them.
    void mb() { dsb(); }
    void rmb() { dsb(); }
    void wmb() { dsb(); }
    void dma_rmb() { dmb(); }
    void dma_wmb() { dmb(); }

    // --- cache maintenance by VA, one line each (DC CVAC / DC IVAC / DC CIVAC). The cost
    // depends on the line's state (absent, clean, dirty -> write-back). Completion is only
    // guaranteed after a dsb().
    virtual void dc_cvac(addr_t a) = 0;
    virtual void dc_ivac(addr_t a) = 0;
    virtual void dc_civac(addr_t a) = 0;
    virtual uint32_t cache_line_bytes() const = 0;
    // ARMv7 platforms with an outer PL310 L2: maintenance by physical address through its
    // registers, per line. has_outer_cache() is false on arm64 profiles.
    virtual bool has_outer_cache() const = 0;
    virtual void outer_clean_line(addr_t pa) = 0;
    virtual void outer_inv_line(addr_t pa) = 0;
    virtual void outer_flush_line(addr_t pa) = 0;  // clean + invalidate
    virtual void outer_sync() = 0;

    // --- interrupts (GIC-like: per-line enable and priority).
    virtual void irq_enable(int line, bool enabled, int priority = 0) = 0;
    // Idles (charged as idle, no per-cycle events) until an enabled line is pending, then
    // takes it: charges the entry cost and returns the line.
    virtual int wait_for_irq() = 0;
    // Takes a pending enabled line without idling, or returns -1.
    virtual int poll_irq() = 0;
    // Return from the handler (exit cost).
    virtual void irq_return() = 0;

    // --- attribution and time.
    virtual void enter(const char* function) = 0;  // the firmware function now running
    virtual void leave() = 0;
    virtual sc_core::sc_time now() const = 0;      // SystemC time + the core's local offset
    virtual void sync() = 0;                       // bring SystemC time up to now()
    virtual int id() const = 0;
};

// RAII attribution: `cpu::scope s(core, "fec_enet_rx_queue");`
class scope {
public:
    scope(core_api& c, const char* function) : c_(c) { c_.enter(function); }
    ~scope() { c_.leave(); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

private:
    core_api& c_;
};

}  // namespace fecsim::cpu
