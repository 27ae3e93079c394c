// `fecsim run --trace FILE`: a timeline of the measurement window in the Chrome trace-event
// JSON format (opens in Perfetto or chrome://tracing): every firmware function the driver
// port enters on core 0, as nested spans, and every frame on the DUT's wire, per direction.
// Recording starts at the end of warm-up and stops after `max_events`, so a long run gives a
// file of bounded size; the stop is said on stderr and in the file.
#pragma once

#include "models/cpu/core_api.h"
#include "models/net/frame.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fecsim {

class trace_writer {
public:
    static constexpr uint64_t max_events = 2'000'000;

    // Opens (truncates) `path`; throws config_error when it cannot be created.
    explicit trace_writer(const std::string& path, uint64_t limit = max_events);
    ~trace_writer();
    trace_writer(const trace_writer&) = delete;
    trace_writer& operator=(const trace_writer&) = delete;

    // Spans open at this moment are left out: their ends are skipped.
    void start() { recording_ = true; }

    void begin(const char* name, sc_core::sc_time t);  // a span on core 0
    void end(sc_core::sc_time t);
    void frame(int direction, const net::frame& f, sc_core::sc_time start, sc_core::sc_time end);

    // Closes the spans still open at `t` (the end of the run), so every B has its E.
    void close_open_spans(sc_core::sc_time t);

    uint64_t events() const { return events_; }
    bool truncated() const { return truncated_; }

    // Ends the document and closes the file; std::runtime_error if any write failed.
    void close();

private:
    bool admit(sc_core::sc_time t);  // counts one event; false (and says so once) past the limit
    bool end_file();

    std::FILE* out_;
    std::string path_;
    uint64_t limit_;
    bool recording_ = false, truncated_ = false;
    uint64_t events_ = 0;
    // One entry per span open on core 0, innermost last: whether its B was written. Spans open
    // when recording starts, or begun past the limit, have no B, so their ends are skipped.
    std::vector<bool> open_;
};

// Passes every call of the firmware through to the real core and records enter()/leave()
// as spans. Only used with --trace: without it the firmware talks to the core directly.
class tracing_core : public cpu::core_api {
public:
    tracing_core(cpu::core_api& core, trace_writer& trace) : c_(core), t_(trace) {}

    void enter(const char* function) override;
    void leave() override;

    void exec(uint64_t n) override { c_.exec(n); }
    uint8_t read8(cpu::addr_t a) override { return c_.read8(a); }
    uint16_t read16(cpu::addr_t a) override { return c_.read16(a); }
    uint32_t read32(cpu::addr_t a) override { return c_.read32(a); }
    uint64_t read64(cpu::addr_t a) override { return c_.read64(a); }
    void write8(cpu::addr_t a, uint8_t v) override { c_.write8(a, v); }
    void write16(cpu::addr_t a, uint16_t v) override { c_.write16(a, v); }
    void write32(cpu::addr_t a, uint32_t v) override { c_.write32(a, v); }
    void write64(cpu::addr_t a, uint64_t v) override { c_.write64(a, v); }
    void read(cpu::addr_t a, void* dst, size_t len) override { c_.read(a, dst, len); }
    void write(cpu::addr_t a, const void* src, size_t len) override { c_.write(a, src, len); }
    void copy(cpu::addr_t dst, cpu::addr_t src, size_t len) override { c_.copy(dst, src, len); }
    void touch(cpu::addr_t a, size_t len, bool w) override { c_.touch(a, len, w); }
    void prefetch(cpu::addr_t a) override { c_.prefetch(a); }
    void dmb() override { c_.dmb(); }
    void dsb() override { c_.dsb(); }
    void store_release(cpu::addr_t a, size_t len) override { c_.store_release(a, len); }
    void dc_cvac(cpu::addr_t a) override { c_.dc_cvac(a); }
    void dc_ivac(cpu::addr_t a) override { c_.dc_ivac(a); }
    void dc_civac(cpu::addr_t a) override { c_.dc_civac(a); }
    uint32_t cache_line_bytes() const override { return c_.cache_line_bytes(); }
    bool has_outer_cache() const override { return c_.has_outer_cache(); }
    void outer_clean_line(cpu::addr_t pa) override { c_.outer_clean_line(pa); }
    void outer_inv_line(cpu::addr_t pa) override { c_.outer_inv_line(pa); }
    void outer_flush_line(cpu::addr_t pa) override { c_.outer_flush_line(pa); }
    void outer_sync() override { c_.outer_sync(); }
    void irq_enable(int line, bool enabled, int priority) override { c_.irq_enable(line, enabled, priority); }
    int wait_for_irq() override { return c_.wait_for_irq(); }
    int poll_irq() override { return c_.poll_irq(); }
    void irq_return() override { c_.irq_return(); }
    sc_core::sc_time now() const override { return c_.now(); }
    void sync() override { c_.sync(); }
    int id() const override { return c_.id(); }

private:
    cpu::core_api& c_;
    trace_writer& t_;
};

}  // namespace fecsim
