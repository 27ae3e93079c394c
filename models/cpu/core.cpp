#include "models/cpu/core.h"
#include "models/mem/ddr.h"

#include "models/cpu/coherency.h"
#include "models/sim_stats.h"
#include "models/sim_time.h"
#include "config/config.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace fecsim::cpu {
using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;

const char* to_string(cost c) {
    switch (c) {
    case cost::compute: return "compute";
    case cost::cache_miss: return "cache_miss";
    case cost::tlb: return "tlb";
    case cost::uncached: return "uncached";
    case cost::mmio: return "mmio";
    case cost::cache_maint: return "cache_maint";
    case cost::barrier: return "barrier";
    case cost::irq: return "irq";
    case cost::idle: return "idle";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// Function-name registry shared by all cores (names are stable across simulations).

namespace {
struct function_registry {
    std::vector<std::string> names{"(none)"};
    std::unordered_map<std::string, uint16_t> ids;
};
function_registry& registry() {
    static function_registry r;
    return r;
}
}  // namespace

uint16_t function_id(const char* name) {
    auto& r = registry();
    auto it = r.ids.find(name);
    if (it != r.ids.end()) return it->second;
    if (r.names.size() >= 0xffff) throw std::length_error("cpu: too many distinct firmware function names");
    const auto id = static_cast<uint16_t>(r.names.size());
    r.names.emplace_back(name);
    r.ids.emplace(name, id);
    return id;
}

const std::string& function_name(uint16_t id) {
    auto& r = registry();
    return id < r.names.size() ? r.names[id] : r.names[0];
}

// ---------------------------------------------------------------------------------------------
// Parameters

static cache_params cache_params_from(const config_view& v) {
    cache_params c;
    c.size_bytes = static_cast<uint32_t>(v.integer("size_bytes"));
    c.ways = static_cast<uint32_t>(v.integer("ways"));
    c.hit_cycles = v.number("hit_cycles");
    c.policy = replacement_from_string(v.string("replacement"));
    return c;
}

core_params core_params_from(const config_view& v) {
    core_params p;
    p.cores = static_cast<uint32_t>(v.integer("cores"));
    p.clock_mhz = v.number("clock_mhz");
    p.cpi = v.number("cpi");
    p.quantum_ns = v.number("quantum_ns");
    p.line_bytes = static_cast<uint32_t>(v.integer("line_bytes"));
    p.l1d = cache_params_from(v.section("l1d"));
    p.l2 = cache_params_from(v.section("l2"));
    p.miss_overlap = static_cast<uint32_t>(v.integer("miss_overlap"));
    p.evict_writeback_cycles = v.number("evict_writeback_cycles");
    p.write_buffer_entries = static_cast<uint32_t>(v.integer("write_buffer.entries"));
    p.posted_write_cycles = v.number("write_buffer.posted_write_cycles");
    p.dmb_cycles = v.number("barrier.dmb_cycles");
    p.dsb_cycles = v.number("barrier.dsb_cycles");
    p.maint_absent_cycles = v.number("maintenance.absent_cycles");
    p.maint_clean_cycles = v.number("maintenance.clean_cycles");
    p.maint_dirty_cycles = v.number("maintenance.dirty_cycles");
    p.irq_lines = static_cast<uint32_t>(v.integer("irq.lines"));
    p.irq_entry_cycles = v.number("irq.entry_cycles");
    p.irq_exit_cycles = v.number("irq.exit_cycles");
    p.outer_cache = v.boolean("outer_cache.enabled");
    p.outer_line_op_ns = v.number("outer_cache.line_op_ns");
    p.outer_sync_ns = v.number("outer_cache.sync_ns");
    for (const auto& e : v.at("errata"))
        if (e == "855873") p.erratum_855873 = true;  // the schema admits no other value
    const config_view t = v.section("tlb");
    p.tlb.entries = static_cast<uint32_t>(t.integer("entries"));
    p.tlb.ways = static_cast<uint32_t>(t.integer("ways"));
    p.tlb.policy = replacement_from_string(t.string("replacement"));
    p.tlb.walk_cache_entries = static_cast<uint32_t>(t.integer("walk_cache_entries"));
    p.tlb.walk_cache_ways = static_cast<uint32_t>(t.integer("walk_cache_ways"));
    p.tlb.page_bytes = static_cast<uint32_t>(t.integer("page_bytes"));
    p.tlb.descriptor_bytes = static_cast<uint32_t>(t.integer("descriptor_bytes"));
    p.tlb.levels = static_cast<uint32_t>(t.integer("levels"));
    try {
        check_tlb_params(p.tlb);
    } catch (param_error& e) {  // its keys are relative to the section
        for (std::string& k : e.keys) k = t.prefix() + "." + k;
        throw;
    }
    // Geometry the schema cannot check: a power-of-two number of sets of whole lines.
    for (const auto& [level, c] : {std::pair<const char*, const cache_params&>{"l1d", p.l1d}, {"l2", p.l2}}) {
        const uint64_t way_bytes = uint64_t(c.ways) * p.line_bytes;
        const uint64_t sets = c.size_bytes / way_bytes;
        if (c.size_bytes % way_bytes != 0 || (sets & (sets - 1)) != 0)
            throw param_error({v.prefix() + "." + level + ".size_bytes", v.prefix() + "." + level + ".ways",
                               v.prefix() + ".line_bytes"},
                              std::to_string(c.size_bytes) + " bytes in " + std::to_string(c.ways) + " ways of " +
                                  std::to_string(p.line_bytes) + "-byte lines is not a power-of-two number of sets");
    }
    return p;
}

static void check_params(const std::string& who, const core_params& p) {
    auto bad = [&](const std::string& m) { throw std::invalid_argument(who + ": " + m); };
    if (p.clock_mhz <= 0) bad("clock_mhz must be positive");
    if (p.cpi <= 0) bad("cpi must be positive");
    if (p.quantum_ns <= 0) bad("quantum_ns must be positive");
    if (p.line_bytes != 32 && p.line_bytes != 64) bad("line_bytes must be 32 or 64");
    if (p.miss_overlap == 0) bad("miss_overlap must be at least 1");
    if (p.write_buffer_entries == 0) bad("write_buffer.entries must be at least 1");
    if (p.irq_lines == 0) bad("irq.lines must be at least 1");
}

// ---------------------------------------------------------------------------------------------
// Construction

// Replacement streams: seed 1 gives the streams of the releases before `seed` reached them.
core::core(sc_core::sc_module_name name, int id, const core_params& p, mem::router& map, cache* shared_l2)
    : sc_module(name), socket("socket"), irq("irq", (check_params(basename(), p), p.irq_lines)), id_(id), p_(p),
      map_(map), period_ns_(1e3 / p.clock_mhz), l1_hit_(cycles(p.l1d.hit_cycles)), l2_hit_(cycles(p.l2.hit_cycles)),
      evict_wb_(cycles(p.evict_writeback_cycles)), posted_(cycles(p.posted_write_cycles)), dmb_(cycles(p.dmb_cycles)),
      dsb_(cycles(p.dsb_cycles)), maint_absent_(cycles(p.maint_absent_cycles)),
      maint_clean_(cycles(p.maint_clean_cycles)), maint_dirty_(cycles(p.maint_dirty_cycles)),
      irq_entry_(cycles(p.irq_entry_cycles)), irq_exit_(cycles(p.irq_exit_cycles)),
      outer_line_(p.outer_line_op_ns, SC_NS), outer_sync_(p.outer_sync_ns, SC_NS),
      shift_(static_cast<unsigned>(__builtin_ctz(p.line_bytes))),
      l1_(std::string(basename()) + ".l1d", p.l1d, p.line_bytes, 0x9e3779b97f4a7c15ull * p.seed + id),
      wbuf_(p.write_buffer_entries), scratch_(p.line_bytes), irq_state_(p.irq_lines), fn_time_(1), cur_time_(fn_time_[0].data()), fn_calls_(1) {
    if (shared_l2) {
        if (shared_l2->line_bytes() != p.line_bytes)
            throw std::invalid_argument(std::string(basename()) + ": shared L2 line size differs from the core's");
        l2_ = shared_l2;
    } else {
        own_l2_ = std::make_unique<cache>(std::string(basename()) + ".l2", p.l2, p.line_bytes, 0x2545f4914f6cdd1dull * p.seed + id);
        l2_ = own_l2_.get();
    }
    socket.register_invalidate_direct_mem_ptr(this, &core::invalidate_dmi);
    socket.bind(map.in);  // the router timed accesses call directly: one and the same
    tlm_utils::tlm_quantumkeeper::set_global_quantum(sc_time(p.quantum_ns, SC_NS));
    qk_.reset();

    sc_core::sc_spawn_options method;
    method.spawn_method();
    method.dont_initialize();
    for (auto& line : irq) method.set_sensitivity(&line);
    sc_core::sc_spawn([this] { irq_changed(); }, "irq_controller", &method);
    sc_core::sc_spawn([this] { run(); }, "firmware");
}

core::~core() = default;

// Unbound interrupt inputs read low instead of failing elaboration.
void core::before_end_of_elaboration() {
    for (const mem::region& r : map_.regions()) write_ack_.emplace_back(r.write_ack_ns, SC_NS);  // the map is complete
    for (auto& line : irq) {
        if (line.bind_count() != 0) continue;
        irq_ties_.push_back(std::make_unique<sc_core::sc_signal<bool>>(
            sc_core::sc_gen_unique_name((std::string(line.basename()) + "_tie").c_str())));
        line.bind(*irq_ties_.back());
    }
}

void core::run() {
    sim_stats::count_event();
    if (la_.own) la_.own->core_runs();  // runs
    if (firmware_) firmware_(*this);
    sync();
    if (la_.own) la_.own->core_stops();
}

void core::sync() {
    if (qk_.get_local_time() == SC_ZERO_TIME) return;
    wake_ = now();
    if (la_.own) {
        la_.own->run_steps_due(wake_);
        la_.own->core_waits_until(wake_);  // the wake-up is this board's activity
    }
    syncing_ = true;
    qk_.sync();
    syncing_ = false;
    ++activity::changes;  // woken: SystemC time moved and other processes ran
    if (la_.own) la_.own->core_runs();
    sim_stats::count_event();
}

void core::set_lookahead(const lookahead& la) {
    la_ = la;
    shared_ = &activity::shared();
    if (la_.own) {
        irq_event_.record_in(*la_.own);
        la_.own->set_first_else([this] { return first_else(); });
    }
}

// The earliest time anything but the core's deferred steps could act on its board: its own
// board's or the shared record's next activity, another board's next plus the lookahead (the
// bound of "Cross-board lookahead" below); SystemC time when the kernel has activity no record
// knows of. A deferred step before it is what the kernel would run next on this board.
sc_time core::first_else() {
    sc_time any = std::min(la_.own->next(), shared_->next());
    sc_time first = any;
    for (activity* other : la_.others) {
        const sc_time next = other->next();
        any = std::min(any, next);
        if (next != activity::never) first = std::min(first, next + la_.latency);
    }
    if (sim_time() + kernel_pending() < any) return sim_time();
    return first;
}

// The lookahead's decision (docs/performance.md "Cross-board lookahead"), once the kernel has
// something due by the core's time t. Sync when this board or the shared record has something
// due by t: the core then sees it at the same sync point as without the lookahead. Sync when
// another board's next activity plus the lookahead (the earliest it can reach this board) comes
// before t + reach, the furthest the core may run before it decides again: so it never runs past
// a cross-board effect it has not seen. Otherwise nothing the sync would run can change what the
// core or its board sees until then. Activity the kernel has but no record knows of (a
// notification not made through a timed_event) would break that: sync, and count it.
bool core::board_due(const sc_time& pending, const sc_time& reach) {
    const sc_time t = now();
    const sc_time own = la_.own->next();
    const sc_time shared = shared_->next();
    if (own <= t || shared <= t) return true;
    sc_time first = std::min(own, shared);
    bool due = false;
    for (activity* other : la_.others) {
        const sc_time next = other->next();
        first = std::min(first, next);
        if (next < t + reach && next + la_.latency < t + reach) due = true;  // (next may be sc_max_time)
    }
    if (sim_time() + pending < first) {
        ++sim_stats::unrecorded_activity;
        return true;
    }
    return due;
}

[[noreturn]] void core::fault(const std::string& what, addr_t a) const {
    std::ostringstream s;
    s << name() << ": " << what << " 0x" << std::hex << a << " in " << function_name(cur_);
    throw std::runtime_error(s.str());
}

// Out of region_of's way: the faults' strings cost the hot path a stack frame otherwise.
[[noreturn]] __attribute__((noinline, cold)) void core::bad_access(const mem::region* r, addr_t a) const {
    if (!r) fault("access to unmapped address", a);
    fault("access crossing the end of region '" + r->name + "' at", a);
}

// ---------------------------------------------------------------------------------------------
// Compute, loads and stores

void core::exec(uint64_t instructions) {
    const exec_cost& c = exec_costs_[instructions % exec_costs_.size()];
    if (__builtin_expect(c.instructions != instructions, 0)) return exec_new_count(instructions);
    stats_.instructions += instructions;
    charge(cost::compute, c.t);
    maybe_sync();
}

// exec() of a count its slot does not hold: prices it, then runs exec() again. Out of exec()'s
// way: the library's sc_time constructor made every call save and restore registers.
__attribute__((noinline)) void core::exec_new_count(uint64_t instructions) {
    exec_costs_[instructions % exec_costs_.size()] = {instructions, cycles(static_cast<double>(instructions) * p_.cpi)};
    exec(instructions);
}

void core::read(addr_t a, void* dst, size_t len) {
    if (len == 0) return;
    const mem::region& r = region_of(a, len);
    translate(&r, a, len);
    switch (r.attr) {
    case mem::mem_attr::normal_cacheable:
        cached_access(a, len, false);
        functional(a, dst, len, false);
        break;
    case mem::mem_attr::normal_noncacheable:
        ++stats_.uncached_reads;
        if (within_line(a, len)) uncached_burst(r, a, dst, len);  // a descriptor field: nearly every read
        else uncached_read(r, a, dst, len);
        break;
    case mem::mem_attr::device: {
        ++stats_.mmio_reads;
        sync_if_due();
        const sc_time local = qk_.get_local_time();
        charge(cost::mmio, bus(&r, tlm::TLM_READ_COMMAND, a, dst, len, local) - local);
        break;
    }
    }
    maybe_sync();
}

void core::store(addr_t a, const void* src, size_t len) {
    if (len == 0) return;
    const mem::region& r = region_of(a, len);
    translate(&r, a, len);
    switch (r.attr) {
    case mem::mem_attr::normal_cacheable:
        cached_access(a, len, true);
        functional(a, const_cast<void*>(src), len, true);
        break;
    case mem::mem_attr::normal_noncacheable:
        ++stats_.uncached_writes;
        if (within_line(a, len)) posted_write(r, a, src, len, cost::uncached);  // a descriptor field: nearly every store
        else posted_lines(r, a, src, len);
        break;
    case mem::mem_attr::device:
        ++stats_.mmio_writes;
        sync_if_due();
        posted_write(r, a, src, len, cost::mmio);
        break;
    }
    maybe_sync();
}

void core::copy(addr_t dst, addr_t src, size_t len) {
    if (len == 0) return;
    if (copy_buf_.size() < len) copy_buf_.resize(len);  // grows to the largest copy, then reused
    read(src, copy_buf_.data(), len);
    store(dst, copy_buf_.data(), len);
}

void core::touch(addr_t a, size_t len, bool write) {
    if (len == 0) return;
    const mem::region& r = region_of(a, len);
    translate(&r, a, len);
    switch (r.attr) {
    case mem::mem_attr::normal_cacheable: cached_access(a, len, write); break;
    case mem::mem_attr::normal_noncacheable: touch_uncached(r, a, len, write); break;
    case mem::mem_attr::device: fault("touch() of device memory (side effects) at", a);
    }
    maybe_sync();
}

// Out of touch()'s way: its loop made every (mostly cacheable) touch save and restore registers.
// Counted once per access, as read() and store() count theirs, however many lines it spans.
__attribute__((noinline)) void core::touch_uncached(const mem::region& r, addr_t a, size_t len, bool write) {
    ++(write ? stats_.uncached_writes : stats_.uncached_reads);
    for_each_line_piece(a, len, [&](size_t off, size_t n) {
        if (write) {  // rewrite the bytes memory holds: timing without changing data
            functional(a + off, scratch_.data(), n, false);
            posted_write(r, a + off, scratch_.data(), n, cost::uncached);
        } else {
            uncached_burst(r, a + off, scratch_.data(), n);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Cacheable path. L1 and L2 are non-inclusive: a fill goes into both, an L1 victim goes into
// L2 only when dirty, an L2 victim never back-invalidates L1.

// Line fills from DDR that one access call keeps in flight together (memory-level parallelism).
struct core::fill_group {
    sc_time done;  // latest completion, absolute
    uint32_t n = 0;
};

// Inline in read, store and touch (a million calls in E1's 70 ms run): the call and the
// registers it saved were a fifth of an L1 hit's work. Misses stay out of line (fill_l1).
__attribute__((always_inline)) inline void core::cached_access(addr_t a, size_t len, bool write, cost hit,
                                                                cost miss) {
    ++stats_.accesses;
    fill_group g;
    const uint64_t first = a >> shift_, last = (a + len - 1) >> shift_;
    uint64_t stale_lo = ~0ull, stale_hi = 0;
    for (uint64_t la = first; la <= last; ++la) {
        cache::line* e = l1_.find(la);
        if (e) {
            ++stats_.l1_hits;
            l1_.use(e);
            charge(hit, l1_hit_);
            if (e->ready_ps) {  // a prefetch is still filling the line: the access ends no earlier
                g.done = std::max(g.done, sc_time::from_value(e->ready_ps));
                e->ready_ps = 0;
            }
        } else {
            e = fill_l1(la, g, miss);
        }
        e->flags |= cache::touched;
        if (write) {
            e->flags |= cache::dirty;
            e->fn = cur_;
        } else if (e->flags & cache::stale) {
            stale_lo = std::min(stale_lo, la);
            stale_hi = la;
        }
    }
    if (g.done > SC_ZERO_TIME) wait_until(g.done, miss);
    if (stale_lo <= stale_hi && tracking_) {
        const addr_t lo = std::max<addr_t>(a, stale_lo << shift_);
        const addr_t hi = std::min<addr_t>(a + len, (stale_hi + 1) << shift_);
        checker_->cpu_stale_read(*this, lo, hi - lo);
    }
}

cache::line* core::fill_l1(uint64_t la, fill_group& g, cost miss) {
    ++stats_.l1_misses;
    const line_source src = fetch_line(la);
    if (src.from_l2) {
        charge(miss, l2_hit_);
        wait_until(src.ready, miss);  // later only while a prefetch still fills L2
    } else {
        g.done = std::max(g.done, src.ready);
        if (++g.n == p_.miss_overlap) {
            wait_until(g.done, miss);
            g = fill_group{};
        }
        allocate_l2(la)->flags |= cache::touched;
    }
    return place_in_l1(la, src.inherit);
}

// translate()'s access whose page is not its set's recent one: a single page the TLB holds (most)
// is a lookup and nothing more, without the walk's calls, for which every lookup saved and
// restored registers; the rest (and a DC op's address, decoded there) go to translate_walk. A
// lookup that misses changes nothing, so the walk looking the page up again is the same.
__attribute__((noinline)) void core::translate_pages(const mem::region* r, addr_t a, uint64_t first,
                                                    uint64_t last) {
    if (first == last && r && tlb_->hit(first)) return;
    translate_walk(r, a, first, last);
}

// The pages of one access, in order. A miss enters the page and walks: each descriptor is a
// dependent load through L1 and L2 (the core stalls for it), charged as `tlb`.
__attribute__((noinline)) void core::translate_walk(const mem::region* r, addr_t a, uint64_t first,
                                                   uint64_t last) {
    if (!r && !(r = map_.decode(a))) return;  // a DC op outside the map: nothing to translate
    for (uint64_t page = first; page <= last; ++page) {
        if (tlb_->hit(page)) continue;
        const tlb::walk w = tlb_->miss(r->index, page);
        ++stats_.tlb_misses;
        stats_.walk_reads += w.n;
        for (unsigned i = 0; i < w.n; ++i)
            cached_access(w.reads[i], p_.tlb.descriptor_bytes, false, cost::tlb, cost::tlb);
    }
}

uint64_t core::place_page_tables(addr_t base) {
    if (p_.tlb.entries == 0) return 0;
    const mem::region* r = map_.decode(base);
    if (!r || r->base != base)
        throw std::invalid_argument(std::string(name()) + ": no region starts at the page tables' base");
    tlb_ = std::make_unique<tlb>(p_.tlb, 0x5851f42d4c957f2dull * p_.seed + id_);
    tlb_shift_ = tlb_->page_shift();
    return tlb_->lay_out(map_.regions(), static_cast<size_t>(r - map_.regions().data()), base);
}

// Where the data of a line missing from L1 comes from and when it is there. An L2 miss reads
// the line from DDR through the bus (the request passes the L2 lookup first); the caller then
// allocates it in L2 (allocate_l2). Nothing is charged to the core here.
core::line_source core::fetch_line(uint64_t la) {
    if (cache::line* e2 = l2_->find(la)) {
        ++stats_.l2_hits;
        l2_->use(e2);
        const sc_time ready = std::max(now() + l2_hit_, sc_time::from_value(e2->ready_ps));
        return {true, ready, uint8_t(e2->flags & cache::stale)};
    }
    ++stats_.l2_misses;
    const sc_time issue = qk_.get_local_time() + l2_hit_;
    const sc_time done =
        sim_time() + bus(nullptr, tlm::TLM_READ_COMMAND, la << shift_, scratch_.data(), p_.line_bytes, issue);
    return {false, done, 0};
}

cache::line* core::allocate_l2(uint64_t la) {
    cache::line victim;
    cache::line* e2 = l2_->allocate(la, victim);
    if (victim.flags) evict_l2(victim);
    return e2;
}

cache::line* core::place_in_l1(uint64_t la, uint8_t inherit) {
    cache::line victim;
    cache::line* e1 = l1_.allocate(la, victim);
    if (victim.flags) evict_l1(victim);
    e1->flags |= inherit;
    return e1;
}

// A hint: never faults (unmapped or non-cacheable addresses are ignored, as PRFM does) and does
// not count as a use of the line (the first real access marks it touched). Only a dirty victim's
// hand-off to the eviction buffer is charged to the core.
void core::prefetch(addr_t a) {
    const mem::region* r = map_.decode(a);
    if (!r || r->attr != mem::mem_attr::normal_cacheable) return;
    translate(r, a, 1);  // a PRFM is translated as a load is (the L1 is physically tagged)
    const uint64_t la = a >> shift_;
    if (l1_.find(la)) return;
    ++stats_.prefetches;
    const line_source src = fetch_line(la);
    if (!src.from_l2) allocate_l2(la)->ready_ps = src.ready.value();
    place_in_l1(la, src.inherit)->ready_ps = src.ready.value();
}

void core::evict_l1(const cache::line& v) {
    if (v.flags & cache::dirty) {
        ++stats_.l1_writebacks;
        place_in_l2(v.tag, v.flags, v.fn);
        return;
    }
    if (cache::line* e2 = l2_->find(v.tag)) e2->flags |= v.flags & (cache::touched | cache::stale);
    else if (tracking_ && (v.flags & cache::touched)) checker_->note_touched(v.tag, v.flags & cache::touched);
}

// A dirty line from L1 (eviction, or an ARMv7 inner clean) into L2; no DDR traffic unless
// L2 has to evict a dirty victim for it.
void core::place_in_l2(uint64_t la, uint8_t flags, uint16_t fn) {
    cache::line* e2 = l2_->find(la);
    if (!e2) {
        cache::line victim;
        e2 = l2_->allocate(la, victim);
        if (victim.flags) evict_l2(victim);
    }
    e2->flags |= cache::dirty | (flags & (cache::touched | cache::stale));
    e2->fn = fn;
}

void core::evict_l2(const cache::line& v) {
    if (v.flags & cache::dirty) {
        ++stats_.l2_writebacks;
        writeback(v.tag, v.flags, v.fn);
        charge(cost::cache_miss, evict_wb_);  // the eviction buffer takes it; DDR is busy meanwhile
    }
    if (tracking_ && (v.flags & cache::touched)) checker_->note_touched(v.tag, v.flags & cache::touched);
}

sc_time core::writeback(uint64_t la, uint8_t flags, uint16_t fn) {
    if (tracking_) checker_->cpu_writeback(*this, la, flags, fn);
    // Bytes always live in DDR: the write-back rewrites what memory holds, for its timing.
    functional(la << shift_, scratch_.data(), p_.line_bytes, false);
    return sim_time() +
           bus(nullptr, tlm::TLM_WRITE_COMMAND, la << shift_, scratch_.data(), p_.line_bytes, qk_.get_local_time());
}

// DC CVAC / IVAC / CIVAC. arm64: to the point of coherency through L1 and L2. ARMv7 with an
// outer cache: L1 only (a clean pushes the line into the PL310).
void core::line_op(addr_t a, bool clean, bool invalidate) {
    translate(nullptr, a, 1);  // DC ops by VA go through the MMU
    const uint64_t la = a >> shift_;
    ++stats_.line_ops;
    cache::line* e1 = l1_.find(la);
    cache::line* e2 = p_.outer_cache ? nullptr : l2_->find(la);
    const uint8_t f = (e1 ? e1->flags : 0) | (e2 ? e2->flags : 0);
    const bool dirty = f & cache::dirty;
    charge(cost::cache_maint, !(e1 || e2) ? maint_absent_ : (dirty && clean) ? maint_dirty_ : maint_clean_);
    if (tracking_) checker_->line_op(la, f & cache::touched_inner, false);
    for (cache::line* e : {e1, e2})
        if (e) e->flags &= static_cast<uint8_t>(~cache::touched_inner);
    if (clean && dirty) {
        if (p_.outer_cache) {
            place_in_l2(la, e1->flags, e1->fn);
            e1->flags &= static_cast<uint8_t>(~(cache::dirty | cache::stale));
        } else {
            ++stats_.maint_writebacks;
            const uint16_t fn = (e1 && (e1->flags & cache::dirty)) ? e1->fn : e2->fn;
            maint_done_ = std::max(maint_done_, writeback(la, f, fn));
            // Memory now equals the CPU's copy (any device data there was overwritten).
            for (cache::line* e : {e1, e2})
                if (e) e->flags &= static_cast<uint8_t>(~(cache::dirty | cache::stale));
        }
    }
    if (invalidate) {
        if (!clean && dirty) ++stats_.discarded_dirty;
        if (e1) l1_.invalidate(e1);
        if (e2) l2_->invalidate(e2);
    }
    maybe_sync();
}

// PL310 line operation by PA through its registers (ARMv7 profiles only; a no-op elsewhere,
// as the kernel's outer_cache hooks are empty without an outer cache).
void core::outer_op(addr_t pa, bool clean, bool invalidate) {
    if (!p_.outer_cache) return;
    const uint64_t la = pa >> shift_;
    ++stats_.line_ops;
    charge(cost::cache_maint, outer_line_);
    cache::line* e1 = l1_.find(la);
    cache::line* e2 = l2_->find(la);
    if (tracking_)
        checker_->line_op(la, ((e1 ? e1->flags : 0) | (e2 ? e2->flags : 0)) & cache::touched_outer, true);
    for (cache::line* e : {e1, e2})
        if (e) e->flags &= static_cast<uint8_t>(~cache::touched_outer);
    if (!e2) return maybe_sync();
    const bool dirty = e2->flags & cache::dirty;
    if (clean && dirty) {
        ++stats_.maint_writebacks;
        outer_done_ = std::max(outer_done_, writeback(la, e2->flags, e2->fn));
        e2->flags &= static_cast<uint8_t>(~(cache::dirty | cache::stale));
    }
    if (invalidate) {
        if (!clean && dirty) ++stats_.discarded_dirty;
        l2_->invalidate(e2);
    }
    maybe_sync();
}

void core::outer_sync() {
    if (!p_.outer_cache) return;
    ++stats_.outer_syncs;
    charge(cost::cache_maint, outer_sync_);
    wait_until(outer_done_, cost::cache_maint);
    maybe_sync();
}

// DMB: an in-order core cannot let a later access overtake an earlier write, and across AXI
// slaves only the earlier write's response orders them: it waits until every posted write is
// acknowledged (docs/models/cpu.md, "Barriers"). Maintenance is not waited for (only DSB
// guarantees its completion).
void core::dmb() {
    ++stats_.dmbs;
    charge(cost::barrier, dmb_);
    wait_until(posted_done_, cost::barrier);
    maybe_sync();
}

// STLR (spin_unlock): ordered after every earlier access, as a DMB is, then the store itself.
void core::store_release(addr_t a, size_t len) {
    ++stats_.releases;
    wait_until(posted_done_, cost::barrier);
    touch(a, len, true);
}

// DSB SY: waits for outstanding maintenance (charged as cache_maint) and posted writes.
void core::dsb() {
    ++stats_.dsbs;
    charge(cost::barrier, dsb_);
    wait_until(maint_done_, cost::cache_maint);
    wait_until(posted_done_, cost::barrier);
    wbuf_count_ = 0;
    maybe_sync();
}

// ---------------------------------------------------------------------------------------------
// Functional data (DMI where the target grants it, else debug transport)

// Nearly every access lies within the DMI range its granule used last: one check and one copy
// (the search, the map and the debug transport, with its payload, stay out of this path).
void core::functional(addr_t a, void* data, size_t len, bool write) {
    const tlm::tlm_dmi* d = dmi_recent_[(a / mem::ddr::chunk_bytes) % dmi_recent_.size()];
    if (d && a >= d->get_start_address() && a <= d->get_end_address() && len > 0 &&
        len - 1 <= d->get_end_address() - a &&
        (write ? d->is_write_allowed() : d->is_read_allowed())) {
        uint8_t* m = d->get_dmi_ptr() + (a - d->get_start_address());
        if (write) std::memcpy(m, data, len);
        else std::memcpy(data, m, len);
        return;
    }
    functional_slow(a, data, len, write);
}

__attribute__((noinline)) void core::functional_slow(addr_t a, void* data, size_t len, bool write) {
    auto* p = static_cast<uint8_t*>(data);
    while (len > 0) {
        size_t avail = 0;
        if (uint8_t* m = dmi_ptr(a, avail, write)) {
            const size_t n = std::min(len, avail);
            if (write) std::memcpy(m, p, n);
            else std::memcpy(p, m, n);
            a += n, p += n, len -= n;
            continue;
        }
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(a);
        gp.set_data_ptr(p);
        gp.set_data_length(static_cast<unsigned>(len));
        gp.set_streaming_width(static_cast<unsigned>(len));
        if (socket->transport_dbg(gp) != len) fault("functional access failed at", a);
        return;
    }
}

uint8_t* core::dmi_ptr(addr_t a, size_t& avail, bool write) {
    auto usable = [&](const tlm::tlm_dmi& d) {
        return a >= d.get_start_address() && a <= d.get_end_address() &&
               (write ? d.is_write_allowed() : d.is_read_allowed());
    };
    const tlm::tlm_dmi*& recent = dmi_recent_[(a / mem::ddr::chunk_bytes) % dmi_recent_.size()];
    const tlm::tlm_dmi* d = recent;
    if (!d || !usable(*d)) {
        d = nullptr;
        auto it = dmi_.upper_bound(a);
        if (it != dmi_.begin() && usable(std::prev(it)->second)) d = &std::prev(it)->second;
    }
    if (!d) {
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(a);
        tlm::tlm_dmi got;
        if (!socket->get_direct_mem_ptr(gp, got) || !usable(got)) return nullptr;
        d = &(dmi_[got.get_start_address()] = got);
    }
    recent = d;
    avail = d->get_end_address() - a + 1;
    return d->get_dmi_ptr() + (a - d->get_start_address());
}

void core::invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end) {
    for (auto it = dmi_.begin(); it != dmi_.end();) {
        if (it->second.get_start_address() <= end && it->second.get_end_address() >= start) it = dmi_.erase(it);
        else ++it;
    }
    dmi_recent_.fill(nullptr);
}

// ---------------------------------------------------------------------------------------------
// Uncached and device path. bus(), make_room() and posted_write() are inline in their callers:
// an uncached store (a descriptor field) crossed four calls before the router's.

__attribute__((always_inline)) inline sc_time core::bus(const mem::region* r, tlm::tlm_command cmd, addr_t a,
                                                        void* data, size_t len, sc_time delay) {
    gp_.set_command(cmd);
    gp_.set_address(a);
    gp_.set_data_ptr(static_cast<unsigned char*>(data));
    gp_.set_data_length(static_cast<unsigned>(len));
    gp_.set_streaming_width(static_cast<unsigned>(len));
    // No byte enables: the payload's pointer is null from its construction and no target sets
    // one. The DMI hint a target returns is not read (DMI is asked for through the socket).
    gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    // = socket->b_transport(gp_, delay), one call; without a second decode when the caller has one
    if (r) map_.transport(*r, gp_, delay);
    else map_.transport(gp_, delay);
    if (__builtin_expect(gp_.is_response_error(), 0)) bus_error(a);
    return delay;
}

// Out of bus()'s way, as bad_access is out of region_of's.
[[noreturn]] __attribute__((noinline, cold)) void core::bus_error(addr_t a) const {
    fault("bus error (" + gp_.get_response_string() + ") at", a);
}

// Normal non-cacheable reads stall for the whole round trip, one burst per line-sized piece.
// A burst is inline in read (the driver's descriptor reads, within a line), as cached_access;
// an access crossing lines takes the loop out of line.
__attribute__((always_inline)) inline void core::uncached_burst(const mem::region& r, addr_t a, void* dst,
                                                                size_t n) {
    const sc_time local = qk_.get_local_time();
    charge(cost::uncached, bus(&r, tlm::TLM_READ_COMMAND, a, dst, n, local) - local);
}

__attribute__((noinline)) void core::uncached_read(const mem::region& r, addr_t a, void* dst, size_t len) {
    for_each_line_piece(a, len, [&](size_t off, size_t n) {
        uncached_burst(r, a + off, static_cast<uint8_t*>(dst) + off, n);
    });
}

// Retires completed posted writes; when the buffer is full, stalls until the oldest completes.
__attribute__((always_inline)) inline void core::make_room(cost c) {
    const sc_time t = now();
    while (wbuf_count_ && wbuf_[wbuf_head_] <= t) wbuf_head_ = wbuf_next(wbuf_head_), --wbuf_count_;
    if (wbuf_count_ < wbuf_.size()) return;
    ++stats_.write_buffer_stalls;
    wait_until(wbuf_[wbuf_head_], c);
    wbuf_head_ = wbuf_next(wbuf_head_);
    --wbuf_count_;
}

// The write travels to its target (bus(), which books the DDR or reaches the device); the core
// sees it complete when the interconnect acknowledges it (the region's write_ack_ns).
__attribute__((always_inline)) inline void core::posted_write(const mem::region& r, addr_t a, const void* src,
                                                              size_t len, cost c) {
    make_room(c);
    bus(&r, tlm::TLM_WRITE_COMMAND, a, const_cast<void*>(src), len, qk_.get_local_time());
    const sc_time done = now() + write_ack_[r.index];
    const size_t tail = wbuf_head_ + wbuf_count_++;  // < 2 * size: one wrap at most (no division)
    wbuf_[tail < wbuf_.size() ? tail : tail - wbuf_.size()] = done;
    posted_done_ = std::max(posted_done_, done);
    charge(c, posted_);
}

// An uncached store crossing lines: one write-buffer entry per line-sized burst (out of store's
// way, as uncached_read is out of read's).
__attribute__((noinline)) void core::posted_lines(const mem::region& r, addr_t a, const void* src, size_t len) {
    for_each_line_piece(a, len, [&](size_t off, size_t n) {
        posted_write(r, a + off, static_cast<const uint8_t*>(src) + off, n, cost::uncached);
    });
}

// ---------------------------------------------------------------------------------------------
// Interrupts: level-sensitive lines, per-line enable and priority (lower value wins, as on a
// GIC), taken only when the firmware waits or polls (no preemption of running code).

void core::irq_changed() {
    sim_stats::count_event();
    if (pending_irq() >= 0) irq_event_.notify();
}

int core::pending_irq() const {
    int best = -1;
    for (size_t i = 0; i < irq_state_.size(); ++i) {
        const irq_state& s = irq_state_[i];
        if (s.enabled && !s.active && irq[i].read() && (best < 0 || s.priority < irq_state_[best].priority))
            best = static_cast<int>(i);
    }
    return best;
}

void core::irq_enable(int line, bool enabled, int priority) {
    if (line < 0 || static_cast<size_t>(line) >= irq_state_.size())
        throw std::out_of_range(std::string(name()) + ": irq line " + std::to_string(line) + " does not exist (" +
                                std::to_string(irq_state_.size()) + " lines)");
    irq_state_[line].enabled = enabled;
    irq_state_[line].priority = priority;
}

int core::take_irq(int line) {
    irq_state_[line].active = true;
    irq_active_.push_back(line);
    ++stats_.irqs;
    charge(cost::irq, irq_entry_);
    return line;
}

int core::wait_for_irq() {
    sync();
    int line = pending_irq();
    if (line < 0) {
        const sc_time start = sim_time();
        if (la_.own) la_.own->core_stops();  // for as long as no interrupt comes
        do {
            wait(irq_event_.event());
            ++activity::changes;  // as after a sync
            sim_stats::count_event();
        } while ((line = pending_irq()) < 0);
        if (la_.own) la_.own->core_runs();  // runs again
        const sc_time idle = sim_time() - start;
        cur_time_[static_cast<size_t>(cost::idle)] += idle;
        qk_.reset();
    }
    return take_irq(line);
}

int core::poll_irq() {
    const int line = pending_irq();
    return line < 0 ? -1 : take_irq(line);
}

void core::irq_return() {
    if (irq_active_.empty()) throw std::logic_error(std::string(name()) + ": irq_return() without an active interrupt");
    irq_state_[irq_active_.back()].active = false;
    irq_active_.pop_back();
    charge(cost::irq, irq_exit_);
    maybe_sync();
}

// ---------------------------------------------------------------------------------------------
// Attribution and statistics

void core::enter(const char* function) {
    fn_slot& slot = fn_cache_[(reinterpret_cast<uintptr_t>(function) * 0x9e3779b97f4a7c15ull) >> 56];
    if (slot.name != function) remember(slot, function);
    const uint16_t f = slot.id;
    stack_.push_back(cur_);
    cur_ = f;
    cur_time_ = fn_time_[f].data();
    ++fn_calls_[f];
}

// Out of enter()'s way: the map's code made every call save and restore registers.
__attribute__((noinline)) void core::remember(fn_slot& slot, const char* function) {
    auto it = fn_ids_.find(function);
    const uint16_t f = it != fn_ids_.end() ? it->second : (fn_ids_[function] = function_id(function));
    if (f >= fn_time_.size()) fn_time_.resize(f + 1), fn_calls_.resize(f + 1);
    slot = {function, f};
}

void core::leave() {
    if (__builtin_expect(stack_.empty(), 0)) unbalanced_leave();
    cur_ = stack_.back();
    cur_time_ = fn_time_[cur_].data();
    stack_.pop_back();
}

// Out of leave()'s way: the message's strings made every call save and restore registers.
[[noreturn]] __attribute__((noinline, cold)) void core::unbalanced_leave() const {
    throw std::logic_error(std::string(name()) + ": leave() without enter()");
}

std::vector<core::function_profile> core::profile() const {
    std::vector<function_profile> out;
    for (size_t f = 0; f < fn_time_.size(); ++f) {
        function_profile p;
        p.name = function_name(static_cast<uint16_t>(f));
        p.calls = fn_calls_[f];
        p.time = fn_time_[f];
        bool any = p.calls != 0;
        for (auto& t : p.time) any |= t != SC_ZERO_TIME;
        if (any) out.push_back(std::move(p));
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return out;
}

sc_time core::time_in(cost c) const {
    sc_time t;
    for (const auto& f : fn_time_) t += f[static_cast<size_t>(c)];
    return t;
}

void core::reset_stats() {
    stats_ = core_stats{};
    if (tlb_) tlb_->reset_stats();
    for (auto& t : fn_time_) t.fill(SC_ZERO_TIME);
    std::fill(fn_calls_.begin(), fn_calls_.end(), 0);
    stats_start_ = time_outside();
}

void core::report(nlohmann::json& out) const {
    auto ns = [](const sc_time& t) { return t.to_seconds() * 1e9; };
    nlohmann::json& c = out["cpu"]["core" + std::to_string(id_)];
    const sc_time window = time_outside() - stats_start_;
    sc_time busy;
    for (size_t i = 0; i < cost_count; ++i) {
        const sc_time total = time_in(static_cast<cost>(i));
        c["time_ns"][to_string(static_cast<cost>(i))] = ns(total);
        if (static_cast<cost>(i) != cost::idle) busy += total;
    }
    c["busy_fraction"] = window > SC_ZERO_TIME ? busy / window : 0.0;
    nlohmann::json& fns = c["functions"];
    fns = nlohmann::json::object();
    for (auto& p : profile()) {
        nlohmann::json& f = fns[p.name];
        f["calls"] = p.calls;
        for (size_t i = 0; i < cost_count; ++i) f["time_ns"][to_string(static_cast<cost>(i))] = ns(p.time[i]);
    }
    const core_stats& s = stats_;
    c["counters"] = {
        {"instructions", s.instructions},     {"accesses", s.accesses},
        {"l1_hits", s.l1_hits},               {"l1_misses", s.l1_misses},
        {"l2_hits", s.l2_hits},               {"l2_misses", s.l2_misses},
        {"prefetches", s.prefetches},
        {"l1_writebacks", s.l1_writebacks},   {"l2_writebacks", s.l2_writebacks},
        {"uncached_reads", s.uncached_reads}, {"uncached_writes", s.uncached_writes},
        {"mmio_reads", s.mmio_reads},         {"mmio_writes", s.mmio_writes},
        {"write_buffer_stalls", s.write_buffer_stalls}, {"releases", s.releases},
        {"line_ops", s.line_ops},             {"maint_writebacks", s.maint_writebacks},
        {"discarded_dirty", s.discarded_dirty},
        {"dmbs", s.dmbs},                     {"dsbs", s.dsbs},
        {"outer_syncs", s.outer_syncs},       {"irqs", s.irqs},
        {"tlb_misses", s.tlb_misses},         {"walk_reads", s.walk_reads},
        {"walk_cache_misses", tlb_ ? tlb_->walk_cache_misses() : 0},
    };
}

}  // namespace fecsim::cpu
