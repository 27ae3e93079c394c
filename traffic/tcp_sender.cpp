#include "traffic/tcp_sender.h"

#include "config/config.h"
#include "models/process.h"
#include "models/sim_stats.h"
#include "traffic/live_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace fecsim::traffic {

using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {
constexpr uint32_t ip_tcp_headers = 40;        // IPv4 + TCP without options: MSS = MTU - 40
constexpr uint32_t timestamp_option = 12;      // NOP NOP TS on every segment
constexpr double rto_min_us = 200e3;           // TCP_RTO_MIN
constexpr double rto_max_us = 120e6;           // TCP_RTO_MAX
constexpr double rto_initial_us = 1e6;         // TCP_TIMEOUT_INIT (RFC 6298)
constexpr unsigned syn_retries = 6;            // net.ipv4.tcp_syn_retries
constexpr uint32_t dupthresh = 3;              // net.ipv4.tcp_reordering
constexpr int own_wscale = 7;                  // tcp_select_initial_window with tcp_rmem[2] = 6 MiB
constexpr uint16_t syn_window = 64240;         // 44 * 1460, Linux's SYN window
constexpr uint16_t own_window = 502;           // 64256 >> 7: the client receives nothing
constexpr uint32_t tsq_limit_bytes = 131072;   // tcp_small_queue_check: two 64 KB TSO skbs
constexpr uint32_t gso_segs_max = 45;          // tcp_xmit_size_goal: (65536 - 1 - MAX_TCP_HEADER) / 1448
const sc_time never = sc_core::sc_max_time();
}  // namespace

tcp_sender_params tcp_sender_params_from(const config& cfg, bool flow_control) {
    const config_view g = cfg.view("generator");
    tcp_sender_params p;
    const auto mac = [&](const std::string& pointer, const std::string& text) {
        const auto m = parse_mac(text);
        if (!m) throw cfg.error_at(pointer, "expected a MAC address aa:bb:cc:dd:ee:ff, got \"" + text + "\"");
        return *m;
    };
    const auto ipv4 = [&](const std::string& pointer, const std::string& text) {
        const auto a = parse_ipv4(text);
        if (!a) throw cfg.error_at(pointer, "expected a dotted IPv4 address, got \"" + text + "\"");
        return *a;
    };
    p.src_mac = mac("/generator/device_mac", g.string("device_mac"));
    p.src_ip = ipv4("/generator/device_ipv4", g.string("device_ipv4"));
    const std::string& dst_mac = g.string("tcp.dst_mac");
    p.dst_mac = dst_mac.empty() ? mac("/soc/fec/mac_address", cfg.view("soc").string("fec.mac_address"))
                                : mac("/generator/tcp/dst_mac", dst_mac);
    p.dst_ip = ipv4("/generator/tcp/dst_ipv4", g.string("tcp.dst_ipv4"));
    p.src_port = uint16_t(g.integer("tcp.src_port"));
    p.dst_port = uint16_t(g.integer("tcp.dst_port"));
    p.mtu = uint32_t(g.integer("tcp.mtu"));
    const int64_t window = g.integer("tcp.window");
    p.sndbuf = window ? uint64_t(window) : 4194304;  // tcp_wmem[2]: autotuning's ceiling
    p.write_bytes = uint32_t(g.integer("tcp.write_bytes"));
    if (p.write_bytes > p.sndbuf)
        throw cfg.error_at(param_error(std::vector<std::string>{"generator.tcp.window", "generator.tcp.write_bytes"},
                                       "a write of " + std::to_string(p.write_bytes) + " bytes never fits the " +
                                           std::to_string(p.sndbuf) + "-byte send buffer (generator.tcp.window)"));
    p.duration_s = g.number("tcp.duration_s");
    p.cc = g.string("tcp.congestion_control") == "reno" ? congestion_algorithm::reno : congestion_algorithm::cubic;
    p.cpu.per_write_ns = g.number("tcp.cpu.per_write_ns");
    p.cpu.per_segment_ns = g.number("tcp.cpu.per_segment_ns");
    p.cpu.per_ack_ns = g.number("tcp.cpu.per_ack_ns");
    p.flow_control = flow_control;
    p.start_delay_ns = g.number("start_delay_us") * 1e3;
    p.seed = cfg.seed();
    return p;
}

