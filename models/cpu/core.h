// Cortex-A core timing model (docs/design.md §2): one SC_THREAD runs the firmware C++ and charges
// every step to a tlm_quantumkeeper. Tag-only L1 D-cache + L2 (shared between cores when the
// platform passes one), misses and write-backs through the bus to DDR, uncached and MMIO paths
// with a posted write buffer, DC CVAC/IVAC/CIVAC per line, DMB/DSB, an ARMv7 PL310 outer-cache
// variant, and a minimal GIC-like interrupt controller. See docs/models/cpu.md.
#pragma once

#include "models/activity.h"
#include "models/cpu/cache.h"
#include "models/cpu/core_api.h"
#include "models/cpu/tlb.h"
#include "models/mem/router.h"
#include "models/sim_stats.h"
#include "models/sim_time.h"

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fecsim {
class config_view;
}

namespace fecsim::cpu {

class coherency_checker;

// Every field but `seed` is a key of the platform profile's `cpu` section (configs/schema/cpu.json).
struct core_params {
    uint32_t cores = 1;               // cores the platform builds (read by the platform)
    double clock_mhz = 1800;          // core clock
    double cpi = 1.4;                 // cycles per instruction of firmware code paths (exec)
    double quantum_ns = 500;          // temporal-decoupling quantum (global TLM quantum)
    uint32_t line_bytes = 64;         // cache line size of every level
    cache_params l1d;                 // per core
    cache_params l2{512 * 1024, 16, 16, replacement::random};  // shared last level (PL310 on ARMv7)
    uint32_t miss_overlap = 2;        // line fills a bulk access keeps in flight at once
    double evict_writeback_cycles = 4;  // core cost of handing a dirty victim to the bus
    uint32_t write_buffer_entries = 4;  // posted uncached/device writes in flight
    double posted_write_cycles = 2;     // core cost of posting one uncached/device write
    double dmb_cycles = 8;
    double dsb_cycles = 20;             // DSB with nothing outstanding
    double maint_absent_cycles = 10;    // DC op on a line no level holds
    double maint_clean_cycles = 12;     // ... on a clean line
    double maint_dirty_cycles = 16;     // ... on a dirty line (plus the write-back to DDR)
    uint32_t irq_lines = 4;
    double irq_entry_cycles = 600;      // exception entry, context save, GIC acknowledge
    double irq_exit_cycles = 300;       // EOI, context restore, eret
    bool outer_cache = false;           // ARMv7 + PL310: DC ops stop at L1, L2 maintained by PA
    double outer_line_op_ns = 0;        // one PL310 line operation by PA (register write)
    double outer_sync_ns = 0;           // PL310 CACHE_SYNC with nothing outstanding
    // Cortex-A53 erratum 855873 workaround (CPUACTLR_EL1.ENDCCASCI, set by TF-A on i.MX8M):
    // every DC CVAC executes as DC CIVAC, so a cleaned line is also invalidated.
    bool erratum_855873 = false;
    tlb_params tlb;                     // entries 0: no TLB (nor before place_page_tables())
    uint64_t seed = 1;                  // the experiment's top-level `seed`: random replacement streams
};

// Reads the (schema-validated) `cpu` section. Geometry the schema cannot check (a
// non-power-of-two number of sets) is rejected by the core's constructor (std::invalid_argument).
core_params core_params_from(const fecsim::config_view& cpu_section);

// Process-wide table of firmware function names (enter()) by small id; id 0 is "(none)".
uint16_t function_id(const char* name);
const std::string& function_name(uint16_t id);

struct core_stats {
    uint64_t accesses = 0;        // cacheable access calls (any size)
    uint64_t l1_hits = 0, l1_misses = 0, l2_hits = 0, l2_misses = 0;  // per line
    uint64_t prefetches = 0;  // lines a prefetch started to fill
    uint64_t l1_writebacks = 0;   // dirty L1 victims written into L2
    uint64_t l2_writebacks = 0;   // dirty lines written to DDR by eviction
    uint64_t uncached_reads = 0, uncached_writes = 0, mmio_reads = 0, mmio_writes = 0;
    uint64_t write_buffer_stalls = 0;
    uint64_t line_ops = 0;        // DC CVAC/IVAC/CIVAC and PL310 line operations
    uint64_t maint_writebacks = 0;  // dirty lines written to DDR by maintenance
    uint64_t discarded_dirty = 0;   // dirty lines dropped by an invalidate
    uint64_t dmbs = 0, dsbs = 0, releases = 0, outer_syncs = 0;
    uint64_t irqs = 0, instructions = 0;
    uint64_t tlb_misses = 0;        // data-side main TLB misses, each a page-table walk
    uint64_t walk_reads = 0;        // descriptors those walks read (through L1/L2)
};

// core_api first: the firmware's calls through it land on the core's functions without a
// this-adjusting thunk (sc_module first made every call one more jump).
class core final : public core_api, public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<core> socket;  // bound to map's `in` by the constructor
    sc_core::sc_vector<sc_core::sc_in<bool>> irq;     // params.irq_lines; unbound lines read low

