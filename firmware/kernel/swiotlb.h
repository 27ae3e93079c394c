// kernel/dma/swiotlb.c (6.1): the default bounce buffer pool a device's streaming mappings go
// through when the buffer lies beyond the device's DMA mask (dma-direct's dma_capable test).
// The pool is cacheable kernel memory below 4 GiB (memblock_alloc_low at boot, 64 MiB), cut in
// 2 KiB slots, split in areas, one per possible CPU; a mapping takes a run of free slots next-fit
// in its CPU's area and copies the original into it (every direction since 5.19, so a device
// that writes less cannot leak the slot's old contents). The slot bookkeeping (`list`: free
// slots from this one to the next used one or the segment's end) is the kernel's, so the loops
// it runs (the release's merge) take the kernel's number of passes.
#pragma once

#include "firmware/kernel/dma.h"
#include "firmware/kernel/kernel.h"

#include <vector>

namespace fecsim::firmware {

class swiotlb {
public:
    static constexpr unsigned IO_TLB_SHIFT = 11;
    static constexpr uint32_t IO_TLB_SIZE = 1u << IO_TLB_SHIFT;
    static constexpr unsigned IO_TLB_SEGSIZE = 128;

    // The pool of `nslabs` slots at `start` in `nareas` areas (a power of 2 that divides nslabs);
    // the simulated area and slot records (touched as the kernel touches them) at `records`
    // (records_bytes()).
    swiotlb(kernel& k, addr_t start, unsigned nslabs, addr_t records, unsigned nareas);
    static uint64_t records_bytes(uint64_t nslabs, unsigned nareas) {
        return uint64_t(nareas) * AREA_RECORD_BYTES + nslabs * SLOT_RECORD_BYTES;
    }

    bool is_swiotlb_buffer(addr_t paddr) const { return paddr >= start_ && paddr < end_; }
    // A slot run for `size` bytes of `orig`, the original copied in (swiotlb_bounce TO_DEVICE);
    // the slot's address. Throws when every area is full (the kernel's "swiotlb buffer is full").
    addr_t swiotlb_tbl_map_single(addr_t orig, size_t size);
    // swiotlb_release_slots: the run `tlb` starts is free again.
    void swiotlb_release_slots(addr_t tlb);
    // Copies between the slot and the original: TO_DEVICE original -> slot, else slot -> original,
    // `size` bytes capped to the mapping's rest (as the kernel, which warns).
    void swiotlb_bounce(addr_t tlb, size_t size, dma_data_direction dir);

    uint64_t slots_used() const;

private:
    static constexpr addr_t INVALID_PHYS_ADDR = ~addr_t(0);
    static constexpr uint32_t SLOT_RECORD_BYTES = 24;  // sizeof(struct io_tlb_slot) on arm64
    static constexpr uint32_t AREA_RECORD_BYTES = 64;  // struct io_tlb_area, cache-line aligned

    struct io_tlb_slot {
        addr_t orig_addr = INVALID_PHYS_ADDR;
        uint64_t alloc_size = 0;
        unsigned list = 0;
    };
    struct io_tlb_area {
        unsigned index = 0, used = 0;
    };
    int swiotlb_do_find_slots(unsigned area_index, size_t alloc_size);
    unsigned wrap_area_index(unsigned index) const { return index >= area_nslabs_ ? 0 : index; }
    void touch_slots(unsigned first, unsigned n, bool write);
    void touch_area(unsigned area_index);

    kernel& k_;
    addr_t start_, end_, areas_sim_, slots_sim_;
    unsigned nslabs_, area_nslabs_;
    std::vector<io_tlb_slot> slots_;
    std::vector<io_tlb_area> areas_;
};

}  // namespace fecsim::firmware
