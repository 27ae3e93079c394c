// Core timing model: cache hit/miss latencies, write-backs, maintenance costs by line state,
// barriers, uncached and MMIO paths, quantum sync, interrupts, attribution, platform profiles.
#include "tests/cpu/cpu_bench.h"

#include "config/config.h"
#include "models/process.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <random>
#include <set>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using test::cpu_bench;
using test::dram_base;
using cpu::core_api;
using cpu::cost;

// Runs `fw` as the core's firmware to completion.
void run(cpu_bench& b, std::function<void(core_api&)> fw) {
    b.core.set_firmware(std::move(fw));
    sc_core::sc_start();
}

TEST(core, exec_charges_instructions_at_the_cpi) {
    fresh_simulation();
    cpu_bench b;
    sc_time took;
    run(b, [&](core_api& c) {
        const sc_time t0 = c.now();
        c.exec(1000);
        took = c.now() - t0;
    });
    EXPECT_EQ(took, b.cycles(1000 * 1.5));
    EXPECT_EQ(b.core.time_in(cost::compute), took);
}

TEST(core, hit_and_miss_latencies_are_the_configured_ones) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    sc_time cold, l1_hit, l2_hit;
    run(b, [&](core_api& c) {
        sc_time t = c.now();
        c.read32(dram_base + 0x100);  // L1 and L2 miss: L2 lookup + a line from DDR
        cold = c.now() - t;
        t = c.now();
        c.read32(dram_base + 0x104);  // same line
        l1_hit = c.now() - t;
        // Evict the line from the 4-way L1 set (stride = sets x line), keep it in the 16-way L2.
        const uint64_t stride = p.l1d.size_bytes / p.l1d.ways;
        for (int w = 1; w <= 4; ++w) c.read32(dram_base + 0x100 + w * stride);
        t = c.now();
        c.read32(dram_base + 0x108);
        l2_hit = c.now() - t;
    });
    EXPECT_EQ(cold, b.cycles(p.l2.hit_cycles) + cpu_bench::line_read_ns());
    EXPECT_EQ(l1_hit, b.cycles(p.l1d.hit_cycles));
    EXPECT_EQ(l2_hit, b.cycles(p.l2.hit_cycles));
    EXPECT_EQ(b.core.stats().l1_hits, 1u);
    EXPECT_EQ(b.core.stats().l2_hits, 1u);
    EXPECT_EQ(b.core.stats().l2_misses, 5u);
    EXPECT_EQ(b.dram.stats().reads, 5u);
}

TEST(core, loads_and_stores_move_real_bytes) {
    fresh_simulation();
    cpu_bench b;
    uint8_t buf[200];
    for (int i = 0; i < 200; ++i) buf[i] = static_cast<uint8_t>(i * 7);
    uint8_t back[200] = {};
    uint32_t v32 = 0, nc = 0;
    run(b, [&](core_api& c) {
        c.write(dram_base + 0x1003, buf, sizeof buf);  // unaligned, spans 4 lines
        c.copy(dram_base + 0x2000, dram_base + 0x1003, sizeof buf);
        c.read(dram_base + 0x2000, back, sizeof back);
        c.write32(dram_base + 0x3000, 0xdeadbeef);
        v32 = c.read32(dram_base + 0x3000);
        c.write32(test::nc_base + 0x40, 0xcafef00d);
        nc = c.read32(test::nc_base + 0x40);
    });
    EXPECT_EQ(0, std::memcmp(buf, back, sizeof buf));
    EXPECT_EQ(v32, 0xdeadbeefu);
    EXPECT_EQ(nc, 0xcafef00du);
    uint8_t in_ddr[200];
    b.dram.peek(0x1003, in_ddr, sizeof in_ddr);  // bytes live in DDR whatever the cache state
    EXPECT_EQ(0, std::memcmp(buf, in_ddr, sizeof buf));
}

// The bytes go through DMI ranges found via a small direct-mapped memo: accesses alternating
// over more 64 KB granules than it holds (some sharing a slot), each crossing into the next
// granule, land where DDR has them.
TEST(core, loads_and_stores_across_many_dmi_granules_move_real_bytes) {
    fresh_simulation();
    cpu_bench b;
    constexpr int n = 40;
    const uint64_t granule = 64 * 1024;
    bool equal = true;
    run(b, [&](core_api& c) {
        for (int round = 0; round < 3; ++round)
            for (int i = 0; i < n; ++i) {
                const uint64_t a = dram_base + uint64_t(i * 7 % n) * granule + granule - 6;  // 6 bytes in it, 2 in the next
                const uint64_t v = 0x0101010101010101ull * uint64_t(i + 1) + uint64_t(round);
                c.write(a, &v, 8);
                uint64_t r = 0;
                c.read(a, &r, 8);
                equal = equal && r == v;
            }
    });
    EXPECT_TRUE(equal);
    for (int i = 0; i < n; ++i) {
        uint64_t v = 0;
        b.dram.peek(uint64_t(i * 7 % n) * granule + granule - 6, &v, 8);
        EXPECT_EQ(v, 0x0101010101010101ull * uint64_t(i + 1) + 2) << i;
    }
}

