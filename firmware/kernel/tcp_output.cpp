// net/ipv4/tcp_output.c as the receiver uses it: window selection, delayed and immediate ACKs,
// the SYN-ACK, __tcp_transmit_skb with its options; then ip_queue_xmit and dev_queue_xmit
// (net/ipv4/ip_output.c, net/core/dev.c: an empty qdisc is bypassed) down to the driver's
// ndo_start_xmit. TCP leaves its checksum to the device (CHECKSUM_PARTIAL: the field holds the
// pseudo-header sum); ip_send_check computes the IPv4 header's in software.
#include "firmware/kernel/tcp.h"

#include "firmware/kernel/netdev.h"

#include <algorithm>
#include <vector>

namespace fecsim::firmware {

namespace {
constexpr uint32_t MAX_TCP_HEADER = 320;  // L1_CACHE_ALIGN(128 + MAX_HEADER) on arm64

bool before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }
bool after(uint32_t a, uint32_t b) { return before(b, a); }
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v)); }
uint32_t csum_add(uint32_t sum, const uint8_t* p, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i] << 8 | p[i + 1]);
    if (n & 1) sum += uint32_t(p[n - 1] << 8);
    return sum;
}
uint16_t csum_fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return uint16_t(~sum);
}
uint32_t tcp_win_from_space(uint64_t space) { return uint32_t(space - (space >> 1)); }  // tcp_adv_win_scale 1
}  // namespace

// skb_checksum_help for a device without checksum offload: the sum over the transport header and
// payload, from the pseudo-header sum in the field. No modelled FEC lacks the offload: not charged.
void tcp::skb_checksum_help(sk_buff* skb) {
    const addr_t start = skb->head + skb->csum_start;
    const uint32_t len = skb->len - uint32_t(start - skb->data);
    std::vector<uint8_t> seg(len);
    k_.core.read(start, seg.data(), len);
    put16(seg.data() + skb->csum_offset, csum_fold(csum_add(0, seg.data(), len)));
    k_.core.write(start + skb->csum_offset, seg.data() + skb->csum_offset, 2);
    skb->ip_summed = CHECKSUM_NONE;
}

uint32_t tcp::tcp_receive_window() const {
    const int32_t w = int32_t(sk_.rcv_wup + sk_.rcv_wnd - sk_.rcv_nxt);
    return w < 0 ? 0 : uint32_t(w);
}

uint32_t tcp::tcp_space() const {
    const int64_t free = sk_.sk_rcvbuf - sk_.sk_rmem_alloc;
    return free > 0 ? tcp_win_from_space(uint64_t(free)) : 0;
}

uint32_t tcp::tcp_full_space() const { return tcp_win_from_space(uint64_t(sk_.sk_rcvbuf)); }

// The window the socket's free buffer space allows, rounded to the window scale.
uint32_t tcp::__tcp_select_window() {
    uint32_t mss = sk_.rcv_mss;
    uint32_t free_space = tcp_space();
    const uint32_t allowed_space = tcp_full_space();
    const uint32_t full_space = std::min(sk_.window_clamp, allowed_space);
    if (mss > full_space) mss = full_space;
    if (free_space < (full_space >> 1)) {
        sk_.ack_quick = 0;
        free_space &= ~((1u << sk_.rcv_wscale) - 1);
        if (free_space < (allowed_space >> 4) || free_space < mss) return 0;
    }
    free_space = std::min(free_space, sk_.rcv_ssthresh);
    const uint32_t unit = 1u << sk_.rcv_wscale;
    return (free_space + unit - 1) & ~(unit - 1);
}

// tcp_select_window: never shrink the offered window; the value on the wire is scaled.
uint16_t tcp::tcp_select_window() {
    const uint32_t cur_win = tcp_receive_window();
    uint32_t new_win = __tcp_select_window();
    if (new_win < cur_win) {
        const uint32_t unit = 1u << sk_.rcv_wscale;
        new_win = (cur_win + unit - 1) & ~(unit - 1);
    }
    sk_.rcv_wnd = new_win;
    sk_.rcv_wup = sk_.rcv_nxt;
    new_win = std::min(new_win, 65535u << sk_.rcv_wscale);
    return uint16_t(new_win >> sk_.rcv_wscale);
}