    // `map` gives every address's memory attribute. The constructor binds the socket to its `in`
    // (debug and DMI accesses use the socket), and timed accesses call it directly
    // (router::transport, what the socket would do): the two cannot name different routers.
    // `shared_l2` is the cluster's last-level cache; nullptr makes the core own a private one.
    core(sc_core::sc_module_name name, int id, const core_params& p, mem::router& map,
         cache* shared_l2 = nullptr);
    ~core() override;

    // Several boards: the core passes sync points while only other boards have activity due that
    // cannot reach its own before it checks again (models/activity.h). Set once every board is
    // built; the core's own wake-ups and interrupt event go into `la.own`.
    void set_lookahead(const lookahead& la);

    // The page tables the TLB's walks read lie in the map's region that starts at `base` (normal
    // cacheable DDR), laid out for every other region; builds the TLB (none when params().tlb.entries
    // is 0). Returns the bytes the tables take, which the caller checks against the region's size.
    // Once, after the map is complete and before the first access.
    uint64_t place_page_tables(addr_t base);
    const tlb* translation() const { return tlb_.get(); }

    // The firmware run by the core's thread; the thread ends when it returns.
    void set_firmware(std::function<void(core_api&)> fw) { firmware_ = std::move(fw); }

    // --- core_api
    void exec(uint64_t instructions) override;
    uint8_t read8(addr_t a) override { return load<uint8_t>(a); }
    uint16_t read16(addr_t a) override { return load<uint16_t>(a); }
    uint32_t read32(addr_t a) override { return load<uint32_t>(a); }
    uint64_t read64(addr_t a) override { return load<uint64_t>(a); }
    void write8(addr_t a, uint8_t v) override { store(a, &v, sizeof v); }
    void write16(addr_t a, uint16_t v) override { store(a, &v, sizeof v); }
    void write32(addr_t a, uint32_t v) override { store(a, &v, sizeof v); }
    void write64(addr_t a, uint64_t v) override { store(a, &v, sizeof v); }
    void read(addr_t a, void* dst, size_t len) override;
    void write(addr_t a, const void* src, size_t len) override { store(a, src, len); }
    void copy(addr_t dst, addr_t src, size_t len) override;
    void touch(addr_t a, size_t len, bool write) override;
    void prefetch(addr_t a) override;
    void dmb() override;
    void dsb() override;
    void store_release(addr_t a, size_t len) override;
    void dc_cvac(addr_t a) override { line_op(a, true, p_.erratum_855873); }
    void dc_ivac(addr_t a) override { line_op(a, false, true); }
    void dc_civac(addr_t a) override { line_op(a, true, true); }
    uint32_t cache_line_bytes() const override { return p_.line_bytes; }
    bool has_outer_cache() const override { return p_.outer_cache; }
    void outer_clean_line(addr_t pa) override { outer_op(pa, true, false); }
    void outer_inv_line(addr_t pa) override { outer_op(pa, false, true); }
    void outer_flush_line(addr_t pa) override { outer_op(pa, true, true); }
    void outer_sync() override;
    void irq_enable(int line, bool enabled, int priority = 0) override;
    int wait_for_irq() override;
    int poll_irq() override;
    void irq_return() override;
    void enter(const char* function) override;
    void leave() override;
    sc_core::sc_time now() const override { return qk_.get_current_time(); }
    void sync() override;
    int id() const override { return id_; }

