// Frames a sink took from its link when they were sent (eth_sink::frame_arriving), kept in
// arrival order until the sink receives each: once the link's delivery would have handed it over
// and anything could see what its arrival changes. The sinks that take frames early (the ENET MAC,
// the pktgen model, the pcap replay) share it, and the link counts those frames by the same rule.
#pragma once

#include "models/net/frame.h"
#include "models/net/ring.h"
#include "models/sim_time.h"

#include <systemc>

#include <utility>

namespace fecsim::net {

class taken_early {
public:
    bool empty() const { return q_.empty(); }
    const sc_core::sc_time& next_arrival() const { return q_.front().at; }
    void push(const sc_core::sc_time& at, frame_ptr f) { q_.push_back({at, std::move(f)}); }

    // Hands `receive` (frame, arrival time) every frame the link would have delivered to a reader
    // at `now`, in arrival order.
    template <class Receive>
    void arrived_by(const sc_core::sc_time& now, Receive&& receive) {
        while (!q_.empty() && happened_by(q_.front().at, now)) {
            arriving a = q_.pop_front();
            receive(std::move(a.f), a.at);
        }
    }

    template <class Pred>
    bool any_of(Pred&& pred) const {
        for (size_t i = 0; i < q_.size(); ++i)
            if (pred(*q_[i].f)) return true;
        return false;
    }

    // The newest frame, given back to the link (eth_sink::give_back_last): a switch port takes
    // back a frame it sent ahead that has not started. It has not arrived, so it was not received.
    frame_ptr give_back(const sc_core::sc_time& now) {
        if (q_.empty() || q_.back().at <= now) return nullptr;
        return q_.pop_back().f;
    }

private:
    struct arriving {
        sc_core::sc_time at;
        frame_ptr f;
    };
    ring<arriving> q_;
};

}  // namespace fecsim::net
