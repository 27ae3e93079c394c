#include "models/cpu/tlb.h"

#include "config/config.h"

#include <stdexcept>
#include <string>

namespace fecsim::cpu {

static bool power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }
constexpr uint64_t table_bytes = 4096;  // one translation table (arm64 4 KiB granule; rounding only on ARMv7)

void check_tlb_params(const tlb_params& p) {
    auto bad = [](std::vector<std::string> keys, const std::string& m) { throw param_error(std::move(keys), m); };
    auto geometry = [&](const char* entries_key, const char* ways_key, uint32_t entries, uint32_t ways) {
        if (entries == 0) return;
        if (ways == 0 || entries % ways != 0 || !power_of_two(entries / ways))
            bad({entries_key, ways_key}, std::to_string(entries) + " entries in " + std::to_string(ways) +
                                             " ways is not a power-of-two number of sets");
    };
    geometry("entries", "ways", p.entries, p.ways);
    geometry("walk_cache_entries", "walk_cache_ways", p.walk_cache_entries, p.walk_cache_ways);
    if (!power_of_two(p.page_bytes) || p.page_bytes < 4096) bad({"page_bytes"}, "must be a power of two, at least 4096");
    if (p.descriptor_bytes != 4 && p.descriptor_bytes != 8) bad({"descriptor_bytes"}, "must be 4 or 8");
    if (p.levels < 1 || p.levels > 4) bad({"levels"}, "must be 1 to 4");
    if (p.levels == 1 && p.walk_cache_entries)
        bad({"walk_cache_entries", "levels"},
            "a walk cache needs two levels or more (a one-level walk reads the leaf descriptor only); "
            "walk_cache_entries must be 0");
}

// The main TLB and the walk cache are tag-only set-associative arrays: the cache class
// with one-byte "lines" whose tags are page (or leaf table) numbers.
static cache_params array_params(uint32_t entries, uint32_t ways, replacement policy) {
    return {entries, ways, 0, policy};
}

tlb::tlb(const tlb_params& p, uint64_t seed)
    : p_((check_tlb_params(p), p)), page_shift_(static_cast<unsigned>(__builtin_ctz(p.page_bytes))),
      per_table_(table_bytes / p.descriptor_bytes), main_("tlb", array_params(p.entries, p.ways, p.policy), 1, seed),
      set_mask_(main_.sets() - 1), recent_(main_.sets(), ~0ull) {
    if (p.walk_cache_entries)
        walk_cache_ = std::make_unique<cache>(
            "walk_cache", array_params(p.walk_cache_entries, p.walk_cache_ways, replacement::lru), 1, seed);
}

uint64_t tlb::lay_out(const std::vector<mem::region>& regions, size_t own, addr_t base) {
    auto round_up = [](uint64_t n, uint64_t to) { return (n + to - 1) / to * to; };
    leaf_of_page_.assign(regions.size(), 0);
    uint64_t n = 0;  // leaf descriptors so far
    for (size_t i = 0; i < regions.size(); ++i) {
        if (i == own) continue;
        const mem::region& r = regions[i];
        const uint64_t first = round_up(n, per_table_);
        leaf_of_page_[i] = first - (r.base >> page_shift_);  // modulo 2^64: leaf = this + page
        n = first + ((r.base + r.size - 1) >> page_shift_) - (r.base >> page_shift_) + 1;
    }
    level_base_.assign(p_.levels, base);
    uint64_t bytes = 0;
    for (unsigned k = 0; k < p_.levels; ++k) {
        level_base_[k] = base + bytes;
        bytes += round_up(n * p_.descriptor_bytes, table_bytes);
        n = (n + per_table_ - 1) / per_table_;  // descriptors of the level above: one per table
    }
    return bytes;
}

// Enters the page (its LRU victim simply drops out: a TLB holds no dirty state) and lists the
// walk's reads: the leaf descriptor, preceded by the upper levels' when the walk cache does not
// hold the leaf table's address.
tlb::walk tlb::miss(size_t region, uint64_t page) {
    cache::line victim;
    main_.allocate(page, victim);
    const uint64_t leaf = leaf_of_page_[region] + page;
    walk w;
    const uint64_t table = leaf / per_table_;
    bool upper_cached = false;
    if (walk_cache_) {
        if (cache::line* e = walk_cache_->find(table)) {
            walk_cache_->use(e);
            upper_cached = true;
        } else {
            ++walk_cache_misses_;
            walk_cache_->allocate(table, victim);
        }
    }
    if (!upper_cached) {
        for (unsigned k = p_.levels - 1; k >= 1; --k) {
            uint64_t index = leaf;
            for (unsigned j = 0; j < k; ++j) index /= per_table_;
            w.reads[w.n++] = level_base_[k] + index * p_.descriptor_bytes;
        }
    }
    w.reads[w.n++] = level_base_[0] + leaf * p_.descriptor_bytes;
    return w;
}

}  // namespace fecsim::cpu
