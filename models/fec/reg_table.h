// A table of 32-bit memory-mapped registers in the VCML style (docs/design.md §6): each register has
// a name, an offset, a reset value, an access policy and optional read/write callbacks. The
// owning model looks registers up by offset; the table knows nothing about the device.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fecsim::fec {

enum class reg_access {
    rw,   // read/write; bits outside `mask` keep their value
    ro,   // writes ignored
    w1c,  // write 1 to clear (interrupt status)
};

struct reg {
    std::string name;
    uint32_t offset = 0;
    uint32_t reset = 0;
    reg_access access = reg_access::rw;
    uint32_t mask = 0xFFFFFFFFu;  // writable bits
    uint32_t value = 0;
    // on_read computes the value returned (e.g. live state); on_write runs after the policy
    // has been applied, with the value before and the value the CPU wrote.
    std::function<uint32_t(const reg&)> on_read;
    std::function<void(reg&, uint32_t old, uint32_t written)> on_write;
};

class reg_table {
public:
    // The index covers the largest window a table serves (the ENET's) at a fixed size, and holds
    // each register's address, so that a read at a constant offset, as the engines make, is two
    // loads and a test.
    static constexpr uint32_t max_window_bytes = 0x800;

    // Throws std::invalid_argument when `window_bytes` is larger than max_window_bytes.
    explicit reg_table(uint32_t window_bytes);
    // The index points into the table's own registers.
    reg_table(const reg_table&) = delete;
    reg_table& operator=(const reg_table&) = delete;

    // Declares a register; throws std::logic_error on a duplicate or misaligned offset.
    reg& add(const std::string& name, uint32_t offset, uint32_t reset, reg_access access = reg_access::rw,
             uint32_t mask = 0xFFFFFFFFu);

    // Inline: the engines read several registers per frame.
    __attribute__((always_inline)) reg* find(uint32_t offset) {
        if (offset % 4 || offset / 4 >= max_words) return nullptr;
        return index_[offset / 4];
    }
    __attribute__((always_inline)) const reg* find(uint32_t offset) const {
        return const_cast<reg_table*>(this)->find(offset);
    }
    // Always inline (as find): the engines call get() with constant offsets, whose checks then
    // fold to an index load (a call per register read cost more than the read).
    __attribute__((always_inline)) reg& at(uint32_t offset) {  // throws std::logic_error when undeclared (a model bug)
        if (__builtin_expect(offset % 4 || offset / 4 >= max_words || !index_[offset / 4], 0)) undeclared(offset);
        return *index_[offset / 4];
    }
    __attribute__((always_inline)) const reg& at(uint32_t offset) const { return const_cast<reg_table*>(this)->at(offset); }
    __attribute__((always_inline)) uint32_t get(uint32_t offset) const { return at(offset).value; }
    __attribute__((always_inline)) void set(uint32_t offset, uint32_t v) { at(offset).value = v; }

    // CPU accesses: false when no register lives at `offset`.
    bool read(uint32_t offset, uint32_t& v);
    bool write(uint32_t offset, uint32_t v);

    // Every register back to its reset value, except those `keep` selects.
    void reset(const std::function<bool(const reg&)>& keep = {});

    const std::vector<reg>& regs() const { return regs_; }

private:
    [[noreturn]] __attribute__((cold, noinline)) static void undeclared(uint32_t offset);
    static constexpr uint32_t max_words = max_window_bytes / 4;
    std::vector<reg> regs_;              // capacity for every word: a register never moves
    uint32_t words_;                     // the window's, offset / 4 < words_
    std::array<reg*, max_words> index_{};  // offset / 4 -> its register in regs_, null when none
};

}  // namespace fecsim::fec
