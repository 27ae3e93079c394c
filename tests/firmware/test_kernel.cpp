// Kernel services on the fake core (a test double): cost table, DMA API line operations for
// every row of fec-driver.md §11, the ARMv7 + PL310 variant, coherent devices, page_pool.
#include "tests/firmware/rig.h"

#include "firmware/kernel/swiotlb.h"

#include <cstdio>
#include <fstream>

using namespace fecsim::test;

namespace {

struct kernel_bench {
    fake_core core;
    cost_table costs;
    std::unique_ptr<kernel> k;
    kernel_bench(uint32_t line = 64, bool outer = false, arch_flavour a = arch_flavour::arm64,
                 const std::string& table = costs_path())
        : core(line, outer), costs(cost_table::load(table)) {
        core.add_region(DRAM, DRAM_SIZE, fake_core::attr::cacheable);
        core.add_region(POOL, POOL_SIZE, fake_core::attr::noncacheable);
        k = std::make_unique<kernel>(core, costs, a, test_memory());
    }
};

// The bench with a second zone above 4 GiB (beyond the FEC's 32-bit mask) and a 4 MiB swiotlb pool.
struct high_dram_bench {
    fake_core core;
    cost_table costs;
    std::unique_ptr<kernel> k;
    explicit high_dram_bench(const std::string& table = costs_path()) : costs(cost_table::load(table)) {
        core.add_region(DRAM, DRAM_SIZE, fake_core::attr::cacheable);
        core.add_region(POOL, POOL_SIZE, fake_core::attr::noncacheable);
        core.add_region(HIGH_DRAM, HIGH_DRAM_SIZE, fake_core::attr::cacheable);
        kernel_memory mem = test_memory();
        mem.dram.push_back({HIGH_DRAM, HIGH_DRAM_SIZE});
        mem.possible_cpus = 4;
        mem.swiotlb_bytes = SMALL_SWIOTLB;
        k = std::make_unique<kernel>(core, costs, arch_flavour::arm64, mem);
    }
    // A page of the high zone filled with a pattern (host-side: the bytes a buffer held before).
    addr_t filled_page(uint8_t seed) {
        page* p = k->pages.alloc_pages();
        EXPECT_GE(p->addr, HIGH_DRAM);
        for (uint32_t i = 0; i < PAGE_SIZE; ++i) core.host(p->addr, PAGE_SIZE)[i] = uint8_t(seed + i);
        return p->addr;
    }
    bool lines_touched(const std::map<addr_t, uint64_t>& ops, addr_t start, size_t len) const {
        for (const auto& [a, n] : ops)
            if (a + 64 > start && a < start + len) return true;
        return false;
    }
};

std::string write_temp(const std::string& text) {
    static int n = 0;
    const std::string path = "/tmp/fecsim_fw_costs_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".json";
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST(costs, real_table_loads_with_every_path) {
    on_core_thread([] {
        const cost_table t = cost_table::load(costs_path());
        for (size_t i = 0; i < path_count; ++i) EXPECT_GT(t[path(i)], 0u) << to_string(path(i));
    });
}

TEST(costs, unknown_missing_and_malformed_keys_are_clear_errors) {
    on_core_thread([] {
    std::ifstream in(costs_path());
    nlohmann::json j = nlohmann::json::parse(in);
    j["paths"]["fec_enet_rx_queue_bdd"] = {{"instructions", 3}, {"why", "typo"}};
    j["paths"].erase("build_skb");
    j["paths"]["ip_rcv"]["instructions"] = -4;
    const std::string f = write_temp(j.dump());
    try {
        cost_table::load(f);
        FAIL() << "accepted a bad costs file";
    } catch (const fecsim::config_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(f + ": /paths/fec_enet_rx_queue_bdd: unknown code path"), std::string::npos) << m;
        EXPECT_NE(m.find(f + ": /paths/build_skb: missing code path"), std::string::npos) << m;
        EXPECT_NE(m.find(f + ": /paths/ip_rcv/instructions: expected an integer"), std::string::npos) << m;
    }
    EXPECT_THROW(cost_table::load("/nonexistent/costs.json"), fecsim::config_error);
    EXPECT_THROW(cost_table::load(write_temp("{\"paths\": [1,2]}")), fecsim::config_error);
    EXPECT_THROW(cost_table::load(write_temp("{not json")), fecsim::config_error);
    });
}

// The tables measured from the compiled kernel (scripts/kernel-costs.py, committed because CI
// does not download kernels): the loader accepts them (every charged path has a count), and each
// count is what its "functions" add up to (or their mean, for the paths that average alternatives).
TEST(costs, measured_tables_load_and_add_up) {
    on_core_thread([] {
        for (const char* name : {"linux-6.1-arm64.json", "linux-6.1-armhf.json"}) {
            const std::string file = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/costs/" + name;
            const cost_table t = cost_table::load(file);
            std::ifstream in(file);
            const nlohmann::json j = nlohmann::json::parse(in);
            for (size_t i = 0; i < path_count; ++i) {
                const auto& e = j["paths"][to_string(path(i))];
                ASSERT_TRUE(e.contains("method")) << name << " " << to_string(path(i));
                EXPECT_EQ(t[path(i)], e["instructions"].get<uint64_t>());
                if (!e.contains("functions")) continue;
                uint64_t sum = 0;
                for (const auto& f : e["functions"]) sum += f["count"].get<uint64_t>();
                // "mean of N alternatives": the key stands for either of N routines
                const std::string method = e["method"];
                const size_t at = method.find("mean of ");
                const uint64_t n = at == std::string::npos ? 1 : std::stoull(method.substr(at + 8));
                const uint64_t want = (2 * sum + n) / (2 * n);
                EXPECT_EQ(t[path(i)], want) << name << " " << to_string(path(i));
            }
        }
        // a provenance record that is not one is an error, like any other bad key
        std::ifstream in(std::string(FECSIM_SOURCE_CONFIG_DIR) + "/costs/linux-6.1-arm64.json");
        nlohmann::json j = nlohmann::json::parse(in);
        j["paths"]["build_skb"]["functions"][0]["count"] = "many";
        j["paths"]["ip_rcv"]["functions"][0]["size"] = 4;
        const std::string f = write_temp(j.dump());
        try {
            cost_table::load(f);
            FAIL() << "accepted a bad functions record";
        } catch (const fecsim::config_error& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find(f + ": /paths/build_skb/functions/0/count: expected a non-negative integer"), std::string::npos) << m;
            EXPECT_NE(m.find(f + ": /paths/ip_rcv/functions/0/size: unknown key"), std::string::npos) << m;
        }
    });
}

