// IEEE 802.3 Annex 31B MAC control PAUSE, shared by every MAC model (the ENET, the traffic
// peers): the frame's format and the receiver's pause timer.
#pragma once

#include "models/net/frame.h"

#include <systemc>

#include <algorithm>
#include <cstdint>

namespace fecsim::net {

constexpr uint8_t pause_dst_mac[mac_bytes] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
constexpr uint16_t ethertype_mac_control = 0x8808;
constexpr uint16_t mac_control_pause = 0x0001;
constexpr unsigned pause_quantum_bits = 512;

// The pause time (quanta) a PAUSE frame carries, or -1 when `f` is not a PAUSE frame
// (reserved multicast destination, type 0x8808, opcode 1; the FCS is not checked here).
int pause_quanta(const frame& f);
// Makes `f` a minimum-size PAUSE frame from `src_mac` (48 bits, first byte most significant)
// carrying `quanta`, padded with zeros, FCS appended. `opcode` is what the MAC's register holds.
void make_pause(frame& f, uint64_t src_mac, uint16_t quanta, uint16_t opcode = mac_control_pause);
// How long `quanta` pause quanta last at `speed_mbps`.
inline sc_core::sc_time pause_duration(uint16_t quanta, double speed_mbps) {
    return sc_core::sc_time(double(quanta) * pause_quantum_bits * 1e3 / speed_mbps, sc_core::SC_NS);
}

// The receiving MAC's pause timer: each PAUSE restarts it (0 quanta ends it), and the time it
// ran is added up over a measurement window.
class pause_timer {
public:
    void start(sc_core::sc_time now, sc_core::sc_time length) {
        total_ = paused_time(now);
        from_ = now;
        until_ = now + length;
    }
    void stop(sc_core::sc_time now) { start(now, sc_core::SC_ZERO_TIME); }
    bool paused(sc_core::sc_time now) const { return now < until_; }
    sc_core::sc_time until() const { return until_; }
    // Time the transmitter was held since reset_window(), up to `now`.
    sc_core::sc_time paused_time(sc_core::sc_time now) const {
        const sc_core::sc_time end = std::min(now, until_);
        return end > from_ ? total_ + (end - from_) : total_;
    }
    void reset_window(sc_core::sc_time now) {
        total_ = sc_core::SC_ZERO_TIME;
        from_ = now;
    }

private:
    sc_core::sc_time total_, from_, until_;
};

}  // namespace fecsim::net