TEST(core, prefetch_starts_a_fill_that_a_later_access_waits_for_only_partly) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    const sc_time fill = b.cycles(p.l2.hit_cycles) + cpu_bench::line_read_ns();
    const sc_time work = b.cycles(40 * p.cpi);  // exec(40) between prefetch and use
    sc_time issue, early, late, noncacheable;
    run(b, [&](core_api& c) {
        sc_time t = c.now();
        c.prefetch(dram_base + 0x1000);  // returns at once
        issue = c.now() - t;
        c.exec(40);
        t = c.now();
        c.read32(dram_base + 0x1008);  // the fill is still under way: wait for the rest
        early = c.now() - t;

        c.prefetch(dram_base + 0x2000);
        c.exec(1000);  // longer than the fill
        t = c.now();
        c.read32(dram_base + 0x2000);
        late = c.now() - t;

        t = c.now();
        c.prefetch(test::nc_base);  // non-cacheable memory: a no-op, as PRFM is there
        c.prefetch(0x10);           // unmapped: a hint never faults
        noncacheable = c.now() - t;
    });
    ASSERT_LT(work, fill);
    EXPECT_EQ(issue, sc_time(0, SC_NS));
    EXPECT_EQ(early, fill - work);  // completes when the fill does (the hit latency overlaps it)
    EXPECT_EQ(late, b.cycles(p.l1d.hit_cycles));
    EXPECT_EQ(noncacheable, sc_time(0, SC_NS));
    EXPECT_EQ(b.core.stats().prefetches, 2u);
    EXPECT_EQ(b.core.stats().l1_misses, 0u);  // both reads hit the prefetched lines
    EXPECT_EQ(b.dram.stats().reads, 2u);
}

TEST(core, misses_overlap_up_to_miss_overlap_and_queue_on_the_ddr_bus) {
    auto cost_of_bulk_read = [](uint32_t overlap) {
        fresh_simulation();
        auto p = test::test_params();
        p.miss_overlap = overlap;
        cpu_bench b(p);
        sc_time took;
        run(b, [&](core_api& c) {
            const sc_time t = c.now();
            c.touch(dram_base, 8 * 64, false);
            took = c.now() - t;
        });
        return took;
    };
    const auto one = cost_of_bulk_read(1), four = cost_of_bulk_read(4);
    const sc_time fill = sc_time(16, SC_NS) + cpu_bench::line_read_ns();
    EXPECT_EQ(one, 8 * fill);
    // Four fills issued together: the last of each group waits 3 bursts (4 ns each) on the bus.
    EXPECT_EQ(four, 2 * (fill + sc_time(3 * 4, SC_NS)));
}

TEST(core, dirty_victims_are_written_back_to_ddr) {
    fresh_simulation();
    auto p = test::test_params();
    p.l1d = {1024, 2, 3, cpu::replacement::lru};   // 8 sets
    p.l2 = {4096, 4, 16, cpu::replacement::lru};   // 16 sets
    cpu_bench b(p);
    const uint64_t stride = 16 * 64;               // same L1 and L2 set
    uint8_t data[64];
    for (int i = 0; i < 64; ++i) data[i] = static_cast<uint8_t>(0xa0 + i);
    run(b, [&](core_api& c) {
        for (int i = 0; i < 4; ++i) c.write(dram_base + i * stride, data, 64);
        EXPECT_EQ(b.dram.stats().writes, 0u);  // 4 dirty lines fit the 4-way L2 set
        c.write32(dram_base + 4 * stride, 1);   // the 5th evicts the LRU dirty line
    });
    EXPECT_EQ(b.core.stats().l2_writebacks, 1u);
    EXPECT_EQ(b.core.stats().l1_writebacks, 3u);  // 2-way L1: lines 0..2 went to L2 dirty
    EXPECT_EQ(b.dram.stats().writes, 1u);
    EXPECT_EQ(b.dram.stats().bytes_written, 64u);
    uint8_t in_ddr[64];
    b.dram.peek(0, in_ddr, 64);
    EXPECT_EQ(0, std::memcmp(data, in_ddr, 64));  // the write-back does not alter the data
}

TEST(core, the_seed_drives_random_replacement) {
    // Six lines of one 4-way set, visited round and round: which way a random policy evicts
    // decides every later hit. The L2 stream once ignored the seed.
    auto misses = [](uint64_t seed) {
        fresh_simulation();
        auto p = test::test_params();
        p.l1d = {1024, 2, 3, cpu::replacement::lru};
        p.l2 = {4096, 4, 16, cpu::replacement::random};
        p.seed = seed;
        cpu_bench b(p);
        run(b, [&](core_api& c) {
            for (int round = 0; round < 50; ++round)
                for (int i = 0; i < 6; ++i) (void)c.read32(dram_base + i * 16 * 64);
        });
        return b.core.stats().l2_misses;
    };
    const uint64_t one = misses(1);
    EXPECT_EQ(misses(1), one);  // deterministic
    std::set<uint64_t> counts{one, misses(2), misses(3), misses(4)};
    EXPECT_GT(counts.size(), 1u);
}

