// The simulated kernel the driver port runs in: the core it executes on, the code-path cost
// table, the architecture's barrier and MMIO accessor semantics, and kernel memory (page
// allocator over the cacheable DRAM, a slab for kernel objects, page_frag for legacy skbs, and
// the coherent DMA pool). Everything lives in simulated memory; host-side structs only mirror
// what the model needs to make decisions, and their simulated copies are touched for cost.
#pragma once

#include "firmware/kernel/costs.h"
#include "models/cpu/core_api.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fecsim::firmware {

using cpu::addr_t;
using dma_addr_t = uint64_t;  // bus address: the linear map is identity (VA == PA == bus)

constexpr uint32_t PAGE_SIZE = 4096;
constexpr uint32_t PAGE_SHIFT = 12;
constexpr uint32_t SMP_CACHE_BYTES = 64;
constexpr uint32_t STRUCT_PAGE_BYTES = 64;  // sizeof(struct page) on arm64

// arm64: readl/writel imply DMB (dma_rmb/dma_wmb); ARMv7 with an outer cache implies DSB
// (__iormb = rmb, __iowmb = wmb) and the DMA ops also maintain the PL310 by PA.
enum class arch_flavour { arm64, armv7_pl310 };

class page_pool;
class swiotlb;

// struct page: the fields the driver path reads or writes (host mirror of the vmemmap entry).
struct page {
    addr_t addr = 0;          // page_address()
    page_pool* pp = nullptr;  // page->pp (set while owned by a page_pool)
    dma_addr_t dma_addr = 0;  // page_pool_get_dma_addr()
    int refcount = 0;         // page_ref_count(); 0 = free in the buddy allocator
    bool pp_mapped = false;   // page_pool holds a DMA mapping
    uint8_t order = 0;        // compound_order() of a head page
    page* head = nullptr;     // compound_head() of a tail page (nullptr: not a tail)
};

constexpr unsigned PAGE_ALLOC_COSTLY_ORDER = 3;  // the per-CPU lists hold orders 0..3

class kernel;

// A boot-time allocation (rings, driver and stack state) found the simulated memory too small:
// a configuration problem, which the platform reports against the region to enlarge.
struct memory_exhausted : std::runtime_error {
    enum class pool { dram, coherent };
    memory_exhausted(pool p, const std::string& what) : std::runtime_error(what), where(p) {}
    pool where;
};

// Page allocator over the cacheable DRAM ranges, one zone per range, orders 0..PAGE_ALLOC_COSTLY_ORDER
// (models the buddy allocator's per-CPU free lists, one per order and zone: LIFO, hot pages first;
// blocks are not split or merged). Each zone starts with its part of the simulated vmemmap. As
// Linux's zonelist, an allocation takes the highest zone that has a block and falls back to the
// lower ones (on arm64: ZONE_NORMAL above 4 GiB before ZONE_DMA below it).
class page_allocator {
public:
    struct range {
        addr_t base = 0;
        uint64_t size = 0;
        std::string size_key = "";  // the configuration key of its size, which a size error names ("": none)
    };
    page_allocator(kernel& k, const std::vector<range>& dram);
    // alloc_pages(GFP_ATOMIC, order); order > 0 is a compound page (__GFP_COMP: the tails point
    // to the head, prep_compound_page). nullptr when no block of that order is left.
    page* alloc_pages(unsigned order = 0);
    // A page the kernel cannot boot without (`what` names it); throws memory_exhausted.
    page* alloc_boot_page(const char* what);
    // memblock_alloc_low's top-down placement at boot, before the page allocator hands out
    // anything: `size` bytes (page-aligned) from the top of the highest zone that ends at or below
    // `limit` (0 when none has room); the pages never reach the free lists.
    addr_t memblock_alloc_below(uint64_t size, addr_t limit);
    // __free_pages(page, 0) / put_page: drops one reference, frees the page when it was the last.
    void __free_pages(page* p);
    // free_the_page(page, compound_order(page)): the reference count already reached 0.
    void free_the_page(page* p);
    page* virt_to_page(addr_t a);
    page* virt_to_head_page(addr_t a) {
        page* p = virt_to_page(a);
        return p && p->head ? p->head : p;
    }
    // Address of the simulated struct page of `p` (for touches).
    addr_t page_struct(const page* p) const;
    uint64_t free_pages() const;
    uint64_t total_pages() const;
    // The end of the highest zone: above a device's DMA mask, the DMA API bounces (swiotlb).
    addr_t max_address() const { return zones_.front().end; }

private:
    struct zone {
        addr_t vmemmap = 0, end = 0;
        std::vector<page> pages;
        std::vector<page*> free[PAGE_ALLOC_COSTLY_ORDER + 1];
        uint64_t next_pfn = 0, end_pfn = 0;  // never-used pages are handed out in order
    };
    kernel& k_;
    std::vector<zone> zones_;  // highest first

    zone& zone_of(const page* p);
    const zone& zone_of(const page* p) const;
    static page* alloc_from(zone& z, unsigned order);
    void prep_compound_page(page* head);
};

