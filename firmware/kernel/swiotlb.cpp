#include "firmware/kernel/swiotlb.h"

#include <algorithm>
#include <stdexcept>

namespace fecsim::firmware {

namespace {

unsigned nr_slots(uint64_t size) { return unsigned((size + swiotlb::IO_TLB_SIZE - 1) >> swiotlb::IO_TLB_SHIFT); }
unsigned io_tlb_offset(unsigned index) { return index & (swiotlb::IO_TLB_SEGSIZE - 1); }

}  // namespace

// swiotlb_init_io_tlb_mem: every slot free, `list` counting down to its segment's end.
swiotlb::swiotlb(kernel& k, addr_t start, unsigned nslabs, addr_t records, unsigned nareas)
    : k_(k), start_(start), end_(start + (addr_t(nslabs) << IO_TLB_SHIFT)), areas_sim_(records),
      slots_sim_(records + addr_t(nareas) * AREA_RECORD_BYTES), nslabs_(nslabs), area_nslabs_(nslabs / nareas),
      slots_(nslabs), areas_(nareas) {
    if (!nareas || (nareas & (nareas - 1))) throw std::invalid_argument("swiotlb: areas must be a power of 2");
    for (unsigned i = 0; i < nslabs_; ++i) slots_[i].list = IO_TLB_SEGSIZE - io_tlb_offset(i);
}

void swiotlb::touch_slots(unsigned first, unsigned n, bool write) {
    k_.core.touch(slots_sim_ + addr_t(first) * SLOT_RECORD_BYTES, size_t(n) * SLOT_RECORD_BYTES, write);
}

// spin_lock_irqsave(&area->lock) and the area's index and used
void swiotlb::touch_area(unsigned area_index) {
    k_.core.touch(areas_sim_ + addr_t(area_index) * AREA_RECORD_BYTES, 16, true);
}

// swiotlb_do_find_slots for a device without min_align_mask or segment boundary (the FEC): from
// the area's index, next-fit in strides (page-aligned runs for a page or more), a run whose first
// slot counts enough free slots after it.
int swiotlb::swiotlb_do_find_slots(unsigned area_index, size_t alloc_size) {
    io_tlb_area& area = areas_[area_index];
    const unsigned nslots = nr_slots(alloc_size);
    const unsigned stride = alloc_size >= PAGE_SIZE ? 1u << (PAGE_SHIFT - IO_TLB_SHIFT) : 1u;
    touch_area(area_index);
    if (nslots > area_nslabs_ - area.used) return -1;
    const unsigned slot_base = area_index * area_nslabs_;
    unsigned index = wrap_area_index((area.index + stride - 1) / stride * stride);
    const unsigned wrap = index;
    do {
        const unsigned slot_index = slot_base + index;
        touch_slots(slot_index, 1, false);
        if (slots_[slot_index].list >= nslots) {
            for (unsigned i = slot_index; i < slot_index + nslots; ++i) {
                slots_[i].list = 0;
                slots_[i].alloc_size = alloc_size - (uint64_t(i - slot_index) << IO_TLB_SHIFT);
            }
            touch_slots(slot_index, nslots, true);
            // the free slots before the run now end at it
            unsigned count = 0;  // (slot 0's "slot -1" wraps to an offset of IO_TLB_SEGSIZE - 1)
            for (unsigned i = slot_index - 1; io_tlb_offset(i) != IO_TLB_SEGSIZE - 1 && slots_[i].list; --i) {
                slots_[i].list = ++count;
                touch_slots(i, 1, true);
            }
            area.index = index + nslots < area_nslabs_ ? index + nslots : 0;
            area.used += nslots;
            return int(slot_index);
        }
        index = wrap_area_index(index + stride);
    } while (index != wrap);
    return -1;
}

// swiotlb_tbl_map_single (swiotlb_find_slots: the mapping CPU's area first, then the others).
addr_t swiotlb::swiotlb_tbl_map_single(addr_t orig, size_t size) {
    const unsigned first = unsigned(k_.smp_processor_id()) & unsigned(areas_.size() - 1);
    int index = -1;
    unsigned a = first;
    do {
        index = swiotlb_do_find_slots(a, size);
        if (++a >= areas_.size()) a = 0;
    } while (index < 0 && a != first);
    if (index < 0) throw std::runtime_error("swiotlb buffer is full (" + std::to_string(size) + " bytes)");
    const unsigned n = nr_slots(size);
    for (unsigned i = 0; i < n; ++i) slots_[unsigned(index) + i].orig_addr = orig + (addr_t(i) << IO_TLB_SHIFT);
    touch_slots(unsigned(index), n, true);
    const addr_t tlb = start_ + (addr_t(index) << IO_TLB_SHIFT);
    swiotlb_bounce(tlb, size, DMA_TO_DEVICE);
    return tlb;
}

// swiotlb_release_slots: the run's slots count up from the next run's free slots (when in the same
// segment), and the free slots before it in the segment join it: the merge loop, one pass each.
void swiotlb::swiotlb_release_slots(addr_t tlb) {
    const unsigned index = unsigned((tlb - start_) >> IO_TLB_SHIFT);
    const unsigned nslots = nr_slots(slots_[index].alloc_size);
    io_tlb_area& area = areas_[index / area_nslabs_];
    touch_area(index / area_nslabs_);
    const unsigned next = index + nslots;
    const unsigned segment_end = (index + IO_TLB_SEGSIZE) / IO_TLB_SEGSIZE * IO_TLB_SEGSIZE;  // ALIGN(index + 1)
    unsigned count = next < segment_end ? slots_[next].list : 0;
    if (next < segment_end) touch_slots(next, 1, false);
    for (unsigned i = next; i-- > index;) {
        slots_[i].list = ++count;
        slots_[i].orig_addr = INVALID_PHYS_ADDR;
        slots_[i].alloc_size = 0;
    }
    touch_slots(index, nslots, true);
    for (unsigned i = index - 1; io_tlb_offset(i) != IO_TLB_SEGSIZE - 1 && slots_[i].list; --i) {
        k_.exec(path::swiotlb_release_merge);
        slots_[i].list = ++count;
        touch_slots(i, 1, true);
    }
    area.used -= nslots;
}

void swiotlb::swiotlb_bounce(addr_t tlb, size_t size, dma_data_direction dir) {
    cpu::scope s(k_.core, "swiotlb_bounce");
    k_.exec(path::swiotlb_bounce);
    const unsigned index = unsigned((tlb - start_) >> IO_TLB_SHIFT);
    touch_slots(index, 1, false);
    const io_tlb_slot& slot = slots_[index];
    if (slot.orig_addr == INVALID_PHYS_ADDR) return;
    const uint64_t tlb_offset = tlb & (IO_TLB_SIZE - 1);
    if (tlb_offset > slot.alloc_size) return;
    const addr_t orig = slot.orig_addr + tlb_offset;
    size = std::min<uint64_t>(size, slot.alloc_size - tlb_offset);
    // __memcpy: more than 128 bytes run its 64-byte loop over what the head and tail leave
    const addr_t dst = dir == DMA_TO_DEVICE ? tlb : orig;
    const uint64_t looped = size > 128 ? size + (dst & 15) : 0;
    if (looped > 144) k_.exec(path::swiotlb_bounce_line, (looped - 144 + 63) / 64);
    if (dir == DMA_TO_DEVICE)
        k_.core.copy(tlb, orig, size);
    else
        k_.core.copy(orig, tlb, size);
}

uint64_t swiotlb::slots_used() const {
    uint64_t n = 0;
    for (const io_tlb_area& a : areas_) n += a.used;
    return n;
}

}  // namespace fecsim::firmware
