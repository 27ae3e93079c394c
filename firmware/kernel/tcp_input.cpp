// net/ipv4/tcp_ipv4.c (tcp_v4_rcv), net/ipv4/tcp_input.c (the receive path) and the TCP part of
// GRO (net/ipv4/tcp_offload.c, net/core/gro.c). See tcp.h for what is left out.
#include "firmware/kernel/tcp.h"

#include <algorithm>

namespace fecsim::firmware {

namespace {
constexpr uint32_t GRO_MAX_SIZE = 65536;
constexpr unsigned TCP_MAX_QUICKACKS = 16;
const sc_core::sc_time TCP_ATO_MIN = sc_core::sc_time(40, sc_core::SC_MS);   // HZ / 25
const sc_core::sc_time TCP_RTO_MIN = sc_core::sc_time(200, sc_core::SC_MS);  // HZ / 5

bool before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }
bool after(uint32_t a, uint32_t b) { return before(b, a); }
uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

// Drops the first `n` bytes of an skb's data (head first, then fragments).
void skb_trim_front(sk_buff* skb, uint32_t n) {
    const uint32_t h = std::min(n, skb->headlen());
    skb_allocator::skb_pull(skb, h);
    n -= h;
    for (int i = 0; i < skb->nr_frags && n; ++i) {
        const uint32_t f = std::min(n, skb->frags[i].len);
        skb->frags[i].addr += f;
        skb->frags[i].len -= f;
        skb->len -= f;
        skb->data_len -= f;
        n -= f;
    }
}
}  // namespace

tcp::tcp(kernel& k, skb_allocator& skbs, timer_base& timers, const tcp_params& p)
    : k_(k), skbs_(skbs), timers_(timers), p_(p) {
    sk_.state = p_.port ? tcp_sock::LISTEN : tcp_sock::CLOSED;
    sk_.delack_timer.function = [this] { tcp_delack_timer_handler(); };
}

// The socket, the hash table and the reader's buffer come into simulated memory with the first
// TCP segment, so runs without TCP keep their memory layout.
void tcp::ensure_memory() {
    if (sk_.sim) return;
    sk_.sim = k_.kmalloc(2048);
    ehash_ = k_.kmalloc(128);
    for (uint32_t off = 0; off < p_.read_bytes; off += PAGE_SIZE)
        user_buf_.push_back(k_.pages.alloc_boot_page("the TCP reader's buffer")->addr);
}

void tcp::set_output(net_device* dev, const uint8_t mac[6]) {
    dev_ = dev;
    std::copy(mac, mac + 6, mac_);
}

uint32_t tcp::tcp_time_stamp() const { return uint32_t(uint64_t(k_.core.now().to_seconds() * 1e3)); }

// Reads the IPv4 and TCP headers at skb->data (ihl: the IP header's length).
bool tcp::tcp_parse(sk_buff* skb, uint32_t ihl, tcp_hdr& seg) {
    uint8_t h[60 + 60];
    k_.core.read(skb->data, h, ihl + 20);
    seg.saddr = be32(h + 12);
    seg.daddr = be32(h + 16);
    const uint8_t* th = h + ihl;
    seg.sport = be16(th);
    seg.dport = be16(th + 2);
    seg.seq = be32(th + 4);
    seg.ack = be32(th + 8);
    seg.doff = uint8_t((th[12] >> 4) * 4);
    seg.flags = th[13];
    seg.window = be16(th + 14);
    if (seg.doff < 20 || ihl + seg.doff > skb->headlen()) return false;
    if (seg.doff > 20) k_.core.read(skb->data + ihl + 20, h + ihl + 20, seg.doff - 20u);
    for (uint32_t i = 20; i < seg.doff;) {  // tcp_parse_options
        const uint8_t kind = th[i];
        if (kind == 0) break;
        if (kind == 1) { ++i; continue; }
        if (i + 1 >= seg.doff || th[i + 1] < 2 || i + th[i + 1] > seg.doff) break;
        const uint8_t len = th[i + 1];
        if (kind == 2 && len == 4) seg.mss = be16(th + i + 2);
        if (kind == 3 && len == 3) seg.has_wscale = true, seg.wscale = std::min<uint8_t>(th[i + 2], 14);
        if (kind == 4 && len == 2) seg.sack_ok = true;
        if (kind == 8 && len == 10) seg.has_ts = true, seg.tsval = be32(th + i + 2), seg.tsecr = be32(th + i + 6);
        i += len;
    }
    seg.payload = skb->len - ihl - seg.doff;
    return true;
}

