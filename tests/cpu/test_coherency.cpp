// Coherency checker: each violation kind is caught when the DMA sync is omitted and absent
// when it is done right; strict mode stops; wasted line ops; coherent-DMA and off modes; tap.
#include "tests/cpu/cpu_bench.h"

#include <gtest/gtest.h>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using test::cpu_bench;
using test::dram_base;
using cpu::core_api;
using kind = cpu::coherency_checker::kind;

constexpr uint64_t buf = dram_base + 0x20000 + 256;  // an RX buffer at page offset 256
constexpr size_t frame = 66;                          // 2 lines

void run(cpu_bench& b, std::function<void(core_api&)> fw) {
    b.core.set_firmware(std::move(fw));
    sc_core::sc_start();
}

cpu::coherency_params mode(cpu::coherency_mode m, bool coherent = false) {
    cpu::coherency_params p;
    p.mode = m;
    p.dma_coherent = coherent;
    return p;
}

// arm64 dcache_clean_poc / dcache_inval_poc as the DMA API issues them.
void clean_poc(core_api& c, uint64_t start, size_t size) {
    const uint64_t line = c.cache_line_bytes();
    for (uint64_t a = start & ~(line - 1); a < start + size || a == (start & ~(line - 1)); a += line) c.dc_cvac(a);
    c.dsb();
}
void inval_poc(core_api& c, uint64_t start, size_t size) {
    const uint64_t line = c.cache_line_bytes(), end = start + size;
    uint64_t a = start & ~(line - 1);
    if (end & (line - 1)) c.dc_civac(end & ~(line - 1));
    if (start & (line - 1)) c.dc_civac(a), a += line;
    for (; a < (end & ~(line - 1)); a += line) c.dc_ivac(a);
    c.dsb();
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i);
    return v;
}

// RX: the CPU has the buffer cached (it processed the previous frame), the device writes a new
// frame, the driver reads it; with or without dma_sync_single_for_cpu.
void rx_cycle(cpu_bench& b, core_api& c, bool sync_for_cpu) {
    cpu::scope s(c, "fec_enet_rx_queue");
    uint8_t hdr[14];
    c.read(buf, hdr, sizeof hdr);  // previous frame: lines now cached, clean
    clean_poc(c, buf, 3520 - 256);  // recycled with a full sync (page_pool)
    const auto data = pattern(frame, 0x40);
    b.dma_write(buf, data.data(), data.size());
    if (sync_for_cpu) inval_poc(c, buf, frame);
    uint8_t got[frame];
    c.read(buf, got, frame);
    EXPECT_EQ(0, std::memcmp(got, data.data(), frame));  // bytes always come from DDR
}

TEST(coherency, stale_read_when_the_invalidate_is_omitted) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) { rx_cycle(b, c, false); });
    EXPECT_EQ(b.checker.violations(kind::stale_read), 1u);
    EXPECT_EQ(b.checker.violations(), 1u);
    ASSERT_EQ(b.checker.listed().size(), 1u);
    const auto& v = b.checker.listed()[0];
    EXPECT_EQ(v.addr, buf);
    EXPECT_EQ(v.size, 64u);  // only the header line was cached; the second line misses
    EXPECT_EQ(v.function, "fec_enet_rx_queue");
    EXPECT_GT(v.time, sc_core::SC_ZERO_TIME);
    EXPECT_EQ(v.text().rfind("stale_read 0x40020100+64 at ", 0), 0u) << v.text();
}

TEST(coherency, no_stale_read_with_sync_for_cpu) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) { rx_cycle(b, c, true); });
    EXPECT_EQ(b.checker.violations(), 0u);
}

