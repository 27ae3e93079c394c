#include "models/net/eth_switch.h"

#include "models/net/mac_control.h"
#include "models/sim_stats.h"
#include "models/sim_time.h"
#include "config/config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fecsim::net {
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {

constexpr uint64_t link_local_base = 0x0180C2000000ull;  // 802.1D: 01-80-C2-00-00-00..0F never relayed
constexpr size_t header_bytes = 2 * mac_bytes + 2;
// Source address of PAUSE frames the switch emits: locally administered, port index in the last byte.
constexpr uint64_t switch_mac_base = 0x02FEC5000000ull;

uint16_t be16(const uint8_t* b) { return uint16_t(b[0] << 8 | b[1]); }
bool is_group(uint64_t mac) { return (mac >> 40) & 1; }

}  // namespace

switch_params switch_params_from(const config_view& c) {
    switch_params p;
    p.queue_frames = uint32_t(c.integer("queue_frames"));
    p.queue_bytes = uint64_t(c.integer("queue_bytes"));
    p.forwarding_latency_ns = c.number("forwarding_latency_ns");
    p.check_fcs = c.boolean("check_fcs");
    p.honour_pause = c.boolean("honour_pause");
    p.emit_pause = c.boolean("emit_pause");
    p.pause_threshold_bytes = uint64_t(c.integer("pause_threshold_bytes"));
    p.pause_resume_bytes = uint64_t(c.integer("pause_resume_bytes"));
    p.pause_quanta = uint32_t(c.integer("pause_quanta"));
    p.aging_s = c.number("aging_s");
    p.mac_table_entries = uint32_t(c.integer("mac_table_entries"));
    return p;
}

std::optional<param_problem> check(const switch_params& p) {
    if (p.queue_frames == 0 && p.queue_bytes == 0)
        return param_problem{"queue_bytes", "queue_frames and queue_bytes are both 0 (an unbounded queue)"};
    if (p.queue_bytes != 0 && p.queue_bytes < min_frame_bytes)
        return param_problem{"queue_bytes", "must hold at least one minimum-size frame (64 bytes)"};
    if (!(p.forwarding_latency_ns >= 0)) return param_problem{"forwarding_latency_ns", "must be >= 0"};
    if (!(p.aging_s >= 0)) return param_problem{"aging_s", "must be >= 0"};
    if (p.pause_quanta > 0xFFFF) return param_problem{"pause_quanta", "must fit in 16 bits"};
    if (p.emit_pause) {
        if (p.pause_quanta == 0) return param_problem{"pause_quanta", "must be > 0 when emit_pause is set"};
        if (p.pause_resume_bytes >= p.pause_threshold_bytes)
            return param_problem{"pause_resume_bytes", "must be below pause_threshold_bytes"};
        if (p.queue_bytes != 0 && p.pause_threshold_bytes >= p.queue_bytes)
            return param_problem{"pause_threshold_bytes", "must be below queue_bytes (the queue would drop first)"};
    }
    return std::nullopt;
}

eth_switch::eth_switch(sc_core::sc_module_name name, const switch_params& p, size_t n_ports)
    : sc_module(name), p_(p) {
    if (auto problem = check(p))
        throw std::invalid_argument(std::string(this->name()) + ": " + problem->key + ": " + problem->message);
    if (n_ports < 2) throw std::invalid_argument(std::string(this->name()) + ": a switch needs at least 2 ports");
    forwarding_latency_ = sc_time(p.forwarding_latency_ns, SC_NS);
    aging_ = sc_time(p.aging_s, sc_core::SC_SEC);
    table_.reserve(p.mac_table_entries);
    for (size_t i = 0; i < n_ports; ++i) {
        auto ps = std::make_unique<port_state>();
        ps->sw = this;
        ps->index = i;
        if (p.queue_frames) ps->queue.reserve(p.queue_frames);
        // One output scheduler per port, woken when its head frame may start.
        sc_core::sc_spawn_options o;
        o.spawn_method();
        o.set_sensitivity(&ps->wake.event());
        o.dont_initialize();
        sc_core::sc_spawn([this, i] { run_port(i); }, ("port" + std::to_string(i)).c_str(), &o);
        ports_.push_back(std::move(ps));
    }
}

std::optional<size_t> eth_switch::learned_port(const uint8_t mac[mac_bytes]) const {
    const auto it = table_.find(mac48(mac));
    if (it == table_.end()) return std::nullopt;
    if (aging_ > sc_core::SC_ZERO_TIME && it->second.last_seen + aging_ < sim_time()) return std::nullopt;
    return it->second.port;
}