// ---------------------------------------------------------------------------------------------
// GRO: inet_gro_receive -> tcp4_gro_receive -> tcp_gro_receive -> skb_gro_receive

bool tcp::tcp_gro_receive(sk_buff* skb, const std::function<void(sk_buff*)>& deliver) {
    uint8_t ip[2];
    k_.core.read(skb->data, ip, 2);
    tcp_hdr seg;
    // IPv4 without options only
    const bool parsed = ip[0] == 0x45 && k_.core.read8(skb->data + 9) == 6 && tcp_parse(skb, 20, seg);
    // Segments GRO may hold: data with ACK (and PSH, which ends the merge) only, in a head buffer
    // whose page can become a fragment (head_frag).
    const bool mergeable = parsed && seg.payload > 0 && !(seg.flags & ~(TCPHDR_ACK | TCPHDR_PSH)) &&
                           skb->head_kind != skb_head_kind::kmalloc;
    const tcp_hdr& p = gro_seg_;
    const bool same_flow = parsed && gro_held_ && p.saddr == seg.saddr && p.daddr == seg.daddr &&
                           p.sport == seg.sport && p.dport == seg.dport;
    bool merge = false;
    if (same_flow) {
        uint8_t opts[40] = {};
        if (seg.doff > 20) k_.core.read(skb->data + 40, opts, seg.doff - 20u);
        merge = mergeable && seg.seq == gro_next_seq_ && seg.ack == p.ack && seg.doff == p.doff &&
                std::equal(opts, opts + (seg.doff - 20), gro_opts_) && seg.payload <= gro_held_->gso_size &&
                gro_held_->nr_frags < MAX_SKB_FRAGS && gro_held_->len + seg.payload < GRO_MAX_SIZE;
    }
    const bool hold = !merge && mergeable && !(seg.flags & TCPHDR_PSH);
    // dev_gro_receive's walk for the outcome, and the IPv4 / TCP callbacks', which only a merge
    // takes as far as skb_gro_receive (the others find no skb to merge into)
    k_.exec(merge ? path::napi_gro_receive : hold ? path::napi_gro_receive_held : path::napi_gro_receive_normal);
    cpu::scope s(k_.core, "inet_gro_receive");
    k_.exec(merge ? path::inet_gro_receive : path::inet_gro_receive_held);
    if (merge) {
        skbs_.skb_gro_steal_head(gro_held_, skb, skb->data + 20 + seg.doff, seg.payload);
        gro_next_seq_ += seg.payload;
        ++stats.gro_merged;
        // a short segment or PSH completes the merged skb
        if (seg.payload < gro_held_->gso_size || (seg.flags & TCPHDR_PSH)) napi_gro_flush(deliver);
        return true;
    }
    if (same_flow) napi_gro_flush(deliver);  // the flow's held skb goes up before this segment
    if (!hold) return false;
    if (gro_held_) napi_gro_flush(deliver);  // one flow is held at a time
    gro_held_ = skb;
    gro_seg_ = seg;
    std::fill(std::begin(gro_opts_), std::end(gro_opts_), 0);
    if (seg.doff > 20) k_.core.read(skb->data + 40, gro_opts_, seg.doff - 20u);
    gro_next_seq_ = seg.seq + seg.payload;
    skb->gso_size = uint16_t(seg.payload);
    skb->gso_segs = 1;
    return true;
}

void tcp::napi_gro_flush(const std::function<void(sk_buff*)>& deliver) {
    if (!gro_held_) return;
    sk_buff* skb = gro_held_;
    gro_held_ = nullptr;
    {
        cpu::scope s(k_.core, "napi_gro_complete");
        k_.exec(path::napi_gro_complete);
        k_.core.touch(skb->data, 40, true);  // inet_gro_complete: tot_len, csum; tcp_gro_complete
    }
    ++stats.gro_flushes;
    deliver(skb);
}

// ---------------------------------------------------------------------------------------------