tcp_sender::tcp_sender(sc_core::sc_module_name name, const tcp_sender_params& p)
    : sc_module(name), p_(p), pause_(p.flow_control), cc_(p.cc) {
    std::mt19937_64 rng(p.seed ^ 0x746370ull /* "tcp": its own stream of the experiment seed */);
    isn_ = uint32_t(rng());
    ts_offset_ = uint32_t(rng());  // Linux randomises the timestamp offset per connection
    ip_id_ = uint16_t(rng());
    payload_.resize(p.mtu);
    spawn_method("on_nic", nic_ev_, [this] { on_nic(); });
    spawn_method("on_timer", timer_ev_, [this] { on_timer(); });
    spawn_method("on_app", app_ev_, [this] { on_app(); });
    timer_ev_.notify(sc_time(p.start_delay_ns, SC_NS));  // connect()
}

// --- the host: CPU and NIC -------------------------------------------------------------------

// Work in softirq or the send path: it delays what the CPU hands to the NIC after it, and the
// application's write in progress (softirq preempts it).
void tcp_sender::charge(double ns) {
    const sc_time now = sc_core::sc_time_stamp(), cost(ns, SC_NS);
    cpu_free_ = std::max(cpu_free_, now) + cost;
    if (state_ == state::established && !app_blocked_ && !app_done_ && app_at_ > now) app_at_ += cost;
}

void tcp_sender::queue_frame(uint8_t flags, uint32_t seq, uint64_t start, uint32_t len) {
    const sc_time now = sc_core::sc_time_stamp();
    tcp_segment t;
    t.src_mac = p_.src_mac, t.dst_mac = p_.dst_mac;
    t.src_ip = p_.src_ip, t.dst_ip = p_.dst_ip;
    t.src_port = p_.src_port, t.dst_port = p_.dst_port;
    t.ip_id = ip_id_++;
    t.seq = seq;
    t.flags = flags;
    const bool syn = flags & tcp_flags::syn;
    if (flags & tcp_flags::ack) t.ack = rcv_nxt_;
    t.window = syn || !wscale_ok_ ? syn_window : own_window;
    if (syn) {
        t.mss = uint16_t(p_.mtu - ip_tcp_headers);
        t.sack_permitted = true;
        t.wscale = own_wscale;
    }
    if (syn || ts_ok_) {
        t.has_timestamps = true;
        t.tsval = tsval(now);
        t.tsecr = ts_recent_;
    }
    if (len) {
        fill_tcp_payload(payload_.data(), start, len);
        t.payload = payload_.data();
        t.payload_len = len;
    }
    net::frame_ptr f = net::frame_pool::instance().get();
    build_tcp_frame(*f, t);
    f->created = now;
    charge(p_.cpu.per_segment_ns);
    nic_.push_back({std::move(f), cpu_free_, len});
    nic_bytes_ += len;
    ++nic_in_;
    nic_ev_.notify(SC_ZERO_TIME);
}

// The host NIC: one frame to the wire when it is free and no PAUSE holds it; a frame whose
// last bit has left is a TX completion, which runs the TCP small queues handler.
void tcp_sender::on_nic() {
    sim_stats::count_event();
    const sc_time now = sc_core::sc_time_stamp();
    bool completed = false;
    while (!on_wire_.empty() && on_wire_.front().first <= now) {
        nic_bytes_ -= on_wire_.front().second;
        on_wire_.pop_front();
        completed = true;
    }
    if (completed && tsq_throttled_) {
        tsq_throttled_ = false;  // tcp_tsq_handler
        advance_app(now);
        tcp_write_xmit(false);
        schedule_app(now);
    }
    sc_time next = on_wire_.empty() ? never : on_wire_.front().first;
    if (!nic_.empty() && tx_) {
        sc_time at = std::max(nic_.front().ready, tx_->tx_free_at());
        if (pause_.paused(now)) at = std::max(at, pause_.until());
        if (at <= now) {
            nic_slot slot = std::move(nic_.front());
            nic_.pop_front();
            const uint64_t bytes = slot.f->size();
            const sc_time done = tx_->send(std::move(slot.f));
            on_wire_.emplace_back(done, slot.bytes);
            count(&tcp_sender_stats::tx_frames, 1);
            count(&tcp_sender_stats::tx_bytes, bytes);
            ++nic_out_;
            next = std::min(next, done);
        } else {
            next = std::min(next, at);
        }
    }
    if (next != never) nic_ev_.notify(next - now);
}

std::optional<ledger> tcp_sender::nic_books() const {
    ledger l;
    l.in_flight_start = nic_at_window_;
    l.in = nic_in_;
    l.out = nic_out_;
    l.in_flight_end = nic_.size();
    return l;
}