// TX: the CPU writes a frame (xdp2 swaps MACs), the device reads it; with or without the
// dma_sync_single_for_device clean.
void tx_cycle(cpu_bench& b, core_api& c, size_t sync_bytes) {
    const auto data = pattern(frame, 0x10);
    {
        cpu::scope s(c, "xdp2_prog");
        c.write(buf, data.data(), frame);
    }
    {
        cpu::scope s(c, "fec_enet_txq_xmit_frame");
        if (sync_bytes) clean_poc(c, buf, sync_bytes);
    }
    uint8_t got[frame];
    b.dma_read(buf, got, frame);
}

TEST(coherency, missing_clean_when_the_device_reads_dirty_lines) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) { tx_cycle(b, c, 0); });
    EXPECT_EQ(b.checker.violations(kind::missing_clean), 1u);
    ASSERT_EQ(b.checker.listed().size(), 1u);
    EXPECT_EQ(b.checker.listed()[0].function, "xdp2_prog");  // who dirtied the lines
    EXPECT_EQ(b.checker.listed()[0].size, frame);
}

TEST(coherency, too_short_a_sync_leaves_the_tail_dirty) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) { tx_cycle(b, c, 32); });  // cleans the first line only
    EXPECT_EQ(b.checker.violations(kind::missing_clean), 1u);
    ASSERT_EQ(b.checker.listed().size(), 1u);
    EXPECT_EQ(b.checker.listed()[0].addr, (buf & ~63ull) + 64);
    EXPECT_EQ(b.checker.listed()[0].size, buf + frame - ((buf & ~63ull) + 64));
}

TEST(coherency, no_missing_clean_with_a_full_sync) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) { tx_cycle(b, c, frame); });
    EXPECT_EQ(b.checker.violations(), 0u);
}

TEST(coherency, lost_dma_data_when_a_dirty_line_is_written_back_over_device_data) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) {
        cpu::scope s(c, "fec_enet_rx_queue");
        c.write32(buf, 0x1111);  // dirty, and no clean before handing the buffer to the device
        const auto data = pattern(frame, 0x70);
        b.dma_write(buf, data.data(), frame);
        clean_poc(c, buf, frame);  // a later sync_for_device writes the stale line back
    });
    EXPECT_EQ(b.checker.violations(kind::lost_dma_data), 1u);
    ASSERT_EQ(b.checker.listed().size(), 1u);
    EXPECT_EQ(b.checker.listed()[0].addr, buf & ~63ull);
    EXPECT_NE(b.checker.listed()[0].function.find("dirtied in fec_enet_rx_queue"), std::string::npos);
}

TEST(coherency, lost_dma_data_by_eviction) {
    fresh_simulation();
    auto p = test::test_params();
    p.l1d = {1024, 2, 3, cpu::replacement::lru};
    p.l2 = {4096, 4, 16, cpu::replacement::lru};
    cpu_bench b(p);
    run(b, [&](core_api& c) {
        c.write32(dram_base, 1);
        uint32_t v = 2;
        b.dma_write(dram_base, &v, 4);
        for (int i = 1; i <= 5; ++i) c.read32(dram_base + i * 1024);  // same sets: evicts it
    });
    EXPECT_EQ(b.checker.violations(kind::lost_dma_data), 1u);
    EXPECT_EQ(b.core.stats().l2_writebacks, 1u);
}

TEST(coherency, clean_before_and_invalidate_after_dma_is_clean) {
    fresh_simulation();
    cpu_bench b;
    run(b, [&](core_api& c) {
        c.write32(buf, 0x1111);
        clean_poc(c, buf, frame);  // dma_map / sync_for_device
        const auto data = pattern(frame, 0x70);
        b.dma_write(buf, data.data(), frame);
        inval_poc(c, buf, frame);  // sync_for_cpu
        c.read32(buf);
        clean_poc(c, buf, frame);  // recycle
    });
    EXPECT_EQ(b.checker.violations(), 0u);
}

