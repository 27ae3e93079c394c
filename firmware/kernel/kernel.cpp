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

page* page_allocator::alloc_pages(unsigned order) {
    cpu::scope s(k_.core, "__alloc_pages");
    k_.exec(path::alloc_pages);
    if (order > PAGE_ALLOC_COSTLY_ORDER) throw std::logic_error("alloc_pages: order above the per-CPU lists");
    page* p = nullptr;
    if (!free_[order].empty()) {
        p = free_[order].back();
        free_[order].pop_back();
    } else {
        // A never-used block, naturally aligned; the pages skipped to align it go to order 0.
        const uint64_t n = uint64_t(1) << order;
        uint64_t pfn = next_pfn_;
        while (pfn < end_pfn_ && (pages_[pfn].addr >> PAGE_SHIFT) % n) ++pfn;
        if (pfn + n > end_pfn_) return nullptr;
        for (; next_pfn_ < pfn; ++next_pfn_) free_[0].push_back(&pages_[next_pfn_]);
        p = &pages_[pfn];
        next_pfn_ = pfn + n;
    }
    p->refcount = 1;
    p->pp = nullptr;
    p->dma_addr = 0;
    p->pp_mapped = false;
    p->order = uint8_t(order);
    k_.core.touch(page_struct(p), STRUCT_PAGE_BYTES, true);
    if (order) prep_compound_page(p);
    return p;
}

// Every tail page points to the head (compound_head) and the first tail holds the order.
void page_allocator::prep_compound_page(page* head) {
    cpu::scope s(k_.core, "prep_compound_page");
    k_.exec(path::prep_compound_page);
    for (uint64_t i = 1; i < (uint64_t(1) << head->order); ++i) {
        k_.exec(path::prep_compound_tail);
        head[i].head = head;
        k_.core.touch(page_struct(head + i), 16, true);
    }
}

page* page_allocator::alloc_boot_page(const char* what) {
    page* p = alloc_pages();
    if (!p) throw memory_exhausted(memory_exhausted::pool::dram, std::string("DRAM exhausted allocating ") + what);
    return p;
}

void page_allocator::__free_pages(page* p) {
    cpu::scope s(k_.core, "__free_pages");
    k_.core.touch(page_struct(p), STRUCT_PAGE_BYTES, true);
    if (p->refcount <= 0) throw std::logic_error("__free_pages: page already free");
    if (--p->refcount > 0) {  // put_page_testzero: other references remain
        k_.exec(path::free_pages);
        return;
    }
    free_the_page(p);
}

// free_unref_page onto the per-CPU list of the block's order; free_pages_prepare clears every
// tail's compound_head (its per-tail checks are not charged: once per 13 legacy skb heads).
void page_allocator::free_the_page(page* p) {
    cpu::scope s(k_.core, "free_the_page");
    k_.exec(path::free_pages);
    if (p->head || p->refcount != 0) throw std::logic_error("free_the_page: not an unreferenced head page");
    for (uint64_t i = 1; i < (uint64_t(1) << p->order); ++i) {
        p[i].head = nullptr;
        k_.core.touch(page_struct(p + i), 16, true);
    }
    p->pp = nullptr;
    free_[p->order].push_back(p);
}

uint64_t page_allocator::free_pages() const {
    uint64_t n = end_pfn_ - next_pfn_;
    for (unsigned o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; ++o) n += free_[o].size() << o;
    return n;
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
page* page_frag_cache::__page_frag_cache_refill() {
    page* p = k_.pages.alloc_pages(PAGE_FRAG_CACHE_MAX_ORDER);
    size_ = p ? PAGE_FRAG_CACHE_MAX_SIZE : PAGE_SIZE;
    if (!p) p = k_.pages.alloc_pages(0);
    if (!p) return nullptr;
    p->refcount += int(PAGE_FRAG_CACHE_MAX_SIZE);  // page_ref_add
    k_.core.touch(k_.pages.page_struct(p), 8, true);
    pagecnt_bias_ = int(PAGE_FRAG_CACHE_MAX_SIZE) + 1;
    offset_ = size_;
    va_ = p;
    return p;
}

addr_t page_frag_cache::page_frag_alloc(uint32_t fragsz) {
    k_.exec(path::page_frag_alloc);
    fragsz = (fragsz + SMP_CACHE_BYTES - 1) & ~(SMP_CACHE_BYTES - 1);
    if (!va_ && !__page_frag_cache_refill()) return 0;
    int64_t offset = int64_t(offset_) - fragsz;
    if (offset < 0) {
        // page_ref_sub_and_test(page, pagecnt_bias): give back the references not handed out
        k_.core.touch(k_.pages.page_struct(va_), 8, true);
        va_->refcount -= pagecnt_bias_;
        if (va_->refcount == 0) {  // every frag already freed: reuse the page in place
            va_->refcount = int(PAGE_FRAG_CACHE_MAX_SIZE) + 1;
            pagecnt_bias_ = int(PAGE_FRAG_CACHE_MAX_SIZE) + 1;
        } else {
            va_ = nullptr;  // the last page_frag_free frees it
            if (!__page_frag_cache_refill()) return 0;
        }
        offset = int64_t(size_) - fragsz;
        if (offset < 0) return 0;  // larger than the cache's page
    }
    --pagecnt_bias_;
    offset_ = uint32_t(offset);
    return va_->addr + addr_t(offset);
}

void page_frag_cache::page_frag_free(addr_t a) {
    k_.exec(path::page_frag_free);
    page* p = k_.pages.virt_to_head_page(a);
    if (!p || p->refcount <= 0) throw std::logic_error("page_frag_free: not a live frag");
    k_.core.touch(k_.pages.page_struct(p), 8, true);
    if (--p->refcount == 0) k_.pages.free_the_page(p);
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