// --- connection set-up, timers ---------------------------------------------------------------

void tcp_sender::send_syn() {
    state_ = state::syn_sent;
    syn_sent_at_ = sc_core::sc_time_stamp();
    queue_frame(tcp_flags::syn, isn_, 0, 0);
    arm_rto(syn_sent_at_);
}

void tcp_sender::handle_synack(const tcp_segment& s) {
    const sc_time now = sc_core::sc_time_stamp();
    irs_ = s.seq;
    rcv_nxt_ = irs_ + 1;
    ts_ok_ = s.has_timestamps;
    sack_ok_ = s.sack_permitted;
    wscale_ok_ = s.wscale >= 0;  // both sides scale, or neither (RFC 7323)
    snd_wscale_ = wscale_ok_ ? s.wscale : 0;
    if (ts_ok_) ts_recent_ = s.tsval;
    // tcp_sync_mss: the smaller of the two MSS, less the options every segment carries.
    const uint32_t peer_mss = s.mss ? s.mss : 536;
    mss_ = std::min(p_.mtu - ip_tcp_headers, peer_mss) - (ts_ok_ ? timestamp_option : 0);
    rwnd_ = max_rwnd_ = s.window;  // a SYN's window is never scaled
    if (syn_retries_ == 0) rtt_sample((now - syn_sent_at_).to_seconds() * 1e6);
    else rto_us_ = 3 * rto_initial_us;  // RFC 6298 5.7: a retransmitted SYN leaves the RTO at 3 s
    rto_armed_ = false;
    backoff_ = 0;
    state_ = state::established;
    established_at_ = now;
    queue_frame(tcp_flags::ack, wire_seq(0), 0, 0);
    // iperf starts writing once connect() returns.
    app_at_ = std::max(now, cpu_free_) + sc_time(p_.cpu.per_write_ns, SC_NS);
    app_stop_at_ = p_.duration_s > 0 ? now + sc_time(p_.duration_s, sc_core::SC_SEC) : never;
    advance_app(now);
    tcp_write_xmit(true);
    schedule_app(now);
}

// tcp_reset_xmit_timer with the backed-off RTO (inet_csk_rto_backoff).
void tcp_sender::arm_rto(sc_time now) {
    const double us = std::min(rto_us_ * double(1u << std::min(backoff_, 20u)), rto_max_us);
    rto_at_ = now + sc_time(us, SC_US);
    rto_armed_ = true;
    timer_ev_.notify(rto_at_ - now);  // an earlier pending notification stays: on_timer re-checks
}

// tcp_rtt_estimator + tcp_set_rto: RFC 6298's SRTT and RTTVAR; Linux floors the variance term
// at TCP_RTO_MIN, so RTO = SRTT + max(4 RTTVAR, 200 ms).
void tcp_sender::rtt_sample(double r) {
    if (srtt_us_ == 0) {
        srtt_us_ = r;
        rttvar_us_ = r / 2;
        min_rtt_us_ = r;
    } else {
        rttvar_us_ = 0.75 * rttvar_us_ + 0.25 * std::abs(srtt_us_ - r);
        srtt_us_ = 0.875 * srtt_us_ + 0.125 * r;
        min_rtt_us_ = std::min(min_rtt_us_, r);
    }
    rto_us_ = std::min(srtt_us_ + std::max(4 * rttvar_us_, rto_min_us), rto_max_us);
    backoff_ = 0;  // only a valid RTT measurement resets the backoff (RFC 6298 5.7)
}

void tcp_sender::on_timer() {
    sim_stats::count_event();
    const sc_time now = sc_core::sc_time_stamp();
    if (state_ == state::closed) {
        send_syn();
        return;
    }
    if (!rto_armed_) return;
    if (now < rto_at_) {
        timer_ev_.notify(rto_at_ - now);
        return;
    }
    rto_armed_ = false;
    if (state_ == state::syn_sent) {  // tcp_retransmit_timer for a SYN: 1 s, 2 s, 4 s, ...
        count(&tcp_sender_stats::timeouts, 1);
        if (++syn_retries_ > syn_retries) {
            state_ = state::done;  // connect() fails with ETIMEDOUT
            return;
        }
        ++backoff_;
        queue_frame(tcp_flags::syn, isn_, 0, 0);
        arm_rto(now);
        return;
    }
    if (state_ != state::established && state_ != state::fin_wait) return;
    if (packets_out_ == 0) {  // the persist timer: the peer's window is closed
        if (unsent() == 0) return;
        queue_frame(tcp_flags::ack, wire_seq(una_) - 1, 0, 0);  // tcp_xmit_probe_skb: an old sequence number
        ++backoff_;
        arm_rto(now);
        return;
    }
    count(&tcp_sender_stats::timeouts, 1);
    tcp_enter_loss();
    ++backoff_;
    tcp_write_xmit(false);
    arm_rto(now);
}