TEST(core, maintenance_costs_and_semantics_by_line_state) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    sc_time absent, clean, dirty, dirty_dsb, ivac_dirty;
    bool held_after_clean = false, held_after_inval = true;
    run(b, [&](core_api& c) {
        sc_time t = c.now();
        c.dc_cvac(dram_base + 0x40);  // nobody holds it
        absent = c.now() - t;
        c.read32(dram_base + 0x80);
        t = c.now();
        c.dc_cvac(dram_base + 0x80);
        clean = c.now() - t;
        c.write32(dram_base + 0xc0, 5);
        c.dsb();
        t = c.now();
        c.dc_cvac(dram_base + 0xc0);
        dirty = c.now() - t;
        c.dsb();
        dirty_dsb = c.now() - t;
        held_after_clean = b.core.l1d().find((dram_base + 0xc0) >> 6) != nullptr;
        c.write32(dram_base + 0x100, 6);
        t = c.now();
        c.dc_civac(dram_base + 0x100);
        c.dc_ivac(dram_base + 0x140);
        held_after_inval = b.core.l1d().find((dram_base + 0x100) >> 6) || b.core.l2().find((dram_base + 0x100) >> 6);
        c.write32(dram_base + 0x180, 7);
        t = c.now();
        c.dc_ivac(dram_base + 0x180);  // discards the dirty copy, no write-back
        ivac_dirty = c.now() - t;
    });
    EXPECT_EQ(absent, b.cycles(p.maint_absent_cycles));
    EXPECT_EQ(clean, b.cycles(p.maint_clean_cycles));
    EXPECT_EQ(dirty, b.cycles(p.maint_dirty_cycles));  // the write-back completes in the background...
    // ...and DSB waits for it: issued after the op, fabric + DDR write latency + one burst.
    EXPECT_EQ(dirty_dsb, b.cycles(p.maint_dirty_cycles) + cpu_bench::line_write_ns());
    EXPECT_TRUE(held_after_clean);  // a clean keeps the line
    EXPECT_FALSE(held_after_inval);
    EXPECT_EQ(ivac_dirty, b.cycles(p.maint_clean_cycles));
    EXPECT_EQ(b.core.stats().maint_writebacks, 2u);  // cvac + civac of dirty lines
    EXPECT_EQ(b.core.stats().discarded_dirty, 1u);
    EXPECT_EQ(b.dram.stats().writes, 2u);
}

// arm64 dcache_clean_poc over [start, end): align down, one DC CVAC per line, one DSB SY.
void dcache_clean_poc(core_api& c, uint64_t start, uint64_t end) {
    const uint64_t line = c.cache_line_bytes();
    uint64_t a = start & ~(line - 1);
    do {
        c.dc_cvac(a);
        a += line;
    } while (a < end);
    c.dsb();
}

TEST(core, full_page_pool_sync_of_3520_bytes_is_55_line_ops_and_one_dsb) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    const uint64_t page = dram_base + 0x10000, start = page + 256, end = start + 3520;
    sc_time untouched, all_dirty;
    run(b, [&](core_api& c) {
        sc_time t = c.now();
        dcache_clean_poc(c, start, end);
        untouched = c.now() - t;
        c.touch(start, 3520, true);  // the whole buffer dirty
        c.dsb();
        t = c.now();
        dcache_clean_poc(c, start, end);
        all_dirty = c.now() - t;
    });
    EXPECT_EQ(b.core.stats().line_ops, 110u);
    EXPECT_EQ(b.core.stats().dsbs, 3u);
    EXPECT_EQ(untouched, 55 * b.cycles(p.maint_absent_cycles) + b.cycles(p.dsb_cycles));
    // 55 write-backs issued one per op (16 ns apart, each 4 ns on the bus: no queueing); the DSB
    // waits for the last one.
    EXPECT_EQ(all_dirty, 55 * b.cycles(p.maint_dirty_cycles) + cpu_bench::line_write_ns());
    EXPECT_EQ(b.dram.stats().writes, 55u);
    EXPECT_NEAR(b.core.time_in(cost::cache_maint).to_seconds() * 1e9,
                55 * (10 + 16) + (44 - 20), 1e-6);  // the DSB's own cost is `barrier`
}

TEST(core, uncached_reads_stall_and_posted_writes_fill_the_write_buffer) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    sc_time rd, posted, fifth, drain;
    run(b, [&](core_api& c) {
        sc_time t = c.now();
        c.read32(test::nc_base);
        rd = c.now() - t;
        t = c.now();
        c.write32(test::nc_base + 0x100, 1);
        posted = c.now() - t;
        for (int i = 1; i < 4; ++i) c.write32(test::nc_base + 0x100 + 64 * i, 1);
        t = c.now();
        c.write32(test::nc_base + 0x200, 1);  // buffer full: waits for the oldest
        fifth = c.now() - t;
        t = c.now();
        c.dsb();
        drain = c.now() - t;
    });
    EXPECT_EQ(rd, cpu_bench::line_read_ns());
    EXPECT_EQ(posted, b.cycles(p.posted_write_cycles));
    // The oldest is acknowledged write_ack_ns after it was posted; the 5th comes 4 posts later.
    EXPECT_EQ(fifth, cpu_bench::nc_write_ack() - 4 * b.cycles(p.posted_write_cycles) + b.cycles(p.posted_write_cycles));
    EXPECT_GT(drain, b.cycles(p.dsb_cycles));
    EXPECT_EQ(b.core.stats().write_buffer_stalls, 1u);
    EXPECT_EQ(b.core.time_in(cost::uncached), rd + 4 * posted + fifth);
}

