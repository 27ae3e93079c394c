// Full-duplex point-to-point Ethernet link (a cable between two PHYs). Each direction serialises
// frames at line rate: a frame occupies (preamble 8 + frame incl. FCS + IFG 12) x 8 bit-times and
// is delivered to the far sink as one event when its last bit arrives (end of FCS + propagation).
// Frames are carried as given: padding to 64 bytes is the sender's job, runts are only counted.
#pragma once

#include "models/accounting.h"
#include "models/activity.h"
#include "models/net/eth_port.h"
#include "models/net/frame.h"
#include "models/net/ring.h"

#include <nlohmann/json_fwd.hpp>
#include <systemc>

#include <cstdint>
#include <functional>
#include <vector>

namespace fecsim {
class config_view;
}

namespace fecsim::net {

struct link_params {
    double speed_mbps = 1000;   // line rate, Mbit/s (10, 100, 1000 on real i.MX ENET PHYs)
    double propagation_ns = 0;  // cable + PHY latency from the transmitter's pin to the receiver's
};

// Reads the `link` section (configs/schema/link.json).
link_params link_params_from(const config_view& link_section);

// Counted when a frame's last bit arrives (also for frames the far sink took at send time).
struct link_direction_stats {
    uint64_t sent = 0;      // handed to the transmitting end
    uint64_t frames = 0;    // delivered to the far sink
    uint64_t bytes = 0;     // frame bytes incl. FCS (no preamble, no IFG)
    uint64_t runts = 0;     // frames shorter than 64 bytes incl. FCS (delivered anyway)
    sc_core::sc_time busy;  // wire occupancy incl. preamble and IFG
};

class link : public sc_core::sc_module {
public:
    enum direction : int { a_to_b = 0, b_to_a = 1 };
    // Capture tap, called once per frame when it is delivered (its last bit has arrived), before
    // the far sink sees it. `start` is when the first preamble bit left the transmitter, `end`
    // when the last FCS bit left it (sender-side times; captures stamp `start`).
    using tap_fn = std::function<void(int direction, const frame&, sc_core::sc_time start, sc_core::sc_time end)>;

    link(sc_core::sc_module_name name, const link_params& p);

    // side_a receives what end_b() sends, side_b what end_a() sends. Must precede any send().
    void bind(eth_sink& side_a, eth_sink& side_b);
    eth_tx& end_a() { return ends_[a_to_b]; }  // the device on side a transmits here
    eth_tx& end_b() { return ends_[b_to_a]; }  // the device on side b transmits here
    void add_tap(tap_fn tap) { taps_.push_back(std::move(tap)); }
    // Assembly: the far sink of `dir` is a board's MAC, whose record its arrivals go into.
    void deliver_into(direction dir, activity& board) { ends_[dir].arrival.record_in(board); }
    // Assembly: a frame shorter than `bytes` sent into `dir` is an error (the cross-board
    // lookahead counts on the serialisation of a minimum frame).
    void require_min_frame(direction dir, size_t bytes) { ends_[dir].min_frame = bytes; }

    const link_params& params() const { return p_; }
    link_direction_stats stats(int dir) const;
    // Fraction of the measuring window the direction was busy (incl. preamble and IFG).
    double utilisation(int dir) const;
    void reset_stats();
    // The books of one direction since reset_stats(): sent = delivered + on the wire.
    ledger books(int dir) const;
    // Fills `j` with speed, propagation and per-direction frames/bytes/runts/utilisation.
    void report(nlohmann::json& j) const;

private:
    struct in_flight {
        frame_ptr f;             // null once the far sink took it at send time (frame_arriving)
        size_t bytes = 0;
        sc_core::sc_time start, end, arrive;
        sc_core::sc_time free_before;  // the transmitter's free_at before this frame (withdraw_last)
        bool counted = false;          // in stats.sent: at send(), or (sent ahead) once it started
    };
    // One transmitting end: the eth_tx of the device on that side and the frames it has on the wire.
    struct end_point : eth_tx {
        link* owner = nullptr;
        int dir = a_to_b;
        eth_sink* far = nullptr;
        sc_core::sc_time free_at;  // end of the last frame's IFG
        ring<in_flight> wire;      // serialised or queued, not yet delivered (in arrival order)
        size_t framed = 0;         // entries still holding their frame: the event delivers them
        size_t min_frame = 0;      // require_min_frame
        timed_event arrival;  // in the record of the board the far sink is on, if any
        link_direction_stats stats;
        uint64_t in_flight_start = 0;

        sc_core::sc_time send(frame_ptr f) override { return send_at(std::move(f), sc_core::SC_ZERO_TIME); }
        sc_core::sc_time tx_free_at() const override { return free_at; }
        double speed_mbps() const override { return owner->p_.speed_mbps; }
        bool sends_ahead() const override { return true; }
        sc_core::sc_time send_at(frame_ptr f, const sc_core::sc_time& earliest) override;
        frame_ptr withdraw_last(const sc_core::sc_time& after) override;
    };

    void deliver(int dir);
    void count(link_direction_stats& s, const in_flight& x) const;
    void arm(end_point& e, const sc_core::sc_time& now);

    link_params p_;
    sc_core::sc_time byte_time_, propagation_;
    // The gap's time, byte_time_ x ifg_bytes: an sc_time times a double costs two conversions.
    sc_core::sc_time ifg_time_;
    end_point ends_[2];
    std::vector<tap_fn> taps_;
    sc_core::sc_time stats_since_;
};

}  // namespace fecsim::net