// tcp_enter_loss: a new ssthresh unless the loss repeats, cwnd 1, every segment not SACKed
// is lost and will be sent again, go-back-N from snd_una.
void tcp_sender::tcp_enter_loss() {
    if (ca_ != ca_state::loss || una_ == high_seq_) cc_.ssthresh_on_loss();
    cc_.on_timeout();
    lost_out_ = retrans_out_ = 0;
    for (seg& g : rtx_) {
        g.retrans = false;
        g.lost = !g.sacked;
        lost_out_ += g.lost;
    }
    reno_sacked_ = 0;
    high_seq_ = nxt_;
    ca_ = ca_state::loss;
}

// --- receiving ------------------------------------------------------------------------------

void tcp_sender::frame_arrived(net::frame_ptr f) {
    if (pause_.handle(*f, tx_ ? tx_->speed_mbps() : 1000.0)) {
        if (pause_.flow_control()) nic_ev_.notify(SC_ZERO_TIME);
        return;
    }
    const auto s = parse_tcp_frame(*f);
    if (!s || s->dst_mac != p_.src_mac || s->dst_ip != p_.src_ip || s->src_ip != p_.dst_ip ||
        s->dst_port != p_.src_port || s->src_port != p_.dst_port) {
        count(&tcp_sender_stats::rx_ignored, 1);
        return;
    }
    if (!s->checksums_ok) {  // the host's NIC and stack drop it
        count(&tcp_sender_stats::rx_bad_checksum, 1);
        return;
    }
    count(&tcp_sender_stats::rx_frames, 1);
    charge(p_.cpu.per_ack_ns);
    const sc_time now = sc_core::sc_time_stamp();
    if (s->flags & tcp_flags::rst) {
        state_ = state::done;
        rto_armed_ = false;
        return;
    }
    if (state_ == state::syn_sent) {
        if ((s->flags & (tcp_flags::syn | tcp_flags::ack)) == (tcp_flags::syn | tcp_flags::ack) && s->ack == isn_ + 1)
            handle_synack(*s);
        return;
    }
    if (state_ != state::established && state_ != state::fin_wait) return;
    if (ts_ok_ && s->has_timestamps && !seq_before(s->tsval, ts_recent_)) ts_recent_ = s->tsval;
    // iperf -s sends no data; a SYN-ACK again (our ACK was lost) or the peer's FIN gets an ACK.
    if (s->flags & tcp_flags::fin && s->seq + s->payload_len == rcv_nxt_) ++rcv_nxt_;
    if (s->flags & (tcp_flags::syn | tcp_flags::fin) || s->payload_len) queue_frame(tcp_flags::ack, wire_seq(nxt_), 0, 0);
    if (s->flags & tcp_flags::ack) tcp_ack(*s);
    advance_app(now);
    tcp_write_xmit(false);
    schedule_app(now);
}

// tcp_sacktag_write_queue: marks the segments the SACK blocks cover. D-SACK blocks (below
// snd_una) are ignored.
uint32_t tcp_sender::tcp_sacktag(const tcp_segment& s) {
    uint32_t newly = 0;
    for (unsigned b = 0; b < s.sack_count; ++b) {
        count(&tcp_sender_stats::sack_blocks, 1);
        const int64_t l = int32_t(s.sack[b].left - wire_seq(una_)), r = int32_t(s.sack[b].right - wire_seq(una_));
        if (r <= 0 || l >= r || una_ + uint64_t(r) > nxt_) continue;
        const uint64_t left = una_ + uint64_t(std::max<int64_t>(l, 0)), right = una_ + uint64_t(r);
        // The queue is sorted by offset: find the first segment that may lie inside.
        auto it = std::lower_bound(rtx_.begin(), rtx_.end(), left, [](const seg& g, uint64_t x) { return g.start < x; });
        for (; it != rtx_.end() && it->end() <= right; ++it) {
            if (it->sacked) continue;
            it->sacked = true;
            ++sacked_out_;
            ++newly;
            if (it->lost) --lost_out_;
            if (it->retrans) --retrans_out_;
            it->lost = it->retrans = false;
        }
    }
    return newly;
}

