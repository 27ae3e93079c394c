// A minimal TCP receiver for the sender's tests, on the wire like the DUT would be: answers the
// SYN (MSS, SACK-permitted, timestamps, window scale as configured), checks every payload byte
// against the sender's pattern, keeps out-of-order data, ACKs every `ack_every` in-order
// segments (at once when out of order, with SACK blocks, most recent first), a delayed ACK
// after 40 ms otherwise. Its application reads at once, so the window it announces is
// constant. `drop` decides which arriving data segments it throws away (a lossy wire).
#pragma once

#include "models/net/eth_port.h"
#include "models/process.h"
#include "traffic/tcp_segment.h"

#include <systemc>

#include <functional>
#include <map>
#include <vector>

namespace fecsim::test {

struct tcp_receiver_params {
    traffic::mac_addr mac{0x00, 0x04, 0x9f, 0x07, 0x9f, 0x01};
    uint32_t ip = 0xc612002a;  // 198.18.0.42
    uint16_t port = 5001;
    uint32_t window = 3 << 20; // bytes announced (the application reads at once)
    int wscale = 7;            // -1: no window scaling
    bool sack = true, timestamps = true;
    uint16_t mss = 1460;
    unsigned ack_every = 2;
    // Called for each arriving data segment (stream offset, payload bytes, times this offset
    // arrived before); true drops it.
    std::function<bool(uint64_t offset, uint32_t len, unsigned seen)> drop;
};

struct tcp_arrival {
    uint64_t offset;
    uint32_t len;
    sc_core::sc_time at;
    bool dropped, push;
};

class tcp_receiver : public sc_core::sc_module, public net::eth_sink {
public:
    tcp_receiver(sc_core::sc_module_name n, const tcp_receiver_params& p) : sc_module(n), p_(p) {
        spawn_method("delack", delack_ev_, [this] {
            if (pending_) send_ack();
        });
    }
    void connect(net::eth_tx& tx) { tx_ = &tx; }

    uint64_t in_order_bytes() const { return rcv_nxt_; }
    uint64_t payload_errors = 0, bad_checksums = 0, dropped = 0, acks = 0, duplicates = 0;
    bool fin_received = false;
    traffic::tcp_segment syn{};  // the SYN as received
    std::vector<tcp_arrival> arrivals;
    std::vector<std::pair<sc_core::sc_time, uint64_t>> ack_log;  // (sent, bytes ACKed in order)
    std::vector<sc_core::sc_time> probes;  // segments without data below rcv_nxt (window probes)

    void frame_arrived(net::frame_ptr f) override {
        auto s = traffic::parse_tcp_frame(*f);
        if (!s || s->dst_ip != p_.ip || s->dst_port != p_.port) return;
        if (!s->checksums_ok) {
            ++bad_checksums;
            return;
        }
        if (s->flags & traffic::tcp_flags::syn) {
            syn = *s;
            syn.payload = nullptr;
            peer_ = *s;
            irs_ = s->seq;
            ts_ok_ = p_.timestamps && s->has_timestamps;
            send(traffic::tcp_flags::syn | traffic::tcp_flags::ack, true);
            return;
        }
        if (ts_ok_) ts_recent_ = s->tsval;
        const int64_t rel = int32_t(s->seq - (irs_ + 1 + uint32_t(rcv_nxt_)));
        if (rel < 0 && !s->payload_len && !(s->flags & traffic::tcp_flags::fin)) {  // RFC 9293: answer with an ACK
            probes.push_back(sc_core::sc_time_stamp());
            send_ack();
            return;
        }
        const uint64_t offset = rcv_nxt_ + rel;
        if (s->payload_len) {
            unsigned& seen = seen_[offset];
            const bool drop = p_.drop && p_.drop(offset, s->payload_len, seen);
            ++seen;
            arrivals.push_back({offset, s->payload_len, sc_core::sc_time_stamp(), drop, bool(s->flags & traffic::tcp_flags::psh)});
            if (drop) {
                ++dropped;
                return;
            }
            for (uint32_t i = 0; i < s->payload_len; ++i)
                if (s->payload[i] != traffic::tcp_payload_byte(offset + i)) ++payload_errors;
            receive(offset, s->payload_len);
        }
        if (s->flags & traffic::tcp_flags::fin) {
            if (offset + s->payload_len == rcv_nxt_ && !fin_received) fin_received = true;
            send_ack();
        }
    }

private:
    void receive(uint64_t offset, uint32_t len) {
        const uint64_t end = offset + len;
        if (end <= rcv_nxt_) {  // a duplicate: ACK at once
            ++duplicates;
            send_ack();
            return;
        }
        if (offset > rcv_nxt_) {  // a hole before it: keep it (blocks merged), ACK at once with SACK
            uint64_t left = offset, right = end;
            auto it = ooo_.lower_bound(offset);
            if (it != ooo_.begin() && std::prev(it)->second >= offset) --it;
            while (it != ooo_.end() && it->first <= right) {
                left = std::min(left, it->first);
                right = std::max(right, it->second);
                it = ooo_.erase(it);
            }
            ooo_.emplace(left, right);
            last_ooo_ = left;
            send_ack();
            return;
        }
        rcv_nxt_ = end;
        const bool filled = !ooo_.empty();
        while (!ooo_.empty() && ooo_.begin()->first <= rcv_nxt_) {
            rcv_nxt_ = std::max(rcv_nxt_, ooo_.begin()->second);
            ooo_.erase(ooo_.begin());
        }
        if (filled || ++pending_ >= p_.ack_every) send_ack();
        else delack_ev_.notify(40, sc_core::SC_MS);
    }