// An uncached access is one burst per line it touches: within a line (a descriptor field, any
// size or alignment) one burst and one write-buffer entry, across a line boundary one of each
// per line, the bytes landing where they belong either way; a touch() likewise. Each access is
// counted once (uncached_reads / uncached_writes) however many lines it spans.
TEST(core, uncached_accesses_take_one_burst_per_line_they_touch) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    const uint64_t line = test::nc_base + 0x400;  // line-aligned
    uint64_t reads_within = 0, reads_across = 0, writes_within = 0, writes_across = 0;
    uint64_t touch_reads = 0, touch_writes = 0;
    sc_time post_within, post_across, read_within, read_across;
    uint8_t got[8] = {}, odd[3] = {};
    run(b, [&](core_api& c) {
        const uint8_t out[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        auto w0 = b.dram.stats().writes;
        sc_time t = c.now();
        c.write(line + 61, out, 3);  // odd-sized, unaligned, ends on the line's last byte
        post_within = c.now() - t;
        writes_within = b.dram.stats().writes - w0;
        w0 = b.dram.stats().writes;
        t = c.now();
        c.write(line + 64 + 60, out, 8);  // 4 bytes in one line, 4 in the next
        post_across = c.now() - t;
        writes_across = b.dram.stats().writes - w0;
        c.dsb();
        auto r0 = b.dram.stats().reads;
        t = c.now();
        c.read(line + 61, odd, 3);
        read_within = c.now() - t;
        reads_within = b.dram.stats().reads - r0;
        r0 = b.dram.stats().reads;
        t = c.now();
        c.read(line + 64 + 60, got, 8);
        read_across = c.now() - t;
        reads_across = b.dram.stats().reads - r0;
        r0 = b.dram.stats().reads;
        w0 = b.dram.stats().writes;
        c.touch(line + 64 + 60, 8, false);  // timing without data: bursts and counts as above
        c.touch(line + 64 + 60, 8, true);
        touch_reads = b.dram.stats().reads - r0;
        touch_writes = b.dram.stats().writes - w0;
    });
    EXPECT_EQ(writes_within, 1u);
    EXPECT_EQ(writes_across, 2u);
    EXPECT_EQ(post_within, b.cycles(p.posted_write_cycles));
    EXPECT_EQ(post_across, 2 * b.cycles(p.posted_write_cycles));  // two entries, the buffer not full
    EXPECT_EQ(reads_within, 1u);
    EXPECT_EQ(reads_across, 2u);
    EXPECT_EQ(read_across, 2 * read_within);  // each burst stalls for its own round trip
    for (int i = 0; i < 3; ++i) EXPECT_EQ(odd[i], i + 1);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], i + 1);
    EXPECT_EQ(touch_reads, 2u);
    EXPECT_EQ(touch_writes, 2u);
    EXPECT_EQ(b.core.stats().uncached_reads, 3u);  // one per access, whatever its bursts
    EXPECT_EQ(b.core.stats().uncached_writes, 3u);
}

// DMB waits until every posted write is acknowledged (write_ack_ns of its region), so a store
// after it cannot overtake them; with nothing outstanding it costs its issue cycles only.
TEST(core, dmb_waits_for_posted_writes_to_be_acknowledged) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    sc_time idle_dmb, nc_dmb, reg_dsb, release;
    run(b, [&](core_api& c) {
        sc_time t = c.now();
        c.dmb();
        idle_dmb = c.now() - t;
        c.write32(test::nc_base, 1);
        t = c.now();
        c.dmb();
        nc_dmb = c.now() - t;
        // A register write completes when the interconnect acknowledges it, not after the
        // device read round trip (regs_fabric_ns + reg_latency_ns).
        c.write32(test::regs_base + 0x14, 1);
        t = c.now();
        c.dsb();
        reg_dsb = c.now() - t;
        // A store-release (spin_unlock) orders like a DMB.
        c.write32(test::nc_base + 64, 1);
        t = c.now();
        c.store_release(test::dram_base, 4);
        release = c.now() - t;
    });
    EXPECT_EQ(idle_dmb, b.cycles(p.dmb_cycles));
    EXPECT_EQ(nc_dmb, cpu_bench::nc_write_ack() - b.cycles(p.posted_write_cycles));
    EXPECT_EQ(reg_dsb, cpu_bench::ns(test::regs_write_ack_ns) - b.cycles(p.posted_write_cycles));
    EXPECT_GE(release, cpu_bench::nc_write_ack() - b.cycles(p.posted_write_cycles));
    EXPECT_EQ(b.core.stats().releases, 1u);
}

