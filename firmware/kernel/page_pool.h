// page_pool (net/core/page_pool.c, ~v6.6-v6.17) for order-0 pages: a per-pool lockless alloc
// cache of 128 entries refilled 64 at a time from a ptr_ring of `pool_size` entries, a slow
// path that allocates 64 fresh pages from the buddy allocator, maps them and syncs `max_len`
// for the device, and the recycle path that syncs min(size, max_len) from `offset` before
// returning the page to the cache (direct) or the ring. Left out: NUMA checks, pfmemalloc,
// fragments, netmem, the xarray of inflight pages and the release worker.
#pragma once

#include "firmware/kernel/dma.h"

#include <cstdint>
#include <vector>

namespace fecsim::firmware {

constexpr unsigned PP_FLAG_DMA_MAP = 1u << 0;
constexpr unsigned PP_FLAG_DMA_SYNC_DEV = 1u << 1;
constexpr unsigned PP_ALLOC_CACHE_SIZE = 128;
constexpr unsigned PP_ALLOC_CACHE_REFILL = 64;

struct page_pool_params {
    unsigned flags = 0;
    unsigned order = 0;
    unsigned pool_size = 0;  // ptr_ring size (0 -> 1024)
    dma_device* dev = nullptr;
    dma_data_direction dma_dir = DMA_FROM_DEVICE;
    unsigned max_len = 0;
    unsigned offset = 0;
};

struct page_pool_stats {
    uint64_t alloc_fast = 0, alloc_slow = 0, alloc_slow_pages = 0, alloc_empty = 0, alloc_refill = 0;
    uint64_t recycle_cached = 0, recycle_cache_full = 0, recycle_ring = 0, recycle_ring_full = 0;
    uint64_t recycle_released_refcnt = 0, released = 0;
};

class page_pool {
public:
    // page_pool_create: allocates the pool struct, alloc cache and ring in kernel memory.
    page_pool(kernel& k, const page_pool_params& p, int id);

    // page_pool_dev_alloc_pages (GFP_ATOMIC): nullptr when the buddy allocator is empty.
    page* page_pool_alloc_pages();
    // page_pool_put_page(pool, page, dma_sync_size, allow_direct); size -1 = full (max_len).
    void page_pool_put_page(page* p, int32_t dma_sync_size, bool allow_direct);
    void page_pool_put_full_page(page* p, bool allow_direct) { page_pool_put_page(p, -1, allow_direct); }
    void page_pool_recycle_direct(page* p) { page_pool_put_full_page(p, true); }
    // page_pool_release_page (<= v6.3): unmap and disconnect; the page is then a normal page.
    void page_pool_release_page(page* p);
    dma_addr_t page_pool_get_dma_addr(page* p);

    const page_pool_params& params() const { return p_; }
    int id() const { return id_; }
    const page_pool_stats& stats() const { return stats_; }
    void reset_stats() { stats_ = {}; }
    // Accounting: pages ever taken from the buddy allocator (hold_cnt) and given back
    // (release_cnt); those in between are in the cache, in the ring, or in flight.
    uint64_t hold_cnt() const { return hold_cnt_; }
    uint64_t release_cnt() const { return release_cnt_; }
    size_t cached() const { return cache_.size(); }
    size_t in_ring() const { return ring_count_; }
    uint64_t inflight() const { return hold_cnt_ - release_cnt_ - cache_.size() - ring_count_; }

private:
    page* refill_alloc_cache();
    page* alloc_pages_slow();
    bool page_pool_dma_map(page* p);
    void page_pool_dma_sync_for_device(page* p, uint32_t dma_sync_size);
    void page_pool_return_page(page* p);
    bool ptr_ring_produce(page* p);
    page* ptr_ring_consume();

    kernel& k_;
    page_pool_params p_;
    int id_;
    bool dma_sync_;
    addr_t sim_struct_;  // struct page_pool (hot fields + alloc cache array)
    addr_t sim_ring_;    // ptr_ring queue array
    std::vector<page*> cache_;
    std::vector<page*> ring_;
    size_t ring_head_ = 0, ring_count_ = 0;
    uint64_t hold_cnt_ = 0, release_cnt_ = 0;
    page_pool_stats stats_;
};

}  // namespace fecsim::firmware