    void send_ack() { send(traffic::tcp_flags::ack, false); }

    void send(uint8_t flags, bool syn) {
        pending_ = 0;
        ++acks;
        traffic::tcp_segment a;
        a.src_mac = p_.mac, a.dst_mac = peer_.src_mac;
        a.src_ip = p_.ip, a.dst_ip = peer_.src_ip;
        a.src_port = p_.port, a.dst_port = peer_.src_port;
        a.ip_id = ip_id_++;
        a.seq = iss_ + (syn ? 0 : 1);
        a.ack = irs_ + 1 + uint32_t(rcv_nxt_) + (fin_received ? 1 : 0);
        a.flags = flags;
        const bool scale = p_.wscale >= 0 && peer_.wscale >= 0;
        a.window = uint16_t(std::min<uint32_t>(syn || !scale ? p_.window : p_.window >> p_.wscale, 65535));
        if (syn) {
            a.mss = p_.mss;
            a.sack_permitted = p_.sack && peer_.sack_permitted;
            a.wscale = scale ? p_.wscale : -1;
        }
        if (ts_ok_) {
            a.has_timestamps = true;
            a.tsval = uint32_t(sc_core::sc_time_stamp().to_seconds() * 1e3);
            a.tsecr = ts_recent_;
        }
        if (p_.sack && peer_.sack_permitted && !ooo_.empty()) {  // RFC 2018: the newest block first
            const unsigned room = ts_ok_ ? 3 : 4;
            auto newest = ooo_.find(last_ooo_);
            if (newest == ooo_.end()) newest = std::prev(ooo_.end());
            auto add = [&](const auto& b) {
                if (a.sack_count < room)
                    a.sack[a.sack_count++] = {irs_ + 1 + uint32_t(b.first), irs_ + 1 + uint32_t(b.second)};
            };
            add(*newest);
            for (auto it = ooo_.rbegin(); it != ooo_.rend(); ++it)
                if (it->first != newest->first) add(*it);
        }
        net::frame_ptr f = net::frame_pool::instance().get();
        traffic::build_tcp_frame(*f, a);
        ack_log.emplace_back(sc_core::sc_time_stamp(), rcv_nxt_);
        f->created = sc_core::sc_time_stamp();
        tx_->send(std::move(f));
    }

    tcp_receiver_params p_;
    net::eth_tx* tx_ = nullptr;
    traffic::tcp_segment peer_{};
    uint32_t irs_ = 0, iss_ = 0x10000000, ts_recent_ = 0;
    uint16_t ip_id_ = 0;
    bool ts_ok_ = false;
    uint64_t rcv_nxt_ = 0, last_ooo_ = 0;
    unsigned pending_ = 0;
    std::map<uint64_t, uint64_t> ooo_;     // out-of-order [offset, end)
    std::map<uint64_t, unsigned> seen_;    // arrivals per offset
    sc_core::sc_event delack_ev_;
};

}  // namespace fecsim::test