void tcp::tcp_send_delayed_ack() {
    const sc_core::sc_time now = k_.core.now();
    const sc_core::sc_time ato = std::min(sk_.ato, sc_core::sc_time(40, sc_core::SC_MS));  // bounded by the RTT, at least TCP_DELACK_MIN
    sc_core::sc_time timeout = now + ato;
    if (sk_.ack_pending & ICSK_ACK_TIMER) {
        if (sk_.ack_timeout <= now + ato / 4) {  // the timer is about to fire: ACK now
            tcp_send_ack();
            return;
        }
        if (timeout >= sk_.ack_timeout) timeout = sk_.ack_timeout;
    }
    sk_.ack_pending |= ICSK_ACK_SCHED | ICSK_ACK_TIMER;
    sk_.ack_timeout = timeout;
    timers_.mod_timer(sk_.delack_timer, timeout);
}

void tcp::__tcp_send_ack(uint8_t flags) {
    if (!dev_) return;
    cpu::scope s(k_.core, "__tcp_send_ack");
    k_.exec(path::tcp_send_ack);
    sk_buff* buff = skbs_.alloc_skb(MAX_TCP_HEADER);
    if (!buff) {  // retry from the delayed-ACK timer
        sk_.ack_pending |= ICSK_ACK_SCHED | ICSK_ACK_TIMER;
        sk_.ack_timeout = k_.core.now() + sc_core::sc_time(200, sc_core::SC_MS);
        timers_.mod_timer(sk_.delack_timer, sk_.ack_timeout);
        return;
    }
    skb_allocator::skb_reserve(buff, MAX_TCP_HEADER);
    tcp_transmit_skb(buff, flags, flags & TCPHDR_SYN);
}

