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
    ifg_time_ = byte_time_ * double(ifg_bytes);
    for (int d : {a_to_b, b_to_a}) {
        ends_[d].owner = this;
        ends_[d].dir = d;
        // One method per direction, woken once per frame at its arrival time.
        sc_core::sc_spawn_options o;
        o.spawn_method();
        o.set_sensitivity(&ends_[d].arrival.event());
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
    if (f->size() < min_frame)
        throw std::runtime_error(std::string(owner->name()) + ": a " + std::to_string(f->size()) +
                                 "-byte frame; the cross-board lookahead assumes every frame a board sends has at least " +
                                 std::to_string(min_frame) + " bytes (set cpu.cross_board_lookahead false)");
    const sc_time now = sim_time();
    const sc_time start = std::max({now, earliest, free_at});
    const sc_time end = start + owner->byte_time_ * double(preamble_bytes + f->size());
    const sc_time before = free_at;
    free_at = end + owner->ifg_time_;
    const sc_time arrive = end + owner->propagation_;
    const size_t n = f->size();
    // Frames the far sink took early leave the wire, counted, once they have arrived.
    while (!wire.empty() && !wire.front().f && happened_by(wire.front().arrive, now)) {
        const in_flight x = wire.pop_front();
        owner->count(stats, x);
        if (!x.counted) ++stats.sent;
    }
    // A frame enters the link when it is sent, or, sent ahead, when it starts (as if sent then).
    const bool ahead = earliest > now;
    if (!ahead) ++stats.sent;
    // The far sink may take the frame now when nothing sent before it still waits for the event
    // (it sees frames in arrival order) and no tap has to see it arrive; it is counted at `arrive`.
    const bool early = framed == 0 && owner->taps_.empty() && far->frame_arriving(f, arrive);
    wire.push_back({early ? frame_ptr() : std::move(f), n, start, end, arrive, before, !ahead});
    if (!early && framed++ == 0) arrival.notify(arrive - now);  // otherwise deliver() re-arms
    return free_at;
}

frame_ptr link::end_point::withdraw_last(const sc_time& after) {
    if (wire.empty() || wire.back().start <= after) return nullptr;
    in_flight x = wire.pop_back();
    free_at = x.free_before;  // it had not started: never counted as sent
    if (!x.f) {  // the far sink took it when it was sent: it has not arrived, so it gives it back
        frame_ptr f = far->give_back_last(sim_time());
        if (!f) throw std::logic_error(std::string(owner->name()) + ": the far sink took a withdrawn frame and kept it");
        return f;
    }
    if (--framed == 0) arrival.cancel();
    return std::move(x.f);
}

void link::deliver(int dir) {
    sim_stats::count_event();
    end_point& e = ends_[dir];
    const sc_time now = sim_time();
    while (!e.wire.empty() && e.wire.front().arrive <= now) {
        in_flight x = e.wire.pop_front();
        count(e.stats, x);
        if (!x.counted) ++e.stats.sent;
        if (!x.f) continue;  // the far sink took it when it was sent
        --e.framed;
        for (auto& tap : taps_) tap(dir, *x.f, x.start, x.end);
        e.far->frame_arrived(std::move(x.f));
    }
    arm(e, now);
}

// The wire time of a frame is end - start (its preamble and bytes) and the gap after it: the
// same whole time units as byte_time_ x all three, without the conversions through a double.
void link::count(link_direction_stats& s, const in_flight& x) const {
    const size_t n = x.bytes;
    ++s.frames;
    s.bytes += n;
    if (n < min_frame_bytes) ++s.runts;
    s.busy += (x.end - x.start) + ifg_time_;
}

// Wakes deliver() when the first frame still to be delivered arrives.
void link::arm(end_point& e, const sc_time& now) {
    for (size_t i = 0; e.framed && i < e.wire.size(); ++i) {
        if (!e.wire[i].f) continue;
        e.arrival.notify(e.wire[i].arrive - now);
        return;
    }
}

// The direction's counters, with the frames taken early that deliver() would have counted by
// now and the frames sent ahead that have started (happened_by: at the end of an
// sc_start, not those of its end time).
link_direction_stats link::stats(int dir) const {
    const end_point& e = ends_[dir];
    link_direction_stats s = e.stats;
    for (size_t i = 0; i < e.wire.size(); ++i) {
        const in_flight& x = e.wire[i];
        if (!x.counted && happened_by(x.start, sim_time())) ++s.sent;
        if (!x.f && happened_by(x.arrive, sim_time())) count(s, x);
    }
    return s;
}

double link::utilisation(int dir) const {
    const sc_time window = sim_time() - stats_since_;
    return window > sc_core::SC_ZERO_TIME ? stats(dir).busy / window : 0.0;
}

void link::reset_stats() {
    for (auto& e : ends_) {
        // Frames taken early that arrived before the window are not in flight any more (one
        // arriving at its start arrives in it, as deliver() would count it in the next sc_start).
        while (!e.wire.empty() && !e.wire.front().f && happened_by(e.wire.front().arrive, sim_time()))
            e.wire.pop_front();
        e.stats = link_direction_stats{};
        e.in_flight_start = 0;
        for (size_t i = 0; i < e.wire.size(); ++i) {  // frames sent ahead that start later enter in the window
            in_flight& x = e.wire[i];
            if (!x.counted && happened_by(x.start, sim_time())) x.counted = true;
            if (x.counted) ++e.in_flight_start;
        }
    }
    stats_since_ = sim_time();
}

ledger link::books(int dir) const {
    const end_point& e = ends_[dir];
    const link_direction_stats s = stats(dir);
    size_t not_in = s.frames - e.stats.frames;  // taken early and arrived, still on the wire
    for (size_t i = 0; i < e.wire.size(); ++i)
        if (!e.wire[i].counted && !happened_by(e.wire[i].start, sim_time())) ++not_in;  // sent ahead, not started
    return {e.in_flight_start, s.sent, s.frames, {}, e.wire.size() - not_in};
}

void link::report(nlohmann::json& j) const {
    j["speed_mbps"] = p_.speed_mbps;
    j["propagation_ns"] = p_.propagation_ns;
    for (int d : {a_to_b, b_to_a}) {
        const link_direction_stats s = stats(d);
        j[d == a_to_b ? "a_to_b" : "b_to_a"] = {
            {"frames", s.frames}, {"bytes", s.bytes}, {"runts", s.runts}, {"utilisation", utilisation(d)}};
    }
}

}  // namespace fecsim::net
