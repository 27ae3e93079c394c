// TEST DOUBLE: a fake core implementing cpu::core_api over host byte arrays, with a
// configurable region map (cacheable / non-cacheable / device). It has no timing and no cache:
// it only moves bytes and counts every operation (DC ops per address, barriers, MMIO per
// register, uncached and cached accesses, instructions), so firmware tests can assert exactly
// what the driver path asks of the core. Device regions behave as a plain register file except
// that writes to the `w1c` offsets clear bits (EIR), and an optional hook sees every MMIO write.
#pragma once

#include "models/cpu/core_api.h"

#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace fecsim::test {

class fake_core : public cpu::core_api {
public:
    enum class attr { cacheable, noncacheable, device };
    struct region {
        cpu::addr_t base, size;
        attr a;
        std::vector<uint8_t> bytes;             // memory regions
        std::map<uint32_t, uint32_t> regs;      // device regions (32-bit registers)
    };
    struct counters {
        uint64_t instructions = 0, dsb = 0, dmb = 0, releases = 0;
        uint64_t cvac = 0, ivac = 0, civac = 0;
        uint64_t outer_clean = 0, outer_inv = 0, outer_flush = 0, outer_sync = 0;
        uint64_t uncached_reads = 0, uncached_writes = 0, cached_reads = 0, cached_writes = 0, touches = 0;
        std::map<cpu::addr_t, uint64_t> prefetch_at;
        uint64_t mmio_reads = 0, mmio_writes = 0;
        std::map<cpu::addr_t, uint64_t> cvac_at, ivac_at, civac_at;
        std::map<uint32_t, uint64_t> mmio_reads_at, mmio_writes_at;  // register offset -> count
        std::map<cpu::addr_t, uint64_t> cached_write_lines;          // line -> writes
        uint64_t line_ops() const { return cvac + ivac + civac; }
    };

    fake_core(uint32_t line_bytes = 64, bool outer = false) : line_(line_bytes), outer_(outer) {}

    void add_region(cpu::addr_t base, cpu::addr_t size, attr a) {
        region r{base, size, a, {}, {}};
        if (a != attr::device) r.bytes.assign(size, 0);
        regions_.push_back(std::move(r));
    }
    void set_w1c(cpu::addr_t reg) { w1c_.insert(reg); }

    // Host-side (untimed, uncounted) access for the test bench playing the hardware.
    uint8_t* host(cpu::addr_t a, size_t len) {
        region& r = find(a, len);
        if (r.a == attr::device) throw std::logic_error("host(): device region");
        return r.bytes.data() + (a - r.base);
    }
    uint32_t& reg(cpu::addr_t a) {
        region& r = find(a, 4);
        return r.regs[uint32_t(a - r.base)];
    }
    uint16_t h16(cpu::addr_t a) { uint16_t v; std::memcpy(&v, host(a, 2), 2); return v; }
    uint32_t h32(cpu::addr_t a) { uint32_t v; std::memcpy(&v, host(a, 4), 4); return v; }
    void hw16(cpu::addr_t a, uint16_t v) { std::memcpy(host(a, 2), &v, 2); }
    void hw32(cpu::addr_t a, uint32_t v) { std::memcpy(host(a, 4), &v, 4); }

    counters c;
    std::function<void(cpu::addr_t, uint32_t)> on_mmio_write;
    std::set<int> pending_irqs;
    std::map<int, bool> irq_enabled;
    std::vector<std::string> stack;
    std::map<std::string, uint64_t> entered;

