// Interrupt coalescing of one ring and direction (RXICn / TXICn): an interrupt after ICFT frames
// or ICTT x 64 clocks after the first uncounted frame, whichever comes first.
// Register fields (fec.h, reference fec-driver.md §2): EN b31, CLK_SEL b30, ICFT b27..20,
// ICTT b15..0.
#pragma once

#include <systemc>

#include <cstdint>

namespace fecsim::fec {

constexpr uint32_t IC_EN = 1u << 31;
constexpr uint32_t IC_CS = 1u << 30;  // 1: ENET system clock, 0: the MAC transmit clock
constexpr uint32_t IC_FT_SHIFT = 20, IC_FT_MASK = 0xFF;
constexpr uint32_t IC_TT_MASK = 0xFFFF;
constexpr unsigned ic_clocks_per_tick = 64;

class coalescer {
public:
    // `clock_mhz` is the clock CLK_SEL selects, as seen at the time of the write.
    void configure(uint32_t reg, double clock_mhz);
    bool enabled() const { return reg_ & IC_EN; }

    // A frame that wants an interrupt completed at `at`. True: raise the interrupt at `at`
    // (threshold reached or coalescing off). Otherwise the frame is counted and the timer runs.
    bool frame_done(const sc_core::sc_time& at);
    bool timer_armed() const { return armed_; }
    const sc_core::sc_time& deadline() const { return deadline_; }
    bool pending() const { return count_ > 0; }
    void fired() { count_ = 0, armed_ = false; }

private:
    uint32_t reg_ = 0;
    unsigned threshold_ = 0;
    sc_core::sc_time timeout_;
    unsigned count_ = 0;
    bool armed_ = false;
    sc_core::sc_time deadline_;
};

}  // namespace fecsim::fec