// Erratum 855873 (ENDCCASCI): DC CVAC runs as DC CIVAC, so the cleaned line is gone and the next
// read misses; without the workaround the clean keeps the line.
TEST(core, erratum_855873_turns_a_clean_into_clean_and_invalidate) {
    for (bool erratum : {false, true}) {
        fresh_simulation();
        auto params = test::test_params();
        params.erratum_855873 = erratum;
        cpu_bench b(params);
        sc_time reread;
        run(b, [&](core_api& c) {
            c.write32(test::dram_base + 0x40, 1);  // dirty in L1
            c.dc_cvac(test::dram_base + 0x40);
            c.dsb();
            const sc_time t = c.now();
            c.read32(test::dram_base + 0x40);
            reread = c.now() - t;
        });
        EXPECT_EQ(b.core.stats().maint_writebacks, 1u);
        EXPECT_EQ(b.core.l1d().find((test::dram_base + 0x40) >> 6) != nullptr, true);  // refilled by the read
        if (erratum) EXPECT_EQ(reread, cpu_bench::line_read_ns() + b.cycles(b.core.params().l2.hit_cycles)) << "misses to DDR";
        else EXPECT_EQ(reread, b.cycles(b.core.params().l1d.hit_cycles)) << "L1 hit";
    }
}

// An MMIO access reaches the device at the core's time (the annotated delay carries it); the
// core syncs first only when another process is due by then (docs/performance.md).
TEST(core, mmio_reaches_the_device_at_the_core_time_without_a_sync_while_nothing_else_is_due) {
    fresh_simulation();
    cpu_bench b;
    sc_time before_write, before_read, read_took;
    uint32_t v = 0;
    run(b, [&](core_api& c) {
        c.exec(400);  // 600 ns of local time, below the 1 us quantum: not yet synced
        before_write = c.now();
        c.write32(test::regs_base + 0x14, 0x01000000);  // e.g. RDAR
        EXPECT_EQ(sc_core::sc_time_stamp(), SC_ZERO_TIME);  // no sync
        c.exec(100);
        before_read = c.now();
        v = c.read32(test::regs_base + 0x4);
        EXPECT_EQ(sc_core::sc_time_stamp(), SC_ZERO_TIME);
        read_took = c.now() - before_read;
    });
    ASSERT_EQ(b.dev.log.size(), 2u);
    EXPECT_TRUE(b.dev.log[0].write);
    EXPECT_EQ(b.dev.log[0].addr, 0x14u);
    EXPECT_EQ(b.dev.log[0].value, 0x01000000u);
    EXPECT_EQ(b.dev.log[0].at, before_write + sc_time(test::regs_fabric_ns, SC_NS));
    EXPECT_EQ(b.dev.log[1].at, before_read + sc_time(test::regs_fabric_ns, SC_NS));
    EXPECT_EQ(read_took, sc_time(test::regs_fabric_ns + test::reg_latency_ns, SC_NS));
    EXPECT_EQ(v, 0x1234u);
    EXPECT_EQ(b.core.stats().mmio_writes, 1u);
    EXPECT_EQ(b.core.stats().mmio_reads, 1u);
}

TEST(core, mmio_syncs_first_when_another_process_is_due_by_the_core_time) {
    for (bool write : {true, false}) {
        fresh_simulation();
        cpu_bench b;
        bool flag = false, flag_at_access = false;
        sc_core::sc_event ev;
        spawn_method("set_flag", ev, [&] { flag = true; });
        ev.notify(sc_time(300, SC_NS));
        sc_time before, synced_to;
        run(b, [&](core_api& c) {
            c.exec(400);  // 600 ns: the event at 300 ns is due
            before = c.now();
            if (write) c.write32(test::regs_base + 0x14, 0);
            else c.read32(test::regs_base + 0x4);
            flag_at_access = flag;
            synced_to = sc_core::sc_time_stamp();
        });
        EXPECT_TRUE(flag_at_access) << "the process due at 300 ns ran before the device saw the access";
        EXPECT_EQ(synced_to, before);
        ASSERT_EQ(b.dev.log.size(), 1u);
        EXPECT_EQ(b.dev.log[0].at, before + sc_time(test::regs_fabric_ns, SC_NS));
    }
}

// Run-ahead (docs/performance.md): a quantum sync point is passed without syncing while no
// other process is due by the core's time; it is taken once something is.
TEST(core, runs_ahead_while_nothing_else_is_due) {
    fresh_simulation();
    cpu_bench b;
    sc_time worst;
    run(b, [&](core_api& c) {
        for (int i = 0; i < 1000; ++i) {
            c.exec(7);
            worst = std::max(worst, c.now() - sc_core::sc_time_stamp());
        }
    });
    EXPECT_EQ(worst, b.cycles(1000 * 7 * 1.5));  // never synced before the end
    EXPECT_EQ(sc_core::sc_time_stamp(), b.cycles(1000 * 7 * 1.5));
}

TEST(core, run_ahead_stops_at_the_first_sync_point_after_a_pending_event) {
    fresh_simulation();
    cpu_bench b;
    bool flag = false;
    sc_core::sc_event ev;
    spawn_method("set_flag", ev, [&] { flag = true; });
    ev.notify(sc_time(3300, SC_NS));
    sc_time synced_before_event = sc_time(1, sc_core::SC_SEC), seen_at;
    run(b, [&](core_api& c) {
        while (!flag) {
            c.exec(7);  // 10.5 ns
            if (c.now() >= sc_time(3200, SC_NS) && synced_before_event > c.now()) synced_before_event = sc_core::sc_time_stamp();
        }
        seen_at = c.now();
    });
    EXPECT_EQ(synced_before_event, SC_ZERO_TIME);  // the sync points at 1, 2 and 3 us were passed
    // The quantum (1 us) sync point after the event is 4 us: the first step ending there syncs.
    EXPECT_GE(seen_at, sc_time(4000, SC_NS));
    EXPECT_LT(seen_at, sc_time(4000 + 10.5, SC_NS));
}

