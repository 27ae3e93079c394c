// A minimal Ethernet wire for the traffic benches (the real one is models/net/link): serialises
// at line rate with net::wire_time, delivers each frame to the far sink when its last bit
// arrives, and offers a capture tap stamped with the frame's first bit.
#pragma once

#include "models/net/eth_port.h"
#include "models/process.h"

#include <systemc>

#include <deque>
#include <functional>

namespace fecsim::test {

class test_wire : public sc_core::sc_module, public net::eth_tx {
public:
    std::function<void(const net::frame&, sc_core::sc_time first_bit)> tap;
    uint64_t frames = 0;
    sc_core::sc_time propagation;  // added to every frame's arrival (a long cable)

    test_wire(sc_core::sc_module_name n, double speed_mbps, net::eth_sink* far = nullptr)
        : sc_module(n), speed_(speed_mbps), far_(far) {
        spawn_method("deliver", ev_, [this] { deliver(); });
    }
    void connect(net::eth_sink& far) { far_ = &far; }

    sc_core::sc_time send(net::frame_ptr f) override {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        const sc_core::sc_time start = std::max(now, free_at_);
        const sc_core::sc_time last_bit =
            start + sc_core::sc_time((net::preamble_bytes + f->size()) * 8 * 1e3 / speed_, sc_core::SC_NS) + propagation;
        free_at_ = start + net::wire_time(f->size(), speed_);
        if (q_.empty()) ev_.notify(last_bit - now);
        q_.push_back({std::move(f), start, last_bit});
        return free_at_;
    }
    sc_core::sc_time tx_free_at() const override { return free_at_; }
    double speed_mbps() const override { return speed_; }

private:
    struct flight {
        net::frame_ptr f;
        sc_core::sc_time start, arrive;
    };
    void deliver() {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        while (!q_.empty() && q_.front().arrive <= now) {
            flight fl = std::move(q_.front());
            q_.pop_front();
            ++frames;
            if (tap) tap(*fl.f, fl.start);
            if (far_) far_->frame_arrived(std::move(fl.f));
        }
        if (!q_.empty()) ev_.notify(q_.front().arrive - now);
    }

    double speed_;
    net::eth_sink* far_;
    sc_core::sc_time free_at_;
    std::deque<flight> q_;
    sc_core::sc_event ev_;
};

// Collects what arrives: arrival times and the frames themselves (up to `keep`).
class collector : public net::eth_sink {
public:
    explicit collector(size_t keep = 0) : keep_(keep) {}
    void frame_arrived(net::frame_ptr f) override {
        ++count;
        last_arrival = sc_core::sc_time_stamp();
        if (kept.size() < keep_) {
            times.push_back(last_arrival);
            kept.push_back(std::move(f));
        }
    }
    uint64_t count = 0;
    sc_core::sc_time last_arrival;
    std::vector<sc_core::sc_time> times;
    std::vector<net::frame_ptr> kept;

private:
    size_t keep_;
};

}  // namespace fecsim::test