void eth_switch::check_wiring() {
    for (auto& ps : ports_)
        if (!ps->tx)
            throw std::logic_error(std::string(name()) + ": port " + std::to_string(ps->index) +
                                   " has no transmitter (call attach())");
    wired_ = true;
}

// Called from the delivering link's process at the end of reception: no event of its own.
void eth_switch::receive(size_t in, frame_ptr f) {
    if (!wired_) check_wiring();
    port_state& ps = *ports_[in];
    ++ps.stats.rx_frames;
    ps.stats.rx_bytes += f->size();
    if (f->size() < header_bytes + fcs_bytes) {
        ++stats_.malformed;
        return;
    }
    if (p_.check_fcs && !fcs_ok(*f)) {
        ++stats_.fcs_errors;
        return;
    }
    const uint64_t dst = mac48(f->data()), src = mac48(f->data() + mac_bytes);
    const uint16_t type = be16(f->data() + 2 * mac_bytes);
    if (type == ethertype_mac_control || (dst & ~0xFull) == link_local_base) {
        const int quanta = f->size() >= header_bytes + 4 + fcs_bytes ? pause_quanta(*f) : -1;
        if (quanta < 0) {
            ++stats_.control_filtered;
            return;
        }
        ++stats_.pause_received;
        if (p_.honour_pause) {
            // The timer restarts with every PAUSE; 0 quanta resumes at once (802.3 31B.3.1).
            // A frame due to start as the PAUSE arrives starts, as one sent ahead does (withdraw
            // leaves it): the scheduler's step due now runs first, whatever order the kernel
            // runs the two processes in.
            const sc_time now = sim_time();
            const bool due = ps.tx->tx_free_at() <= now &&
                             (ps.control || (!ps.queue.empty() && std::max(ps.queue.front().ready, ps.paused_until) <= now));
            if (due) port_step(in);
            ps.paused_until = now + pause_time(in, uint16_t(quanta));
            withdraw(ps);  // frames sent ahead that have not started obey the new timer too
            ps.wake.notify(sc_core::SC_ZERO_TIME);
        }
        return;
    }
    if (!is_group(src)) learn(src, in);
    if (is_group(dst)) return flood(in, std::move(f));
    const auto it = table_.find(dst);
    const bool known = it != table_.end() &&
                       (aging_ == sc_core::SC_ZERO_TIME || it->second.last_seen + aging_ >= sim_time());
    if (!known) return flood(in, std::move(f));
    if (it->second.port == in) {
        ++stats_.filtered;
        return;
    }
    ++stats_.forwarded;
    enqueue(it->second.port, std::move(f), in);
}

// A frame offered by its ingress link when it was sent (its last bit arrives at `at`) is taken
// now when nothing before `at` can change what happens to it: a two-port switch (the other
// port's output is fed by this link alone, in arrival order, and the link offers a frame only
// when none sent before it is still undelivered), no PAUSE emission, a well-formed unicast data
// frame with a good FCS whose source is learned on this port and destination on the other
// until `at`, room in the output queue as it will be at `at`, and nothing waiting for the
// output's scheduler. It is then handled as receive() would at `at` and sent ahead; counted as
// received and forwarded at `at`. Anything else is left to the link's event.
bool eth_switch::arriving(size_t in, frame_ptr& f, const sc_time& at) {
    if (ports_.size() != 2 || p_.emit_pause) return false;
    if (!wired_) check_wiring();
    const size_t out = 1 - in;
    port_state& ps = *ports_[out];
    if (!ps.queue.empty() || ps.control || !ps.tx->sends_ahead()) return false;
    const size_t n = f->size();
    if (n < header_bytes + fcs_bytes) return false;
    const uint64_t dst = mac48(f->data()), src = mac48(f->data() + mac_bytes);
    if (be16(f->data() + 2 * mac_bytes) == ethertype_mac_control || (dst & ~0xFull) == link_local_base) return false;
    if (is_group(src) || is_group(dst)) return false;
    mac_entry* const source = learned_until(src, in, at);
    if (!source || !learned_until(dst, out, at)) return false;
    if (p_.check_fcs && !fcs_ok(*f)) return false;
    settle(ps);
    const auto [frames, bytes] = queue_at_arrival(ps, at, ps.sent.size());
    if ((p_.queue_frames && frames >= p_.queue_frames) || (p_.queue_bytes && bytes + n > p_.queue_bytes)) return false;
    source->last_seen = at;
    ps.queue_bytes += n;
    ps.stats.max_queue_frames = std::max<uint64_t>(ps.stats.max_queue_frames, frames + 1);
    ps.stats.max_queue_bytes = std::max(ps.stats.max_queue_bytes, bytes + n);
    const sc_time ready = at + forwarding_latency_;
    const sc_time start = std::max({ready, ps.paused_until, ps.tx->tx_free_at()});
    ps.tx->send_at(std::move(f), start);
    ps.sent.push_back({ready, start, n, in, at, true});
    return true;
}

