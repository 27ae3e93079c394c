// The data-side TLB: hits after a page's first touch, misses for a working set above its
// capacity, walks that read real descriptor addresses through L1/L2 and are charged as `tlb`,
// the walk cache, the switch (no TLB), determinism.
#include "models/cpu/core.h"
#include "models/cpu/tlb.h"
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/sim_context.h"
#include "tests/cpu/cpu_bench.h"
#include "tests/support/test_ddr.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace fecsim {
namespace {

using cpu::core_api;
using cpu::cost;
using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;

constexpr uint64_t dram = 0x40000000, tables = 0x44000000, page = 4096;

// A53-like TLB: 512 entries in 4 ways, a 64-entry walk cache, four levels of 8-byte descriptors.
cpu::tlb_params a53_tlb() {
    cpu::tlb_params t;
    t.entries = 512;
    t.ways = 4;
    t.walk_cache_entries = 64;
    t.walk_cache_ways = 4;
    return t;
}

// A core against `dram_bytes` of cacheable DRAM and, after them in the same DDR, 4 MiB of page
// tables (at 0x50000000 in the address map).
struct tlb_bench {
    static constexpr uint64_t table_base = 0x50000000;
    mem::ddr ddr;
    mem::router bus{"bus"};
    cpu::core core;

    explicit tlb_bench(const cpu::tlb_params& t, uint64_t seed = 1, cpu::core_params p = test::test_params(),
                       uint64_t dram_bytes = 32 << 20)
        : ddr("ddr", ddr_params(dram_bytes)), core("core0", 0, params(p, t, seed), bus) {
        bus.connect("ddr", ddr.socket);
        bus.add_region({"dram", dram, dram_bytes, mem::mem_attr::normal_cacheable, "ddr", 0, test::fabric_ns});
        bus.add_region({"page_tables", table_base, 4 << 20, mem::mem_attr::normal_cacheable, "ddr", dram_bytes,
                        test::fabric_ns});
        core.place_page_tables(table_base);
    }
    static mem::ddr_params ddr_params(uint64_t dram_bytes) {
        mem::ddr_params d = test::test_ddr();
        d.size_bytes = dram_bytes + (4 << 20);
        return d;
    }
    static cpu::core_params params(cpu::core_params p, const cpu::tlb_params& t, uint64_t seed) {
        p.tlb = t;
        p.seed = seed;
        return p;
    }
    void run(std::function<void(core_api&)> fw) {
        core.set_firmware(std::move(fw));
        sc_core::sc_start();
    }
    sc_time tlb_time() const { return core.time_in(cost::tlb); }
    sc_time cycles(double n) const { return core.cycles(n); }
};

TEST(tlb, a_page_hits_after_its_first_touch) {
    fresh_simulation();
    tlb_bench b(a53_tlb());
    sc_time first_pass;
    b.run([&](core_api& c) {
        for (uint64_t i = 0; i < 100; ++i) c.read32(dram + i * page);
        first_pass = b.tlb_time();
        for (uint64_t i = 0; i < 100; ++i) c.read32(dram + i * page + 64);
    });
    EXPECT_EQ(b.core.stats().tlb_misses, 100u);
    EXPECT_GT(first_pass, SC_ZERO_TIME);
    EXPECT_EQ(b.tlb_time(), first_pass) << "the second pass hits: no walk";
}

TEST(tlb, a_working_set_above_the_capacity_misses) {
    fresh_simulation();
    tlb_bench b(a53_tlb());
    uint64_t misses_of_512 = 0;
    b.run([&](core_api& c) {
        // 512 consecutive pages fill the 128 sets x 4 ways exactly: a second pass hits.
        for (int pass = 0; pass < 2; ++pass)
            for (uint64_t i = 0; i < 512; ++i) c.read8(dram + i * page);
        misses_of_512 = b.core.stats().tlb_misses;
        // 640 pages put five in every set: LRU evicts each before its next use.
        for (int pass = 0; pass < 2; ++pass)
            for (uint64_t i = 0; i < 640; ++i) c.read8(dram + (1024 + i) * page);
    });
    EXPECT_EQ(misses_of_512, 512u);
    EXPECT_EQ(b.core.stats().tlb_misses - misses_of_512, 2 * 640u);
}

TEST(tlb, a_walk_reads_its_descriptor_line_through_the_caches) {
    fresh_simulation();
    tlb_bench b(a53_tlb());
    const auto& p = b.core.params();
    const sc_time cold_line = b.cycles(p.l2.hit_cycles) + test::cpu_bench::line_read_ns();
    sc_time first, neighbour, next_line, again;
    b.run([&](core_api& c) {
        sc_time t = b.tlb_time();
        c.read32(dram);  // walk cache empty: the three upper levels and the leaf, each line from DDR
        first = b.tlb_time() - t;
        t = b.tlb_time();
        c.read32(dram + page);  // same leaf table (walk cache), leaf descriptor in the same line: L1 hit
        neighbour = b.tlb_time() - t;
        t = b.tlb_time();
        c.read32(dram + 8 * page);  // eight descriptors per 64-byte line: the next line, from DDR
        next_line = b.tlb_time() - t;
        t = b.tlb_time();
        c.read32(dram + 64);  // the TLB holds the page
        again = b.tlb_time() - t;
    });
    EXPECT_EQ(first, 4 * cold_line);
    EXPECT_EQ(neighbour, b.cycles(p.l1d.hit_cycles));
    EXPECT_EQ(next_line, cold_line);
    EXPECT_EQ(again, SC_ZERO_TIME);
    EXPECT_EQ(b.core.stats().tlb_misses, 3u);
    EXPECT_EQ(b.core.stats().walk_reads, 4u + 1 + 1);
    EXPECT_EQ(b.core.translation()->walk_cache_misses(), 1u);
}

// tinymembench's dependent random reads over 64 MiB (docs/models/cpu.md, "A cross-check against
// the board") on the i.MX8MP's core: nearly every read misses the 512 entries, and the walk
// cache (64 leaf tables of 2 MiB) serves every walk, so a walk is one descriptor read: more
// than an L2 hit when the descriptor line is in L2, less than the line from DDR besides.
TEST(tlb, random_reads_over_64_mib_pay_one_descriptor_read_per_read) {
    auto per_read = [](bool with_tlb, uint64_t* misses) {
        fresh_simulation();
        cpu::core_params p = test::test_params();
        p.clock_mhz = 1800;
        p.miss_overlap = 2;
        p.l2.policy = cpu::replacement::random;
        tlb_bench b(with_tlb ? a53_tlb() : cpu::tlb_params{}, 1, p, 64 << 20);
        double ns = 0;
        constexpr int reads = 200000;
        b.run([&](core_api& c) {
            uint64_t x = 1;
            auto next = [&] {  // xorshift64: a reproducible random address, 4-byte aligned
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                return dram + (x % (64 << 20)) / 4 * 4;
            };
            for (int i = 0; i < reads; ++i) c.read32(next());  // warm the caches and the TLB
            const sc_time t0 = c.now();
            const uint64_t m0 = b.core.stats().tlb_misses;
            for (int i = 0; i < reads; ++i) c.read32(next());
            ns = (c.now() - t0).to_seconds() * 1e9 / reads;
            *misses = b.core.stats().tlb_misses - m0;
        });
        if (with_tlb) {  // a walk the walk cache does not serve also reads the three upper levels
            EXPECT_EQ(b.core.stats().walk_reads,
                      b.core.stats().tlb_misses + 3 * b.core.translation()->walk_cache_misses());
        }
        return ns;
    };
    uint64_t misses = 0, none = 0;
    const double off = per_read(false, &none), on = per_read(true, &misses);
    std::printf("random read over 64 MiB: %.1f ns without the TLB, %.1f ns with it (+%.1f), %.1f%% of reads miss\n",
                off, on, on - off, 100.0 * double(misses) / 200000);
    EXPECT_EQ(none, 0u);
    EXPECT_GT(misses, 190000u) << "512 entries of 16384 pages";
    const double l2_hit = 16 / 1.8, ddr_line = 16 / 1.8 + test::fabric_ns + 90 + 4;
    EXPECT_GT(on - off, l2_hit);
    EXPECT_LT(on - off, ddr_line);
}

TEST(tlb, the_leaf_descriptors_lie_eight_pages_to_a_line_in_the_page_table_region) {
    cpu::tlb t(a53_tlb(), 1);
    std::vector<mem::region> map(2);
    map[0].base = dram, map[0].size = 32 << 20;
    map[1].base = tables, map[1].size = 4 << 20;
    // 8192 leaf descriptors (16 tables), then one table for each upper level
    EXPECT_EQ(t.lay_out(map, 1, tables), 16 * page + 3 * page);
    ASSERT_FALSE(t.hit(dram / page + 9));
    cpu::tlb::walk w = t.miss(0, dram / page + 9);
    ASSERT_EQ(w.n, 4u) << "an empty walk cache: every level";
    EXPECT_EQ(w.reads[3], tables + 9 * 8);
    EXPECT_EQ(w.reads[2], tables + 16 * page) << "the leaf tables' descriptor (table 0)";
    ASSERT_FALSE(t.hit(dram / page + 100));
    w = t.miss(0, dram / page + 100);
    ASSERT_EQ(w.n, 1u) << "leaf table 0's upper levels are in the walk cache";
    EXPECT_EQ(w.reads[0], tables + 100 * 8);
    ASSERT_FALSE(t.hit(dram / page + 600));
    w = t.miss(0, dram / page + 600);
    ASSERT_EQ(w.n, 4u) << "leaf table 1's are not";
    EXPECT_EQ(w.reads[0], tables + 18 * page) << "the root";
    EXPECT_EQ(w.reads[2], tables + 16 * page + 8);
    EXPECT_EQ(w.reads[3], tables + 600 * 8);
    EXPECT_TRUE(t.hit(dram / page + 9));
    EXPECT_FALSE(t.recent(dram / page + 9 + 512)) << "same set, another page";
    EXPECT_TRUE(t.recent(dram / page + 9));
}

TEST(tlb, with_no_entries_translation_costs_nothing) {
    fresh_simulation();
    tlb_bench off(cpu::tlb_params{});
    off.run([&](core_api& c) {
        for (uint64_t i = 0; i < 1000; ++i) c.read8(dram + i * page);
    });
    EXPECT_EQ(off.tlb_time(), SC_ZERO_TIME);
    EXPECT_EQ(off.core.stats().tlb_misses, 0u);
    EXPECT_EQ(off.core.translation(), nullptr);
}

// Random replacement draws from the seed's stream: the same seed, the same misses and times.
TEST(tlb, runs_are_deterministic) {
    auto once = [](uint64_t seed) {
        fresh_simulation();
        cpu::tlb_params t = a53_tlb();
        t.policy = cpu::replacement::random;
        tlb_bench b(t, seed);
        sc_time end;
        b.run([&](core_api& c) {
            for (int pass = 0; pass < 3; ++pass)
                for (uint64_t i = 0; i < 700; ++i) c.read8(dram + ((i * 37) % 700) * page);
            end = c.now();
        });
        return std::make_pair(b.core.stats().tlb_misses, end);
    };
    const auto a = once(1), b = once(1), other = once(2);
    EXPECT_EQ(a, b);
    EXPECT_GT(a.first, 700u) << "a working set above the capacity misses after the first pass too";
    EXPECT_NE(a.first, other.first) << "another seed, another replacement stream";
}

TEST(tlb, geometry_the_schema_cannot_check_is_refused) {
    cpu::tlb_params t = a53_tlb();
    t.entries = 500;
    EXPECT_THROW(cpu::check_tlb_params(t), std::invalid_argument);
    t = a53_tlb();
    t.page_bytes = 6000;
    EXPECT_THROW(cpu::check_tlb_params(t), std::invalid_argument);
    t = a53_tlb();
    t.levels = 1;  // a one-level walk has no upper levels to cache
    EXPECT_THROW(cpu::check_tlb_params(t), std::invalid_argument);
    t.walk_cache_entries = 0;
    EXPECT_NO_THROW(cpu::check_tlb_params(t));
}

}  // namespace
}  // namespace fecsim