TEST(coherency, strict_mode_stops_at_the_first_violation) {
    fresh_simulation();
    cpu_bench b(test::test_params(), mode(cpu::coherency_mode::strict));
    bool went_on = false;
    sc_time stopped_at;
    b.core.set_firmware([&](core_api& c) {
        c.exec(1000);
        c.sync();
        stopped_at = c.now();
        tx_cycle(b, c, 0);
        went_on = true;
        tx_cycle(b, c, 0);
    });
    try {
        sc_core::sc_start();
        FAIL() << "strict mode did not stop";
    } catch (...) {
        EXPECT_THROW(b.checker.rethrow_if_stopped(), cpu::coherency_violation);
    }
    EXPECT_TRUE(b.checker.stopped());
    EXPECT_FALSE(went_on);
    EXPECT_EQ(b.checker.violations(), 1u);
    ASSERT_EQ(b.checker.listed().size(), 1u);
    EXPECT_EQ(b.checker.listed()[0].time, stopped_at);  // the device read happens at SystemC time
    try {
        b.checker.rethrow_if_stopped();
    } catch (const cpu::coherency_violation& e) {
        EXPECT_EQ(std::string(e.what()).rfind("coherency violation: missing_clean 0x40020100+66", 0), 0u) << e.what();
    }
}

TEST(coherency, wasted_line_ops_are_maintenance_on_untouched_lines) {
    fresh_simulation();
    cpu_bench b;
    const uint64_t page = dram_base + 0x30000;
    uint64_t after_cold = 0, after_two = 0, after_repeat = 0, after_dma = 0;
    run(b, [&](core_api& c) {
        clean_poc(c, page + 256, 3520);  // nobody ever touched these lines
        after_cold = b.checker.wasted_line_ops();
        c.read32(page + 256);
        c.write32(page + 256 + 64, 1);
        clean_poc(c, page + 256, 3520);  // two lines were used since
        after_two = b.checker.wasted_line_ops();
        clean_poc(c, page + 256, 3520);  // again at once: all wasted
        after_repeat = b.checker.wasted_line_ops();
        std::vector<uint8_t> f(1514, 0x5a);
        b.dma_write(page + 256, f.data(), f.size());  // 24 lines written by the device
        clean_poc(c, page + 256, 3520);
        after_dma = b.checker.wasted_line_ops();
    });
    EXPECT_EQ(after_cold, 55u);
    EXPECT_EQ(after_two, 55u + 53u);
    EXPECT_EQ(after_repeat, 55u + 53u + 55u);
    EXPECT_EQ(after_dma, 55u + 53u + 55u + 31u);
    EXPECT_EQ(b.checker.line_ops(), 4 * 55u);
    EXPECT_EQ(b.checker.violations(), 0u);
}

TEST(coherency, wasted_line_ops_survive_eviction_of_the_touched_line) {
    fresh_simulation();
    auto p = test::test_params();
    p.l1d = {1024, 2, 3, cpu::replacement::lru};
    p.l2 = {4096, 4, 16, cpu::replacement::lru};
    cpu_bench b(p);
    run(b, [&](core_api& c) {
        c.read32(dram_base);
        for (int i = 1; i <= 5; ++i) c.read32(dram_base + i * 1024);  // evicts line 0 everywhere
        c.dc_cvac(dram_base);  // the line was used since the last maintenance: not wasted
        c.dc_cvac(dram_base);  // this one is
    });
    EXPECT_EQ(b.core.l1d().find(dram_base >> 6), nullptr);
    EXPECT_EQ(b.checker.wasted_line_ops(), 1u);
}