bool tcp::tcp_v4_early_demux(sk_buff* skb, uint32_t ihl) {
    cpu::scope s(k_.core, "tcp_v4_early_demux");
    k_.exec(path::tcp_v4_early_demux);
    ensure_memory();
    uint8_t h[60 + 14];
    k_.core.read(skb->data, h, ihl + 14);  // addresses, ports, doff
    const uint8_t* th = h + ihl;
    k_.core.touch(ehash_, 64, false);  // __inet_lookup_established: the hash bucket
    // a full socket: the request sock of a handshake under way carries no route
    const bool full = sk_.state != tcp_sock::LISTEN && sk_.state != tcp_sock::CLOSED && sk_.state != tcp_sock::SYN_RECV;
    if (!full || (th[12] >> 4) < 5 || be32(h + 12) != sk_.raddr || be32(h + 16) != sk_.laddr ||
        be16(th) != sk_.rport || be16(th + 2) != sk_.lport)
        return false;
    k_.core.touch(sk_.sim, 128, false);  // socket match: addresses, ports, state; sk_rx_dst
    skb->sk = &sk_;
    if (!sk_.sk_rx_dst) return false;
    ++stats.early_demux;
    return true;
}

void tcp::tcp_v4_rcv(sk_buff* skb, uint32_t ihl) {
    cpu::scope s(k_.core, "tcp_v4_rcv");
    // __inet_lookup_skb: the socket early demux put on the skb (skb_steal_sock), else a lookup
    const bool demuxed = skb->sk == &sk_;
    skb->sk = nullptr;
    k_.exec(demuxed ? path::tcp_v4_rcv_demuxed : path::tcp_v4_rcv);
    ensure_memory();
    ++stats.segs_in;
    tcp_hdr seg;
    if (!tcp_parse(skb, ihl, seg)) {
        skbs_.kfree_skb(skb);
        return;
    }
    if (!demuxed) k_.core.touch(ehash_, 64, false);  // __inet_lookup_established: the hash bucket
    if (!p_.port || seg.dport != p_.port) {
        ++stats.no_socket;  // the kernel would answer with a RST (not modelled)
        skbs_.kfree_skb(skb);
        return;
    }
    if (!demuxed) k_.core.touch(sk_.sim, 128, false);  // socket match: addresses, ports, state
    const bool ours = sk_.state != tcp_sock::LISTEN && sk_.state != tcp_sock::CLOSED && seg.saddr == sk_.raddr &&
                      seg.sport == sk_.rport;
    if ((seg.flags & (TCPHDR_SYN | TCPHDR_ACK)) == TCPHDR_SYN) {
        if (!ours || sk_.state == tcp_sock::SYN_RECV) tcp_conn_request(seg, skb);
        skbs_.kfree_skb(skb);
        return;
    }
    if (!ours || (seg.flags & TCPHDR_SYN)) {
        ++stats.no_socket;
        skbs_.kfree_skb(skb);
        return;
    }
    if (seg.flags & TCPHDR_RST) {
        sk_.state = tcp_sock::LISTEN;
        skbs_.kfree_skb(skb);
        return;
    }
    if (sk_.state == tcp_sock::SYN_RECV) {  // tcp_check_req: the handshake's last ACK
        if (!(seg.flags & TCPHDR_ACK) || seg.ack != sk_.snd_nxt) {
            skbs_.kfree_skb(skb);
            return;
        }
        sk_.state = tcp_sock::ESTABLISHED;
        sk_.snd_una = seg.ack;
        sk_.sk_rx_dst = true;  // tcp_v4_syn_recv_sock -> inet_sk_rx_dst_set: this ACK's route
        ++stats.connections;
    }
    if (sk_.state == tcp_sock::LAST_ACK && (seg.flags & TCPHDR_ACK) && seg.ack == sk_.snd_nxt) {
        sk_.state = tcp_sock::LISTEN;  // our FIN is acknowledged: the connection is gone
        skbs_.kfree_skb(skb);
        return;
    }
    tcp_rcv_established(skb, seg, ihl + seg.doff);
}

