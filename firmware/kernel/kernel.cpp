#include "firmware/kernel/kernel.h"

#include <stdexcept>

namespace fecsim::firmware {

// ---------------------------------------------------------------------------------------------
page_allocator::page_allocator(kernel& k, addr_t base, uint64_t size) : k_(k) {
    base_ = (base + PAGE_SIZE - 1) & ~addr_t(PAGE_SIZE - 1);
    const uint64_t usable = size > (base_ - base) ? size - (base_ - base) : 0;
    const uint64_t n = usable / PAGE_SIZE;
    // The vmemmap takes the first pages of the range: 64 B of struct page per page.
    const uint64_t map_pages = (n * STRUCT_PAGE_BYTES + PAGE_SIZE - 1) / PAGE_SIZE;
    if (n <= map_pages + 1) throw std::invalid_argument("page allocator: DRAM range too small");
    vmemmap_ = base_;
    pages_.resize(n - map_pages);
    // struct page i describes the page at base_ + (map_pages + i) * PAGE_SIZE; its simulated
    // struct lives at vmemmap_ + i * 64.
    for (uint64_t i = 0; i < pages_.size(); ++i) pages_[i].addr = base_ + (map_pages + i) * PAGE_SIZE;
    end_pfn_ = pages_.size();
}

page* page_allocator::alloc_pages() {
    cpu::scope s(k_.core, "__alloc_pages");
    k_.exec(path::alloc_pages);
    page* p = nullptr;
    if (!free_.empty()) {
        p = free_.back();
        free_.pop_back();
    } else if (next_pfn_ < end_pfn_) {
        p = &pages_[next_pfn_++];
    } else {
        return nullptr;
    }
    p->refcount = 1;
    p->pp = nullptr;
    p->dma_addr = 0;
    p->pp_mapped = false;
    k_.core.touch(page_struct(p), STRUCT_PAGE_BYTES, true);
    return p;
}

page* page_allocator::alloc_boot_page(const char* what) {
    page* p = alloc_pages();
    if (!p) throw memory_exhausted(memory_exhausted::pool::dram, std::string("DRAM exhausted allocating ") + what);
    return p;
}

void page_allocator::__free_pages(page* p) {
    cpu::scope s(k_.core, "__free_pages");
    k_.exec(path::free_pages);
    k_.core.touch(page_struct(p), STRUCT_PAGE_BYTES, true);
    if (p->refcount <= 0) throw std::logic_error("__free_pages: page already free");
    if (--p->refcount > 0) return;  // put_page_testzero: other references remain
    p->pp = nullptr;
    free_.push_back(p);
}

page* page_allocator::virt_to_page(addr_t a) {
    if (pages_.empty() || a < pages_.front().addr) return nullptr;
    const uint64_t i = (a - pages_.front().addr) >> PAGE_SHIFT;
    return i < pages_.size() ? &pages_[i] : nullptr;
}

// ---------------------------------------------------------------------------------------------
kmem_cache::kmem_cache(kernel& k, std::string name, uint32_t size)
    : k_(k), name_(std::move(name)), size_((size + SMP_CACHE_BYTES - 1) & ~(SMP_CACHE_BYTES - 1)) {}

addr_t kmem_cache::alloc() {
    k_.exec(path::kmem_cache_alloc);
    if (free_.empty()) {
        // New slab: one page split into objects (objects > 4 KiB are not used by the path).
        page* p = k_.pages.alloc_pages();
        if (!p) return 0;
        const uint32_t per = size_ <= PAGE_SIZE ? PAGE_SIZE / size_ : 1;
        for (uint32_t i = per; i-- > 0;) free_.push_back(p->addr + addr_t(i) * size_);
    }
    const addr_t obj = free_.back();
    free_.pop_back();
    ++in_use_;
    // The freelist pointer lives in the object.
    k_.core.touch(obj, 8, false);
    return obj;
}

void kmem_cache::free(addr_t obj) {
    k_.exec(path::kmem_cache_free);
    k_.core.touch(obj, 8, true);
    free_.push_back(obj);
    --in_use_;
}

// ---------------------------------------------------------------------------------------------
addr_t page_frag_cache::page_frag_alloc(uint32_t fragsz) {
    k_.exec(path::page_frag_alloc);
    fragsz = (fragsz + SMP_CACHE_BYTES - 1) & ~(SMP_CACHE_BYTES - 1);
    if (fragsz > PAGE_SIZE) return 0;
    if (!cur_ || offset_ < fragsz) {
        if (cur_) k_.pages.__free_pages(cur_);  // drop the cache's own reference
        cur_ = k_.pages.alloc_pages();
        if (!cur_) return 0;
        offset_ = PAGE_SIZE;  // alloc_pages gave the cache's own reference
    }
    offset_ -= fragsz;
    ++cur_->refcount;
    k_.core.touch(k_.pages.page_struct(cur_), 8, true);
    return cur_->addr + offset_;
}

void page_frag_cache::page_frag_free(addr_t a) {
    k_.exec(path::page_frag_free);
    page* p = k_.pages.virt_to_page(a);
    if (!p || p->refcount <= 0) throw std::logic_error("page_frag_free: not a live frag");
    k_.core.touch(k_.pages.page_struct(p), 8, true);
    k_.pages.__free_pages(p);
}

// ---------------------------------------------------------------------------------------------
addr_t coherent_pool::dma_alloc_coherent(uint64_t size, dma_addr_t* handle, uint64_t align) {
    const uint64_t start = (base_ + used_ + align - 1) & ~(align - 1);
    if (start + size > base_ + size_)
        throw memory_exhausted(memory_exhausted::pool::coherent,
                               "dma_alloc_coherent: coherent pool exhausted (" + std::to_string(size) +
                                 " bytes requested, " + std::to_string(size_ - used_) + " left)");
    used_ = start + size - base_;
    static const std::vector<uint8_t> zeros(PAGE_SIZE, 0);
    for (uint64_t off = 0; off < size; off += PAGE_SIZE)
        k_.core.write(start + off, zeros.data(), std::min<uint64_t>(PAGE_SIZE, size - off));
    if (handle) *handle = start;
    return start;
}

// ---------------------------------------------------------------------------------------------
kernel::kernel(cpu::core_api& c, const cost_table& t, arch_flavour a, const kernel_memory& mem)
    : core(c), costs(t), arch(a), pages(*this, mem.dram_base, mem.dram_size),
      coherent(*this, mem.coherent_base, mem.coherent_size), frags(*this),
      skbuff_head_cache(*this, "skbuff_head_cache", 256) {
    for (uint32_t sz = 64; sz <= PAGE_SIZE; sz *= 2) kmalloc_caches_.emplace_back(*this, "kmalloc", sz);
}

uint32_t kernel::readl(addr_t a) {
    const uint32_t v = core.read32(a);
    if (arch == arch_flavour::arm64) core.dmb(); else core.dsb();
    return v;
}

// writel's __iowmb(): dma_wmb (DMB OSHST) on arm64, wmb() on ARMv7.
void kernel::writel(uint32_t v, addr_t a) {
    if (arch == arch_flavour::arm64) core.dmb(); else wmb();
    core.write32(a, v);
}

addr_t kernel::kmalloc_atomic(uint32_t size) {
    for (auto& c : kmalloc_caches_)
        if (size <= c.size()) return c.alloc();
    throw std::logic_error("kmalloc: " + std::to_string(size) + " bytes is above the modelled size classes");
}

addr_t kernel::kmalloc(uint32_t size) {
    const addr_t a = kmalloc_atomic(size);
    if (!a)
        throw memory_exhausted(memory_exhausted::pool::dram,
                               "kmalloc(" + std::to_string(size) + "): DRAM exhausted while the kernel boots");
    return a;
}

void kernel::kfree(addr_t a, uint32_t size) {
    for (auto& c : kmalloc_caches_)
        if (size <= c.size()) return c.free(a);
}

}  // namespace fecsim::firmware
