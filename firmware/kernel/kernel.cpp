#include "firmware/kernel/kernel.h"

#include "config/config.h"
#include "firmware/kernel/swiotlb.h"

#include <algorithm>
#include <stdexcept>

namespace fecsim::firmware {

// ---------------------------------------------------------------------------------------------
page_allocator::page_allocator(kernel& k, const std::vector<range>& dram) : k_(k) {
    for (const range& r : dram) {
        zone z;
        const addr_t base = (r.base + PAGE_SIZE - 1) & ~addr_t(PAGE_SIZE - 1);
        const uint64_t usable = r.size > (base - r.base) ? r.size - (base - r.base) : 0;
        const uint64_t n = usable / PAGE_SIZE;
        // The vmemmap takes the first pages of the range: 64 B of struct page per page.
        const uint64_t map_pages = (n * STRUCT_PAGE_BYTES + PAGE_SIZE - 1) / PAGE_SIZE;
        if (n <= map_pages + 1) {
            const std::string m = "a DRAM range of " + std::to_string(r.size) +
                                  " bytes leaves the page allocator no page after its struct pages";
            if (r.size_key.empty()) throw std::invalid_argument(m);
            throw param_error(r.size_key, m);
        }
        z.vmemmap = base;
        z.end = base + n * PAGE_SIZE;
        z.pages.resize(n - map_pages);
        // struct page i describes the page at base + (map_pages + i) * PAGE_SIZE; its simulated
        // struct lives at vmemmap + i * 64.
        for (uint64_t i = 0; i < z.pages.size(); ++i) z.pages[i].addr = base + (map_pages + i) * PAGE_SIZE;
        z.end_pfn = z.pages.size();
        zones_.push_back(std::move(z));
    }
    std::sort(zones_.begin(), zones_.end(), [](const zone& a, const zone& b) { return a.vmemmap > b.vmemmap; });
    for (size_t i = 1; i < zones_.size(); ++i)
        if (zones_[i].end > zones_[i - 1].vmemmap) throw std::invalid_argument("page allocator: DRAM ranges overlap");
}

page_allocator::zone& page_allocator::zone_of(const page* p) {
    return const_cast<zone&>(static_cast<const page_allocator&>(*this).zone_of(p));
}

const page_allocator::zone& page_allocator::zone_of(const page* p) const {
    for (const zone& z : zones_)
        if (!z.pages.empty() && p >= z.pages.data() && p < z.pages.data() + z.pages.size()) return z;
    throw std::logic_error("page allocator: not a page of any zone");
}

addr_t page_allocator::page_struct(const page* p) const {
    const zone& z = zone_of(p);
    return z.vmemmap + (p - z.pages.data()) * STRUCT_PAGE_BYTES;
}

// A block from one zone's free list, else a never-used block, naturally aligned (the pages
// skipped to align it go to order 0); nullptr when the zone has neither.
page* page_allocator::alloc_from(zone& z, unsigned order) {
    if (!z.free[order].empty()) {
        page* p = z.free[order].back();
        z.free[order].pop_back();
        return p;
    }
    const uint64_t n = uint64_t(1) << order;
    uint64_t pfn = z.next_pfn;
    while (pfn < z.end_pfn && (z.pages[pfn].addr >> PAGE_SHIFT) % n) ++pfn;
    if (pfn + n > z.end_pfn) return nullptr;
    for (; z.next_pfn < pfn; ++z.next_pfn) z.free[0].push_back(&z.pages[z.next_pfn]);
    z.next_pfn = pfn + n;
    return &z.pages[pfn];
}

page* page_allocator::alloc_pages(unsigned order) {
    cpu::scope s(k_.core, "__alloc_pages");
    k_.exec(path::alloc_pages);
    if (order > PAGE_ALLOC_COSTLY_ORDER) throw std::logic_error("alloc_pages: order above the per-CPU lists");
    page* p = nullptr;
    for (zone& z : zones_)
        if ((p = alloc_from(z, order))) break;
    if (!p) return nullptr;
    p->refcount = 1;
    p->pp = nullptr;
    p->dma_addr = 0;
    p->pp_mapped = false;
    p->order = uint8_t(order);
    k_.core.touch(page_struct(p), STRUCT_PAGE_BYTES, true);
    if (order) prep_compound_page(p);
    return p;
}

addr_t page_allocator::memblock_alloc_below(uint64_t size, addr_t limit) {
    const uint64_t n = (size + PAGE_SIZE - 1) / PAGE_SIZE;
    for (zone& z : zones_) {
        if (z.end > limit || z.end_pfn - z.next_pfn < n) continue;
        z.end_pfn -= n;
        return z.pages[z.end_pfn].addr;
    }
    return 0;
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
    zone_of(p).free[p->order].push_back(p);
}

uint64_t page_allocator::free_pages() const {
    uint64_t n = 0;
    for (const zone& z : zones_) {
        n += z.end_pfn - z.next_pfn;
        for (unsigned o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; ++o) n += z.free[o].size() << o;
    }
    return n;
}

uint64_t page_allocator::total_pages() const {
    uint64_t n = 0;
    for (const zone& z : zones_) n += z.pages.size();
    return n;
}

page* page_allocator::virt_to_page(addr_t a) {
    for (zone& z : zones_) {
        if (z.pages.empty() || a < z.pages.front().addr) continue;
        const uint64_t i = (a - z.pages.front().addr) >> PAGE_SHIFT;
        return i < z.pages.size() ? &z.pages[i] : nullptr;
    }
    return nullptr;
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
namespace {

// Linux's zones split memory by address, not by memblock range: a range across 4 GiB has its
// pages below in ZONE_DMA32 and those above in ZONE_NORMAL, which the zonelist serves first and
// whose top the swiotlb pool cannot take. Each part is a zone here.
std::vector<page_allocator::range> dram_ranges(const kernel_memory& mem) {
    std::vector<page_allocator::range> zones;
    constexpr addr_t limit = kernel::DMA_ZONE_LIMIT;
    for (const page_allocator::range& r : mem.dram) {
        if (r.base < limit && r.size > limit - r.base) {
            zones.push_back({r.base, limit - r.base, r.size_key});
            zones.push_back({limit, r.size - (limit - r.base), r.size_key});
        } else {
            zones.push_back(r);
        }
    }
    return zones;
}

}  // namespace

kernel::kernel(cpu::core_api& c, const cost_table& t, arch_flavour a, const kernel_memory& mem)
    : core(c), costs(t), arch(a), pages(*this, dram_ranges(mem)),
      coherent(*this, mem.coherent_base, mem.coherent_size), frags(*this),
      skbuff_head_cache(*this, "skbuff_head_cache", 256) {
    for (uint32_t sz = 64; sz <= PAGE_SIZE; sz *= 2) kmalloc_caches_.emplace_back(*this, "kmalloc", sz);
    if (pages.max_address() <= DMA_ZONE_LIMIT) return;
    if (arch != arch_flavour::arm64) throw std::invalid_argument("an ARMv7 kernel without LPAE has no DRAM above 4 GiB");
    // swiotlb_init: the pool by memblock_alloc_low (top-down below the DMA zone's limit), its
    // records by memblock_alloc (top-down anywhere)
    unsigned nareas = 1;
    while (nareas < mem.possible_cpus) nareas *= 2;
    const uint64_t nslabs = mem.swiotlb_bytes >> swiotlb::IO_TLB_SHIFT;
    if (nslabs < nareas || nslabs % nareas) throw std::invalid_argument("swiotlb: the pool does not split into its areas");
    const addr_t pool = pages.memblock_alloc_below(mem.swiotlb_bytes, DMA_ZONE_LIMIT);
    const addr_t records = pages.memblock_alloc_below(swiotlb::records_bytes(nslabs, nareas), ~addr_t(0));
    if (!pool || !records)
        throw memory_exhausted(memory_exhausted::pool::dram, "no room below 4 GiB for the " +
                                                                 std::to_string(mem.swiotlb_bytes >> 20) + " MiB swiotlb pool");
    io_tlb = std::make_unique<swiotlb>(*this, pool, nslabs, records, nareas);
}

kernel::~kernel() = default;

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