    // --- core_api
    void exec(uint64_t n) override { c.instructions += n; }
    uint8_t read8(cpu::addr_t a) override { uint8_t v; rd(a, &v, 1); return v; }
    uint16_t read16(cpu::addr_t a) override { uint16_t v; rd(a, &v, 2); return v; }
    uint32_t read32(cpu::addr_t a) override { uint32_t v; rd(a, &v, 4); return v; }
    uint64_t read64(cpu::addr_t a) override { uint64_t v; rd(a, &v, 8); return v; }
    void write8(cpu::addr_t a, uint8_t v) override { wr(a, &v, 1); }
    void write16(cpu::addr_t a, uint16_t v) override { wr(a, &v, 2); }
    void write32(cpu::addr_t a, uint32_t v) override { wr(a, &v, 4); }
    void write64(cpu::addr_t a, uint64_t v) override { wr(a, &v, 8); }
    void read(cpu::addr_t a, void* dst, size_t len) override { rd(a, dst, len); }
    void write(cpu::addr_t a, const void* src, size_t len) override { wr(a, src, len); }
    void copy(cpu::addr_t dst, cpu::addr_t src, size_t len) override {
        std::vector<uint8_t> tmp(len);
        rd(src, tmp.data(), len);
        wr(dst, tmp.data(), len);
    }
    void touch(cpu::addr_t a, size_t len, bool) override {
        find(a, len ? len : 1);
        ++c.touches;
    }
    void prefetch(cpu::addr_t a) override { ++c.prefetch_at[a]; }
    void dmb() override { ++c.dmb; }
    void dsb() override { ++c.dsb; }
    void store_release(cpu::addr_t a, size_t len) override {
        ++c.releases;
        touch(a, len, true);
    }
    void dc_cvac(cpu::addr_t a) override { ++c.cvac; ++c.cvac_at[a]; }
    void dc_ivac(cpu::addr_t a) override { ++c.ivac; ++c.ivac_at[a]; }
    void dc_civac(cpu::addr_t a) override { ++c.civac; ++c.civac_at[a]; }
    uint32_t cache_line_bytes() const override { return line_; }
    bool has_outer_cache() const override { return outer_; }
    void outer_clean_line(cpu::addr_t) override { ++c.outer_clean; }
    void outer_inv_line(cpu::addr_t) override { ++c.outer_inv; }
    void outer_flush_line(cpu::addr_t) override { ++c.outer_flush; }
    void outer_sync() override { ++c.outer_sync; }
    void irq_enable(int line, bool en, int) override { irq_enabled[line] = en; }
    int wait_for_irq() override {
        int l = poll_irq();
        if (l < 0) throw std::logic_error("fake_core: wait_for_irq with nothing pending would idle forever");
        return l;
    }
    int poll_irq() override {
        for (int l : pending_irqs)
            if (irq_enabled[l]) {
                pending_irqs.erase(l);
                return l;
            }
        return -1;
    }
    void irq_return() override {}
    void enter(const char* f) override { stack.emplace_back(f); ++entered[f]; }
    void leave() override { stack.pop_back(); }
    sc_core::sc_time now() const override { return sc_core::sc_time_stamp(); }
    void sync() override {}
    int id() const override { return 0; }

private:
    region& find(cpu::addr_t a, size_t len) {
        for (auto& r : regions_)
            if (a >= r.base && a + len <= r.base + r.size) return r;
        throw std::runtime_error("fake_core: unmapped access at 0x" + hex(a) +
                                 (stack.empty() ? "" : " in " + stack.back()));
    }
    static std::string hex(cpu::addr_t a) {
        char b[32];
        std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(a));
        return b;
    }
    void rd(cpu::addr_t a, void* dst, size_t len) {
        region& r = find(a, len);
        if (r.a == attr::device) {
            if (len != 4) throw std::runtime_error("fake_core: non-32-bit MMIO read");
            ++c.mmio_reads;
            ++c.mmio_reads_at[uint32_t(a - r.base)];
            uint32_t v = r.regs[uint32_t(a - r.base)];
            std::memcpy(dst, &v, 4);
            return;
        }
        if (r.a == attr::noncacheable) ++c.uncached_reads; else ++c.cached_reads;
        std::memcpy(dst, r.bytes.data() + (a - r.base), len);
    }
    void wr(cpu::addr_t a, const void* src, size_t len) {
        region& r = find(a, len);
        if (r.a == attr::device) {
            if (len != 4) throw std::runtime_error("fake_core: non-32-bit MMIO write");
            uint32_t v;
            std::memcpy(&v, src, 4);
            const uint32_t off = uint32_t(a - r.base);
            ++c.mmio_writes;
            ++c.mmio_writes_at[off];
            if (w1c_.count(a)) r.regs[off] &= ~v;
            else r.regs[off] = v;
            if (on_mmio_write) on_mmio_write(a, v);
            return;
        }
        if (r.a == attr::noncacheable) {
            ++c.uncached_writes;
        } else {
            ++c.cached_writes;
            for (cpu::addr_t l = a & ~cpu::addr_t(line_ - 1); l < a + len; l += line_) ++c.cached_write_lines[l];
        }
        std::memcpy(r.bytes.data() + (a - r.base), src, len);
    }

    uint32_t line_;
    bool outer_;
    std::vector<region> regions_;
    std::set<cpu::addr_t> w1c_;
};

}  // namespace fecsim::test
