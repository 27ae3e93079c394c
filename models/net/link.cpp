#include "models/net/link.h"

#include "models/sim_stats.h"
#include "models/sim_time.h"
#include "config/config.h"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace fecsim::net {
using sc_core::sc_time;
using sc_core::SC_NS;

link_params link_params_from(const config_view& c) {
    link_params p;
    p.speed_mbps = c.number("speed_mbps");
    p.propagation_ns = c.number("propagation_ns");
    return p;
}

link::link(sc_core::sc_module_name name, const link_params& p) : sc_module(name), p_(p) {
    if (!(p.speed_mbps > 0))
        throw std::invalid_argument(std::string(this->name()) + ": speed_mbps must be > 0");
    if (!(p.propagation_ns >= 0))
        throw std::invalid_argument(std::string(this->name()) + ": propagation_ns must be >= 0");
    byte_time_ = sc_time(8e3 / p.speed_mbps, SC_NS);
    propagation_ = sc_time(p.propagation_ns, SC_NS);
    for (int d : {a_to_b, b_to_a}) {
        ends_[d].owner = this;
        ends_[d].dir = d;
        // One method per direction, woken once per frame at its arrival time.
        sc_core::sc_spawn_options o;
        o.spawn_method();
        o.set_sensitivity(&ends_[d].arrival);
        o.dont_initialize();
        sc_core::sc_spawn([this, d] { deliver(d); }, d == a_to_b ? "deliver_a_to_b" : "deliver_b_to_a", &o);
    }
}

void link::bind(eth_sink& side_a, eth_sink& side_b) {
    ends_[a_to_b].far = &side_b;
    ends_[b_to_a].far = &side_a;
}

sc_time link::end_point::send_at(frame_ptr f, const sc_time& earliest) {
    if (!f) throw std::invalid_argument(std::string(owner->name()) + ": send() of a null frame");
    if (!far) throw std::logic_error(std::string(owner->name()) + ": send() before bind()");
    const sc_time now = sim_time();
    const sc_time start = std::max({now, earliest, free_at});
    const sc_time end = start + owner->byte_time_ * double(preamble_bytes + f->size());
    const sc_time before = free_at;
    free_at = end + owner->byte_time_ * double(ifg_bytes);
    const sc_time arrive = end + owner->propagation_;
    const bool idle = wire.empty();
    ++stats.sent;
    wire.push_back({std::move(f), start, end, arrive, before});
    if (idle) arrival.notify(arrive - now);  // otherwise deliver() re-arms for the next frame
    return free_at;
}

frame_ptr link::end_point::withdraw_last(const sc_time& after) {
    if (wire.empty() || wire.back().start <= after) return nullptr;
    in_flight x = wire.pop_back();
    free_at = x.free_before;
    if (stats.sent > 0) --stats.sent;
    else --in_flight_start;  // sent before the window began
    if (wire.empty()) arrival.cancel();
    return std::move(x.f);
}

void link::deliver(int dir) {
    sim_stats::count_event();
    end_point& e = ends_[dir];
    const sc_time now = sim_time();
    while (!e.wire.empty() && e.wire.front().arrive <= now) {
        in_flight x = e.wire.pop_front();
        const size_t n = x.f->size();
        ++e.stats.frames;
        e.stats.bytes += n;
        if (n < min_frame_bytes) ++e.stats.runts;
        e.stats.busy += byte_time_ * double(preamble_bytes + n + ifg_bytes);
        for (auto& tap : taps_) tap(dir, *x.f, x.start, x.end);
        e.far->frame_arrived(std::move(x.f));
    }
    if (!e.wire.empty()) e.arrival.notify(e.wire.front().arrive - now);
}

double link::utilisation(int dir) const {
    const sc_time window = sim_time() - stats_since_;
    return window > sc_core::SC_ZERO_TIME ? ends_[dir].stats.busy / window : 0.0;
}

void link::reset_stats() {
    for (auto& e : ends_) {
        e.stats = link_direction_stats{};
        e.in_flight_start = e.wire.size();
    }
    stats_since_ = sim_time();
}

ledger link::books(int dir) const {
    const end_point& e = ends_[dir];
    return {e.in_flight_start, e.stats.sent, e.stats.frames, {}, e.wire.size()};
}

void link::report(nlohmann::json& j) const {
    j["speed_mbps"] = p_.speed_mbps;
    j["propagation_ns"] = p_.propagation_ns;
    for (int d : {a_to_b, b_to_a}) {
        const auto& s = ends_[d].stats;
        j[d == a_to_b ? "a_to_b" : "b_to_a"] = {
            {"frames", s.frames}, {"bytes", s.bytes}, {"runts", s.runts}, {"utilisation", utilisation(d)}};
    }
}

}  // namespace fecsim::net
