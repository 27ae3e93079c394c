#include "firmware/kernel/dma.h"

#include "firmware/kernel/swiotlb.h"

#include <stdexcept>

namespace fecsim::firmware {

void dma_device::dma_sync_single_for_device(dma_addr_t addr, size_t size, dma_data_direction dir) {
    cpu::scope s(k_.core, "dma_sync_single_for_device");
    k_.exec(path::dma_sync_single);
    if (is_swiotlb_buffer(addr)) swiotlb_sync_single_for_device(addr, size, dir);
    if (!coherent_) arch_sync_dma_for_device(addr, size, dir);
}

void dma_device::dma_sync_single_for_cpu(dma_addr_t addr, size_t size, dma_data_direction dir) {
    cpu::scope s(k_.core, "dma_sync_single_for_cpu");
    k_.exec(path::dma_sync_single);
    if (!coherent_) arch_sync_dma_for_cpu(addr, size, dir);
    if (is_swiotlb_buffer(addr)) swiotlb_sync_single_for_cpu(addr, size, dir);
}

// dma-direct calls the architecture's sync only for a non-coherent device without
// DMA_ATTR_SKIP_CPU_SYNC (page_pool maps and unmaps with it); the other branch is shorter and has
// its own key. A buffer beyond the mask is bounced (swiotlb_map), which maintains the slot.
dma_addr_t dma_device::dma_map_single(addr_t a, size_t size, dma_data_direction dir, unsigned long attrs) {
    cpu::scope s(k_.core, "dma_map_single");
    const bool sync = !coherent_ && !(attrs & DMA_ATTR_SKIP_CPU_SYNC);
    k_.exec(sync ? path::dma_map_single : path::dma_map_single_skip_sync);
    if (!dma_capable(a, size)) return swiotlb_map(a, size, dir, attrs);
    if (sync) arch_sync_dma_for_device(a, size, dir);
    return a;
}

// dma_direct_unmap_page: the sync for the CPU (which copies a slot back), then the slot's release
// with DMA_ATTR_SKIP_CPU_SYNC.
void dma_device::dma_unmap_single(dma_addr_t addr, size_t size, dma_data_direction dir, unsigned long attrs) {
    cpu::scope s(k_.core, "dma_unmap_single");
    const bool sync = !coherent_ && !(attrs & DMA_ATTR_SKIP_CPU_SYNC);
    // arch_sync_dma_for_cpu returns at once for DMA_TO_DEVICE, else calls the invalidate
    k_.exec(!sync                   ? path::dma_unmap_single_skip_sync
            : dir == DMA_TO_DEVICE  ? path::dma_unmap_single
                                    : path::dma_unmap_single_from_device);
    if (sync) arch_sync_dma_for_cpu(addr, size, dir);
    if (!is_swiotlb_buffer(addr)) return;
    if (!(attrs & DMA_ATTR_SKIP_CPU_SYNC)) swiotlb_sync_single_for_cpu(addr, size, dir);
    cpu::scope s2(k_.core, "swiotlb_tbl_unmap_single");
    k_.exec(path::swiotlb_unmap);
    k_.io_tlb->swiotlb_release_slots(addr);
}

bool dma_device::is_swiotlb_buffer(dma_addr_t addr) const { return k_.io_tlb && k_.io_tlb->is_swiotlb_buffer(addr); }

// swiotlb_map: a slot with the original copied in, the slot cleaned unless the caller skips the sync.
dma_addr_t dma_device::swiotlb_map(addr_t paddr, size_t size, dma_data_direction dir, unsigned long attrs) {
    if (!k_.io_tlb) throw std::logic_error("dma_map_single: a buffer beyond the DMA mask and no swiotlb");
    cpu::scope s(k_.core, "swiotlb_map");
    k_.exec(path::swiotlb_map);
    const dma_addr_t tlb = k_.io_tlb->swiotlb_tbl_map_single(paddr, size);
    ++bounced_maps_;
    if (!coherent_ && !(attrs & DMA_ATTR_SKIP_CPU_SYNC)) arch_sync_dma_for_device(tlb, size, dir);
    return tlb;
}

void dma_device::swiotlb_sync_single_for_cpu(dma_addr_t tlb, size_t size, dma_data_direction dir) {
    k_.exec(path::swiotlb_sync_single);
    if (dir == DMA_FROM_DEVICE || dir == DMA_BIDIRECTIONAL) k_.io_tlb->swiotlb_bounce(tlb, size, DMA_FROM_DEVICE);
}

void dma_device::swiotlb_sync_single_for_device(dma_addr_t tlb, size_t size, dma_data_direction dir) {
    k_.exec(path::swiotlb_sync_single);
    if (dir == DMA_TO_DEVICE || dir == DMA_BIDIRECTIONAL) k_.io_tlb->swiotlb_bounce(tlb, size, DMA_TO_DEVICE);
}

void dma_device::arch_sync_dma_for_device(addr_t paddr, size_t size, dma_data_direction dir) {
    if (k_.arch == arch_flavour::arm64) {
        dcache_clean_poc(paddr, paddr + size);  // every direction since c50f11c6196f
        return;
    }
    // __dma_page_cpu_to_dev
    if (dir == DMA_FROM_DEVICE) {
        v7_dma_inv_range(paddr, paddr + size);
        outer_inv_range(paddr, paddr + size);
    } else {
        v7_dma_clean_range(paddr, paddr + size);
        outer_clean_range(paddr, paddr + size);
    }
}

void dma_device::arch_sync_dma_for_cpu(addr_t paddr, size_t size, dma_data_direction dir) {
    if (dir == DMA_TO_DEVICE) return;
    if (k_.arch == arch_flavour::arm64) {
        dcache_inval_poc(paddr, paddr + size);
        return;
    }
    // __dma_page_dev_to_cpu: outer first, then the inner unmap area
    outer_inv_range(paddr, paddr + size);
    v7_dma_inv_range(paddr, paddr + size);
}

// Both architectures clean by line the same way: start aligned down, a do-while loop of one
// clean-to-PoC per line (so even an empty range cleans one line), then one DSB. The loop's
// add/cmp/branch issue beside the DC op on these dual-issue cores: the core's per-line
// maintenance cost is the cost of one loop iteration (docs/models/cpu.md), so nothing else is
// charged per line.
void dma_device::clean_by_line(const char* function, addr_t start, addr_t end) {
    cpu::scope s(k_.core, function);
    k_.exec(path::dcache_by_line_op);
    const addr_t line = k_.core.cache_line_bytes();
    addr_t a = start & ~(line - 1);
    do {
        k_.core.dc_cvac(a);
        a += line;
    } while (a < end);
    k_.core.dsb();
}

// arm64 dcache_by_line_op: DC CVAC per line, DSB SY
void dma_device::dcache_clean_poc(addr_t start, addr_t end) { clean_by_line("dcache_clean_poc", start, end); }

// arm64 dcache_inval_poc: CIVAC on a partial last line, CIVAC on a partial first line, IVAC on
// the lines between, one DSB SY.
void dma_device::dcache_inval_poc(addr_t start, addr_t end) {
    cpu::scope s(k_.core, "dcache_inval_poc");
    k_.exec(path::dcache_by_line_op);
    const addr_t line = k_.core.cache_line_bytes();
    const addr_t mask = line - 1;
    if (end & mask) {
        end &= ~mask;
        k_.core.dc_civac(end);
    }
    addr_t a = start;
    if (a & mask) {
        a &= ~mask;
        k_.core.dc_civac(a);
    } else {
        k_.core.dc_ivac(a);
    }
    for (a += line; a < end; a += line) k_.core.dc_ivac(a);
    k_.core.dsb();
}

// v7_dma_clean_range: DCCMVAC per line, DSB ST
void dma_device::v7_dma_clean_range(addr_t start, addr_t end) { clean_by_line("v7_dma_clean_range", start, end); }

// v7_dma_inv_range: DCCIMVAC on partial first and last lines, DCIMVAC while start < end
// (a zero-length range issues nothing but the barrier)
void dma_device::v7_dma_inv_range(addr_t start, addr_t end) {
    cpu::scope s(k_.core, "v7_dma_inv_range");
    k_.exec(path::dcache_by_line_op);
    const addr_t line = k_.core.cache_line_bytes();
    const addr_t mask = line - 1;
    if (start & mask) {
        start &= ~mask;
        k_.core.dc_civac(start);
        start += line;
    }
    if (end & mask) {
        end &= ~mask;
        k_.core.dc_civac(end);
    }
    for (; start < end; start += line) k_.core.dc_ivac(start);
    k_.core.dsb();
}

// l2c210_clean_range: CLEAN_LINE_PA per line of [start & ~mask, end), then cache sync
void dma_device::outer_clean_range(addr_t start, addr_t end) {
    if (!k_.core.has_outer_cache()) return;
    cpu::scope s(k_.core, "l2c210_clean_range");
    k_.exec(path::outer_cache_range);
    const addr_t line = k_.core.cache_line_bytes();
    for (addr_t a = start & ~(line - 1); a < end; a += line) {
        k_.core.outer_clean_line(a);
        k_.exec(path::outer_cache_line);
    }
    k_.core.outer_sync();
}

// l2c210_inv_range: CLEAN_INV on partial ends, INV_LINE_PA on the rest, then cache sync
void dma_device::outer_inv_range(addr_t start, addr_t end) {
    if (!k_.core.has_outer_cache()) return;
    cpu::scope s(k_.core, "l2c210_inv_range");
    k_.exec(path::outer_cache_range);
    const addr_t line = k_.core.cache_line_bytes();
    const addr_t mask = line - 1;
    if (start & mask) {
        start &= ~mask;
        k_.core.outer_flush_line(start);
        start += line;
    }
    if (end & mask) {
        end &= ~mask;
        k_.core.outer_flush_line(end);
    }
    for (; start < end; start += line) {
        k_.core.outer_inv_line(start);
        k_.exec(path::outer_cache_line);
    }
    k_.core.outer_sync();
}

}  // namespace fecsim::firmware