// Loss detection. With SACK (RFC 6675 IsLost, tcp_mark_head_lost): a segment is lost when
// dupthresh segments above it were SACKed. Without (NewReno, RFC 6582): the head is lost after
// dupthresh duplicate ACKs, and again after each partial ACK in recovery.
void tcp_sender::mark_lost(bool partial_ack) {
    auto lose = [&](seg& g) {
        if (g.lost || g.sacked || g.retrans) return;
        g.lost = true;
        ++lost_out_;
    };
    if (!sack_ok_) {
        if (!rtx_.empty() && ((ca_ == ca_state::open && reno_sacked_ >= dupthresh) || (ca_ == ca_state::recovery && partial_ack)))
            lose(rtx_.front());
        return;
    }
    if (sacked_out_ < dupthresh) return;
    uint32_t above = 0;
    for (auto it = rtx_.rbegin(); it != rtx_.rend(); ++it) {
        if (it->sacked) ++above;
        else if (above >= dupthresh) lose(*it);
    }
}

// tcp_enter_recovery: PRR (RFC 6937) takes cwnd from the current flight down to ssthresh.
void tcp_sender::enter_recovery() {
    count(&tcp_sender_stats::fast_recoveries, 1);
    prior_cwnd_ = cc_.cwnd;
    cc_.ssthresh_on_loss();
    prr_delivered_ = prr_out_ = 0;
    high_seq_ = nxt_;
    ca_ = ca_state::recovery;
}

// tcp_cwnd_reduction (Linux 6.1), per ACK in recovery.
void tcp_sender::cwnd_reduction(uint32_t newly_acked_sacked, bool una_advanced) {
    if (!newly_acked_sacked || !prior_cwnd_) return;
    const int64_t in_flight = packets_in_flight();
    const int64_t delta = int64_t(cc_.ssthresh) - in_flight;
    prr_delivered_ += newly_acked_sacked;
    int64_t sndcnt;
    if (delta < 0) {
        sndcnt = int64_t((uint64_t(cc_.ssthresh) * prr_delivered_ + prior_cwnd_ - 1) / prior_cwnd_) - prr_out_;
    } else {
        sndcnt = std::max<int64_t>(int64_t(prr_delivered_) - prr_out_, newly_acked_sacked) + (una_advanced ? 1 : 0);
        sndcnt = std::min(delta, sndcnt);
    }
    sndcnt = std::max<int64_t>(sndcnt, prr_out_ ? 0 : 1);  // the fast retransmit goes at once
    cc_.cwnd = uint32_t(std::max<int64_t>(in_flight + sndcnt, 1));
}