eth_switch::mac_entry* eth_switch::learned_until(uint64_t mac, size_t port, const sc_time& at) {
    const auto it = table_.find(mac);
    const bool fresh = it != table_.end() && it->second.port == port &&
                       (aging_ == sc_core::SC_ZERO_TIME || it->second.last_seen + aging_ >= at);
    return fresh ? &it->second : nullptr;
}

void eth_switch::count_received(const ahead& a) {
    switch_port_stats& s = ports_[a.ingress]->stats;
    ++s.rx_frames;
    s.rx_bytes += a.bytes;
    ++stats_.forwarded;
}

void eth_switch::learn(uint64_t mac, size_t port) {
    const sc_time now = sim_time();
    const auto it = table_.find(mac);
    if (it != table_.end()) {
        // Refresh (an entry refreshed by a frame taken early may be ahead of now), or a station that moved.
        it->second = {port, it->second.port == port ? std::max(it->second.last_seen, now) : now};
    } else if (table_.size() < p_.mac_table_entries) {
        table_.emplace(mac, mac_entry{port, now});
    }
}

// Copies go to every other port; the original goes to the last one, so a 2-port switch copies nothing.
void eth_switch::flood(size_t in, frame_ptr f) {
    ++stats_.flooded;
    const size_t last = in == ports_.size() - 1 ? ports_.size() - 2 : ports_.size() - 1;
    for (size_t p = 0; p < ports_.size(); ++p) {
        if (p == in) continue;
        if (p == last) return enqueue(p, std::move(f), in);
        frame_ptr copy = frame_pool::instance().get(f->size());
        std::memcpy(copy->data(), f->data(), f->size());
        copy->created = f->created;
        enqueue(p, std::move(copy), in);
    }
}

void eth_switch::enqueue(size_t out, frame_ptr f, size_t ingress) {
    port_state& ps = *ports_[out];
    settle(ps);
    const size_t n = f->size();
    const ahead_count occ = occupancy(ps);
    const bool fits = !(p_.queue_frames && occ.frames >= p_.queue_frames) &&
                      !(p_.queue_bytes && occ.bytes + n > p_.queue_bytes);
    const bool idle = ps.queue.empty();
    bool ahead = false;
    if (fits) {
        const sc_time ready = sim_time() + forwarding_latency_;
        ps.queue_bytes += n;
        ps.stats.max_queue_frames = std::max<uint64_t>(ps.stats.max_queue_frames, occ.frames + 1);
        ps.stats.max_queue_bytes = std::max(ps.stats.max_queue_bytes, occ.bytes + n);
        // Nothing waits for the scheduler and no control frame can jump ahead: the frame starts
        // when the scheduler would start it (ready, transmitter free, pause over), known now, so
        // the egress link takes it at once and the scheduler's event is saved. A PAUSE received
        // before that start takes it back (withdraw).
        ahead = idle && !ps.control && !p_.emit_pause && ps.tx->sends_ahead();
        if (ahead) {
            const sc_time start = std::max({ready, ps.paused_until, ps.tx->tx_free_at()});
            ps.tx->send_at(std::move(f), start);
            ps.sent.push_back({ready, start, n, ingress, {}, false});
        } else {
            ps.queue.push_back({std::move(f), ready, ingress});
        }
    } else {
        ++ps.stats.tail_drops;
        ++stats_.tail_drops;
    }
    // A frame that finds the queue at the threshold, queued or dropped, keeps its sender paused.
    if (p_.emit_pause && ps.queue_bytes >= p_.pause_threshold_bytes) {
        if (!ps.congested) {
            ps.congested = true;
            ++congested_ports_;
        }
        request_pause(ingress);
    }
    if (fits && idle && !ahead) ps.wake.notify(forwarding_latency_);  // otherwise the scheduler is already armed
}