    // --- statistics
    const core_params& params() const { return p_; }
    const core_stats& stats() const { return stats_; }
    sc_core::sc_time time_in(cost c) const;  // since reset_stats(), all functions
    struct function_profile {
        std::string name;
        uint64_t calls = 0;
        std::array<sc_core::sc_time, cost_count> time{};
    };
    std::vector<function_profile> profile() const;  // functions with any charge, by name
    const char* current_function() const { return function_name(cur_).c_str(); }
    uint16_t current_function_id() const { return cur_; }
    void reset_stats();
    // Writes cpu.core<N>.{busy_fraction, time_ns.<category>, functions.<name>, counters}.
    void report(nlohmann::json& out) const;

    cache& l1d() { return l1_; }
    cache& l2() { return *l2_; }
    sc_core::sc_time cycles(double n) const { return sc_core::sc_time(n * period_ns_, sc_core::SC_NS); }

private:
    friend class coherency_checker;
    struct fill_group;

    void run();
    void irq_changed();
    int pending_irq() const;
    int take_irq(int line);

    template <class T> T load(addr_t a) {
        T v;
        read(a, &v, sizeof v);
        return v;
    }
    void store(addr_t a, const void* src, size_t len);
    // Inline in every access: the router's page table answers it in a few instructions.
    const mem::region& region_of(addr_t a, size_t len) const {
        const mem::region* r = map_.decode(a);
        if (__builtin_expect(!r || len > r->size - (a - r->base), 0)) bad_access(r, a);
        return *r;
    }
    [[noreturn]] void bad_access(const mem::region* r, addr_t a) const;  // region_of's faults
    [[noreturn]] void fault(const std::string& what, addr_t a) const;

    // Data-side translation of [a, a+len) in region `r` (nullptr: decoded on a miss), before the
    // access. A page its set looked up last is a hit that changes nothing: one compare
    // (tlb::recent).
    void translate(const mem::region* r, addr_t a, size_t len) {
        if (!tlb_) return;
        const uint64_t first = a >> tlb_shift_;
        if (tlb_->recent(first) && (a + len - 1) >> tlb_shift_ == first) return;
        translate_pages(r, a, first, (a + len - 1) >> tlb_shift_);
    }
    void translate_pages(const mem::region* r, addr_t a, uint64_t first, uint64_t last);
    void translate_walk(const mem::region* r, addr_t a, uint64_t first, uint64_t last);