// tcp_v4_conn_request / tcp_conn_request with syncookies off: the request is answered with a
// SYN-ACK at once (the request sock and the child socket are this one socket).
void tcp::tcp_conn_request(const tcp_hdr& seg, const sk_buff* skb) {
    cpu::scope s(k_.core, "tcp_conn_request");
    k_.exec(path::tcp_conn_request);
    for (sk_buff* q : sk_.receive_queue) skbs_.kfree_skb(q);
    for (auto& [seq, q] : sk_.out_of_order_queue) skbs_.kfree_skb(q);
    tcp_sock& sk = sk_;
    timer_list delack = std::move(sk.delack_timer);
    const addr_t sim = sk.sim;
    sk = tcp_sock{};
    sk.sim = sim;
    sk.delack_timer = std::move(delack);
    timers_.del_timer(sk.delack_timer);
    k_.core.read(skb->data - skb->mac_len + 6, sk.peer_mac, 6);  // the neighbour: no ARP modelled
    sk.laddr = seg.daddr, sk.raddr = seg.saddr, sk.lport = seg.dport, sk.rport = seg.sport;
    sk.tstamp_ok = seg.has_ts;
    sk.sack_ok = seg.sack_ok;
    sk.ts_recent = seg.tsval;
    sk.rcv_nxt = sk.rcv_wup = sk.copied_seq = seg.seq + 1;
    sk.snd_una = iss_;
    sk.snd_nxt = iss_;  // the SYN-ACK takes one sequence number
    sk.advmss = p_.mtu - 40u;
    const uint32_t mss = sk.advmss - (sk.tstamp_ok ? 12u : 0u);
    sk.sk_rcvbuf = p_.rmem_default;
    // tcp_select_initial_window
    uint32_t space = tcp_full_space();
    if (space > mss) space -= space % mss;
    sk.rcv_wnd = std::min<uint32_t>(space, 65535);
    sk.rcv_wscale = 0;
    if (seg.has_wscale) {
        uint32_t big = std::max({space, p_.rmem_max, 212992u}), lg = 0;
        while (big >>= 1) ++lg;
        sk.rcv_wscale = uint8_t(std::clamp<int>(int(lg) - 15, 0, 14));
        sk.snd_wscale = seg.wscale;
    }
    sk.window_clamp = std::min<uint32_t>(65535u << sk.rcv_wscale, tcp_full_space());
    sk.rcv_ssthresh = sk.rcv_wnd;
    // tcp_initialize_rcv_mss: the first guess is TCP_MSS_DEFAULT
    sk.rcv_mss = std::max<uint32_t>(std::min({sk.advmss, mss, sk.rcv_wnd / 2, 536u}), 88u);
    // tcp_init_buffer_space
    sk.space = std::min<uint32_t>(sk.rcv_wnd, 10 * sk.advmss);
    sk.space_seq = sk.copied_seq;
    sk.space_time = k_.core.now();
    sk.state = tcp_sock::SYN_RECV;
    k_.core.touch(sk.sim, 512, true);
    __tcp_send_ack(TCPHDR_SYN | TCPHDR_ACK);
}

void tcp::tcp_rcv_established(sk_buff* skb, const tcp_hdr& seg, uint32_t hdrlen) {
    cpu::scope s(k_.core, "tcp_rcv_established");
    const bool fin = seg.flags & TCPHDR_FIN;
    const bool data = seg.payload > 0 || fin;
    // Header prediction (pred_flags: ACK with or without PSH, armed by tcp_fast_path_check while
    // nothing is out of order, the window is open and the queue within sk_rcvbuf), then 6.1's
    // test: a segment whose truesize exceeds sk_forward_alloc takes the slow path (step5:
    // tcp_ack, tcp_data_queue) to schedule memory.
    const bool predicted = !(seg.flags & ~(TCPHDR_ACK | TCPHDR_PSH)) && seg.seq == sk_.rcv_nxt &&
                           sk_.out_of_order_queue.empty() && tcp_receive_window() > 0 &&
                           sk_.sk_rmem_alloc < sk_.sk_rcvbuf;
    const bool fast = !data || (predicted && int64_t(skb->truesize) <= sk_.sk_forward_alloc);
    k_.exec(fast ? path::tcp_rcv_established : path::tcp_rcv_established_slow);
    k_.core.touch(sk_.sim + 128, 192, true);  // rcv_nxt, snd_una, ts_recent, rx_opt, icsk_ack, sk_forward_alloc
    if ((seg.flags & TCPHDR_ACK) && after(seg.ack, sk_.snd_una) && !after(seg.ack, sk_.snd_nxt)) sk_.snd_una = seg.ack;
    // tcp_replace_ts_recent: the segment covers the last ACKed point
    if (seg.has_ts && !after(seg.seq, sk_.rcv_wup)) sk_.ts_recent = seg.tsval;
    if (!data) {  // a pure ACK (the sender's window update): __kfree_skb
        skbs_.kfree_skb(skb);
        return;
    }
    skb->seq = seg.seq;
    skb->end_seq = seg.seq + seg.payload + (fin ? 1 : 0);
    skb_allocator::skb_pull(skb, hdrlen);
    ++stats.data_segs_in;
    stats.bytes_received += seg.payload;
    if (fast) {
        ++stats.fast_path;
        tcp_queue_rcv(skb);
        tcp_event_data_recv(skb);
    } else {
        ++stats.slow_path;
        tcp_data_queue(skb, seg);
    }
    if (sk_.ack_pending & ICSK_ACK_SCHED) __tcp_ack_snd_check(true);  // tcp_ack_snd_check
}

