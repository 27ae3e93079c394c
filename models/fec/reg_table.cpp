#include "models/fec/reg_table.h"

#include <stdexcept>

namespace fecsim::fec {

reg_table::reg_table(uint32_t window_bytes) : words_(window_bytes / 4) {
    if (window_bytes > max_window_bytes)
        throw std::invalid_argument("reg_table: a window of " + std::to_string(window_bytes) + " bytes is larger than " +
                                    std::to_string(max_window_bytes));
    regs_.reserve(max_words);
}

reg& reg_table::add(const std::string& name, uint32_t offset, uint32_t reset, reg_access access, uint32_t mask) {
    if (offset % 4 || offset / 4 >= words_ || index_[offset / 4])
        throw std::logic_error("reg_table: bad or duplicate offset for " + name);
    regs_.push_back(reg{name, offset, reset, access, mask, reset, {}, {}});  // within its capacity
    return *(index_[offset / 4] = &regs_.back());
}

void reg_table::undeclared(uint32_t offset) {
    throw std::logic_error("reg_table: no register at offset " + std::to_string(offset));
}

bool reg_table::read(uint32_t offset, uint32_t& v) {
    reg* r = find(offset);
    if (!r) return false;
    v = r->on_read ? r->on_read(*r) : r->value;
    return true;
}

bool reg_table::write(uint32_t offset, uint32_t v) {
    reg* r = find(offset);
    if (!r) return false;
    const uint32_t old = r->value;
    switch (r->access) {
    case reg_access::rw: r->value = (old & ~r->mask) | (v & r->mask); break;
    case reg_access::ro: break;
    case reg_access::w1c: r->value = old & ~(v & r->mask); break;
    }
    if (r->on_write) r->on_write(*r, old, v);
    return true;
}

void reg_table::reset(const std::function<bool(const reg&)>& keep) {
    for (auto& r : regs_)
        if (!keep || !keep(r)) r.value = r.reset;
}

}  // namespace fecsim::fec
