// Coherency checker (docs/design.md §3): compares the CPU's cached copies (the cores' tag arrays)
// with what the device reads and writes in memory, and reports, with address, size, simulated
// time and firmware function:
//   stale_read     the CPU read a cached line the device wrote after it was cached (missing invalidate)
//   missing_clean  the device read memory while the CPU held a dirty copy
//   lost_dma_data  a dirty line was written back over data the device wrote
// and counts maintenance line operations on lines nobody touched since the previous one
// (wasted_line_ops, a metric). Device accesses reach it through a coherency_tap.
#pragma once

#include "models/cpu/cache.h"

#include <nlohmann/json.hpp>
#include <systemc>

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace fecsim {
class config_view;
}

namespace fecsim::cpu {

class core;

enum class coherency_mode { off, report, strict };
coherency_mode coherency_mode_from_string(const std::string& s);  // throws std::invalid_argument

// Keys of the platform profile's `coherency` section (configs/schema/coherency.json).
struct coherency_params {
    coherency_mode mode = coherency_mode::report;
    uint32_t max_listed = 20;   // violations kept as text in report mode
    bool dma_coherent = false;  // the SoC snoops DMA: no maintenance needed, nothing to check
};
coherency_params coherency_params_from(const fecsim::config_view& section);

// Thrown (strict mode) at the first violation. SystemC wraps exceptions escaping a process
// into an sc_report, so after sc_start() throws, call coherency_checker::rethrow_if_stopped()
// to get this type back (the platform maps it to exit status 1).
struct coherency_violation : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class coherency_checker {
public:
    enum class kind : uint8_t { stale_read, missing_clean, lost_dma_data };
    static constexpr size_t kind_count = 3;
    static const char* to_string(kind k);

    struct violation {
        kind what;
        uint64_t addr;
        size_t size;
        sc_core::sc_time time;
        std::string function;  // firmware function responsible (reader, writer of the dirty data, ...)
        std::string text() const;
    };

    explicit coherency_checker(const coherency_params& p);
    ~coherency_checker();

    // Registers a core's caches and makes the core report its side of every line to this
    // checker. All attached cores must use the same line size.
    void attach(core& c);

    const coherency_params& params() const { return p_; }
    bool tracking() const { return p_.mode != coherency_mode::off && !p_.dma_coherent; }
    bool observes_device() const { return p_.mode != coherency_mode::off || p_.dma_coherent; }

    // --- device side (coherency_tap): an access of [a, a+len) at simulated time t.
    // `cacheable`: the range lies where the CPU maps memory cacheable. The cores allocate lines
    // only there (core::cached_access, core::prefetch), so elsewhere (the descriptor rings'
    // non-cacheable pool) no cache can hold a copy: only the line bits are kept, without
    // looking up the caches. Inline for those (three quarters of E1's DMA accesses); the rest
    // compare with the caches out of line.
    void device_access(bool write, uint64_t a, size_t len, const sc_core::sc_time& t, bool cacheable = true) {
        if (len == 0 || cores_.empty() || !observes_device()) return;
        if (cacheable || p_.dma_coherent) {
            device_access_cached(write, a, len, t, cacheable);
            return;
        }
        // no cache holds these lines: nothing to compare
        for (uint64_t la = a >> shift_, last = (a + len - 1) >> shift_; la <= last; ++la)
            *line_flags(la, true) |= cache::touched;
    }

    // --- CPU side (called by the cores)
    void cpu_stale_read(const core& c, uint64_t a, size_t len);
    void cpu_writeback(const core& c, uint64_t la, uint8_t line_flags, uint16_t dirtied_by);
    // A maintenance line operation (touched bits found in the caches): inline, as the DC ops of
    // every buffer the driver syncs call it.
    void line_op(uint64_t la, uint8_t touched_bits, bool outer) {
        if (!tracking()) return;
        ++line_ops_;
        const uint8_t bit = outer ? cache::touched_outer : cache::touched_inner;
        bool touched = touched_bits & bit;
        if (uint8_t* f = line_flags(la, false)) {
            touched |= (*f & bit) != 0;
            *f &= static_cast<uint8_t>(~bit);
        }
        if (!touched) ++wasted_;
    }
    void note_touched(uint64_t la, uint8_t touched_bits);         // from an evicted line

    // --- results
    uint64_t violations() const;
    uint64_t violations(kind k) const { return counts_[static_cast<size_t>(k)]; }
    uint64_t line_ops() const { return line_ops_; }
    uint64_t wasted_line_ops() const { return wasted_; }
    const std::vector<violation>& listed() const { return listed_; }
    bool stopped() const { return stopped_; }
    void rethrow_if_stopped() const;
    void reset_stats();
    // Writes coherency.{violations, stale_reads, missing_cleans, lost_dma_data,
    // wasted_line_ops, line_ops, listed[]}.
    void report(nlohmann::json& out) const;

private:
    void raise(kind k, uint64_t addr, size_t size, const sc_core::sc_time& t, const std::string& function);
    // device_access() to memory a cache may hold, or on a SoC that snoops DMA.
    void device_access_cached(bool write, uint64_t a, size_t len, const sc_core::sc_time& t, bool cacheable);
    // The checker's bits of line la; nullptr when its block was never touched and !create.
    uint8_t* line_flags(uint64_t la, bool create) {
        const recent_block& r = recent_[(la >> block_shift) & (recent_.size() - 1)];
        if (r.block == la >> block_shift) {
            if (r.flags) return &r.flags[la & ((uint64_t{1} << block_shift) - 1)];
            if (!create) return nullptr;  // known untouched
        }
        return block_flags(la, create);
    }
    uint8_t* block_flags(uint64_t la, bool create);

    coherency_params p_;
    std::vector<core*> cores_;
    std::vector<cache*> caches_;
    unsigned shift_ = 0;

    // Per-line "touched since last maintenance" bits for lines no cache holds, in blocks of
    // 1024 lines allocated on first touch.
    static constexpr unsigned block_shift = 10;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> blocks_;
    // Blocks used recently, direct-mapped by block number (DMA alternates between descriptor
    // rings and buffers in different blocks, and a page pool's buffers span more than 16 of
    // them): most lookups skip the hash map.
    struct recent_block {
        uint64_t block = ~0ull;  // no block number has all bits set: empty
        uint8_t* flags = nullptr;  // null: the block was never touched (maintenance looked)
    };
    std::array<recent_block, 256> recent_{};

    std::array<uint64_t, kind_count> counts_{};
    uint64_t line_ops_ = 0, wasted_ = 0;
    std::vector<violation> listed_;
    bool stopped_ = false;
    std::string first_;
};

}  // namespace fecsim::cpu