// The slow path's queueing: in order (queue_and_out, with the memory schedule), or a
// duplicate, a segment beyond the window, out of order, or partly new.
void tcp::tcp_data_queue(sk_buff* skb, const tcp_hdr& seg) {
    cpu::scope s(k_.core, "tcp_data_queue");
    const bool in_order = skb->seq == sk_.rcv_nxt;
    k_.exec(in_order ? path::tcp_data_queue_in_order : path::tcp_data_queue);
    if (in_order && tcp_receive_window() == 0) {  // out_of_window: ACK at once
        ++stats.out_of_window;
        tcp_incr_quickack(TCP_MAX_QUICKACKS);
        sk_.ack_pending |= ICSK_ACK_SCHED | ICSK_ACK_NOW;
        skbs_.kfree_skb(skb);
        return;
    }
    if (!in_order) {
        if (!after(skb->end_seq, sk_.rcv_nxt)) {  // a retransmission of data we have: ACK at once
            ++stats.duplicates;
            tcp_incr_quickack(TCP_MAX_QUICKACKS);
            sk_.ack_pending |= ICSK_ACK_SCHED;
            skbs_.kfree_skb(skb);
            return;
        }
        if (!before(skb->seq, sk_.rcv_nxt + tcp_receive_window())) {
            ++stats.out_of_window;
            sk_.ack_pending |= ICSK_ACK_SCHED | ICSK_ACK_NOW;
            skbs_.kfree_skb(skb);
            return;
        }
        if (after(skb->seq, sk_.rcv_nxt)) {
            tcp_data_queue_ofo(skb);
            return;
        }
        skb_trim_front(skb, sk_.rcv_nxt - skb->seq);  // partial: the part we have is trimmed
        skb->seq = sk_.rcv_nxt;
    }
    // queue_and_out: the first skb of an empty queue is always taken (sk_forced_mem_schedule)
    if (sk_.receive_queue.empty()) {
        sk_mem_schedule(skb, true);
    } else if (!tcp_try_rmem_schedule(skb)) {
        ++stats.rcvq_drops;
        sk_.ack_pending |= ICSK_ACK_SCHED | ICSK_ACK_NOW;
        skbs_.kfree_skb(skb);
        return;
    }
    tcp_queue_rcv(skb);
    if (skb->len) tcp_event_data_recv(skb);
    if (seg.flags & TCPHDR_FIN) tcp_fin();
    if (!sk_.out_of_order_queue.empty()) {
        tcp_ofo_queue();
        // RFC 5681 4.2: an immediate ACK when the gap is filled
        if (sk_.out_of_order_queue.empty()) sk_.ack_pending |= ICSK_ACK_NOW;
    }
}

// tcp_prune_queue, as far as tcp_clamp_window goes: a buffer the queue outgrew is raised to
// what the queue holds (up to tcp_rmem[2], autotuning on), else the window is clamped and the
// segment dropped. The kernel would also collapse the queue into compact skbs (tcp_collapse):
// not modelled.
bool tcp::tcp_prune_queue() {
    ++stats.prunes;
    sk_.ack_quick = 0;
    if (p_.moderate_rcvbuf && sk_.sk_rcvbuf < int64_t(p_.rmem_max))
        sk_.sk_rcvbuf = std::min<int64_t>(sk_.sk_rmem_alloc, p_.rmem_max);
    if (sk_.sk_rmem_alloc > sk_.sk_rcvbuf) sk_.rcv_ssthresh = std::min(sk_.window_clamp, 2 * sk_.advmss);
    return sk_.sk_rmem_alloc <= sk_.sk_rcvbuf;
}

// tcp_try_rmem_schedule: within sk_rcvbuf (after pruning), then sk_rmem_schedule (tcp_mem's
// limits are never reached by one flow, so the schedule succeeds).
bool tcp::tcp_try_rmem_schedule(const sk_buff* skb) {
    if (sk_.sk_rmem_alloc > sk_.sk_rcvbuf && !tcp_prune_queue()) return false;
    sk_mem_schedule(skb, false);
    return true;
}