// tcp_ack: snd_una, the window, the retransmission queue, RTT, SACK, the congestion state.
void tcp_sender::tcp_ack(const tcp_segment& s) {
    const sc_time now = sc_core::sc_time_stamp();
    const int64_t delta = int32_t(s.ack - wire_seq(una_));
    const uint64_t prior_una = una_;
    if (delta < 0) {  // an old ACK: only its SACK blocks count
        if (sack_ok_ && s.sack_count) tcp_sacktag(s);
        return;
    }
    const uint64_t ack = una_ + uint64_t(delta);
    if (ack > nxt_) return;  // ACKs what was never sent
    const uint64_t prior_rwnd = rwnd_;
    rwnd_ = uint64_t(s.window) << snd_wscale_;
    max_rwnd_ = std::max(max_rwnd_, rwnd_);

    uint32_t acked_pkts = 0, delivered = 0;
    sc_time first_sent = never;  // the oldest never retransmitted segment ACKed (Karn)
    while (!rtx_.empty() && rtx_.front().end() <= ack) {
        const seg& g = rtx_.front();
        if (g.sacked) --sacked_out_;
        else ++delivered;
        if (g.lost) --lost_out_;
        if (g.retrans) --retrans_out_;
        if (!g.ever_retrans) first_sent = std::min(first_sent, g.sent);
        count(&tcp_sender_stats::bytes_acked, g.len);
        if (g.fin) state_ = state::done;
        --packets_out_;
        ++acked_pkts;
        rtx_.pop_front();
    }
    if (!rtx_.empty() && rtx_.front().start < ack) {  // part of a segment (tcp_trim_head)
        seg& g = rtx_.front();
        const uint32_t part = uint32_t(ack - g.start);
        count(&tcp_sender_stats::bytes_acked, part);
        g.start += part;
        g.len -= part;
    }
    una_ = ack;
    const bool advanced = una_ > prior_una;
    const uint32_t newly_sacked = sack_ok_ && s.sack_count ? tcp_sacktag(s) : 0;
    const bool dupack = !advanced && packets_out_ > 0 && !s.payload_len && rwnd_ == prior_rwnd;
    if (dupack) count(&tcp_sender_stats::dup_acks, 1);
    if (!sack_ok_) {  // tcp_add_reno_sack / tcp_remove_reno_sacks
        if (acked_pkts) reno_sacked_ -= std::min(reno_sacked_, acked_pkts - 1);
        if (dupack) reno_sacked_ = std::min(reno_sacked_ + 1, packets_out_ - lost_out_);
        reno_sacked_ = std::min(reno_sacked_, packets_out_ - lost_out_);
    }
    if (first_sent != never) rtt_sample((now - first_sent).to_seconds() * 1e6);

    if (ca_ == ca_state::loss && advanced) reno_sacked_ = 0;  // tcp_process_loss
    if (ca_ != ca_state::open && una_ >= high_seq_) {  // recovery or loss is over
        if (ca_ == ca_state::recovery) cc_.cwnd = std::max(cc_.ssthresh, 1u);  // tcp_end_cwnd_reduction
        reno_sacked_ = 0;  // tcp_reset_reno_sack
        ca_ = ca_state::open;
    }
    mark_lost(advanced && ca_ == ca_state::recovery);
    if (ca_ == ca_state::open && lost_out_ > 0) enter_recovery();
    if (ca_ == ca_state::recovery) cwnd_reduction(delivered + newly_sacked + (dupack && !sack_ok_ ? 1 : 0), advanced);
    else if (acked_pkts && cwnd_limited()) cc_.cong_avoid(delivered + newly_sacked, now.to_seconds() * 1e6, min_rtt_us_);

    if (packets_out_ == 0) rto_armed_ = false;
    else if (advanced) arm_rto(now);  // tcp_rearm_rto
    if (app_blocked_ && p_.sndbuf - (written_ - std::min(una_, written_)) >= p_.write_bytes) {  // sk_stream_write_space
        app_blocked_ = false;
        app_at_ = std::max(now, cpu_free_) + sc_time(p_.cpu.per_write_ns, SC_NS);
    }
}

// tcp_is_cwnd_limited: in slow start, grow while cwnd < 2 x the flight; after, only when the
// last window was used up.
bool tcp_sender::cwnd_limited() const {
    if (cc_.in_slow_start()) return cc_.cwnd < 2 * max_packets_out_;
    return is_cwnd_limited_;
}

// --- sending --------------------------------------------------------------------------------

// tcp_nagle_check with Minshall's variant: a small segment waits while an earlier small one
// is unacknowledged (and the application is still writing).
bool tcp_sender::nagle_hold() const { return !app_done_ && packets_out_ > 0 && sml_ > una_; }

// tcp_should_autocork: a push from a write waits while the tail is smaller than the size goal
// and a frame of the socket is still in the host's queue or on the wire; the TX completion
// pushes it (TCP small queues).
bool tcp_sender::autocork() const {
    return unsent() < size_goal() && packets_out_ > 0 && (!nic_.empty() || !on_wire_.empty());
}

// tcp_xmit_size_goal: a 64 KB GSO skb, bound to half the peer's largest window.
uint64_t tcp_sender::size_goal() const {
    const uint64_t half = std::max<uint64_t>(max_rwnd_ / 2, mss_);
    return std::max<uint64_t>(mss_, std::min<uint64_t>(uint64_t(gso_segs_max) * mss_, half / mss_ * mss_));
}

// The write queue holds skbs of up to size_goal bytes; writes append to the unsent tail skb,
// and a tail sent whole ends its skb. tcp_push marks the tail skb at the end of every write
// (tcp_mark_push), and TSO/GSO keep PSH on the skb's last segment only: so PSH goes on the
// segment that ends an skb a write ended in, not on every write's end.
bool tcp_sender::ends_skb(uint64_t end) {
    const uint64_t skb_end = std::min(skb_start_ + size_goal(), written_);
    if (end < skb_end) return false;
    const bool write_ended_inside = end / p_.write_bytes > skb_start_ / p_.write_bytes;
    skb_start_ = end;
    return write_ended_inside;
}

void tcp_sender::transmit(const seg& g) {
    const uint8_t flags = tcp_flags::ack | (g.psh ? tcp_flags::psh : 0) | (g.fin ? tcp_flags::fin : 0);
    queue_frame(flags, wire_seq(g.start), g.start, g.len);
    if (ca_ == ca_state::recovery) ++prr_out_;
}

