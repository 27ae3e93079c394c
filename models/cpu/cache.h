// Tag-only set-associative cache (L1 D-cache, shared L2/L3, PL310). The bytes always live in
// the DDR model; a cache only knows which lines it holds and in which state, so a lookup is a
// few table operations and nothing is allocated per access.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fecsim::cpu {

enum class replacement : uint8_t { lru, random };
replacement replacement_from_string(const std::string& s);  // throws std::invalid_argument

struct cache_params {
    uint32_t size_bytes = 32 * 1024;
    uint32_t ways = 4;
    double hit_cycles = 3;  // load-to-use latency of a hit at this level, core cycles
    replacement policy = replacement::lru;
};

class cache {
public:
    // Line state bits. `stale` and the `touched_*` bits serve the coherency checker.
    enum : uint8_t {
        valid = 1,
        dirty = 2,
        stale = 4,          // the device wrote memory after this copy was filled
        touched_inner = 8,  // used since the last inner (L1 / arm64 PoC) maintenance of the line
        touched_outer = 16, // used since the last outer (PL310) maintenance of the line
        touched = touched_inner | touched_outer,
    };

    struct line {
        uint64_t tag = 0;    // line address (byte address >> line shift)
        uint64_t stamp = 0;  // LRU age
        uint64_t ready_ps = 0;  // a prefetch's fill completes at this simulated time (0: filled)
        uint16_t fn = 0;     // firmware function that last wrote the line (coherency reports)
        uint8_t flags = 0;   // `valid` is set by allocate() and cleared by invalidate() only
    };

    // Throws std::invalid_argument when the geometry is not a power-of-two number of sets or has
    // more than 255 ways.
    cache(std::string name, const cache_params& p, uint32_t line_bytes, uint64_t seed);

    // A slot of the held-lines count that is zero answers "absent" at once: a line absent from a
    // 16-way L2 (most maintenance, the coherency checker's look at most lines a device touches,
    // every fill) compared every way. Else tag first (most ways differ), four ways per step (the
    // loop's own count was most of the work of a way). Always inline: its callers in the core's
    // access path lost more to the call than they gained in size when the TLB became one more.
    __attribute__((always_inline)) line* find(uint64_t la) {
        if (!held_[la & held_mask_]) return nullptr;
        line* l = &lines_[(la & set_mask_) * ways_];
        line* const end = l + ways_;
        for (; end - l >= 4; l += 4)
#pragma GCC unroll 4
            for (int w = 0; w < 4; ++w)
                if (l[w].tag == la && (l[w].flags & valid)) return &l[w];
        for (; l != end; ++l)
            if (l->tag == la && (l->flags & valid)) return l;
        return nullptr;
    }
    void use(line* l) { l->stamp = ++clock_; }

    // Picks a way for `la` (which must be absent), copies the line it held into `victim`
    // (victim.flags == 0 when the way was free) and returns the way, valid and clean.
    line* allocate(uint64_t la, line& victim);
    // Drops the line (all its flags): the way is free.
    void invalidate(line* l) {
        if (l->flags & valid) --held_[l->tag & held_mask_], --valid_in_set_[l->tag & set_mask_];
        l->flags = 0;
    }

    const std::string& name() const { return name_; }
    const cache_params& params() const { return p_; }
    uint32_t sets() const { return static_cast<uint32_t>(set_mask_ + 1); }
    uint32_t line_bytes() const { return line_bytes_; }
    size_t valid_lines() const;
    void invalidate_all();

private:
    std::string name_;
    cache_params p_;
    uint32_t line_bytes_, ways_;
    uint64_t set_mask_;
    uint64_t clock_ = 0;
    uint64_t rng_;
    std::vector<line> lines_;
    // How many valid lines the cache holds per slot of line addresses (the set's bits and seven
    // more: a slot's lines share a set, so a count never exceeds the ways).
    std::vector<uint8_t> held_;
    uint64_t held_mask_;
    // Valid ways per set: allocate() looks for a free way only in a set that has one.
    std::vector<uint8_t> valid_in_set_;
};

}  // namespace fecsim::cpu
