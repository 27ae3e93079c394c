#include "traffic/pktgen.h"

#include "models/process.h"
#include "models/sim_stats.h"
#include "config/config.h"
#include "traffic/live_report.h"

#include <algorithm>
#include <cstring>

namespace fecsim::traffic {

using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

pktgen_model_params pktgen_model_params_from(const config& cfg, bool flow_control) {
    pktgen_model_params p;
    const config_view g = cfg.view("generator");
    p.cmd = pktgen_params_from(cfg);
    const auto mac = parse_mac(g.string("device_mac"));
    if (!mac) throw cfg.error_at("/generator/device_mac", "expected a MAC address aa:bb:cc:dd:ee:ff, got \"" + g.string("device_mac") + "\"");
    const auto ip = parse_ipv4(g.string("device_ipv4"));
    if (!ip) throw cfg.error_at("/generator/device_ipv4", "expected a dotted IPv4 address, got \"" + g.string("device_ipv4") + "\"");
    p.dev = {*mac, *ip};
    p.cpu.per_packet_ns = g.number("cpu.per_packet_ns");
    p.cpu.per_burst_ns = g.number("cpu.per_burst_ns");
    p.cpu.build_ns = g.number("cpu.build_ns");
    p.cpu.rx_per_packet_ns = g.number("cpu.rx_per_packet_ns");
    p.tx_ring_size = uint32_t(g.integer("tx_ring_size"));
    p.rx_enabled = g.boolean("rx_enabled");
    p.start_delay_ns = g.number("start_delay_us") * 1e3;
    p.flow_control = flow_control;
    p.seed = cfg.seed();
    return p;
}

pktgen::pktgen(sc_core::sc_module_name name, const pktgen_model_params& p)
    : sc_module(name),
      p_(p),
      builder_(p.cmd, p.dev, p.seed),
      pause_(p.flow_control),
      rx_(sent_macs{builder_.src_mac(), builder_.dst_mac()}),
      ring_(std::max<uint32_t>(1, p.tx_ring_size)) {
    spawn_method("on_cpu", cpu_ev_, [this] { on_cpu(); });
    spawn_method("on_nic", nic_ev_, [this] { on_nic(); });
    started_at_ = next_tx_ = sc_time(p.start_delay_ns, SC_NS);  // pktgen: next_tx = now at start
    cpu_ev_.notify(started_at_);
}

void pktgen::on_cpu() {
    sim_stats::count_event();
    const sc_time now = sc_core::sc_time_stamp();
    if (state_ == cpu_state::running) {
        if (preempt_ > SC_ZERO_TIME) {  // RX softirq ran during the burst: the doorbell comes later
            const sc_time d = preempt_;
            preempt_ = SC_ZERO_TIME;
            cpu_ev_.notify(d);
            return;
        }
        visible_ = tail_;  // the doorbell: the NIC sees the whole burst at once
        state_ = cpu_state::waiting;
        nic_commit(now);
    }
    waiting_for_slot_ = false;
    xmit_call(now);
}

void pktgen::on_nic() {
    sim_stats::count_event();
    nic_commit(sc_core::sc_time_stamp());
}

// pktgen_xmit(): one call sends up to `burst` copies of the current frame.
void pktgen::xmit_call(sc_time now) {
    if (finished_) return;
    if (p_.cmd.count && sofar_ >= p_.cmd.count) {
        finished_ = true;
        finished_at_ = now;
        finished_ev_.notify(SC_ZERO_TIME);
        return;
    }
    if (p_.cmd.delay_ns == UINT64_MAX) return;  // "delay 0x7FFFFFFF": never transmit
    if (p_.cmd.delay_ns && last_ok_) {
        // spin(): wait for this call's slot; the next slot is one delay later, also when behind.
        if (!slot_claimed_) {
            slot_claimed_ = true;
            if (next_tx_ > now) {
                idle_total_ns_ += (next_tx_ - now).to_seconds() * 1e9;
                cpu_ev_.notify(next_tx_ - now);
                return;
            }
        }
        next_tx_ += sc_time(double(p_.cmd.delay_ns), SC_NS);
        slot_claimed_ = false;
    }
    const sc_time start = std::max(now, rx_busy_until_);  // RX work queued while waiting runs first
    double cost = p_.cpu.per_burst_ns;
    // fill_packet() before the queue check, as in pktgen_xmit(): a frame refused by a full
    // ring is sent by the next call, and the one after builds a new one (TXSIZE_RND etc.).
    if (!skb_ || (last_ok_ && ++clone_count_ > p_.cmd.clone_skb)) {
        if (!skb_) skb_ = net::frame_pool::instance().get();
        builder_.build(*skb_, seq_num_, start);
        clone_count_ = 0;
        cost += p_.cpu.build_ns;
    }
    reclaim(now);
    if (free_slots() == 0) {  // netif_xmit_frozen_or_drv_stopped: retry the same frame later
        last_ok_ = false;
        ++s_.tx_busy;
        const double built = cost - p_.cpu.per_burst_ns;  // spent while the ring drains
        s_.cpu_busy_ns += built;
        busy_total_ns_ += built;
        wake_for_slot(now);
        return;
    }
    uint64_t n = std::min<uint64_t>(p_.cmd.burst, free_slots());
    if (p_.cmd.count) n = std::min<uint64_t>(n, p_.cmd.count - sofar_);
    const size_t len = skb_->size();
    for (uint64_t i = 0; i < n; ++i) {
        net::frame_ptr c = net::frame_pool::instance().get(len);
        std::memcpy(c->data(), skb_->data(), len);
        c->created = skb_->created;
        at(tail_++).f = std::move(c);
    }
    sofar_ += n;
    seq_num_ += uint32_t(n);  // pktgen counts sent packets in seq_num
    s_.tx_frames += n;
    s_.tx_bytes += n * len;
    last_ok_ = true;
    cost += double(n) * p_.cpu.per_packet_ns;
    s_.cpu_busy_ns += cost;
    busy_total_ns_ += cost;
    state_ = cpu_state::running;
    cpu_ev_.notify(start - now + sc_time(cost, SC_NS));
}

void pktgen::reclaim(sc_time now) {
    while (head_ < commit_ && at(head_).done <= now) ++head_;
}

void pktgen::wake_for_slot(sc_time now) {
    if (head_ < commit_) {
        const sc_time d = at(head_).done;
        cpu_ev_.notify(d > now ? d - now : SC_ZERO_TIME);
    } else {
        waiting_for_slot_ = true;  // nic_commit() wakes us when the oldest frame reaches the wire
    }
}

void pktgen::nic_commit(sc_time now) {
    while (commit_ < visible_) {
        if (pause_.paused(now)) {
            nic_ev_.notify(pause_.until() - now);
            break;
        }
        // With flow control a frame is handed over only when the wire is free, so that a
        // PAUSE takes effect after the frame in progress; without it the NIC streams the ring.
        if (pause_.flow_control() && tx_->tx_free_at() > now) {
            nic_ev_.notify(tx_->tx_free_at() - now);
            break;
        }
        slot& s = at(commit_++);
        s.done = tx_->send(std::move(s.f));
        ++s_.wire_frames;
    }
    if (waiting_for_slot_ && head_ < commit_) {
        waiting_for_slot_ = false;
        wake_for_slot(now);
    }
}

void pktgen::frame_arrived(net::frame_ptr f) {
    take_arrivals(sc_core::sc_time_stamp());
    receive(std::move(f));
}

bool pktgen::frame_arriving(net::frame_ptr& f, const sc_time& at) {
    take_arrivals(sc_core::sc_time_stamp());
    if (!only_counted(*f)) return false;
    arriving_.push(at, std::move(f));
    return true;
}

// Whether receiving `f` changes nothing but a counter (rx_ignored, pause_frames_received), so
// that it may be received later than its arrival: a PAUSE frame without flow control, any
// other frame with rx disabled. Both settings are fixed for the run.
bool pktgen::only_counted(const net::frame& f) const {
    if (net::pause_quanta(f) >= 0) return !pause_.flow_control();
    return !p_.rx_enabled;
}

// Receives the frames taken early that the link would have delivered by `now`.
void pktgen::take_arrivals(const sc_time& now) {
    arriving_.arrived_by(now, [this](net::frame_ptr f, const sc_time&) { receive(std::move(f)); });
}

// The statistics readers are const: receiving the frames the link would have delivered by now
// (happened_by) changes what they read exactly as its delivery would have.
void pktgen::settle() const { const_cast<pktgen*>(this)->take_arrivals(sc_core::sc_time_stamp()); }

// A frame at its arrival (now), or one only counted (only_counted) at any time after it.
void pktgen::receive(net::frame_ptr f) {
    const sc_time now = sc_core::sc_time_stamp();
    if (pause_.handle(*f, tx_ ? tx_->speed_mbps() : 1000.0)) {
        if (pause_.flow_control() && tx_) nic_ev_.notify(SC_ZERO_TIME);
        return;
    }
    if (!p_.rx_enabled) {
        ++s_.rx_ignored;
        return;
    }
    ++s_.rx_frames;
    rx_.analyse(*f, now);
    const sc_time c(p_.cpu.rx_per_packet_ns, SC_NS);
    s_.cpu_busy_ns += p_.cpu.rx_per_packet_ns;
    busy_total_ns_ += p_.cpu.rx_per_packet_ns;
    if (state_ == cpu_state::running) preempt_ += c;
    else rx_busy_until_ = std::max(rx_busy_until_, now) + c;
}

void pktgen::reset_stats() {
    take_arrivals(sc_core::sc_time_stamp());  // those that arrived before the window
    s_ = {};
    s_.ring_at_start = tail_ - commit_;
    rx_.reset();
    pause_.reset_window();
    window_start_ = sc_core::sc_time_stamp();
}

void pktgen::report(nlohmann::json& j) const {
    settle();
    const double window_ns = (sc_core::sc_time_stamp() - window_start_).to_seconds() * 1e9;
    j["kind"] = "pktgen";
    j["tx_frames"] = s_.tx_frames;
    j["tx_bytes"] = s_.tx_bytes;
    j["rx_frames"] = s_.rx_frames;
    j["rx_ignored"] = s_.rx_ignored;
    pause_.report(j);
    j["tx_ring_full"] = s_.tx_busy;
    j["cpu_busy_fraction"] = window_ns > 0 ? std::min(1.0, s_.cpu_busy_ns / window_ns) : 0.0;
    if (p_.rx_enabled) rx_.report(j["rx"]);
    if (finished_) j["ended_s"] = finished_at_.to_seconds();  // `count` packets sent
    if (!p_.cmd.notes.empty()) j["notes"] = p_.cmd.notes;  // script lines without meaning here
}

std::optional<ledger> pktgen::nic_books() const {
    return ledger{s_.ring_at_start, s_.tx_frames, s_.wire_frames, {}, tail_ - commit_};
}

std::string pktgen::final_summary() const {
    const sc_time end = finished_ ? finished_at_ : sc_core::sc_time_stamp();
    const double elapsed_ns = end > started_at_ ? (end - started_at_).to_seconds() * 1e9 : 0.0;
    return pktgen_result_line(uint64_t(elapsed_ns), uint64_t(std::min(idle_total_ns_, elapsed_ns)), sofar_,
                              builder_.current().pkt_size, 0);
}

}  // namespace fecsim::traffic