// Frames sent ahead leave the queue, and count as sent, when they start (as the scheduler would
// have sent them then); frames taken early count as received when they arrive. Both by the
// link's rule (happened_by): at the warm-up's end, sc_start has not yet run the
// events of that time, so a start or an arrival then belongs to the window.
void eth_switch::settle(port_state& ps) {
    const sc_time now = sim_time();
    while (!ps.sent.empty() && happened_by(ps.sent.front().start, now)) {
        const ahead a = ps.sent.pop_front();
        if (a.early) count_received(a);
        ps.queue_bytes -= a.bytes;
        ++ps.stats.tx_frames;
        ps.stats.tx_bytes += a.bytes;
    }
    for (size_t i = 0; i < ps.sent.size() && happened_by(ps.sent[i].arrives, now); ++i) {
        if (!ps.sent[i].early) continue;
        count_received(ps.sent[i]);
        ps.sent[i].early = false;
    }
}

// Takes back from the egress link every frame sent ahead that has not started, in order, to the
// head of the queue: the scheduler sends them under the port's new pause state.
void eth_switch::withdraw(port_state& ps) {
    settle(ps);
    while (!ps.sent.empty()) {
        frame_ptr f = ps.tx->withdraw_last(sim_time());
        if (!f) throw std::logic_error(std::string(name()) + ": the egress link lost a frame sent ahead");
        const ahead a = ps.sent.pop_back();
        if (a.early) count_received(a);  // counted at the PAUSE if it had not arrived yet
        ps.queue.push_front({std::move(f), a.ready, a.ingress});
    }
}

eth_switch::ahead_count eth_switch::started_ahead(const port_state& ps) {
    ahead_count c;
    for (size_t i = 0; i < ps.sent.size(); ++i) {
        const ahead& a = ps.sent[i];
        if (!happened_by(a.start, sim_time())) continue;
        ++c.frames;
        c.bytes += a.bytes;
    }
    return c;
}

// queue_bytes holds the queued frames and every frame sent ahead not yet settled; frames taken
// early that have not arrived, or sent ahead and started, are not in the queue now.
eth_switch::ahead_count eth_switch::occupancy(const port_state& ps) {
    ahead_count c{ps.queue.size(), ps.queue_bytes};
    for (size_t i = 0; i < ps.sent.size(); ++i) {
        const ahead& a = ps.sent[i];
        if (!happened_by(a.start, sim_time()) && happened_by(a.arrives, sim_time())) ++c.frames;
        else c.bytes -= a.bytes;
    }
    return c;
}

// The queue a frame taken early finds at its arrival `at` (before it joins): of the first `taken`
// frames sent ahead, those that start after `at` (a two-port switch takes a frame early only
// while its queue is empty, and the frames sent ahead before it arrived before it).
eth_switch::ahead_count eth_switch::queue_at_arrival(const port_state& ps, const sc_time& at, size_t taken) {
    ahead_count c;
    for (size_t i = 0; i < taken; ++i)
        if (ps.sent[i].start > at) ++c.frames, c.bytes += ps.sent[i].bytes;
    return c;
}

// The output scheduler of port p: starts at most one frame per activation and re-arms itself for
// the moment the next one may start (transmitter free, head ready, pause over).
void eth_switch::run_port(size_t p) {
    sim_stats::count_event();
    port_step(p);
}

void eth_switch::port_step(size_t p) {
    port_state& ps = *ports_[p];
    const sc_time now = sim_time();
    if (ps.tx->tx_free_at() > now) {
        if (ps.control || !ps.queue.empty()) ps.wake.notify(ps.tx->tx_free_at() - now);
        return;
    }
    sc_time free_at;
    if (ps.control) {
        // MAC control frames may be sent while the port itself is paused (802.3 31B.3.1).
        ++ps.stats.tx_frames;
        ps.stats.tx_bytes += ps.control->size();
        free_at = ps.tx->send(std::move(ps.control));
    } else {
        if (ps.queue.empty()) return;
        const sc_time start = std::max(ps.queue.front().ready, ps.paused_until);
        if (start > now) {
            ps.wake.notify(start - now);
            return;
        }
        queued q = ps.queue.pop_front();
        const size_t n = q.f->size();
        ps.queue_bytes -= n;
        ++ps.stats.tx_frames;
        ps.stats.tx_bytes += n;
        free_at = ps.tx->send(std::move(q.f));
        if (ps.congested && ps.queue_bytes <= p_.pause_resume_bytes) {
            ps.congested = false;
            if (--congested_ports_ == 0) release_pauses();
        }
    }
    if (ps.control || !ps.queue.empty()) ps.wake.notify(free_at - now);
}