// The checker keeps the blocks (64 KiB) it looked up last in a direct-mapped table, a block no
// device or core touched included: two blocks 256 apart share a slot, and neither lends the
// other its lines' bits, nor does a block remembered as untouched stay so once a device writes it.
TEST(coherency, wasted_line_ops_of_two_blocks_sharing_a_recent_slot) {
    fresh_simulation();
    cpu_bench b;
    const uint64_t a = dram_base + 0x100000, other = a + (256u << 16);  // the same slot
    std::vector<uint64_t> wasted;
    run(b, [&](core_api& c) {
        const uint32_t v = 1;
        auto clean = [&](uint64_t at) {
            c.dc_cvac(at);
            wasted.push_back(b.checker.wasted_line_ops());
        };
        clean(a);                  // untouched: wasted, and the block remembered as such
        b.dma_write(other, &v, 4);
        clean(a);                  // still untouched (the same line of the other block was written): wasted
        clean(other);              // written by the device: not wasted
        b.dma_write(a, &v, 4);
        clean(a);                  // written by the device since: not wasted
        clean(other);              // cleaned since the device wrote it: wasted
    });
    EXPECT_EQ(wasted, (std::vector<uint64_t>{1, 2, 2, 2, 3}));
    EXPECT_EQ(b.checker.line_ops(), 5u);
}

// The checker looks up the caches only for device accesses to cacheable ranges: it relies on
// the cores never holding a line of a non-cacheable one, whatever the CPU does there.
TEST(coherency, cores_hold_no_line_of_a_non_cacheable_range) {
    fresh_simulation();
    cpu_bench b;
    const uint64_t ring = test::nc_base + 0x1000;  // a descriptor ring in the coherent pool
    run(b, [&](core_api& c) {
        cpu::scope s(c, "fec_enet_txq_submit_skb");
        const auto data = pattern(256, 0x20);
        c.write(ring, data.data(), data.size());
        c.write16(ring + 2, 0x8c00);
        uint8_t got[256];
        c.read(ring, got, sizeof got);
        c.read32(ring + 128);
        c.touch(ring, 64, true);
        c.prefetch(ring + 192);
        c.store_release(ring + 4, 4);
        for (uint64_t a = ring; a < ring + 256; a += 64) c.dc_civac(a);
        c.dsb();
        b.dma_read(ring, got, sizeof got);  // nothing dirty can be found
        b.dma_write(ring, data.data(), 64);
        c.read(ring, got, 64);               // nothing stale either
        EXPECT_EQ(0, std::memcmp(got, data.data(), 64));
    });
    for (uint64_t la = ring >> 6; la < (ring + 256) >> 6; ++la) {
        EXPECT_EQ(b.core.l1d().find(la), nullptr) << std::hex << (la << 6);
        EXPECT_EQ(b.core.l2().find(la), nullptr) << std::hex << (la << 6);
    }
    EXPECT_EQ(b.checker.violations(), 0u);
    EXPECT_EQ(b.tap.reads(), 1u);
    EXPECT_EQ(b.tap.writes(), 1u);
}

TEST(coherency, coherent_dma_needs_no_maintenance_and_reports_nothing) {
    fresh_simulation();
    cpu_bench b(test::test_params(), mode(cpu::coherency_mode::report, true));
    uint64_t l2_misses_before = 0, l2_misses_after = 0;
    run(b, [&](core_api& c) {
        rx_cycle(b, c, false);
        tx_cycle(b, c, 0);
        c.read32(buf);
        l2_misses_before = b.core.stats().l2_misses;
        uint32_t v = 9;
        b.dma_write(buf, &v, 4);  // snooped: the CPU copy is invalidated
        c.read32(buf);
        l2_misses_after = b.core.stats().l2_misses;
    });
    EXPECT_EQ(b.checker.violations(), 0u);
    EXPECT_EQ(l2_misses_after, l2_misses_before + 1);
}

TEST(coherency, off_mode_counts_nothing_and_lets_dmi_through) {
    fresh_simulation();
    cpu_bench b(test::test_params(), mode(cpu::coherency_mode::off));
    bool dmi = false;
    run(b, [&](core_api& c) {
        tx_cycle(b, c, 0);
        tlm::tlm_generic_payload gp;
        gp.set_address(buf);
        gp.set_command(tlm::TLM_READ_COMMAND);
        tlm::tlm_dmi d;
        dmi = b.dma.socket->get_direct_mem_ptr(gp, d);
    });
    EXPECT_EQ(b.checker.violations(), 0u);
    EXPECT_TRUE(dmi);
    EXPECT_EQ(b.tap.reads(), 1u);
}