    // cacheable path; a page-table walk's reads charge their hits and misses as `tlb`
    void cached_access(addr_t a, size_t len, bool write, cost hit = cost::compute, cost miss = cost::cache_miss);
    cache::line* fill_l1(uint64_t la, fill_group& g, cost miss);
    struct line_source {
        bool from_l2;
        sc_core::sc_time ready;  // when the line's data is in L1
        uint8_t inherit;         // state bits the L1 copy takes over (stale)
    };
    line_source fetch_line(uint64_t la);
    cache::line* allocate_l2(uint64_t la);
    cache::line* place_in_l1(uint64_t la, uint8_t inherit);
    void evict_l1(const cache::line& v);
    void place_in_l2(uint64_t la, uint8_t flags, uint16_t fn);
    void evict_l2(const cache::line& v);
    sc_core::sc_time writeback(uint64_t la, uint8_t flags, uint16_t fn);  // completion, absolute
    void line_op(addr_t a, bool clean, bool invalidate);
    void outer_op(addr_t pa, bool clean, bool invalidate);
    void functional(addr_t a, void* data, size_t len, bool write);
    void functional_slow(addr_t a, void* data, size_t len, bool write);  // functional()'s other cases
    uint8_t* dmi_ptr(addr_t a, size_t& avail, bool write);
    void invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end);

    // uncached / device path
    // An access through the map; `r` the region the caller decoded for it (in range), or nullptr.
    sc_core::sc_time bus(const mem::region* r, tlm::tlm_command cmd, addr_t a, void* data, size_t len,
                         sc_core::sc_time delay);
    [[noreturn]] void bus_error(addr_t a) const;  // bus()'s fault
    bool within_line(addr_t a, size_t len) const { return a >> shift_ == (a + len - 1) >> shift_; }
    // Calls piece(offset, bytes) for each line-sized piece of [a, a + len), in order: an uncached
    // access crossing lines is one bus burst per piece.
    template <class F> void for_each_line_piece(addr_t a, size_t len, F piece) const {
        for (size_t off = 0; off < len;) {
            const size_t n = std::min<size_t>(len - off, p_.line_bytes - ((a + off) & (p_.line_bytes - 1)));
            piece(off, n);
            off += n;
        }
    }
    void uncached_burst(const mem::region& r, addr_t a, void* dst, size_t n);  // n bytes within a line
    void uncached_read(const mem::region& r, addr_t a, void* dst, size_t len);
    void touch_uncached(const mem::region& r, addr_t a, size_t len, bool write);
    void posted_write(const mem::region& r, addr_t a, const void* src, size_t len, cost c);
    void posted_lines(const mem::region& r, addr_t a, const void* src, size_t len);  // crossing lines
    void make_room(cost c);

    void charge(cost c, const sc_core::sc_time& t) {
        qk_.inc(t);
        cur_time_[static_cast<size_t>(c)] += t;
    }
    // A sync lets the rest of the system run up to the core's time. When nothing else is due by
    // then it would run nothing, so the core runs ahead instead: exactly the same results, without
    // the thread switch (docs/performance.md, "Run-ahead"). With a lookahead, activity of other
    // boards does not count while it cannot reach this board before the core's time + `reach`
    // (how far the core may run before it checks again), "Cross-board lookahead".
    bool others_due(const sc_core::sc_time& reach) {
        const sc_core::sc_time& pending = kernel_pending();
        if (pending > qk_.get_local_time()) return false;
        return !la_.own || board_due(pending, reach);
    }
    // The kernel's next activity (sc_time_to_pending_activity), read again only when something
    // other than a timed notification changed it since (activity::changes); a timed notification
    // made meanwhile (by a model the core's access reached) makes it earlier, to the notified
    // time at most: the same answer as the kernel's, without the library's walk of its queues.
    struct kernel_view {
        uint64_t changes = ~0ull;  // activity::changes when read (~0: never)
        sc_core::sc_time at;       // SystemC time then
        sc_core::sc_time pending;  // from `at`
    };
    kernel_view kernel_;
    const sc_core::sc_time& kernel_pending() {
        if (kernel_.changes != activity::changes) {
            kernel_.changes = activity::changes;
            kernel_.at = sim_time();
            kernel_.pending = sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
            activity::earliest_notified = activity::never;
        } else if (activity::earliest_notified - kernel_.at < kernel_.pending) {  // notified at or after `at`
            kernel_.pending = activity::earliest_notified - kernel_.at;
        }
        return kernel_.pending;
    }
    bool board_due(const sc_core::sc_time& pending, const sc_core::sc_time& reach);
    sc_core::sc_time first_else();
    void maybe_sync() {
        if (!qk_.need_sync()) return;
        if (la_.own) la_.own->run_steps_due(now());  // where the core synced for them (activity.h)
        if (others_due(qk_.global->get())) counted_sync(sim_stats::quantum_syncs);  // the next sync point is at most a quantum away
        else qk_.pass_sync_point();
    }
    // Before an MMIO access. The device sees the access at its annotated time (the b_transport
    // delay) and applies every effect then, so a sync first only matters when something else is
    // due by the core's time: otherwise the device and everything after it see the same thing.
    void sync_if_due() {
        if (la_.own) la_.own->run_steps_due(now());
        if (others_due(sc_core::SC_ZERO_TIME)) counted_sync(sim_stats::register_syncs);
    }
    void counted_sync(uint64_t& count) {
        if (qk_.get_local_time() == sc_core::SC_ZERO_TIME) return;
        ++count;
        sync();
    }
    void wait_until(const sc_core::sc_time& t, cost c) {
        if (t > now()) charge(c, t - now());
    }

    int id_;
    core_params p_;
    mem::router& map_;
    double period_ns_;
    sc_core::sc_time l1_hit_, l2_hit_, evict_wb_, posted_, dmb_, dsb_, maint_absent_, maint_clean_, maint_dirty_;
    sc_core::sc_time irq_entry_, irq_exit_, outer_line_, outer_sync_;
    std::vector<sc_core::sc_time> write_ack_;  // per region of the map, in map_.regions() order
    // exec() costs by instruction count: code paths repeat a few dozen counts, and building an
    // sc_time from a double is a library call (same value as cycles(), computed once per count).
    struct exec_cost {
        uint64_t instructions = ~0ull;
        sc_core::sc_time t;
    };
    std::array<exec_cost, 128> exec_costs_{};
    void exec_new_count(uint64_t instructions);
    unsigned shift_;
    // The TLM quantum keeper with need_sync() (after every firmware step) one compare: SystemC
    // time stands still while the core runs, so the local time left before the next sync point
    // is fixed between syncs. Same decisions and sync points as tlm_quantumkeeper (the next sync
    // point is the next multiple of the global quantum, as tlm_global_quantum computes it).
    struct quantum_keeper : tlm_utils::tlm_quantumkeeper {
        const tlm::tlm_global_quantum* global = &tlm::tlm_global_quantum::instance();
        sc_core::sc_time budget;  // m_next_sync_point - sim_time()
        bool need_sync() const override { return m_local_time >= budget; }
        // Forced inline: GCC stopped inlining it into the uncached store path when that grew.
        __attribute__((always_inline)) sc_core::sc_time get_current_time() const override {
            return sim_time() + m_local_time;
        }
        void reset() override {
            m_local_time = sc_core::SC_ZERO_TIME;
            next_sync_point_after(sim_time());
        }
        // A sync point passed without syncing: the next one is where a sync would have put it.
        void pass_sync_point() { next_sync_point_after(get_current_time()); }
        void next_sync_point_after(const sc_core::sc_time& now) {
            const sc_core::sc_time& q = global->get();
            m_next_sync_point = q == sc_core::SC_ZERO_TIME ? now : now + (q - now % q);
            budget = m_next_sync_point - sim_time();
        }
    };
    quantum_keeper qk_;
    // The core's time seen from outside its thread (statistics windows): while it waits in a
    // sync, the time it wakes at (the keeper's local time then still counts from the sync's
    // start, so sim_time() + local would depend on when the core synced).
    sc_core::sc_time time_outside() const { return syncing_ ? wake_ : now(); }
    bool syncing_ = false;
    sc_core::sc_time wake_;
    lookahead la_;
    activity* shared_ = nullptr;  // activity::shared() of the simulation, with a lookahead
    std::function<void(core_api&)> firmware_;

    cache l1_;
    std::unique_ptr<tlb> tlb_;
    unsigned tlb_shift_ = 0;
    std::unique_ptr<cache> own_l2_;
    cache* l2_;
    coherency_checker* checker_ = nullptr;
    bool tracking_ = false;  // checker present and tracking line state

    // Completion times (absolute) of outstanding work that barriers wait for.
    sc_core::sc_time maint_done_, outer_done_, posted_done_;
    std::vector<sc_core::sc_time> wbuf_;  // ring of posted-write completion times
    size_t wbuf_head_ = 0, wbuf_count_ = 0;
    size_t wbuf_next(size_t i) const { return i + 1 == wbuf_.size() ? 0 : i + 1; }

    // functional access
    std::map<uint64_t, tlm::tlm_dmi> dmi_;  // by start address
    // Recently used DMI ranges, direct-mapped by the DDR's DMI granule (a hint: still checked),
    // in front of the map: buffers, rings and stacks lie in different granules.
    std::array<const tlm::tlm_dmi*, 16> dmi_recent_{};
    tlm::tlm_generic_payload gp_;
    std::vector<uint8_t> scratch_;   // one line: fills and write-backs
    std::vector<uint8_t> copy_buf_;  // copy(): grows to the largest copy

    // interrupts
    struct irq_state {
        bool enabled = false, active = false;
        int priority = 0;
    };
    std::vector<irq_state> irq_state_;
    std::vector<int> irq_active_;
    timed_event irq_event_;
    std::vector<std::unique_ptr<sc_core::sc_signal<bool>>> irq_ties_;
    void before_end_of_elaboration() override;

    // attribution
    uint16_t cur_ = 0;
    std::vector<uint16_t> stack_;
    std::unordered_map<const char*, uint16_t> fn_ids_;
    // Direct-mapped front of fn_ids_: enter() runs several times per packet.
    struct fn_slot {
        const char* name = nullptr;
        uint16_t id = 0;
    };
    std::array<fn_slot, 256> fn_cache_{};
    void remember(fn_slot& slot, const char* function);  // enter()'s miss in fn_cache_
    [[noreturn]] void unbalanced_leave() const;             // leave()'s fault
    // Time by function and category; a category's total is the sum over functions (the same
    // integer picoseconds), so a charge adds once, to the current function's row.
    std::vector<std::array<sc_core::sc_time, cost_count>> fn_time_;
    sc_core::sc_time* cur_time_;  // fn_time_[cur_], kept by enter() and leave()
    std::vector<uint64_t> fn_calls_;
    sc_core::sc_time stats_start_;
    core_stats stats_;
};

}  // namespace fecsim::cpu