// __tcp_transmit_skb + tcp_options_write + tcp_v4_send_check, ip_queue_xmit, dev_queue_xmit.
void tcp::tcp_transmit_skb(sk_buff* skb, uint8_t flags, bool syn) {
    uint8_t opt[40];
    size_t n = 0;
    if (syn) {  // MSS, SACK-permitted + timestamps, NOP + window scale, as Linux orders them
        opt[n++] = 2, opt[n++] = 4, put16(opt + n, uint16_t(sk_.advmss)), n += 2;
        if (sk_.sack_ok) opt[n++] = 4, opt[n++] = 2;
        else if (sk_.tstamp_ok) opt[n++] = 1, opt[n++] = 1;
    } else if (sk_.tstamp_ok) {
        opt[n++] = 1, opt[n++] = 1;
    }
    if (sk_.tstamp_ok) {
        opt[n++] = 8, opt[n++] = 10;
        put32(opt + n, tcp_time_stamp()), put32(opt + n + 4, sk_.ts_recent), n += 8;
    }
    if (syn && sk_.snd_wscale + sk_.rcv_wscale) opt[n++] = 1, opt[n++] = 3, opt[n++] = 3, opt[n++] = sk_.rcv_wscale;
    if (!syn && sk_.sack_ok && !sk_.out_of_order_queue.empty()) {  // tcp_sack: the newest block first
        std::vector<std::pair<uint32_t, uint32_t>> blocks;
        for (auto& [seq, q] : sk_.out_of_order_queue) {
            if (!blocks.empty() && !before(blocks.back().second, q->seq)) {
                if (after(q->end_seq, blocks.back().second)) blocks.back().second = q->end_seq;
            } else {
                blocks.push_back({q->seq, q->end_seq});
            }
        }
        auto newest = std::find_if(blocks.begin(), blocks.end(), [&](auto& b) {
            return !before(sk_.last_ofo_seq, b.first) && before(sk_.last_ofo_seq, b.second);
        });
        if (newest != blocks.end()) std::rotate(blocks.begin(), newest, newest + 1);
        const size_t nb = std::min<size_t>(blocks.size(), sk_.tstamp_ok ? 3 : 4);
        opt[n++] = 1, opt[n++] = 1, opt[n++] = 5, opt[n++] = uint8_t(2 + 8 * nb);
        for (size_t i = 0; i < nb; ++i) put32(opt + n, blocks[i].first), put32(opt + n + 4, blocks[i].second), n += 8;
    }
    const uint32_t thlen = 20 + uint32_t(n);
    const uint16_t window = syn ? uint16_t(std::min<uint32_t>(sk_.rcv_wnd, 65535)) : tcp_select_window();
    const uint32_t seq = syn ? sk_.snd_una : sk_.snd_nxt;

    uint8_t f[14 + 20 + 60] = {};
    uint8_t* eth = f;
    uint8_t* iph = f + 14;
    uint8_t* th = iph + 20;
    std::copy(sk_.peer_mac, sk_.peer_mac + 6, eth);
    std::copy(mac_, mac_ + 6, eth + 6);
    put16(eth + 12, 0x0800);
    put16(th, sk_.lport), put16(th + 2, sk_.rport);
    put32(th + 4, seq), put32(th + 8, sk_.rcv_nxt);
    th[12] = uint8_t(thlen / 4 << 4), th[13] = flags;
    put16(th + 14, window);
    std::copy(opt, opt + n, th + 20);
    iph[0] = 0x45, put16(iph + 2, uint16_t(20 + thlen)), put16(iph + 4, ip_id_++), iph[6] = 0x40, iph[8] = 64, iph[9] = 6;
    put32(iph + 12, sk_.laddr), put32(iph + 16, sk_.raddr);
    put16(iph + 10, csum_fold(csum_add(0, iph, 20)));  // ip_send_check
    // __tcp_v4_send_check: ~tcp_v4_check(len, saddr, daddr, 0), the pseudo-header's sum
    put16(th + 16, uint16_t(~csum_fold(csum_add(0, iph + 12, 8) + 6 + thlen)));
    skb_allocator::skb_push(skb, thlen + 20 + 14);
    k_.core.write(skb->data, f, 14 + 20 + thlen);
    skb->mac_len = 14;
    skb->protocol = 0x0800;
    skb->ip_summed = CHECKSUM_PARTIAL;
    skb->csum_start = uint32_t(skb->data - skb->head) + 14 + 20;
    skb->csum_offset = 16;

    if (flags & (TCPHDR_SYN | TCPHDR_FIN)) sk_.snd_nxt++;
    ++stats.acks_sent;
    // tcp_event_ack_sent: one quick ACK used; the scheduled ACK is done
    if (sk_.ack_quick) sk_.ack_quick--;
    sk_.ack_pending = 0;  // inet_csk_clear_xmit_timer: the timer stays armed and finds nothing to do
    {
        cpu::scope s(k_.core, "ip_queue_xmit");
        k_.exec(path::ip_queue_xmit);
        k_.core.touch(sk_.sim + 448, 64, false);  // sk_dst_cache, inet options, neighbour
    }
    cpu::scope s(k_.core, "__dev_queue_xmit");
    k_.exec(path::dev_queue_xmit);
    if (!(dev_->features & NETIF_F_IP_CSUM)) skb_checksum_help(skb);  // validate_xmit_skb
    const int q = 0;
    dev_->__netif_tx_lock(q);
    netdev_tx_t rc = NETDEV_TX_BUSY;
    if (!dev_->netif_tx_queue_stopped(q)) rc = dev_->ndo_start_xmit(skb);
    dev_->__netif_tx_unlock(q);
    if (rc != NETDEV_TX_OK) skbs_.kfree_skb(skb);  // the qdisc would requeue it: not modelled
}

}  // namespace fecsim::firmware