TEST(core, run_ahead_stops_where_the_simulation_run_ends) {
    fresh_simulation();
    cpu_bench b;
    int steps = 0;
    b.core.set_firmware([&](core_api& c) {
        for (;;) c.exec(7), ++steps;
    });
    run_for(sc_time(2, sc_core::SC_US));
    // The step in progress (steps + 1) is the first to end at or after 2 us: it synced there.
    const sc_time core_time = b.cycles((steps + 1) * 7 * 1.5);
    EXPECT_GE(core_time, sc_time(2, sc_core::SC_US));
    EXPECT_LT(core_time, sc_time(2000 + 10.5, SC_NS));
}

// A decision to sync reads the kernel's next activity again only after a change other than a
// timed notification (docs/performance.md, "Third round: the core side"); a timed notification
// the core's own thread makes (as a model its access reaches would) after a decision that found
// nothing due is still seen at the first sync point after it, and a cancelled one is not.
TEST(core, an_event_notified_while_the_core_runs_ahead_is_seen_at_the_next_sync_point) {
    fresh_simulation();
    cpu_bench b;
    bool flag = false;
    timed_event ev;
    spawn_method("set_flag", ev.event(), [&] { flag = true; });
    sc_time passed, seen_at;
    run(b, [&](core_api& c) {
        while (c.now() < sc_time(1200, SC_NS)) c.exec(7);  // the sync point at 1 us found nothing due
        passed = sc_core::sc_time_stamp();
        ev.notify(sc_time(1300, SC_NS));
        for (int i = 0; i < 1000 && !flag; ++i) c.exec(7);
        seen_at = c.now();
    });
    EXPECT_EQ(passed, SC_ZERO_TIME);
    EXPECT_TRUE(flag);
    // The quantum (1 us) sync point after the event is 2 us: the first step ending there syncs.
    EXPECT_GE(seen_at, sc_time(2000, SC_NS));
    EXPECT_LT(seen_at, sc_time(2000 + 10.5, SC_NS));
}

TEST(core, an_event_cancelled_while_the_core_runs_ahead_is_not_synced_for) {
    fresh_simulation();
    cpu_bench b;
    timed_event ev;
    spawn_method("never", ev.event(), [] {});
    ev.notify(sc_time(1500, SC_NS));
    sc_time synced_to;
    run(b, [&](core_api& c) {
        while (c.now() < sc_time(1200, SC_NS)) c.exec(7);  // the sync point at 1 us: 1.5 us is later
        ev.cancel();
        while (c.now() < sc_time(3200, SC_NS)) c.exec(7);  // the points at 2 and 3 us: nothing due
        synced_to = sc_core::sc_time_stamp();
    });
    EXPECT_EQ(synced_to, SC_ZERO_TIME);
}

TEST(core, interrupt_wakes_an_idle_core_after_the_entry_cost) {
    fresh_simulation();
    cpu_bench b;
    const auto& p = b.core.params();
    int line = -2, polled = -2;
    sc_time woke, after_return;
    sc_core::sc_spawn([&] {
        sc_core::wait(3, sc_core::SC_US);
        b.irq_sig[0].write(true);  // line 0 is disabled: must not wake the core
        sc_core::wait(2, sc_core::SC_US);
        b.irq_sig[1].write(true);
    });
    run(b, [&](core_api& c) {
        c.irq_enable(1, true, 0x80);
        line = c.wait_for_irq();
        woke = c.now();
        polled = c.poll_irq();  // line 1 is active, line 0 disabled
        c.irq_return();
        after_return = c.now();
    });
    EXPECT_EQ(line, 1);
    EXPECT_EQ(polled, -1);
    EXPECT_EQ(woke, sc_time(5, sc_core::SC_US) + b.cycles(p.irq_entry_cycles));
    EXPECT_EQ(after_return, woke + b.cycles(p.irq_exit_cycles));
    EXPECT_EQ(b.core.time_in(cost::idle), sc_time(5, sc_core::SC_US));
    EXPECT_EQ(b.core.time_in(cost::irq), b.cycles(p.irq_entry_cycles + p.irq_exit_cycles));
}

TEST(core, highest_priority_pending_line_is_taken_first) {
    fresh_simulation();
    cpu_bench b;
    std::vector<int> order;
    sc_core::sc_spawn([&] {
        sc_core::wait(1, sc_core::SC_US);
        b.irq_sig[0].write(true);
        b.irq_sig[1].write(true);
    });
    run(b, [&](core_api& c) {
        c.irq_enable(0, true, 0xa0);
        c.irq_enable(1, true, 0x20);  // lower value wins, as on a GIC
        order.push_back(c.wait_for_irq());
        order.push_back(c.poll_irq());
        c.irq_return();
        c.irq_return();
        EXPECT_THROW(c.irq_enable(9, true), std::out_of_range);
    });
    EXPECT_EQ(order, (std::vector<int>{1, 0}));
}