// A congested queue is being fed from port p: pause its sender, and refresh the pause half-way
// through while the congestion lasts.
void eth_switch::request_pause(size_t p) {
    port_state& ps = *ports_[p];
    const sc_time now = sim_time();
    if (ps.pausing_peer && now < ps.pause_refresh_at) return;
    ps.pausing_peer = true;
    ps.pause_refresh_at = now + pause_time(p, uint16_t(p_.pause_quanta)) / 2.0;
    ++stats_.pause_sent;
    queue_control(p, uint16_t(p_.pause_quanta));
}

void eth_switch::release_pauses() {
    for (auto& ps : ports_) {
        if (!ps->pausing_peer) continue;
        ps->pausing_peer = false;
        ++stats_.xon_sent;
        queue_control(ps->index, 0);
    }
}

// Builds a 64-byte PAUSE frame on port p (or rewrites the one still waiting there).
void eth_switch::queue_control(size_t p, uint16_t quanta) {
    port_state& ps = *ports_[p];
    if (!ps.control) {
        ps.control = frame_pool::instance().get();
        ps.control->created = sim_time();
    }
    make_pause(*ps.control, switch_mac_base | p, quanta);
    ps.wake.notify(sc_core::SC_ZERO_TIME);
}

sc_time eth_switch::pause_time(size_t p, uint16_t quanta) const {
    return pause_duration(quanta, ports_[p]->tx->speed_mbps());
}

// The counters with the frames sent ahead that have started, and those taken early that have
// arrived, by now (settle() books them when the switch next acts).
switch_port_stats eth_switch::port_stats(size_t i) const {
    const port_state& ps = *ports_.at(i);
    switch_port_stats s = ps.stats;
    const ahead_count started = started_ahead(ps);
    s.tx_frames += started.frames;
    s.tx_bytes += started.bytes;
    for (auto& other : ports_)
        for (size_t k = 0; k < other->sent.size(); ++k) {
            const ahead& a = other->sent[k];
            if (a.early && a.ingress == i && happened_by(a.arrives, sim_time()))
                ++s.rx_frames, s.rx_bytes += a.bytes;
        }
    return s;
}

switch_stats eth_switch::stats() const {
    switch_stats s = stats_;
    for (auto& ps : ports_)
        for (size_t k = 0; k < ps->sent.size(); ++k)
            if (ps->sent[k].early && happened_by(ps->sent[k].arrives, sim_time())) ++s.forwarded;
    return s;
}

void eth_switch::reset_stats() {
    for (auto& ps : ports_) settle(*ps);  // books frames of other ports too: all before clearing
    stats_ = switch_stats{};
    for (auto& ps : ports_) {
        ps->stats = switch_port_stats{};
        const ahead_count occ = occupancy(*ps);
        ps->stats.max_queue_frames = occ.frames;
        ps->stats.max_queue_bytes = occ.bytes;
        // arriving() booked the queue a frame taken early finds at its arrival when it took the
        // frame: one still to arrive (settle() counted the others) books it again, in the window,
        // as receive() would at its arrival.
        for (size_t k = 0; k < ps->sent.size(); ++k) {
            const ahead& a = ps->sent[k];
            if (!a.early) continue;
            const ahead_count found = queue_at_arrival(*ps, a.arrives, k);
            ps->stats.max_queue_frames = std::max<uint64_t>(ps->stats.max_queue_frames, found.frames + 1);
            ps->stats.max_queue_bytes = std::max(ps->stats.max_queue_bytes, found.bytes + a.bytes);
        }
    }
}

void eth_switch::report(nlohmann::json& j) const {
    j["forwarded"] = stats().forwarded;
    j["flooded"] = stats_.flooded;
    j["filtered"] = stats_.filtered;
    j["tail_drops"] = stats_.tail_drops;
    j["fcs_errors"] = stats_.fcs_errors;
    j["malformed"] = stats_.malformed;
    j["pause_received"] = stats_.pause_received;
    j["pause_sent"] = stats_.pause_sent;
    j["xon_sent"] = stats_.xon_sent;
    j["control_filtered"] = stats_.control_filtered;
    j["mac_table_entries"] = table_.size();
    nlohmann::json ports = nlohmann::json::array();
    for (size_t i = 0; i < ports_.size(); ++i) {
        const switch_port_stats s = port_stats(i);
        ports.push_back({{"rx_frames", s.rx_frames}, {"rx_bytes", s.rx_bytes}, {"tx_frames", s.tx_frames},
                         {"tx_bytes", s.tx_bytes}, {"tail_drops", s.tail_drops},
                         {"max_queue_frames", s.max_queue_frames}, {"max_queue_bytes", s.max_queue_bytes}});
    }
    j["ports"] = std::move(ports);
}

}  // namespace fecsim::net