void tcp_sender::retransmit(seg& g) {
    g.retrans = g.ever_retrans = true;
    g.sent = sc_core::sc_time_stamp();
    ++retrans_out_;
    count(&tcp_sender_stats::retransmissions, 1);
    transmit(g);
}

// tcp_xmit_retransmit_queue, then tcp_write_xmit: lost segments first, then new data, as
// cwnd, the peer's window and TCP small queues allow.
void tcp_sender::tcp_write_xmit(bool from_app) {
    if (state_ != state::established && state_ != state::fin_wait) return;
    if (lost_out_ > retrans_out_) {
        for (seg& g : rtx_) {
            if (packets_in_flight() >= cc_.cwnd) break;
            if (g.lost && !g.retrans) retransmit(g);
        }
    }
    if (from_app && autocork()) {
        tsq_throttled_ = true;
        return;
    }
    bool cwnd_stop = false;
    for (;;) {
        const uint64_t avail = unsent();
        if (!avail) {
            if (app_done_ && !fin_queued_) {  // tcp_send_fin: the FIN may exceed cwnd by one
                fin_queued_ = true;
                state_ = state::fin_wait;
                rtx_.emplace_back(nxt_, 0, true, sc_core::sc_time_stamp());
                ++packets_out_;
                ++nxt_;
                transmit(rtx_.back());
            }
            break;
        }
        if (nic_bytes_ >= tsq_limit_bytes) {
            tsq_throttled_ = true;
            break;
        }
        if (packets_in_flight() >= cc_.cwnd) {
            cwnd_stop = true;
            break;
        }
        const uint32_t len = uint32_t(std::min<uint64_t>(mss_, avail));
        if (nxt_ + len > una_ + rwnd_) break;  // tcp_snd_wnd_test
        if (len < mss_ && nagle_hold()) break;
        rtx_.emplace_back(nxt_, len, false, sc_core::sc_time_stamp());
        rtx_.back().psh = ends_skb(nxt_ + len);
        ++packets_out_;
        nxt_ += len;
        if (len < mss_) sml_ = nxt_;
        count(&tcp_sender_stats::data_segments, 1);
        transmit(rtx_.back());
    }
    // tcp_cwnd_validate
    if (una_ >= max_packets_seq_ || packets_out_ > max_packets_out_) {
        max_packets_out_ = packets_out_;
        max_packets_seq_ = nxt_;
        is_cwnd_limited_ = cwnd_stop;
    }
    if (packets_out_ && !rto_armed_) arm_rto(sc_core::sc_time_stamp());
    else if (!packets_out_ && unsent() && !rto_armed_) arm_rto(sc_core::sc_time_stamp());  // persist
}

// --- the application (iperf -c) -------------------------------------------------------------

// The writes that completed by `now`: each costs per_write_ns of the CPU and needs its whole
// size free in the send buffer, else the writer sleeps until an ACK frees it.
void tcp_sender::advance_app(sc_time now) {
    if (state_ != state::established || app_blocked_ || app_done_) return;
    const sc_time until = std::min(now, app_stop_at_);
    if (app_at_ <= until) {
        const double per_write = p_.cpu.per_write_ns;
        const uint64_t by_time = per_write > 0 ? uint64_t(std::floor((until - app_at_).to_seconds() * 1e9 / per_write)) + 1
                                               : std::numeric_limits<uint64_t>::max();
        const uint64_t by_space = (p_.sndbuf - (written_ - una_)) / p_.write_bytes;
        const uint64_t n = std::min(by_time, by_space);
        written_ += n * p_.write_bytes;
        count(&tcp_sender_stats::bytes_written, n * p_.write_bytes);
        app_at_ += sc_time(double(n) * per_write, SC_NS);
        if (n < by_time) app_blocked_ = true;
    }
    if (now >= app_stop_at_ && !app_blocked_ && !app_done_) {  // iperf -t: the time is up, close()
        app_done_ = true;
        stopped_at_ = app_stop_at_;
    }
}

