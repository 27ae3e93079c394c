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
// A mapping beyond the device's DMA mask goes through swiotlb (kernel/dma/direct.h, 6.1): the map
// copies the original into a slot below 4 GiB and maintains the slot; the sync for the CPU and the
// unmap (DMA_FROM_DEVICE, DMA_BIDIRECTIONAL) invalidate the slot, then copy it back; the sync for
// the device copies only for TO_DEVICE and BIDIRECTIONAL. The device only ever sees the slot.
#pragma once

#include "firmware/kernel/kernel.h"

namespace fecsim::firmware {

enum dma_data_direction { DMA_BIDIRECTIONAL = 0, DMA_TO_DEVICE = 1, DMA_FROM_DEVICE = 2, DMA_NONE = 3 };
constexpr unsigned long DMA_ATTR_SKIP_CPU_SYNC = 1ul << 5;

class dma_device {
public:
    // DMA_BIT_MASK(32): fec_enet_init's dma_set_mask_and_coherent (the buffer descriptors hold
    // 32-bit addresses); the device trees give the FEC's bus no narrower dma-ranges.
    static constexpr dma_addr_t DMA_MASK = 0xffffffffull;

    dma_device(kernel& k, bool dma_coherent) : k_(k), coherent_(dma_coherent) {}

    bool dev_is_dma_coherent() const { return coherent_; }
    bool dma_dev_need_sync() const { return !coherent_; }

    // dma_direct_sync_single_for_device / _for_cpu
    void dma_sync_single_for_device(dma_addr_t addr, size_t size, dma_data_direction dir);
    void dma_sync_single_for_cpu(dma_addr_t addr, size_t size, dma_data_direction dir);
    // dma_map_single_attrs / dma_unmap_single_attrs (also dma_map_page_attrs: same code path).
    dma_addr_t dma_map_single(addr_t a, size_t size, dma_data_direction dir, unsigned long attrs = 0);
    void dma_unmap_single(dma_addr_t addr, size_t size, dma_data_direction dir, unsigned long attrs = 0);

    // The architecture hooks (public for tests).
    void arch_sync_dma_for_device(addr_t paddr, size_t size, dma_data_direction dir);
    void arch_sync_dma_for_cpu(addr_t paddr, size_t size, dma_data_direction dir);

    // Mappings bounced through swiotlb since the last reset.
    uint64_t bounced_maps() const { return bounced_maps_; }

private:
    // dma_capable: the whole buffer within the mask (the linear map is identity).
    bool dma_capable(addr_t a, size_t size) const { return a + (size ? size : 1) - 1 <= DMA_MASK; }
    bool is_swiotlb_buffer(dma_addr_t addr) const;
    dma_addr_t swiotlb_map(addr_t paddr, size_t size, dma_data_direction dir, unsigned long attrs);
    // swiotlb_sync_single_for_cpu / _for_device on a slot
    void swiotlb_sync_single_for_cpu(dma_addr_t tlb, size_t size, dma_data_direction dir);
    void swiotlb_sync_single_for_device(dma_addr_t tlb, size_t size, dma_data_direction dir);

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
    uint64_t bounced_maps_ = 0;
};

}  // namespace fecsim::firmware
