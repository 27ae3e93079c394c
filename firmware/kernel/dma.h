// The streaming DMA API for one device (kernel/dma/direct.h + the architecture's cache
// maintenance), issuing exactly the line operations the kernel issues (fec-driver.md §11):
// - arm64 (arch/arm64/mm/dma-mapping.c, cache.S): for_device = dcache_clean_poc (DC CVAC per
//   line, do-while so even size 0 cleans one line, DSB SY) for every direction; for_cpu =
//   nothing for TO_DEVICE, else dcache_inval_poc (DC CIVAC on unaligned ends, DC IVAC on the
//   rest, DSB SY).
// - ARMv7 + PL310 (arch/arm/mm/dma-mapping.c, cache-v7.S, cache-l2x0.c): cpu_to_dev = inner
//   v7_dma_map_area (inv for FROM_DEVICE, else clean) then outer inv/clean by PA;
//   dev_to_cpu = outer inv then inner v7_dma_unmap_area (inv unless TO_DEVICE).
// - dma_coherent devices: no maintenance at all.
#pragma once

#include "firmware/kernel/kernel.h"

namespace fecsim::firmware {

enum dma_data_direction { DMA_BIDIRECTIONAL = 0, DMA_TO_DEVICE = 1, DMA_FROM_DEVICE = 2, DMA_NONE = 3 };
constexpr unsigned long DMA_ATTR_SKIP_CPU_SYNC = 1ul << 5;

class dma_device {
public:
    dma_device(kernel& k, bool dma_coherent) : k_(k), coherent_(dma_coherent) {}

    bool dev_is_dma_coherent() const { return coherent_; }
    bool dma_dev_need_sync() const { return !coherent_; }

    // dma_direct_sync_single_for_device / _for_cpu (no swiotlb: the FEC's 32-bit mask covers
    // the modelled DRAM).
    void dma_sync_single_for_device(dma_addr_t addr, size_t size, dma_data_direction dir);
    void dma_sync_single_for_cpu(dma_addr_t addr, size_t size, dma_data_direction dir);
    // dma_map_single_attrs / dma_unmap_single_attrs (also dma_map_page_attrs: same code path).
    dma_addr_t dma_map_single(addr_t a, size_t size, dma_data_direction dir, unsigned long attrs = 0);
    void dma_unmap_single(dma_addr_t addr, size_t size, dma_data_direction dir, unsigned long attrs = 0);

    // The architecture hooks (public for tests).
    void arch_sync_dma_for_device(addr_t paddr, size_t size, dma_data_direction dir);
    void arch_sync_dma_for_cpu(addr_t paddr, size_t size, dma_data_direction dir);

private:
    // The clean-to-PoC loop both architectures share, attributed to `function`.
    void clean_by_line(const char* function, addr_t start, addr_t end);
    // arm64 cache.S
    void dcache_clean_poc(addr_t start, addr_t end);
    void dcache_inval_poc(addr_t start, addr_t end);
    // ARMv7 cache-v7.S and the PL310 range ops (l2c210_*_range + cache sync)
    void v7_dma_clean_range(addr_t start, addr_t end);
    void v7_dma_inv_range(addr_t start, addr_t end);
    void outer_clean_range(addr_t start, addr_t end);
    void outer_inv_range(addr_t start, addr_t end);

    kernel& k_;
    bool coherent_;
};

}  // namespace fecsim::firmware