TEST(core, charges_are_attributed_to_categories_and_functions) {
    fresh_simulation();
    cpu_bench b;
    sc_core::sc_spawn([&] {
        sc_core::wait(10, sc_core::SC_US);
        b.irq_sig[0].write(true);
    });
    run(b, [&](core_api& c) {
        c.irq_enable(0, true);
        {
            cpu::scope s(c, "fec_enet_rx_queue");
            c.exec(100);
            c.read32(dram_base);
            {
                cpu::scope inner(c, "page_pool_put_page");
                c.dc_cvac(dram_base);
                c.dsb();
            }
        }
        c.wait_for_irq();
        c.irq_return();
    });
    nlohmann::json j;
    b.core.report(j);
    const auto& core0 = j.at("cpu").at("core0");
    const auto& rx = core0.at("functions").at("fec_enet_rx_queue");
    EXPECT_EQ(rx.at("calls"), 1);
    EXPECT_DOUBLE_EQ(rx.at("time_ns").at("compute").get<double>(), 150 + 0);  // 100 x 1.5, no L1 hit
    EXPECT_DOUBLE_EQ(rx.at("time_ns").at("cache_miss").get<double>(), 16 + 114);
    const auto& pp = core0.at("functions").at("page_pool_put_page");
    EXPECT_DOUBLE_EQ(pp.at("time_ns").at("cache_maint").get<double>(), 12);
    EXPECT_DOUBLE_EQ(pp.at("time_ns").at("barrier").get<double>(), 20);
    EXPECT_EQ(core0.at("functions").count("(none)"), 1u);  // idle and irq outside any function
    const double busy = 150 + 130 + 12 + 20 + 900;
    EXPECT_DOUBLE_EQ(core0.at("time_ns").at("idle").get<double>(), 10000 - (150 + 130 + 12 + 20));
    EXPECT_NEAR(core0.at("busy_fraction").get<double>(), busy / (10000 + 900), 1e-12);
    b.core.reset_stats();
    nlohmann::json k;
    b.core.report(k);
    EXPECT_EQ(k["cpu"]["core0"]["time_ns"]["compute"], 0.0);
    EXPECT_TRUE(k["cpu"]["core0"]["functions"].empty());
}

TEST(core, unmapped_access_is_a_clear_error) {
    fresh_simulation();
    cpu_bench b;
    b.core.set_firmware([](core_api& c) {
        cpu::scope s(c, "fec_enet_tx_queue");
        c.read32(0x10000000);
    });
    try {
        sc_core::sc_start();
        FAIL() << "no error";
    } catch (const std::exception& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("unmapped address 0x10000000 in fec_enet_tx_queue"), std::string::npos) << m;
    }
}

TEST(core, bad_geometry_is_rejected) {
    fresh_simulation();
    auto p = test::test_params();
    p.l1d.size_bytes = 3 * 1024;  // 12 sets
    EXPECT_THROW(cpu_bench b(p), std::invalid_argument);
}

// find() scans four ways per step and the rest one by one: every way of a set is found, at any
// associativity the schema admits, and an invalidated or absent line is not.
TEST(cache, finds_every_way_of_a_set_at_any_associativity) {
    for (uint32_t ways : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 16u, 32u}) {
        const uint32_t sets = 8;
        cpu::cache c("c", {sets * ways * 64, ways, 1, cpu::replacement::lru}, 64, 1);
        cpu::cache::line victim;
        std::vector<cpu::cache::line*> placed;
        for (uint64_t w = 0; w < ways; ++w) placed.push_back(c.allocate(3 + w * sets, victim));  // all in set 3
        for (uint64_t w = 0; w < ways; ++w) EXPECT_EQ(c.find(3 + w * sets), placed[w]) << ways << " ways, way " << w;
        EXPECT_EQ(c.find(3 + ways * sets), nullptr) << ways << " ways";
        c.invalidate(placed[ways - 1]);  // the tag stays, the line is gone
        EXPECT_EQ(c.find(3 + (ways - 1) * sets), nullptr) << ways << " ways";
    }
}

// find() answers "absent" from the held-lines count before it looks at the ways: against a set of
// the lines the cache holds (kept from allocate's victims and invalidate), over random fills and
// invalidations of lines that share sets and count slots (addresses 2^13 lines apart share both).
TEST(cache, finds_what_it_holds_through_the_held_lines_count) {
    for (auto policy : {cpu::replacement::lru, cpu::replacement::random}) {
        cpu::cache c("c", {16 * 4 * 64, 4, 1, policy}, 64, 7);  // 16 sets, 2048 count slots
        std::set<uint64_t> held;
        std::mt19937_64 rng(3);
        const auto any_line = [&] { return (rng() % 48) + (rng() % 4) * (uint64_t{1} << 13); };
        for (int i = 0; i < 20000; ++i) {
            const uint64_t la = any_line();
            cpu::cache::line* e = c.find(la);
            ASSERT_EQ(e != nullptr, held.count(la) == 1) << "step " << i << " line " << la;
            if (e && rng() % 3 == 0) {
                c.invalidate(e);
                held.erase(la);
            } else if (!e) {
                cpu::cache::line victim;
                c.allocate(la, victim);
                if (victim.flags & cpu::cache::valid) held.erase(victim.tag);
                held.insert(la);
            }
            if (i % 5000 == 4999) {
                c.invalidate_all();
                held.clear();
            }
        }
        EXPECT_EQ(c.valid_lines(), held.size());
    }
}