TEST(coherency, tap_refuses_dmi_while_checking) {
    fresh_simulation();
    cpu_bench b;
    bool dmi = true, allowed = true;
    run(b, [&](core_api&) {
        tlm::tlm_generic_payload gp;
        gp.set_address(buf);
        gp.set_command(tlm::TLM_READ_COMMAND);
        tlm::tlm_dmi d;
        dmi = b.dma.socket->get_direct_mem_ptr(gp, d);
        uint32_t v = 0;
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(4);
        gp.set_streaming_width(4);
        sc_time delay;
        b.dma.socket->b_transport(gp, delay);
        allowed = gp.is_dmi_allowed();
    });
    EXPECT_FALSE(dmi);
    EXPECT_FALSE(allowed);
}

// The tap is the master's target interface itself: blocking transport only. A non-blocking
// call is refused, and neither reaches memory nor the checker.
TEST(coherency, tap_refuses_non_blocking_transport) {
    fresh_simulation();
    cpu_bench b;
    tlm::tlm_sync_enum r = tlm::TLM_ACCEPTED;
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    run(b, [&](core_api&) {
        uint32_t v = 1;
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(buf);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(4);
        gp.set_streaming_width(4);
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_time delay;
        r = b.dma.socket->nb_transport_fw(gp, phase, delay);
        status = gp.get_response_status();
    });
    EXPECT_EQ(r, tlm::TLM_COMPLETED);
    EXPECT_EQ(status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(b.tap.writes(), 0u);
    EXPECT_EQ(b.dram.stats().writes, 0u);
}

TEST(coherency, pl310_stale_copy_in_the_outer_cache_is_caught) {
    auto rx = [](bool outer_invalidate) {
        fresh_simulation();
        auto p = test::test_params();
        p.line_bytes = 32;
        p.outer_cache = true;
        p.outer_line_op_ns = 60;
        p.outer_sync_ns = 150;
        cpu_bench b(p);
        run(b, [&](core_api& c) {
            c.read32(buf);  // cached in L1 and the PL310
            uint32_t v = 7;
            b.dma_write(buf, &v, 4);
            c.dc_ivac(buf);  // inner invalidate (dmac_unmap_area)
            c.dsb();
            if (outer_invalidate) {
                c.outer_inv_line(buf);  // outer_inv_range
                c.outer_sync();
            }
            EXPECT_EQ(c.read32(buf), 7u);
        });
        return b.checker.violations(kind::stale_read);
    };
    EXPECT_EQ(rx(false), 1u);
    EXPECT_EQ(rx(true), 0u);
}

TEST(coherency, report_and_reset) {
    fresh_simulation();
    cpu::coherency_params cp;
    cp.max_listed = 2;
    cpu_bench b(test::test_params(), cp);
    run(b, [&](core_api& c) {
        for (int i = 0; i < 3; ++i) tx_cycle(b, c, 0);
    });
    nlohmann::json j;
    b.checker.report(j);
    EXPECT_EQ(j["coherency"]["violations"], 3);
    EXPECT_EQ(j["coherency"]["missing_cleans"], 3);
    EXPECT_EQ(j["coherency"]["listed"].size(), 2u);
    EXPECT_EQ(j["coherency"]["mode"], "report");
    b.checker.reset_stats();
    nlohmann::json k;
    b.checker.report(k);
    EXPECT_EQ(k["coherency"]["violations"], 0);
    EXPECT_EQ(k["coherency"]["wasted_line_ops"], 0);
    EXPECT_TRUE(k["coherency"]["listed"].empty());
}

}  // namespace
}  // namespace fecsim