// fec-driver.md §11 table, arm64, 64-byte lines, page at a page boundary.
TEST(dma_arm64, line_operations_per_table_row) {
    on_core_thread([] {
        kernel_bench b;
        dma_device dev(*b.k, false);
        const addr_t page = DRAM + 0x100000;
        auto run = [&](auto&& op) {
            b.core.c = {};
            op();
            return b.core.c;
        };
        // RX sync_for_cpu(bufaddr = page+256, pkt_len): 64 B frame (datlen 66) and 1514 B (1520)
        auto c = run([&] { dev.dma_sync_single_for_cpu(page + 256, 66, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.ivac, 1u);
        EXPECT_EQ(c.civac, 1u);
        EXPECT_EQ(c.civac_at.count(page + 320), 1u);  // the partial last line
        EXPECT_EQ(c.cvac, 0u);
        EXPECT_EQ(c.dsb, 1u);
        c = run([&] { dev.dma_sync_single_for_cpu(page + 256, 1520, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.ivac + c.civac, 24u);
        EXPECT_EQ(c.civac, 1u);
        EXPECT_EQ(c.dsb, 1u);
        // Unaligned start and end in one line: CIVAC twice on it (end first, then start).
        c = run([&] { dev.dma_sync_single_for_cpu(page + 258, 10, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.civac, 2u);
        EXPECT_EQ(c.ivac, 0u);
        // XDP_TX sync_for_device(data = page+258, sync): 60 -> 1 line, 1514 -> 24 lines
        c = run([&] { dev.dma_sync_single_for_device(page + 258, 60, DMA_BIDIRECTIONAL); });
        EXPECT_EQ(c.cvac, 1u);
        EXPECT_EQ(c.dsb, 1u);
        c = run([&] { dev.dma_sync_single_for_device(page + 258, 1514, DMA_BIDIRECTIONAL); });
        EXPECT_EQ(c.cvac, 24u);
        // XDP_DROP put with sync from page+256: 60 -> 1, 1514 -> 24
        c = run([&] { dev.dma_sync_single_for_device(page + 256, 1514, DMA_BIDIRECTIONAL); });
        EXPECT_EQ(c.cvac, 24u);
        // Size 0 (XDP_TX completion put): one line + DSB, the do-while
        c = run([&] { dev.dma_sync_single_for_device(page + 256, 0, DMA_BIDIRECTIONAL); });
        EXPECT_EQ(c.cvac, 1u);
        EXPECT_EQ(c.cvac_at.count(page + 256), 1u);
        EXPECT_EQ(c.dsb, 1u);
        // Full put (max_len 3520 from +256): 55 lines
        c = run([&] { dev.dma_sync_single_for_device(page + 256, 3520, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.cvac, 55u);
        EXPECT_EQ(c.cvac_at.begin()->first, page + 256);
        EXPECT_EQ(c.cvac_at.rbegin()->first, page + 3776 - 64);
        // ndo_xdp_xmit dma_map_single(len, TO_DEVICE): 1-2 lines; unmap TO_DEVICE: nothing
        c = run([&] { dev.dma_map_single(page + 258, 60, DMA_TO_DEVICE); });
        EXPECT_EQ(c.cvac, 1u);
        c = run([&] { dev.dma_map_single(page + 300, 60, DMA_TO_DEVICE); });
        EXPECT_EQ(c.cvac, 2u);
        c = run([&] { dev.dma_unmap_single(page + 258, 60, DMA_TO_DEVICE); });
        EXPECT_EQ(c.line_ops(), 0u);
        EXPECT_EQ(c.dsb, 0u);
        // for_cpu TO_DEVICE: nothing
        c = run([&] { dev.dma_sync_single_for_cpu(page + 258, 1514, DMA_TO_DEVICE); });
        EXPECT_EQ(c.line_ops() + c.dsb, 0u);
        // Old copybreak path: 1985 bytes from an aligned start, both ways = 32 + 32 lines
        c = run([&] {
            dev.dma_sync_single_for_cpu(page + 64, 1985, DMA_FROM_DEVICE);
            dev.dma_sync_single_for_device(page + 64, 1985, DMA_FROM_DEVICE);
        });
        EXPECT_EQ(c.ivac + c.civac, 32u);
        EXPECT_EQ(c.cvac, 32u);
        EXPECT_EQ(c.dsb, 2u);
        // map with DMA_ATTR_SKIP_CPU_SYNC (page_pool): nothing
        c = run([&] { dev.dma_map_single(page, 4096, DMA_BIDIRECTIONAL, DMA_ATTR_SKIP_CPU_SYNC); });
        EXPECT_EQ(c.line_ops() + c.dsb, 0u);
    });
}

// dma-direct calls the architecture's sync only without DMA_ATTR_SKIP_CPU_SYNC: a streaming map
// (skb TX, legacy RX, ndo_xdp_xmit) charges the sync branch and its clean, page_pool's map (and its
// unmap on release) the shorter branch and no maintenance. Measured arm64 table, where they differ.
TEST(dma_arm64, page_pool_map_charges_no_sync_a_streaming_map_does) {
    on_core_thread([] {
        kernel_bench b(64, false, arch_flavour::arm64, std::string(FECSIM_SOURCE_CONFIG_DIR) + "/costs/linux-6.1-arm64.json");
        const cost_table& t = b.costs;
        ASSERT_GT(t[path::dma_map_single], t[path::dma_map_single_skip_sync]);
        ASSERT_GT(t[path::dma_unmap_single], t[path::dma_unmap_single_skip_sync]);
        dma_device dev(*b.k, false);
        const addr_t buf = DRAM + 0x300040;
        auto charged = [&](auto&& op) {
            b.core.c = {};
            op();
            return b.core.c;
        };
        auto c = charged([&] { dev.dma_map_single(buf, 60, DMA_TO_DEVICE); });
        EXPECT_EQ(c.instructions, t[path::dma_map_single] + t[path::dcache_by_line_op]);
        EXPECT_EQ(c.cvac, 1u);
        // the unmap's arch_sync_dma_for_cpu returns at once for TO_DEVICE, invalidates otherwise
        ASSERT_GT(t[path::dma_unmap_single_from_device], t[path::dma_unmap_single]);
        c = charged([&] { dev.dma_unmap_single(buf, 60, DMA_TO_DEVICE); });
        EXPECT_EQ(c.instructions, t[path::dma_unmap_single]);
        EXPECT_EQ(c.line_ops(), 0u);
        c = charged([&] { dev.dma_unmap_single(buf, 1536, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.instructions, t[path::dma_unmap_single_from_device] + t[path::dcache_by_line_op]);
        EXPECT_EQ(c.ivac, 24u);

        // page_pool: the same 64-page slow refill with and without PP_FLAG_DMA_MAP differs by 64
        // page_pool_dma_map calls with their skip-sync maps and nothing else; ring-full releases
        // differ by their skip-sync unmaps.
        auto pool_run = [&](unsigned flags, int id) {
            page_pool_params pp;
            pp.flags = flags;
            pp.pool_size = 16;
            pp.dev = &dev;
            pp.dma_dir = DMA_BIDIRECTIONAL;
            page_pool pool(*b.k, pp, id);
            std::vector<page*> got;
            auto alloc = charged([&] {
                for (int i = 0; i < 64; ++i) got.push_back(pool.page_pool_alloc_pages());
            });
            auto put = charged([&] {
                for (page* p : got) pool.page_pool_put_page(p, 0, false);
            });
            EXPECT_EQ(pool.stats().alloc_slow, 1u);
            EXPECT_EQ(pool.release_cnt(), 48u);  // 16 fit the ring
            EXPECT_EQ(alloc.line_ops() + alloc.dsb + put.line_ops() + put.dsb, 0u);
            return std::make_pair(alloc.instructions, put.instructions);
        };
        const auto mapped = pool_run(PP_FLAG_DMA_MAP, 10);
        const auto unmapped = pool_run(0, 11);
        EXPECT_EQ(mapped.first - unmapped.first, 64 * (t[path::page_pool_dma_map] + t[path::dma_map_single_skip_sync]));
        EXPECT_EQ(mapped.second - unmapped.second, 48 * t[path::dma_unmap_single_skip_sync]);

        // A coherent device takes the no-sync branch as well.
        dma_device coherent(*b.k, true);
        c = charged([&] { coherent.dma_map_single(buf, 60, DMA_TO_DEVICE); });
        EXPECT_EQ(c.instructions, t[path::dma_map_single_skip_sync]);
    });
}

TEST(dma_coherent, no_maintenance_at_all) {
    on_core_thread([] {
        kernel_bench b;
        dma_device dev(*b.k, true);
        dev.dma_sync_single_for_cpu(DRAM + 0x100100, 1520, DMA_FROM_DEVICE);
        dev.dma_sync_single_for_device(DRAM + 0x100100, 0, DMA_BIDIRECTIONAL);
        dev.dma_map_single(DRAM + 0x100100, 1514, DMA_TO_DEVICE);
        EXPECT_EQ(b.core.c.line_ops() + b.core.c.dsb, 0u);
        EXPECT_GT(b.core.c.instructions, 0u);  // the calls still cost
    });
}

// ARMv7 + PL310 (i.MX6SX): 32-byte lines, inner by VA and outer by PA.
TEST(dma_armv7_pl310, inner_and_outer_maintenance) {
    on_core_thread([] {
        kernel_bench b(32, true, arch_flavour::armv7_pl310);
        dma_device dev(*b.k, false);
        const addr_t page = DRAM + 0x200000;
        auto run = [&](auto&& op) {
            b.core.c = {};
            op();
            return b.core.c;
        };
        // for_device FROM_DEVICE: v7_dma_inv_range + outer_inv_range (aligned: 3520/32 = 110 lines)
        auto c = run([&] { dev.dma_sync_single_for_device(page + 256, 3520, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.ivac, 110u);
        EXPECT_EQ(c.cvac + c.civac, 0u);
        EXPECT_EQ(c.outer_inv, 110u);
        EXPECT_EQ(c.outer_sync, 1u);
        // for_device BIDIRECTIONAL: clean inner and outer; size 0 still cleans one inner line
        c = run([&] { dev.dma_sync_single_for_device(page + 258, 60, DMA_BIDIRECTIONAL); });
        EXPECT_EQ(c.cvac, 2u);  // [258, 318) spans 256..288..319 with 32 B lines
        EXPECT_EQ(c.outer_clean, 2u);
        c = run([&] { dev.dma_sync_single_for_device(page + 256, 0, DMA_BIDIRECTIONAL); });
        EXPECT_EQ(c.cvac, 1u);
        EXPECT_EQ(c.outer_clean, 0u);  // l2c210_clean_range: while (start < end)
        EXPECT_EQ(c.outer_sync, 1u);
        // for_cpu FROM_DEVICE, unaligned end: outer first (flush partial line), then inner
        c = run([&] { dev.dma_sync_single_for_cpu(page + 256, 66, DMA_FROM_DEVICE); });
        EXPECT_EQ(c.outer_flush, 1u);
        EXPECT_EQ(c.outer_inv, 2u);
        EXPECT_EQ(c.civac, 1u);
        EXPECT_EQ(c.ivac, 2u);
        // for_cpu TO_DEVICE: nothing on either level
        c = run([&] { dev.dma_sync_single_for_cpu(page + 256, 66, DMA_TO_DEVICE); });
        EXPECT_EQ(c.line_ops() + c.outer_inv + c.outer_flush + c.outer_sync + c.dsb, 0u);
    });
}

// fec's pool (fec_enet_create_page_pool): it maps its pages and syncs a recycled page's
// 3520-byte frame area for the device.
page_pool_params fec_pool_params(dma_device& dev) {
    page_pool_params pp;
    pp.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV;
    pp.pool_size = 256;
    pp.dev = &dev;
    pp.dma_dir = DMA_BIDIRECTIONAL;
    pp.offset = 256;
    pp.max_len = 3520;
    return pp;
}

TEST(page_pool, accounting_never_leaks_and_syncs_as_the_kernel) {
    on_core_thread([] {
        kernel_bench b;
        dma_device dev(*b.k, false);
        const page_pool_params pp = fec_pool_params(dev);
        page_pool pool(*b.k, pp, 0);
        auto balanced = [&](uint64_t held_by_us) {
            EXPECT_EQ(pool.hold_cnt() - pool.release_cnt(), pool.cached() + pool.in_ring() + pool.inflight());
            EXPECT_EQ(pool.inflight(), held_by_us);
        };
        std::vector<page*> out;
        b.core.c = {};
        for (int i = 0; i < 256; ++i) out.push_back(pool.page_pool_alloc_pages());
        // 4 slow-path refills of 64 fresh pages, each mapped and synced for max_len (55 lines).
        EXPECT_EQ(pool.stats().alloc_slow, 4u);
        EXPECT_EQ(pool.hold_cnt(), 256u);
        EXPECT_EQ(b.core.c.cvac, 256u * 55);
        EXPECT_EQ(b.core.c.dsb, 256u);
        balanced(256);
        for (page* p : out) {
            EXPECT_EQ(p->pp, &pool);
            EXPECT_EQ(pool.page_pool_get_dma_addr(p), p->addr);
        }
        // Direct puts fill the 128-entry cache, then spill into the ptr_ring.
        b.core.c = {};
        for (int i = 0; i < 200; ++i) pool.page_pool_put_page(out[i], 60, true);
        EXPECT_EQ(pool.cached(), 128u);
        EXPECT_EQ(pool.in_ring(), 72u);
        EXPECT_EQ(b.core.c.cvac, 200u);  // min(60, max_len) from +256: one line each
        balanced(56);
        // Zero-length put still cleans one line; -1 = full max_len.
        b.core.c = {};
        pool.page_pool_put_page(out[200], 0, false);
        EXPECT_EQ(b.core.c.cvac, 1u);
        pool.page_pool_put_full_page(out[201], false);
        EXPECT_EQ(b.core.c.cvac, 56u);
        balanced(54);
        // Allocation drains the cache, then refills 64 at a time from the ring (no DMA work).
        b.core.c = {};
        std::vector<page*> again;
        for (int i = 0; i < 150; ++i) again.push_back(pool.page_pool_alloc_pages());
        EXPECT_EQ(b.core.c.line_ops(), 0u);
        EXPECT_EQ(pool.stats().alloc_refill, 1u);
        EXPECT_EQ(pool.stats().alloc_slow, 4u);
        balanced(204);
        for (page* p : again) pool.page_pool_put_page(p, 60, false);
        for (int i = 202; i < 256; ++i) pool.page_pool_put_page(out[i], 60, false);
        EXPECT_EQ(pool.cached(), 128u - 64 - 22);  // 150 = 128 cached + 22 of a 64-page refill
        EXPECT_EQ(pool.in_ring(), 256u - pool.cached());
        EXPECT_EQ(pool.release_cnt(), 0u);
        balanced(0);
        // Ring full -> the page is unmapped and returned to the buddy allocator.
        page_pool_params small = pp;
        small.pool_size = 16;
        page_pool pool2(*b.k, small, 1);
        const uint64_t free0 = b.k->pages.free_pages();
        std::vector<page*> got;
        for (int i = 0; i < 64; ++i) got.push_back(pool2.page_pool_alloc_pages());
        for (page* p : got) pool2.page_pool_put_page(p, 60, false);
        EXPECT_EQ(pool2.in_ring(), 16u);
        EXPECT_EQ(pool2.stats().recycle_ring_full, 48u);
        EXPECT_EQ(pool2.release_cnt(), 48u);
        EXPECT_EQ(free0 - b.k->pages.free_pages(), 16u);
        EXPECT_EQ(pool2.hold_cnt() - pool2.release_cnt(), pool2.cached() + pool2.in_ring() + pool2.inflight());
        // A page from another pool is a programming error, not silent corruption.
        page* stray = b.k->pages.alloc_pages();
        EXPECT_THROW(pool.page_pool_put_page(stray, 0, true), std::logic_error);
    });
}

// page_pool_put_defragged_page on fec's pool (PP_FLAG_DMA_SYNC_DEV): an XDP return in NAPI
// (allow_direct) goes into the alloc cache, an skb's page (not direct) through the ptr_ring; both
// sync for the device first. Measured arm64 table, where the two branches differ.
TEST(page_pool, direct_put_takes_the_cache_branch_a_ring_put_the_ring_branch) {
    on_core_thread([] {
        kernel_bench b(64, false, arch_flavour::arm64, std::string(FECSIM_SOURCE_CONFIG_DIR) + "/costs/linux-6.1-arm64.json");
        const cost_table& t = b.costs;
        ASSERT_NE(t[path::page_pool_put_page], t[path::page_pool_put_page_ring]);
        dma_device dev(*b.k, false);
        page_pool pool(*b.k, fec_pool_params(dev), 0);
        page* p0 = pool.page_pool_alloc_pages();
        page* p1 = pool.page_pool_alloc_pages();
        const uint64_t sync = t[path::dma_sync_single] + t[path::dcache_by_line_op];  // 60 bytes: one line
        b.core.c = {};
        pool.page_pool_put_page(p0, 60, true);
        EXPECT_EQ(b.core.c.instructions, t[path::page_pool_put_page] + sync);
        EXPECT_EQ(pool.stats().recycle_cached, 1u);
        b.core.c = {};
        pool.page_pool_put_page(p1, 60, false);
        EXPECT_EQ(b.core.c.instructions, t[path::page_pool_put_page_ring] + sync + t[path::page_pool_recycle_ring]);
        EXPECT_EQ(pool.stats().recycle_ring, 1u);
    });
}

TEST(kernel_memory, page_allocator_slab_and_frags_reuse_memory) {
    on_core_thread([] {
        kernel_bench b;
        const uint64_t free0 = b.k->pages.free_pages();
        page* p = b.k->pages.alloc_pages();
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(p->addr % PAGE_SIZE, 0u);
        EXPECT_GE(p->addr, DRAM);
        EXPECT_EQ(b.k->pages.virt_to_page(p->addr + 1234), p);
        b.k->pages.__free_pages(p);
        EXPECT_EQ(b.k->pages.alloc_pages(), p);  // LIFO: hot page first
        EXPECT_THROW({ b.k->pages.__free_pages(p); b.k->pages.__free_pages(p); }, std::logic_error);
        const addr_t s1 = b.k->skbuff_head_cache.alloc();
        b.k->skbuff_head_cache.free(s1);
        EXPECT_EQ(b.k->skbuff_head_cache.alloc(), s1);
        const addr_t f1 = b.k->frags.page_frag_alloc(2432);
        const addr_t f2 = b.k->frags.page_frag_alloc(2432);
        EXPECT_EQ(f1 % 64, 0u);
        EXPECT_EQ(f1 - f2, 2432u);  // carved downwards from one 32 KiB page
        b.k->frags.page_frag_free(f1);
        b.k->frags.page_frag_free(f2);
        EXPECT_LE(free0 - b.k->pages.free_pages(), 10u);  // the cache keeps its page
        kernel_bench tiny;
        EXPECT_THROW(kernel(tiny.core, tiny.costs, arch_flavour::arm64, test_memory(8192)),
                     std::invalid_argument);
    });
}

// mm/page_alloc.c page_frag_alloc_align: 13 heads of 2432 B (a 2 KiB RX skb) from one 32 KiB
// compound page, the page allocator once per page, the page freed with its last frag, and
// reused in place when every frag came back before the cache ran out.
TEST(kernel_memory, page_frag_cache_carves_32k_compound_pages) {
    on_core_thread([] {
        kernel_bench b;
        auto& frags = b.k->frags;
        auto& pages = b.k->pages;
        const uint64_t free0 = pages.free_pages();
        const uint64_t i0 = b.core.c.instructions;
        std::vector<addr_t> f;
        for (int i = 0; i < 13; ++i) f.push_back(frags.page_frag_alloc(2432));
        page* head = pages.virt_to_head_page(f[0]);
        ASSERT_NE(head, nullptr);
        EXPECT_EQ(head->order, 3u);
        EXPECT_EQ(head->addr % 32768, 0u);  // naturally aligned block
        for (int i = 0; i < 13; ++i) {
            EXPECT_EQ(pages.virt_to_head_page(f[i]), head);
            EXPECT_EQ(f[i], head->addr + 32768 - 2432 * addr_t(i + 1));
        }
        EXPECT_EQ(free0 - pages.free_pages(), 8u);
        EXPECT_EQ(b.core.c.instructions - i0,
                  13 * b.costs[path::page_frag_alloc] + b.costs[path::alloc_pages] +
                    b.costs[path::prep_compound_page] + 7 * b.costs[path::prep_compound_tail]);

        // The 14th: a new page; the first lives on while its frags are out.
        const addr_t g = frags.page_frag_alloc(2432);
        page* head2 = pages.virt_to_head_page(g);
        EXPECT_NE(head2, head);
        EXPECT_EQ(free0 - pages.free_pages(), 16u);
        for (int i = 0; i < 12; ++i) frags.page_frag_free(f[i]);
        EXPECT_EQ(free0 - pages.free_pages(), 16u);
        const uint64_t i1 = b.core.c.instructions;
        frags.page_frag_free(f[12]);  // the last reference frees the whole block
        EXPECT_EQ(free0 - pages.free_pages(), 8u);
        EXPECT_EQ(b.core.c.instructions - i1, b.costs[path::page_frag_free] + b.costs[path::free_pages]);
        EXPECT_EQ(head->refcount, 0);

        // Every frag of the current page back before it runs out: reused in place.
        frags.page_frag_free(g);
        std::vector<addr_t> h;
        for (int i = 0; i < 12; ++i) h.push_back(frags.page_frag_alloc(2432));
        for (addr_t a : h) frags.page_frag_free(a);
        const addr_t again = frags.page_frag_alloc(2432);
        EXPECT_EQ(pages.virt_to_head_page(again), head2);
        EXPECT_EQ(again, head2->addr + 32768 - 2432);
        EXPECT_EQ(free0 - pages.free_pages(), 8u);
        frags.page_frag_free(again);
        EXPECT_THROW(frags.page_frag_free(head->addr), std::logic_error);  // a freed block
    });
}

// __netdev_alloc_skb: a 2 KiB RX skb gets a page_frag head with NET_SKB_PAD headroom and the
// frag branch's instructions; a small one goes through __alloc_skb with a kmalloc head.
TEST(skbuff, netdev_alloc_skb_frag_head_or_kmalloc_head) {
    on_core_thread([] {
        kernel_bench b;
        skb_allocator skbs(*b.k);
        skbs.kfree_skb(skbs.netdev_alloc_skb(2048));  // warm: the frag page and the slabs exist
        skbs.kfree_skb(skbs.netdev_alloc_skb(60));
        uint64_t i0 = b.core.c.instructions;
        sk_buff* big = skbs.netdev_alloc_skb(2048);
        EXPECT_EQ(b.core.c.instructions - i0, b.costs[path::netdev_alloc_skb] + b.costs[path::page_frag_alloc] +
                                                  b.costs[path::kmem_cache_alloc]);
        EXPECT_EQ(big->head_kind, skb_head_kind::frag);
        EXPECT_EQ(big->headroom(), NET_SKB_PAD);
        EXPECT_EQ(big->head_alloc, 2432u);  // SKB_HEAD_ALIGN(2048 + NET_SKB_PAD)
        EXPECT_EQ(big->end - big->head, 2112u);
        EXPECT_EQ(big->truesize, 256u + 2432u);
        i0 = b.core.c.instructions;
        sk_buff* small = skbs.netdev_alloc_skb(60);
        EXPECT_EQ(b.core.c.instructions - i0, b.costs[path::netdev_alloc_skb_kmalloc] + b.costs[path::alloc_skb] +
                                                  2 * b.costs[path::kmem_cache_alloc]);
        EXPECT_EQ(small->head_kind, skb_head_kind::kmalloc);
        EXPECT_EQ(small->headroom(), NET_SKB_PAD);
        skbs.kfree_skb(big);
        skbs.kfree_skb(small);
        EXPECT_EQ(skbs.live(), 0u);
    });
}

// Linux's zonelist: ZONE_NORMAL (above 4 GiB) first, ZONE_DMA when it has nothing left; the
// swiotlb pool sits at the top of the low zone, set up only because DRAM extends beyond 4 GiB.
TEST(swiotlb, pages_come_from_the_high_zone_first_then_the_low_one) {
    on_core_thread([] {
        high_dram_bench b;
        ASSERT_NE(b.k->io_tlb, nullptr);
        page* first = b.k->pages.alloc_pages();
        EXPECT_GE(first->addr, HIGH_DRAM);
        EXPECT_EQ(b.k->pages.virt_to_page(first->addr + 100), first);
        page* p = first;
        while (p && p->addr >= HIGH_DRAM) p = b.k->pages.alloc_pages();
        ASSERT_NE(p, nullptr);
        EXPECT_GE(p->addr, DRAM);
        EXPECT_LT(p->addr + PAGE_SIZE, DRAM + DRAM_SIZE - SMALL_SWIOTLB + 1);  // below the pool
        EXPECT_EQ(b.k->pages.virt_to_page(p->addr + 100), p);
        EXPECT_FALSE(b.k->io_tlb->is_swiotlb_buffer(p->addr));
        EXPECT_TRUE(b.k->io_tlb->is_swiotlb_buffer(DRAM + DRAM_SIZE - 1));
        b.k->pages.__free_pages(first);
        EXPECT_EQ(b.k->pages.alloc_pages(), first);  // freed high pages are served first again
        kernel_bench low;
        EXPECT_EQ(low.k->io_tlb, nullptr);  // all DRAM below 4 GiB: no swiotlb
        fake_core c2;
        kernel_memory mem = test_memory();
        mem.dram.push_back({HIGH_DRAM, HIGH_DRAM_SIZE});
        EXPECT_THROW(kernel(c2, b.costs, arch_flavour::armv7_pl310, mem), std::invalid_argument);
    });
}

// One range across 4 GiB is two zones, as Linux splits its pages between ZONE_DMA32 and
// ZONE_NORMAL: the pages above 4 GiB come first, and the swiotlb pool takes the top of the part
// below (as one zone ending above 4 GiB, the pool found no room and the kernel refused to boot).
TEST(swiotlb, a_range_across_4_gib_is_a_zone_on_each_side) {
    on_core_thread([] {
        constexpr addr_t across = (addr_t(1) << 32) - (8u << 20), across_size = 24u << 20;
        fake_core core;
        core.add_region(across, across_size, fake_core::attr::cacheable);
        core.add_region(POOL, POOL_SIZE, fake_core::attr::noncacheable);
        const cost_table costs = cost_table::load(costs_path());
        kernel_memory mem = test_memory();
        mem.dram = {{across, across_size}};
        mem.swiotlb_bytes = SMALL_SWIOTLB;
        kernel k(core, costs, arch_flavour::arm64, mem);
        ASSERT_NE(k.io_tlb, nullptr);
        EXPECT_TRUE(k.io_tlb->is_swiotlb_buffer((addr_t(1) << 32) - 1)) << "the top of the part below 4 GiB";
        EXPECT_FALSE(k.io_tlb->is_swiotlb_buffer((addr_t(1) << 32) - SMALL_SWIOTLB - 1));
        page* p = k.pages.alloc_pages();
        ASSERT_NE(p, nullptr);
        EXPECT_GE(p->addr, addr_t(1) << 32) << "ZONE_NORMAL first";
        EXPECT_EQ(k.pages.virt_to_page(p->addr + 100), p);
    });
}

// dma_map_single of a buffer beyond the mask: a slot below 4 GiB with the original's bytes (for
// DMA_FROM_DEVICE too), the slot cleaned, not the original; unmap invalidates the slot and copies
// the device's bytes back. A buffer within the mask maps to itself with no copy.
TEST(swiotlb, a_buffer_beyond_the_mask_is_bounced_one_within_is_not) {
    on_core_thread([] {
        high_dram_bench b;
        dma_device dev(*b.k, false);
        const addr_t buf = b.filled_page(7) + 64;
        b.core.c = {};
        const dma_addr_t tlb = dev.dma_map_single(buf, 1985, DMA_FROM_DEVICE);
        EXPECT_LT(tlb, 1ull << 32);
        EXPECT_TRUE(b.k->io_tlb->is_swiotlb_buffer(tlb));
        EXPECT_EQ(tlb % swiotlb::IO_TLB_SIZE, 0u);
        EXPECT_EQ(std::memcmp(b.core.host(tlb, 1985), b.core.host(buf, 1985), 1985), 0);
        EXPECT_EQ(b.core.c.cvac, 32u);
        EXPECT_TRUE(b.lines_touched(b.core.c.cvac_at, tlb, 1985));
        EXPECT_FALSE(b.lines_touched(b.core.c.cvac_at, buf, 1985));
        EXPECT_EQ(dev.bounced_maps(), 1u);
        EXPECT_EQ(b.k->io_tlb->slots_used(), 1u);
        // the FEC writes a frame into the slot; unmap brings it to the original
        std::vector<uint8_t> frame(1000);
        for (size_t i = 0; i < frame.size(); ++i) frame[i] = uint8_t(3 * i + 1);
        std::memcpy(b.core.host(tlb, frame.size()), frame.data(), frame.size());
        b.core.c = {};
        dev.dma_unmap_single(tlb, 1985, DMA_FROM_DEVICE);
        EXPECT_EQ(std::memcmp(b.core.host(buf, frame.size()), frame.data(), frame.size()), 0);
        EXPECT_EQ(b.core.c.ivac + b.core.c.civac, 32u);
        EXPECT_TRUE(b.lines_touched(b.core.c.ivac_at, tlb, 1985));
        EXPECT_FALSE(b.lines_touched(b.core.c.ivac_at, buf, 1985));
        EXPECT_EQ(b.k->io_tlb->slots_used(), 0u);
        // within the mask: the buffer itself, its own lines
        const addr_t low = DRAM + 0x200000;
        b.core.c = {};
        EXPECT_EQ(dev.dma_map_single(low, 1985, DMA_FROM_DEVICE), low);
        EXPECT_EQ(dev.bounced_maps(), 1u);
        EXPECT_TRUE(b.lines_touched(b.core.c.cvac_at, low, 1985));
        EXPECT_EQ(b.core.c.cached_writes, 0u);  // no copy
        // TX: the map copies the frame out, the unmap copies nothing back
        const addr_t tx = b.filled_page(40);
        const dma_addr_t txtlb = dev.dma_map_single(tx, 66, DMA_TO_DEVICE);
        EXPECT_EQ(std::memcmp(b.core.host(txtlb, 66), b.core.host(tx, 66), 66), 0);
        std::memset(b.core.host(txtlb, 66), 0xee, 66);
        dev.dma_unmap_single(txtlb, 66, DMA_TO_DEVICE);
        EXPECT_EQ(b.core.host(tx, 1)[0], uint8_t(40));
    });
}

// page_pool's pattern: the page mapped once (DMA_ATTR_SKIP_CPU_SYNC: the whole page copied, no
// maintenance); per frame the sync for the CPU invalidates the slot and copies exactly the synced
// bytes, the sync for the device (DMA_FROM_DEVICE) cleans the slot and copies nothing.
TEST(swiotlb, syncs_copy_what_the_kernel_copies) {
    on_core_thread([] {
        high_dram_bench b;
        dma_device dev(*b.k, false);
        const addr_t pg = b.filled_page(1);
        b.core.c = {};
        const dma_addr_t tlb = dev.dma_map_single(pg, PAGE_SIZE, DMA_FROM_DEVICE, DMA_ATTR_SKIP_CPU_SYNC);
        EXPECT_EQ(tlb % PAGE_SIZE, 0u);  // a page or more: page-aligned slots
        EXPECT_EQ(b.k->io_tlb->slots_used(), 2u);
        EXPECT_EQ(b.core.c.line_ops(), 0u);
        EXPECT_EQ(std::memcmp(b.core.host(tlb, PAGE_SIZE), b.core.host(pg, PAGE_SIZE), PAGE_SIZE), 0);
        std::memset(b.core.host(tlb + 256, 1520), 0x5a, 1520);  // the frame the FEC wrote
        b.core.c = {};
        dev.dma_sync_single_for_cpu(tlb + 256, 1520, DMA_FROM_DEVICE);
        EXPECT_EQ(b.core.c.ivac + b.core.c.civac, 24u);
        EXPECT_FALSE(b.lines_touched(b.core.c.ivac_at, pg, PAGE_SIZE));
        EXPECT_EQ(b.core.host(pg + 256, 1)[0], 0x5a);
        EXPECT_EQ(b.core.host(pg + 256 + 1519, 1)[0], 0x5a);
        EXPECT_EQ(b.core.host(pg + 256 + 1520, 1)[0], uint8_t(1 + 256 + 1520));  // not past the sync
        EXPECT_EQ(b.core.host(pg + 255, 1)[0], uint8_t(1 + 255));
        b.core.c = {};
        b.core.host(pg + 300, 1)[0] = 0x11;  // the CPU's own bytes must not reach the slot
        dev.dma_sync_single_for_device(tlb + 256, 1520, DMA_FROM_DEVICE);
        EXPECT_EQ(b.core.c.cvac, 24u);
        EXPECT_TRUE(b.lines_touched(b.core.c.cvac_at, tlb + 256, 1520));
        EXPECT_EQ(b.core.c.cached_writes + b.core.c.cached_reads, 0u);
        EXPECT_EQ(b.core.host(tlb + 300, 1)[0], 0x5a);
        // DMA_BIDIRECTIONAL (XDP_TX) does copy for the device
        dev.dma_sync_single_for_device(tlb + 256, 1520, DMA_BIDIRECTIONAL);
        EXPECT_EQ(b.core.host(tlb + 300, 1)[0], 0x11);
        dev.dma_unmap_single(tlb, PAGE_SIZE, DMA_FROM_DEVICE, DMA_ATTR_SKIP_CPU_SYNC);
        EXPECT_EQ(b.k->io_tlb->slots_used(), 0u);
    });
}

// swiotlb_release_slots' merge loop runs once per free slot before the released one in its
// segment: three one-slot mappings released in order make 0 + 1 + 2 passes.
TEST(swiotlb, release_merges_the_free_slots_before_it) {
    auto instructions = [](const std::string& table) {
        uint64_t n = 0;
        on_core_thread([&] {
            high_dram_bench b(table);
            dma_device dev(*b.k, false);
            const addr_t pg = b.filled_page(9);
            std::vector<dma_addr_t> m;
            for (int i = 0; i < 3; ++i) m.push_back(dev.dma_map_single(pg + 1024 * i, 1000, DMA_TO_DEVICE));
            EXPECT_EQ(m[1] - m[0], swiotlb::IO_TLB_SIZE);  // next fit
            EXPECT_EQ(m[2] - m[1], swiotlb::IO_TLB_SIZE);
            const uint64_t i0 = b.core.c.instructions;
            for (dma_addr_t a : m) dev.dma_unmap_single(a, 1000, DMA_TO_DEVICE);
            n = b.core.c.instructions - i0;
            // the freed slots are found again, from the area's next index on
            EXPECT_EQ(dev.dma_map_single(pg, 1000, DMA_TO_DEVICE), m[2] + swiotlb::IO_TLB_SIZE);
        });
        return n;
    };
    EXPECT_EQ(instructions(costs_with_dearer("swiotlb_release_merge")), instructions(costs_path()) + 3 * 1000);
}