// allocate() evicts only from a full set: with a way free (after invalidations, or
// invalidate_all) it takes that way and reports no victim, whatever the count of valid ways per
// set it keeps says (a count off by one either way fails this or the test above).
TEST(cache, allocate_evicts_only_from_a_full_set) {
    for (auto policy : {cpu::replacement::lru, cpu::replacement::random}) {
        const uint64_t sets = 4, ways = 4;
        cpu::cache c("c", {uint32_t(sets * ways * 64), uint32_t(ways), 1, policy}, 64, 5);
        std::set<uint64_t> held;
        std::mt19937_64 rng(11);
        const auto in_set = [&](uint64_t s) {
            return std::count_if(held.begin(), held.end(), [&](uint64_t la) { return la % sets == s; });
        };
        for (int i = 0; i < 20000; ++i) {
            const uint64_t la = rng() % 64;  // 16 lines per set
            if (cpu::cache::line* e = c.find(la)) {
                if (rng() % 2) c.invalidate(e), held.erase(la);
                continue;
            }
            const auto before = in_set(la % sets);
            cpu::cache::line victim;
            c.allocate(la, victim);
            ASSERT_EQ((victim.flags & cpu::cache::valid) != 0, before == long(ways)) << "step " << i;
            if (victim.flags & cpu::cache::valid) held.erase(victim.tag);
            held.insert(la);
            if (i % 5000 == 4999) c.invalidate_all(), held.clear();
        }
        EXPECT_EQ(c.valid_lines(), held.size());
    }
}

TEST(core, pl310_variant_cleans_l1_into_l2_and_l2_by_pa) {
    fresh_simulation();
    auto p = test::test_params();
    p.line_bytes = 32;
    p.outer_cache = true;
    p.outer_line_op_ns = 60;
    p.outer_sync_ns = 10;
    cpu_bench b(p);
    sc_time inner, outer, sync;
    run(b, [&](core_api& c) {
        EXPECT_TRUE(c.has_outer_cache());
        EXPECT_EQ(c.cache_line_bytes(), 32u);
        c.write32(dram_base + 0x20, 1);
        c.dsb();
        sc_time t = c.now();
        c.dc_cvac(dram_base + 0x20);  // L1 -> PL310 only
        c.dsb();
        inner = c.now() - t;
        EXPECT_EQ(b.dram.stats().writes, 0u);
        t = c.now();
        c.outer_clean_line(dram_base + 0x20);  // PL310 -> DDR
        outer = c.now() - t;
        t = c.now();
        c.outer_sync();
        sync = c.now() - t;
        c.outer_clean_line(dram_base + 0x20);  // now clean: register write only
        c.outer_inv_line(dram_base + 0x20);
        EXPECT_EQ(b.core.l2().find((dram_base + 0x20) >> 5), nullptr);
    });
    EXPECT_EQ(inner, b.cycles(p.maint_dirty_cycles + p.dsb_cycles));
    EXPECT_EQ(outer, sc_time(60, SC_NS));
    // The line op only posts the write-back; CACHE_SYNC waits for it (longer than its own 10 ns).
    EXPECT_EQ(sync, cpu_bench::line_write_ns());
    EXPECT_EQ(b.dram.stats().writes, 1u);
    EXPECT_EQ(b.core.stats().line_ops, 4u);
}

TEST(core, every_platform_profile_builds_a_core) {
    namespace fs = std::filesystem;
    const std::string configs = FECSIM_SOURCE_CONFIG_DIR;
    int n = 0;
    for (auto& e : fs::directory_iterator(fs::path(configs) / "platforms")) {
        const std::string name = e.path().stem().string();
        const fs::path exp = fs::temp_directory_path() / ("fecsim-cpu-" + std::to_string(::getpid()) + ".json");
        std::ofstream(exp) << "{\"platform\": \"" << name << "\"}";
        const config cfg = config::load(exp.string(), {}, configs);
        fs::remove(exp);
        const auto p = cpu::core_params_from(cfg.view("cpu"));
        const auto cp = cpu::coherency_params_from(cfg.view("coherency"));
        fresh_simulation();
        cpu_bench b(p, cp);
        EXPECT_EQ(b.core.has_outer_cache(), name == "imx6sx") << name;
        EXPECT_EQ(b.core.cache_line_bytes(), name == "imx6sx" ? 32u : 64u) << name;
        EXPECT_FALSE(cp.dma_coherent) << name;
        // The page_pool full sync is 55 lines + 1 DSB with 64 B lines, 110 with 32 B lines.
        run(b, [&](core_api& c) { dcache_clean_poc(c, dram_base + 256, dram_base + 256 + 3520); });
        EXPECT_EQ(b.core.stats().line_ops, name == "imx6sx" ? 110u : 55u) << name;
        ++n;
    }
    EXPECT_EQ(n, 5);
}

}  // namespace
}  // namespace fecsim
