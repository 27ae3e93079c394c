#include "firmware/kernel/page_pool.h"

#include <stdexcept>

namespace fecsim::firmware {

namespace {
constexpr uint32_t pool_hot_bytes = 128;  // params + alloc.count + recycle stats
}

page_pool::page_pool(kernel& k, const page_pool_params& p, int id) : k_(k), p_(p), id_(id) {
    if (p_.order != 0) throw std::invalid_argument("page_pool: only order-0 pages are modelled");
    if (p_.pool_size == 0) p_.pool_size = 1024;
    if ((p_.flags & PP_FLAG_DMA_MAP) && p_.dma_dir != DMA_FROM_DEVICE && p_.dma_dir != DMA_BIDIRECTIONAL)
        throw std::invalid_argument("page_pool: DMA_MAP needs FROM_DEVICE or BIDIRECTIONAL");
    if ((p_.flags & PP_FLAG_DMA_SYNC_DEV) && (!(p_.flags & PP_FLAG_DMA_MAP) || p_.max_len == 0))
        throw std::invalid_argument("page_pool: DMA_SYNC_DEV needs DMA_MAP and max_len");
    if ((p_.flags & PP_FLAG_DMA_MAP) && !p_.dev) throw std::invalid_argument("page_pool: DMA_MAP needs a device");
    dma_sync_ = (p_.flags & PP_FLAG_DMA_SYNC_DEV) != 0;
    sim_struct_ = k_.kmalloc(pool_hot_bytes + PP_ALLOC_CACHE_SIZE * 8);
    sim_ring_ = k_.kmalloc(std::min<uint32_t>(p_.pool_size * 8, PAGE_SIZE));
    cache_.reserve(PP_ALLOC_CACHE_SIZE);
    ring_.assign(p_.pool_size, nullptr);
}

dma_addr_t page_pool::page_pool_get_dma_addr(page* p) {
    k_.core.touch(k_.pages.page_struct(p), 8, false);
    return p->dma_addr;
}

bool page_pool::ptr_ring_produce(page* p) {
    k_.exec(path::page_pool_recycle_ring);
    if (ring_count_ == ring_.size()) return false;
    const size_t tail = ring_head_ + ring_count_;  // < 2 * size: one wrap, no division
    const size_t slot = tail < ring_.size() ? tail : tail - ring_.size();
    k_.core.touch(sim_ring_ + (slot * 8) % PAGE_SIZE, 8, true);
    ring_[slot] = p;
    ++ring_count_;
    return true;
}

page* page_pool::ptr_ring_consume() {
    if (ring_count_ == 0) return nullptr;
    k_.core.touch(sim_ring_ + (ring_head_ * 8) % PAGE_SIZE, 8, true);
    page* p = ring_[ring_head_];
    ring_head_ = ring_head_ + 1 == ring_.size() ? 0 : ring_head_ + 1;
    --ring_count_;
    return p;
}

// page_pool_refill_alloc_cache: move up to 64 pages from the ring into the alloc cache.
page* page_pool::refill_alloc_cache() {
    cpu::scope s(k_.core, "page_pool_refill_alloc_cache");
    k_.exec(path::page_pool_refill);
    while (cache_.size() < PP_ALLOC_CACHE_REFILL) {
        page* p = ptr_ring_consume();
        if (!p) break;
        k_.exec(path::page_pool_refill_page);
        cache_.push_back(p);
    }
    if (cache_.empty()) return nullptr;
    ++stats_.alloc_refill;
    page* p = cache_.back();
    cache_.pop_back();
    return p;
}

bool page_pool::page_pool_dma_map(page* p) {
    cpu::scope s(k_.core, "page_pool_dma_map");
    k_.exec(path::page_pool_dma_map);
    // Whole page, DMA_ATTR_SKIP_CPU_SYNC | WEAK_ORDERING: the mapping itself issues no maintenance.
    p->dma_addr = p_.dev->dma_map_single(p->addr, PAGE_SIZE, p_.dma_dir, DMA_ATTR_SKIP_CPU_SYNC);
    p->pp_mapped = true;
    if (dma_sync_) page_pool_dma_sync_for_device(p, p_.max_len);
    return true;
}

// __page_pool_alloc_pages_slow: bulk-allocate 64 pages, map and sync each, keep all but one.
page* page_pool::alloc_pages_slow() {
    cpu::scope s(k_.core, "__page_pool_alloc_pages_slow");
    k_.exec(path::page_pool_alloc_slow);
    ++stats_.alloc_slow;
    for (unsigned i = 0; i < PP_ALLOC_CACHE_REFILL; ++i) {
        page* p = k_.pages.alloc_pages();
        if (!p) break;
        k_.exec(path::page_pool_alloc_slow_page);
        if (p_.flags & PP_FLAG_DMA_MAP) page_pool_dma_map(p);
        p->pp = this;
        k_.core.touch(k_.pages.page_struct(p), 32, true);  // pp, pp_magic, dma_addr
        ++hold_cnt_;
        ++stats_.alloc_slow_pages;
        cache_.push_back(p);
    }
    if (cache_.empty()) {
        ++stats_.alloc_empty;
        return nullptr;
    }
    page* p = cache_.back();
    cache_.pop_back();
    return p;
}

page* page_pool::page_pool_alloc_pages() {
    cpu::scope s(k_.core, "page_pool_alloc_pages");
    k_.exec(path::page_pool_alloc_fast);
    k_.core.touch(sim_struct_, 64, true);
    page* p = nullptr;
    if (!cache_.empty()) {
        k_.core.touch(sim_struct_ + pool_hot_bytes + (cache_.size() - 1) * 8, 8, false);
        p = cache_.back();
        cache_.pop_back();
        ++stats_.alloc_fast;
    } else {
        p = refill_alloc_cache();
        if (!p) p = alloc_pages_slow();
    }
    return p;
}

void page_pool::page_pool_dma_sync_for_device(page* p, uint32_t dma_sync_size) {
    const uint32_t len = std::min(dma_sync_size, p_.max_len);
    p_.dev->dma_sync_single_for_device(p->dma_addr + p_.offset, len, p_.dma_dir);
}

// page_pool_return_page: release (unmap, forget) and give the page back to the allocator.
void page_pool::page_pool_return_page(page* p) {
    cpu::scope s(k_.core, "page_pool_return_page");
    page_pool_release_page(p);
    k_.pages.__free_pages(p);
}

void page_pool::page_pool_release_page(page* p) {
    cpu::scope s(k_.core, "page_pool_release_page");
    k_.exec(path::page_pool_return_page);
    if (p->pp_mapped) p_.dev->dma_unmap_single(p->dma_addr, PAGE_SIZE, p_.dma_dir, DMA_ATTR_SKIP_CPU_SYNC);
    p->pp_mapped = false;
    p->pp = nullptr;
    p->dma_addr = 0;
    ++release_cnt_;
    ++stats_.released;
    k_.core.touch(k_.pages.page_struct(p), 32, true);
}

// __page_pool_put_page + page_pool_recycle_in_cache / _in_ring.
void page_pool::page_pool_put_page(page* p, int32_t dma_sync_size, bool allow_direct) {
    cpu::scope s(k_.core, "page_pool_put_page");
    // not direct (an skb's page): the branch to the ring, whose recycle is charged apart
    k_.exec(allow_direct ? path::page_pool_put_page : path::page_pool_put_page_ring);
    k_.core.touch(k_.pages.page_struct(p), 8, false);  // refcount, pp_magic
    if (p->pp != this) throw std::logic_error("page_pool_put_page: page does not belong to this pool");
    if (p->refcount != 1) {
        // Shared page: the pool lets it go (unmapped), the last put_page frees it.
        ++stats_.recycle_released_refcnt;
        page_pool_release_page(p);
        k_.pages.__free_pages(p);
        return;
    }
    if (dma_sync_) page_pool_dma_sync_for_device(p, static_cast<uint32_t>(dma_sync_size));
    if (allow_direct) {
        if (cache_.size() < PP_ALLOC_CACHE_SIZE) {
            k_.core.touch(sim_struct_ + pool_hot_bytes + cache_.size() * 8, 8, true);
            cache_.push_back(p);
            ++stats_.recycle_cached;
            return;
        }
        ++stats_.recycle_cache_full;
    }
    if (ptr_ring_produce(p)) {
        ++stats_.recycle_ring;
        return;
    }
    ++stats_.recycle_ring_full;
    page_pool_return_page(p);
}

}  // namespace fecsim::firmware
