#include "models/cpu/coherency.h"

#include "models/cpu/core.h"
#include "config/config.h"

#include <algorithm>
#include <cstdio>

namespace fecsim::cpu {

coherency_mode coherency_mode_from_string(const std::string& s) {
    if (s == "off") return coherency_mode::off;
    if (s == "report") return coherency_mode::report;
    if (s == "strict") return coherency_mode::strict;
    throw std::invalid_argument("unknown coherency mode '" + s + "' (expected off, report or strict)");
}

coherency_params coherency_params_from(const config_view& v) {
    coherency_params p;
    p.mode = coherency_mode_from_string(v.string("mode"));
    p.max_listed = static_cast<uint32_t>(v.integer("max_listed"));
    p.dma_coherent = v.boolean("dma_coherent");
    return p;
}

const char* coherency_checker::to_string(kind k) {
    switch (k) {
    case kind::stale_read: return "stale_read";
    case kind::missing_clean: return "missing_clean";
    case kind::lost_dma_data: return "lost_dma_data";
    }
    return "?";
}

std::string coherency_checker::violation::text() const {
    static const char* what_text[] = {
        "CPU read a cached copy older than a device write (missing invalidate)",
        "device read memory while the CPU held a dirty copy (missing clean)",
        "dirty line written back over data the device wrote (lost DMA data)",
    };
    char buf[96];
    std::snprintf(buf, sizeof buf, " 0x%llx+%zu at %.3f ns in ", static_cast<unsigned long long>(addr), size,
                  time.to_seconds() * 1e9);
    return std::string(to_string(what)) + buf + function + ": " + what_text[static_cast<size_t>(what)];
}

coherency_checker::coherency_checker(const coherency_params& p) : p_(p) {}
coherency_checker::~coherency_checker() = default;

void coherency_checker::attach(core& c) {
    const unsigned shift = static_cast<unsigned>(__builtin_ctz(c.cache_line_bytes()));
    if (!cores_.empty() && shift != shift_)
        throw std::invalid_argument("coherency checker: cores with different cache line sizes");
    shift_ = shift;
    cores_.push_back(&c);
    for (cache* k : {&c.l1d(), &c.l2()})
        if (std::find(caches_.begin(), caches_.end(), k) == caches_.end()) caches_.push_back(k);
    c.checker_ = this;
    c.tracking_ = tracking();
}

uint8_t* coherency_checker::block_flags(uint64_t la, bool create) {
    const uint64_t b = la >> block_shift;
    recent_block& r = recent_[b & (recent_.size() - 1)];
    auto it = blocks_.find(b);
    if (it == blocks_.end()) {
        if (!create) {
            r = {b, nullptr};  // maintenance of lines no device touched looks again and again
            return nullptr;
        }
        it = blocks_.emplace(b, std::make_unique<uint8_t[]>(size_t{1} << block_shift)).first;
    }
    r = {b, it->second.get()};
    return &it->second[la & ((uint64_t{1} << block_shift) - 1)];
}

void coherency_checker::device_access_cached(bool write, uint64_t a, size_t len, const sc_core::sc_time& t,
                                             bool cacheable) {
    const uint64_t first = a >> shift_, last = (a + len - 1) >> shift_;
    if (p_.dma_coherent) {  // the interconnect snoops: a device write invalidates CPU copies
        if (write && cacheable)
            for (uint64_t la = first; la <= last; ++la)
                for (cache* k : caches_)
                    if (cache::line* e = k->find(la)) k->invalidate(e);
        return;
    }
    uint64_t dirty_lo = ~0ull, dirty_hi = 0;
    uint16_t dirtied_by = 0;
    for (uint64_t la = first; la <= last; ++la) {
        *line_flags(la, true) |= cache::touched;
        for (cache* k : caches_) {
            cache::line* e = k->find(la);
            if (!e) continue;
            if (write) {
                e->flags |= cache::stale;
            } else if (e->flags & cache::dirty) {
                if (dirty_lo == ~0ull) dirtied_by = e->fn;
                dirty_lo = std::min(dirty_lo, la);
                dirty_hi = la;
            }
        }
    }
    if (dirty_lo <= dirty_hi) {
        const uint64_t lo = std::max<uint64_t>(a, dirty_lo << shift_);
        const uint64_t hi = std::min<uint64_t>(a + len, (dirty_hi + 1) << shift_);
        raise(kind::missing_clean, lo, hi - lo, t, function_name(dirtied_by));
    }
}

void coherency_checker::cpu_stale_read(const core& c, uint64_t a, size_t len) {
    raise(kind::stale_read, a, len, c.now(), c.current_function());
}

void coherency_checker::cpu_writeback(const core& c, uint64_t la, uint8_t flags, uint16_t dirtied_by) {
    if (!(flags & cache::stale)) return;
    raise(kind::lost_dma_data, la << shift_, size_t{1} << shift_, c.now(),
          std::string(c.current_function()) + " (dirtied in " + function_name(dirtied_by) + ")");
}

void coherency_checker::note_touched(uint64_t la, uint8_t touched_bits) {
    if (tracking()) *line_flags(la, true) |= touched_bits;
}

void coherency_checker::raise(kind k, uint64_t addr, size_t size, const sc_core::sc_time& t,
                              const std::string& function) {
    ++counts_[static_cast<size_t>(k)];
    violation v{k, addr, size, t, function};
    if (listed_.size() < p_.max_listed) listed_.push_back(v);
    if (p_.mode == coherency_mode::strict) {
        stopped_ = true;
        first_ = "coherency violation: " + v.text();
        throw coherency_violation(first_);
    }
}

void coherency_checker::rethrow_if_stopped() const {
    if (stopped_) throw coherency_violation(first_);
}

uint64_t coherency_checker::violations() const {
    uint64_t n = 0;
    for (auto c : counts_) n += c;
    return n;
}

void coherency_checker::reset_stats() {
    counts_.fill(0);
    line_ops_ = wasted_ = 0;
    listed_.clear();
}

void coherency_checker::report(nlohmann::json& out) const {
    static const char* mode_names[] = {"off", "report", "strict"};
    nlohmann::json& c = out["coherency"];
    c["mode"] = mode_names[static_cast<size_t>(p_.mode)];
    c["dma_coherent"] = p_.dma_coherent;
    c["violations"] = violations();
    c["stale_reads"] = violations(kind::stale_read);
    c["missing_cleans"] = violations(kind::missing_clean);
    c["lost_dma_data"] = violations(kind::lost_dma_data);
    c["line_ops"] = line_ops_;
    c["wasted_line_ops"] = wasted_;
    c["listed"] = nlohmann::json::array();
    for (auto& v : listed_) c["listed"].push_back(v.text());
}

}  // namespace fecsim::cpu
