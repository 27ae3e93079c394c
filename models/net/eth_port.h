// How Ethernet devices connect: a device transmits through an eth_tx (one end of a link) and
// receives through the eth_sink it registered with the link. The link serialises at line rate
// and delivers each frame as one event at the time its last bit arrives (docs/design.md §2).
#pragma once

#include "models/net/frame.h"

#include <systemc>

#include <stdexcept>

namespace fecsim::net {

// Receiving side. Called at the simulated time the frame's last bit (+ propagation) arrives.
class eth_sink {
public:
    virtual ~eth_sink() = default;
    virtual void frame_arrived(frame_ptr f) = 0;
    // Offered by the link when the frame is sent, with the time `at` its last bit will arrive: a
    // sink that can already act on it exactly as it would at `at` takes it (moves from `f`) and
    // returns true, sparing the link its delivery event. The default declines.
    virtual bool frame_arriving(frame_ptr& /*f*/, const sc_core::sc_time& /*at*/) { return false; }
    // The newest frame the sink took, given back because the transmitter takes it back before its
    // start (eth_tx::withdraw_last: a switch port paused by PAUSE); null if the sink has none.
    virtual frame_ptr give_back_last(const sc_core::sc_time& /*now*/) { return nullptr; }
};

// Transmitting side, held by a MAC, a generator or a switch port.
class eth_tx {
public:
    virtual ~eth_tx() = default;
    // Serialises `f` starting at max(now, tx_free_at()); returns the time at which the
    // transmitter may start its next frame (end of frame + IFG). The frame is delivered to the
    // other end's sink at end of frame + propagation delay.
    virtual sc_core::sc_time send(frame_ptr f) = 0;
    virtual sc_core::sc_time tx_free_at() const = 0;
    virtual double speed_mbps() const = 0;

    // Sending ahead, for a sender that knows now when a frame may start (a switch port with
    // nothing else waiting): send_at() serialises `f` from max(earliest, tx_free_at()), the
    // same as send() called at `earliest`, and withdraw_last(t) takes back the newest frame if
    // it starts after `t` (nullptr otherwise), freeing the transmitter as if it had never been
    // sent. Only transmitters whose sends_ahead() is true implement them.
    virtual bool sends_ahead() const { return false; }
    virtual sc_core::sc_time send_at(frame_ptr, const sc_core::sc_time&) {
        throw std::logic_error("eth_tx: this transmitter does not send ahead");
    }
    virtual frame_ptr withdraw_last(const sc_core::sc_time&) { return nullptr; }
};

}  // namespace fecsim::net