// sk_rmem_schedule's __sk_mem_schedule, or sk_forced_mem_schedule: when the skb's truesize
// exceeds sk_forward_alloc, the difference is charged to tcp_memory_allocated in whole pages.
void tcp::sk_mem_schedule(const sk_buff* skb, bool forced) {
    const int64_t delta = int64_t(skb->truesize) - sk_.sk_forward_alloc;
    if (delta <= 0) return;
    cpu::scope s(k_.core, forced ? "sk_forced_mem_schedule" : "__sk_mem_schedule");
    k_.exec(forced ? path::sk_forced_mem_schedule : path::sk_mem_schedule);
    sk_.sk_forward_alloc += (delta + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
    ++stats.mem_schedules;
}

// skb_set_owner_r: a queued skb's truesize charged to the socket, from its forward allocation
// (sock_rfree, its destructor, gives it back).
void tcp::skb_set_owner_r(const sk_buff* skb) {
    sk_.sk_rmem_alloc += skb->truesize;
    sk_.sk_forward_alloc -= skb->truesize;
}

// sock_rfree (the destructor of every skb queued to the socket): sk_rmem_alloc and
// sk_forward_alloc uncharged, and sk_mem_reclaim gives whole pages back to the protocol.
void tcp::sock_rfree(const sk_buff* skb) {
    cpu::scope s(k_.core, "sock_rfree");
    sk_.sk_rmem_alloc -= skb->truesize;
    sk_.sk_forward_alloc += skb->truesize;
    if (sk_.sk_forward_alloc < int64_t(PAGE_SIZE)) {
        k_.exec(path::sock_rfree);
        return;
    }
    k_.exec(path::sock_rfree_reclaim);
    sk_.sk_forward_alloc %= PAGE_SIZE;
    ++stats.mem_reclaims;
}

// tcp_queue_rcv: the tail of sk_receive_queue (no coalescing into the tail's skb),
// skb_set_owner_r's charge, rcv_nxt, and the reader's wakeup (tcp_data_ready).
void tcp::tcp_queue_rcv(sk_buff* skb) {
    cpu::scope s(k_.core, "tcp_queue_rcv");
    k_.exec(path::tcp_queue_rcv);
    skb_set_owner_r(skb);
    sk_.receive_queue.push_back(skb);
    sk_.rcv_nxt = skb->end_seq;
    k_.core.touch(skb->sim, 64, true);  // cb, destructor, list pointers
    k_.core.touch(sk_.sim + 320, 64, true);  // sk_receive_queue, sk_rmem_alloc
    {
        cpu::scope s(k_.core, "sock_def_readable");
        k_.exec(path::sock_def_readable);
        if (!reader_woken_) {  // the reader sleeps in sk_wait_data until the first data
            cpu::scope s2(k_.core, "try_to_wake_up");
            k_.exec(path::try_to_wake_up);
            reader_woken_ = true;
        }
    }
}

void tcp::tcp_data_queue_ofo(sk_buff* skb) {
    cpu::scope s(k_.core, "tcp_data_queue_ofo");
    k_.exec(path::tcp_ofo_queue);
    if (!tcp_try_rmem_schedule(skb)) {
        ++stats.rcvq_drops;
        skbs_.kfree_skb(skb);
        return;
    }
    sk_.ack_pending |= ICSK_ACK_SCHED;
    auto it = sk_.out_of_order_queue.find(skb->seq);
    if (it != sk_.out_of_order_queue.end()) {  // the same start: keep the longer one
        sk_buff* old = it->second;
        if (!after(skb->end_seq, old->end_seq)) {
            skbs_.kfree_skb(skb);
            return;
        }
        sock_rfree(old);
        skbs_.kfree_skb(old);
        sk_.out_of_order_queue.erase(it);
    }
    ++stats.ofo_queued;
    if (sk_.sack_ok) tcp_grow_window(skb, false);  // without SACK the window stays, to force DUPACKs
    skb_set_owner_r(skb);
    sk_.out_of_order_queue[skb->seq] = skb;
    sk_.last_ofo_seq = skb->seq;
    k_.core.touch(sk_.sim + 384, 64, true);  // out_of_order_queue root, ooo_last_skb
}

// Moves the segments the new in-order data reached from the out-of-order queue to the receive queue.
void tcp::tcp_ofo_queue() {
    cpu::scope s(k_.core, "tcp_ofo_queue");
    auto& q = sk_.out_of_order_queue;
    while (!q.empty() && !after(q.begin()->first, sk_.rcv_nxt)) {
        sk_buff* skb = q.begin()->second;
        q.erase(q.begin());
        if (!after(skb->end_seq, sk_.rcv_nxt)) {
            sock_rfree(skb);
            skbs_.kfree_skb(skb);
            continue;
        }
        if (before(skb->seq, sk_.rcv_nxt)) {
            skb_trim_front(skb, sk_.rcv_nxt - skb->seq);
            skb->seq = sk_.rcv_nxt;
        }
        sk_.receive_queue.push_back(skb);  // already charged to sk_rmem_alloc
        sk_.rcv_nxt = skb->end_seq;
        ++stats.ofo_delivered;
    }
}

void tcp::tcp_incr_quickack(unsigned max_quickacks) {
    unsigned quickacks = sk_.rcv_wnd / (2 * sk_.rcv_mss);
    if (quickacks == 0) quickacks = 2;
    quickacks = std::min(quickacks, max_quickacks);
    if (quickacks > sk_.ack_quick) sk_.ack_quick = uint8_t(quickacks);
}

// tcp_event_data_recv: schedule an ACK, learn the sender's segment size, the receiver's RTT
// estimate, the delayed-ACK timeout (ato), and grow the window.
void tcp::tcp_event_data_recv(const sk_buff* skb) {
    cpu::scope s(k_.core, "tcp_event_data_recv");
    k_.exec(path::tcp_event_data_recv);
    sk_.ack_pending |= ICSK_ACK_SCHED;
    // tcp_measure_rcv_mss
    const uint32_t len = skb->gso_size ? skb->gso_size : skb->len;
    if (len >= sk_.rcv_mss) sk_.rcv_mss = std::min(len, sk_.advmss);
    else sk_.ack_pending |= ICSK_ACK_PUSHED;
    tcp_rcv_rtt_measure();
    const sc_core::sc_time now = k_.core.now();
    if (!sk_.ato_set) {  // the first data: start in quick-ACK mode
        tcp_incr_quickack(TCP_MAX_QUICKACKS);
        sk_.ato = TCP_ATO_MIN;
        sk_.ato_set = true;
    } else {
        const sc_core::sc_time m = now - sk_.lrcvtime;
        if (m <= TCP_ATO_MIN / 2) sk_.ato = sk_.ato / 2 + TCP_ATO_MIN / 2;
        else if (m < sk_.ato) sk_.ato = std::min(sk_.ato / 2 + m, TCP_RTO_MIN);
        else if (m > TCP_RTO_MIN) tcp_incr_quickack(TCP_MAX_QUICKACKS);
    }
    sk_.lrcvtime = now;
    if (skb->len >= 128) tcp_grow_window(skb, true);
}

// tcp_rcv_rtt_measure (no timestamps needed): the time the sender took to fill one window.
void tcp::tcp_rcv_rtt_measure() {
    const sc_core::sc_time now = k_.core.now();
    if (sk_.rtt_time != sc_core::SC_ZERO_TIME) {
        if (before(sk_.rcv_nxt, sk_.rtt_seq)) return;
        const sc_core::sc_time sample = now - sk_.rtt_time;
        if (sk_.rtt_est == sc_core::SC_ZERO_TIME || sample < sk_.rtt_est) sk_.rtt_est = sample;  // win_dep
    }
    sk_.rtt_seq = sk_.rcv_nxt + sk_.rcv_wnd;
    sk_.rtt_time = now;
}

uint32_t truesize_adjust(bool adjust, const sk_buff& skb) {
    uint32_t truesize = skb.truesize;
    if (adjust && !skb.headlen()) {
        truesize -= SKB_TRUESIZE(uint32_t(skb.end - skb.head));
        if (int32_t(truesize) < int32_t(skb.len)) truesize = skb.truesize;  // a driver's bad truesize
    }
    return truesize;
}

namespace {
uint64_t tcp_win_from_space(uint64_t space) { return space - (space >> 1); }  // tcp_adv_win_scale 1
}  // namespace

// tcp_grow_window: rcv_ssthresh, the window's cap, grows while the skbs' payload is a large enough
// share of their truesize for the buffer to hold the window. Each branch charges its own walk.
void tcp::tcp_grow_window(const sk_buff* skb, bool adjust) {
    cpu::scope s(k_.core, "tcp_grow_window");
    const int64_t room = int64_t(std::min(sk_.window_clamp, tcp_space())) - sk_.rcv_ssthresh;
    if (room <= 0) {
        k_.exec(path::tcp_grow_window_no_room);
        ++stats.grow_no_room;
        return;
    }
    if (adjust) k_.exec(path::tcp_grow_window_adjust);
    const uint32_t truesize = truesize_adjust(adjust, *skb);
    uint32_t incr = 0;
    if (tcp_win_from_space(truesize) <= skb->len) {  // check #2
        k_.exec(path::tcp_grow_window);
        ++stats.grow_advmss;
        incr = 2 * sk_.advmss;
    } else {
        incr = __tcp_grow_window(skb, truesize);
        k_.exec(incr ? path::tcp_grow_window_scaled : path::tcp_grow_window_none);
        ++(incr ? stats.grow_scaled : stats.grow_none);
    }
    if (incr) {
        incr = std::max(incr, 2 * skb->len);
        sk_.rcv_ssthresh += uint32_t(std::min<int64_t>(room, incr));
        sk_.ack_quick |= 1;
    }
}

// __tcp_grow_window (inlined): halve the skb's window share and the largest window until the
// payload covers the share; 0 once the window fell below rcv_ssthresh. Its first pass is part of
// the caller's walk (tcp_grow_window_scaled or _none); each halving charges one more pass.
uint32_t tcp::__tcp_grow_window(const sk_buff* skb, uint32_t truesize) {
    uint64_t share = tcp_win_from_space(truesize) >> 1, window = tcp_win_from_space(p_.rmem_max) >> 1;
    while (sk_.rcv_ssthresh <= window) {
        if (share <= skb->len) return 2 * sk_.rcv_mss;
        share >>= 1;
        window >>= 1;
        k_.exec(path::tcp_grow_window_halve);
        ++stats.grow_halvings;
    }
    return 0;
}

void tcp::__tcp_ack_snd_check(bool ofo_possible) {
    cpu::scope s(k_.core, "__tcp_ack_snd_check");
    k_.exec(path::tcp_ack_snd_check);
    // More than one full segment received and the window's right edge can advance (or the
    // reader has everything), quick-ACK mode, or an immediate ACK mandated.
    const bool full = sk_.rcv_nxt - sk_.rcv_wup > sk_.rcv_mss &&
                      (sk_.rcv_nxt - sk_.copied_seq < 1 || __tcp_select_window() >= sk_.rcv_wnd);
    if (full || tcp_in_quickack_mode() || (sk_.ack_pending & ICSK_ACK_NOW)) {
        if (!full && tcp_in_quickack_mode()) ++stats.quick_acks;
        tcp_send_ack();
        return;
    }
    if (!ofo_possible || sk_.out_of_order_queue.empty()) {
        tcp_send_delayed_ack();
        return;
    }
    ++stats.dup_acks;  // out of order: a duplicate ACK with SACK blocks (no SACK compression)
    tcp_send_ack();
}

void tcp::tcp_delack_timer_handler() {
    cpu::scope s(k_.core, "tcp_delack_timer");
    k_.exec(path::tcp_delack_timer);
    if (!(sk_.ack_pending & ICSK_ACK_TIMER)) return;
    const sc_core::sc_time now = k_.core.now();
    if (sk_.ack_timeout > now) {
        timers_.mod_timer(sk_.delack_timer, sk_.ack_timeout);
        return;
    }
    sk_.ack_pending &= uint8_t(~ICSK_ACK_TIMER);
    if (sk_.ack_pending & ICSK_ACK_SCHED) {
        sk_.ato = std::min(sk_.ato * 2, TCP_RTO_MIN);  // delayed ACK missed: inflate ATO
        ++stats.delayed_acks;
        tcp_send_ack();
    }
}

// tcp_fin: the peer closed; the reader sees end of file and closes (tcp.cpp).
void tcp::tcp_fin() {
    sk_.state = tcp_sock::CLOSE_WAIT;
    sk_.ack_pending |= ICSK_ACK_SCHED | ICSK_ACK_NOW;
    reader_woken_ = true;
}

}  // namespace fecsim::firmware
