#include "models/cpu/cache.h"

#include <algorithm>
#include <stdexcept>

namespace fecsim::cpu {

replacement replacement_from_string(const std::string& s) {
    if (s == "lru") return replacement::lru;
    if (s == "random") return replacement::random;
    throw std::invalid_argument("unknown cache replacement policy '" + s + "' (expected lru or random)");
}

static bool power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

cache::cache(std::string name, const cache_params& p, uint32_t line_bytes, uint64_t seed)
    : name_(std::move(name)), p_(p), line_bytes_(line_bytes), ways_(p.ways), rng_(seed | 1) {
    if (!power_of_two(line_bytes)) throw std::invalid_argument(name_ + ": line size must be a power of two");
    if (p.ways == 0 || p.size_bytes % (uint64_t(p.ways) * line_bytes) != 0)
        throw std::invalid_argument(name_ + ": size " + std::to_string(p.size_bytes) + " is not a multiple of ways x line");
    const uint64_t sets = p.size_bytes / (uint64_t(p.ways) * line_bytes);
    if (!power_of_two(sets))
        throw std::invalid_argument(name_ + ": " + std::to_string(sets) + " sets is not a power of two");
    if (p.ways > 255) throw std::invalid_argument(name_ + ": more than 255 ways");
    set_mask_ = sets - 1;
    lines_.resize(sets * p.ways);
    held_.resize(sets << 7);
    held_mask_ = held_.size() - 1;
    valid_in_set_.resize(sets);
}

cache::line* cache::allocate(uint64_t la, line& victim) {
    const uint64_t s = la & set_mask_;
    line* set = &lines_[s * ways_];
    line* way = nullptr;
    if (valid_in_set_[s] < ways_) {  // the first free way
        way = set;
        while (way->flags & valid) ++way;
        ++valid_in_set_[s];
    }
    if (!way) {
        if (p_.policy == replacement::lru) {
            way = &set[0];
            for (uint32_t w = 1; w < ways_; ++w)
                if (set[w].stamp < way->stamp) way = &set[w];
        } else {  // xorshift64: deterministic pseudo-random way
            rng_ ^= rng_ << 13, rng_ ^= rng_ >> 7, rng_ ^= rng_ << 17;
            way = &set[rng_ % ways_];
        }
        victim = *way;
        --held_[victim.tag & held_mask_];
    } else {
        victim.flags = 0;
    }
    ++held_[la & held_mask_];
    way->tag = la;
    way->flags = valid;
    way->fn = 0;
    way->ready_ps = 0;
    use(way);
    return way;
}

size_t cache::valid_lines() const {
    size_t n = 0;
    for (auto& l : lines_) n += (l.flags & valid) != 0;
    return n;
}

void cache::invalidate_all() {
    for (auto& l : lines_) l.flags = 0;
    std::fill(held_.begin(), held_.end(), 0);
    std::fill(valid_in_set_.begin(), valid_in_set_.end(), 0);
}

}  // namespace fecsim::cpu
