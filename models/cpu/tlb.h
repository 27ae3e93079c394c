// The core's unified main TLB and its walk cache (docs/models/cpu.md, "TLB"). Data side only:
// instruction fetch has no model. The kernel's linear map makes VA -> PA a constant offset, so a
// physical page number names a page. A miss is a page-table walk whose descriptor reads the core
// makes through its caches at real addresses of the page-table region; the walk cache keeps the
// upper levels' result per leaf table, so a miss usually reads the leaf descriptor alone.
#pragma once

#include "models/cpu/cache.h"
#include "models/mem/router.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace fecsim::cpu {

using addr_t = uint64_t;

// The `cpu.tlb` keys of the platform profile (configs/schema/cpu.json).
struct tlb_params {
    uint32_t entries = 0;             // main TLB entries; 0: no TLB model (translation is free)
    uint32_t ways = 4;                // its associativity
    replacement policy = replacement::lru;  // victim within a set (the walk cache's: LRU)
    uint32_t walk_cache_entries = 0;  // upper-level walk results kept (0: every walk reads every level)
    uint32_t walk_cache_ways = 4;
    uint32_t page_bytes = 4096;       // what one leaf descriptor maps (arm64: 4 KiB; ARMv7 lowmem: 1 MiB sections)
    uint32_t descriptor_bytes = 8;    // 8: arm64 / LPAE; 4: ARMv7 short descriptors
    uint32_t levels = 4;              // table levels a walk from the root reads (arm64 48-bit VA, 4 KiB: 4)
};

// The geometry checks the schema cannot make. Throws param_error naming the keys involved
// relative to the `cpu.tlb` section (a combination: the caller names the one the user changed).
void check_tlb_params(const tlb_params& p);

class tlb {
public:
    // The descriptors one walk reads, root first (at most `levels`).
    struct walk {
        std::array<addr_t, 4> reads{};
        unsigned n = 0;
    };

    // `seed` drives a random replacement stream.
    tlb(const tlb_params& p, uint64_t seed);

    // Lays out the page tables of `regions` (the address map in router order) from `base`: per
    // region, its leaf descriptors from a table boundary on, then each upper level's descriptors.
    // The region holding the tables (index `own`) maps nothing the core uses and gets none.
    // Returns the bytes the layout needs; the caller checks they fit its region.
    uint64_t lay_out(const std::vector<mem::region>& regions, size_t own, addr_t base);

    unsigned page_shift() const { return page_shift_; }
    // True when `page` was the last page looked up in its set: it is the set's most recent entry,
    // so a lookup would hit and change nothing (the host's shortcut; exact).
    bool recent(uint64_t page) const { return recent_[page & set_mask_] == page; }
    // A lookup of page `page` (physical address >> page_shift()): true on a hit, which makes the
    // page its set's most recent.
    bool hit(uint64_t page) {
        recent_[page & set_mask_] = page;
        cache::line* e = main_.find(page);
        if (e) main_.use(e);
        return e;
    }
    // After a lookup missed: enters page `page` of regions[region] and returns the descriptors
    // its walk reads.
    walk miss(size_t region, uint64_t page);
    uint64_t walk_cache_misses() const { return walk_cache_misses_; }
    void reset_stats() { walk_cache_misses_ = 0; }

private:
    tlb_params p_;
    unsigned page_shift_;
    uint64_t per_table_;                  // descriptors in one 4 KiB table
    cache main_;
    uint64_t set_mask_;
    std::vector<uint64_t> recent_;        // per set: the page looked up last
    std::unique_ptr<cache> walk_cache_;   // nullptr: none
    std::vector<uint64_t> leaf_of_page_;  // per region: leaf descriptor index = this + page number
    std::vector<addr_t> level_base_;      // [0] leaf descriptors, [k] level k above the leaf
    uint64_t walk_cache_misses_ = 0;
};

}  // namespace fecsim::cpu