// A slab cache of fixed-size objects carved from pages (kmem_cache_alloc/free, LIFO).
class kmem_cache {
public:
    kmem_cache(kernel& k, std::string name, uint32_t size);
    addr_t alloc();  // 0 when out of memory
    void free(addr_t obj);
    uint32_t size() const { return size_; }
    uint64_t in_use() const { return in_use_; }

private:
    kernel& k_;
    std::string name_;
    uint32_t size_;
    std::vector<addr_t> free_;
    uint64_t in_use_ = 0;
};

// page_frag_cache (napi_alloc_cache.page, mm/page_alloc.c): frags carved downwards from a
// 32 KiB compound page (PAGE_FRAG_CACHE_MAX_ORDER; an order-0 page when none is left). The
// cache takes PAGE_FRAG_CACHE_MAX_SIZE references up front and counts its own use in
// pagecnt_bias, so a frag costs no atomic; when the page is used up the unused bias is
// returned at once: the page is reused in place if every frag has been freed, otherwise the
// last page_frag_free frees it. So the page allocator runs once per 13 2 KiB skb heads.
class page_frag_cache {
public:
    static constexpr uint32_t PAGE_FRAG_CACHE_MAX_SIZE = 32768;
    static constexpr unsigned PAGE_FRAG_CACHE_MAX_ORDER = 3;

    explicit page_frag_cache(kernel& k) : k_(k) {}
    addr_t page_frag_alloc(uint32_t fragsz);  // SMP_CACHE_BYTES aligned; 0 on failure
    void page_frag_free(addr_t a);

private:
    page* __page_frag_cache_refill();

    kernel& k_;
    page* va_ = nullptr;  // nc->va's page
    uint32_t size_ = 0, offset_ = 0;
    int pagecnt_bias_ = 0;
};

// dma_alloc_coherent pool: the non-cacheable DRAM window (bump allocator; rings live until
// the interface closes, and the model never closes it).
class coherent_pool {
public:
    coherent_pool(kernel& k, addr_t base, uint64_t size) : k_(k), base_(base), size_(size) {}
    // dma_alloc_coherent: zeroed, `align`-aligned, bus address == address. Throws when full.
    addr_t dma_alloc_coherent(uint64_t size, dma_addr_t* handle, uint64_t align = 64);
    uint64_t used() const { return used_; }

private:
    kernel& k_;
    addr_t base_;
    uint64_t size_;
    uint64_t used_ = 0;
};

struct kernel_memory {
    // Cacheable DRAM managed by the page allocator, a zone per range; the first is the one the
    // kernel's own needs are checked against.
    std::vector<page_allocator::range> dram;
    addr_t coherent_base = 0;  // non-cacheable pool for dma_alloc_coherent
    uint64_t coherent_size = 0;
    unsigned possible_cpus = 1;                     // swiotlb's areas (rounded up to a power of 2)
    uint64_t swiotlb_bytes = 64ull << 20;           // IO_TLB_DEFAULT_SIZE (the swiotlb= boot parameter)
};

class kernel {
public:
    kernel(cpu::core_api& core, const cost_table& costs, arch_flavour arch, const kernel_memory& mem);
    ~kernel();

    cpu::core_api& core;
    const cost_table& costs;
    const arch_flavour arch;

    void exec(path p) { core.exec(costs[p]); }
    void exec(path p, uint64_t times) { core.exec(costs[p] * times); }
    int smp_processor_id() const { return core.id(); }

    // Barriers as the architecture defines the kernel macros. ARMv7 with an outer PL310:
    // wmb() is __arm_heavy_mb(st) = DSB ST + outer_cache.sync() [RECALLED from
    // arch/arm/include/asm/barrier.h, CONFIG_ARM_HEAVY_MB]; rmb() stays a plain DSB.
    void wmb() {
        core.dsb();
        if (arch == arch_flavour::armv7_pl310) core.outer_sync();
    }
    void rmb() { core.dsb(); }
    void dma_wmb() { core.dmb(); }
    void dma_rmb() { core.dmb(); }
    // readl/writel: the relaxed access plus the implied I/O barrier.
    uint32_t readl(addr_t a);
    void writel(uint32_t v, addr_t a);

    page_allocator pages;
    coherent_pool coherent;
    page_frag_cache frags;
    // kmalloc size classes 64..4096 and the named caches the path uses. kmalloc is for
    // boot-time state (throws memory_exhausted); kmalloc_atomic may return 0 (skb heads).
    addr_t kmalloc(uint32_t size);
    addr_t kmalloc_atomic(uint32_t size);
    void kfree(addr_t a, uint32_t size);
    kmem_cache skbuff_head_cache;  // struct sk_buff (256 B slab object on arm64)
    // io_tlb_default_mem: arm64's mem_init sets it up when DRAM extends beyond the DMA zone (4 GiB
    // here: no dma-ranges narrow it); nullptr otherwise.
    std::unique_ptr<swiotlb> io_tlb;
    static constexpr addr_t DMA_ZONE_LIMIT = addr_t(1) << 32;

private:
    std::vector<kmem_cache> kmalloc_caches_;
};

}  // namespace fecsim::firmware