// An application wake-up only when a push after a write could send something the ACKs and TX
// completions would not: the next write when the sender is idle, or the write that completes
// a full segment while Nagle holds a small one. While a frame of the flow is in the host's
// queue, the writes are corked and its TX completion pushes them (tcp_should_autocork).
void tcp_sender::schedule_app(sc_time now) {
    if (state_ != state::established || app_blocked_ || app_done_) return;
    sc_time at = app_stop_at_;
    // With nothing in flight no ACK will come: a closed window needs the data written to start
    // the persist timer.
    const bool waits_for_ack = packets_out_ > 0 && (packets_in_flight() >= cc_.cwnd || nxt_ + mss_ > una_ + rwnd_);
    if (!waits_for_ack && !tsq_throttled_ && packets_out_ > 0 && (!nic_.empty() || !on_wire_.empty()))
        tsq_throttled_ = true;
    if (!waits_for_ack && !tsq_throttled_) {
        uint64_t writes = 1;
        if (nagle_hold() && unsent() < mss_)
            writes = (mss_ - unsent() + p_.write_bytes - 1) / p_.write_bytes;
        at = std::min(at, app_at_ + sc_time(double(writes - 1) * p_.cpu.per_write_ns, SC_NS));
    }
    if (at != never) app_ev_.notify(std::max(at, now) - now);
}

void tcp_sender::on_app() {
    sim_stats::count_event();
    const sc_time now = sc_core::sc_time_stamp();
    advance_app(now);
    tcp_write_xmit(true);
    schedule_app(now);
}

// --- reporting ------------------------------------------------------------------------------

void tcp_sender::count(uint64_t tcp_sender_stats::*field, uint64_t n) {
    s_.*field += n;
    t_.*field += n;
}

void tcp_sender::reset_stats() {
    s_ = {};
    pause_.reset_window();
    window_start_ = sc_core::sc_time_stamp();
    interval_written_ = t_.bytes_written;
    interval_end_s_ = 0;
    nic_at_window_ = nic_.size();
    nic_in_ = nic_out_ = 0;
}

std::vector<std::string> tcp_sender::live_lines(double interval_s) {
    const double begin = interval_end_s_;
    interval_end_s_ += interval_s;
    const uint64_t bytes = t_.bytes_written - interval_written_;
    interval_written_ = t_.bytes_written;
    return {iperf_interval_line(1, begin, interval_end_s_, bytes)};
}

std::string tcp_sender::final_summary() const {
    return iperf_interval_line(1, 0, (sc_core::sc_time_stamp() - window_start_).to_seconds(), s_.bytes_written);
}

void tcp_sender::report_rates(nlohmann::json& rates, double window_s) const {
    rates["tcp_goodput_mbps"] = double(s_.bytes_acked) * 8 / window_s / 1e6;
}

void tcp_sender::report(nlohmann::json& j) const {
    static const char* const states[] = {"closed", "syn_sent", "established", "fin_wait", "done"};
    static const char* const ca_states[] = {"open", "recovery", "loss"};
    j["kind"] = "tcp";
    j["tx_frames"] = s_.tx_frames;
    j["tx_bytes"] = s_.tx_bytes;
    j["rx_frames"] = s_.rx_frames;
    j["rx_ignored"] = s_.rx_ignored;
    pause_.report(j);
    nlohmann::json& t = j["tcp"];
    t["state"] = states[int(state_)];
    t["congestion_state"] = ca_states[int(ca_)];
    t["congestion_control"] = cc_.algorithm() == congestion_algorithm::reno ? "reno" : "cubic";
    t["mss"] = mss_;
    t["sack"] = sack_ok_;
    t["timestamps"] = ts_ok_;
    t["peer_wscale"] = wscale_ok_ ? snd_wscale_ : -1;
    t["established_s"] = state_ >= state::established ? established_at_.to_seconds() : -1.0;
    t["bytes_written"] = s_.bytes_written;
    t["bytes_acked"] = s_.bytes_acked;
    t["data_segments"] = s_.data_segments;
    t["retransmissions"] = s_.retransmissions;
    t["fast_recoveries"] = s_.fast_recoveries;
    t["timeouts"] = s_.timeouts;
    t["dup_acks"] = s_.dup_acks;
    t["sack_blocks"] = s_.sack_blocks;
    t["rx_bad_checksum"] = s_.rx_bad_checksum;
    t["cwnd"] = cc_.cwnd;
    t["ssthresh"] = cc_.ssthresh;
    t["rwnd_bytes"] = rwnd_;
    t["srtt_us"] = srtt_us_;
    t["min_rtt_us"] = min_rtt_us_;
    t["rto_ms"] = rto_us_ * 1e-3;
    t["sndbuf_bytes"] = p_.sndbuf;
    t["write_bytes"] = p_.write_bytes;
    t["unacked_bytes"] = written_ - std::min(una_, written_);
    if (app_done_) j["ended_s"] = stopped_at_.to_seconds();  // iperf -t ran out
}

}  // namespace fecsim::traffic
