#include "firmware/kernel/netstack.h"

namespace fecsim::firmware {

namespace {
constexpr uint16_t ETH_P_IP = 0x0800;
constexpr uint32_t tables_bytes = 2048;   // fib trie nodes, dst, udp hash slots, protocol ops
constexpr uint32_t route_lines = 4;       // the route lookup: fib_lookup, the dst last
constexpr uint32_t udp_lookup_lines = 2;  // udp_table hash slot + socket match
constexpr uint32_t gro_normal_batch = 8;  // net.core.gro_normal_batch (6.1's default)
}  // namespace

netstack::netstack(kernel& k, skb_allocator& skbs, xdp_core& xdp, timer_base& timers, const netstack_params& p)
    : k_(k), skbs_(skbs), xdp_(xdp), p_(p), tcp_(k, skbs, timers, p.tcp), deliver_([this](sk_buff* s) { gro_normal_one(s, s->gso_segs); }) {
    tables_ = k_.kmalloc(tables_bytes);
    sock_ = k_.kmalloc(1024);
    user_buf_ = k_.pages.alloc_boot_page("the socket reader's buffer")->addr;
}

uint16_t netstack::eth_type_trans(sk_buff* skb, net_device* dev) {
    uint8_t h[ETH_HLEN + 10];
    // The Ethernet header, and (same line) the IP protocol field GRO dispatches on.
    k_.core.read(skb->data, h, sizeof h);
    skb->ip_proto = h[ETH_HLEN + 9];
    skb->dev = dev;
    skb->mac_len = ETH_HLEN;
    skb_allocator::skb_pull(skb, ETH_HLEN);
    return static_cast<uint16_t>(h[12] << 8 | h[13]);
}

void netstack::napi_gro_receive(sk_buff* skb) {
    cpu::scope s(k_.core, "napi_gro_receive");
    // A TCP segment is merged into its flow's held skb, or held (tcp_gro_receive charges the
    // walk it takes); anything else (no UDP GRO) is flushed at once and passed up: GRO_NORMAL.
    const bool tcp_gro = skb->protocol == ETH_P_IP && skb->ip_proto == 6 && !generic_prog_;
    if (!tcp_gro) k_.exec(path::napi_gro_receive_normal);
    ++stats.received;
    k_.core.touch(skb->sim, 128, true);  // GRO control block, hash, network header offsets
    if (tcp_gro && tcp_.tcp_gro_receive(skb, deliver_)) return;
    gro_normal_one(skb, 1);  // GRO_NORMAL
}

void netstack::napi_gro_flush() {
    tcp_.napi_gro_flush(deliver_);
    gro_normal_list();
}

void netstack::gro_normal_one(sk_buff* skb, uint32_t segs) {
    rx_list_.push_back(skb);
    rx_count_ += segs;
    if (rx_count_ >= gro_normal_batch) gro_normal_list();
}

void netstack::gro_normal_list() {
    if (rx_list_.empty()) return;
    {
        cpu::scope s(k_.core, "netif_receive_skb_list_internal");
        k_.exec(path::netif_receive_skb_list_internal);
        k_.exec(path::netif_receive_skb_list_next, rx_list_.size() - 1);  // its loops' way back, per further skb
    }
    for (sk_buff* skb : rx_list_) netif_receive_skb(skb);  // nothing up the stack queues on rx_list_
    rx_list_.clear();
    rx_count_ = 0;
}

void netstack::netif_receive_skb(sk_buff* skb) {
    {
        cpu::scope s2(k_.core, "__netif_receive_skb_core");
        k_.exec(path::netif_receive_skb_core);
        if (generic_prog_ && skb->dev == generic_dev_ && !do_xdp_generic(skb)) return;
        if (skb->protocol != ETH_P_IP) {
            ++stats.non_ip;
            skbs_.kfree_skb(skb);
            return;
        }
    }
    ip_rcv(skb);
}

// netif_receive_generic_xdp + generic_xdp_tx. Returns true when the packet continues up.
bool netstack::do_xdp_generic(sk_buff* skb) {
    cpu::scope s(k_.core, "do_xdp_generic");
    k_.exec(path::do_xdp_generic);
    xdp_buff x;
    xdp_rxq_info rxq{skb->dev, skb->queue_mapping, MEM_TYPE_PAGE_SHARED, 0};
    xdp_init_buff(x, skb->head_alloc, &rxq);
    const addr_t mac = skb->data - skb->mac_len;
    xdp_prepare_buff(x, skb->head, static_cast<uint32_t>(mac - skb->head), skb->len + skb->mac_len, false);
    const xdp_action act = xdp_.bpf_prog_run_xdp(*generic_prog_, x);
    ++stats.generic_xdp[act <= XDP_REDIRECT ? act : XDP_ABORTED];
    switch (act) {
    case XDP_PASS: return true;
    case XDP_TX:
    case XDP_REDIRECT: {
        net_device* out = skb->dev;
        if (act == XDP_REDIRECT) {
            // xdp_do_generic_redirect: the ifindex target, then generic_xdp_tx on it
            k_.exec(path::xdp_do_redirect);
            out = xdp_.take_redirect_target();
            if (!out) {
                ++stats.generic_tx_errors;
                skbs_.kfree_skb(skb);
                return false;
            }
        }
        skb_allocator::skb_push(skb, skb->mac_len);
        cpu::scope s2(k_.core, "generic_xdp_tx");
        k_.exec(path::generic_xdp_tx);
        const int q = 0;
        out->__netif_tx_lock(q);
        netdev_tx_t rc = NETDEV_TX_BUSY;
        if (!out->netif_tx_queue_stopped(q)) rc = out->ndo_start_xmit(skb);
        out->__netif_tx_unlock(q);
        if (rc != NETDEV_TX_OK) {
            ++stats.generic_tx_errors;
            skbs_.kfree_skb(skb);
        }
        return false;
    }
    default:
        skbs_.kfree_skb(skb);
        return false;
    }
}

void netstack::ip_rcv(sk_buff* skb) {
    uint8_t iph[20];
    uint32_t ihl = 0;
    {
        cpu::scope s(k_.core, "ip_rcv");
        k_.exec(path::ip_rcv);
        k_.core.read(skb->data, iph, sizeof iph);  // ip_rcv_core: version, ihl, tot_len, ip_fast_csum
        ihl = (iph[0] & 0x0f) * 4u;
    }
    {
        cpu::scope s(k_.core, "ip_rcv_finish");
        // ip_rcv_finish_core: early demux (net.ipv4.ip_early_demux and tcp_early_demux, 1 by
        // default) gives a TCP segment of an established socket the socket's cached input route;
        // anything else takes the route lookup
        const bool fragment = (iph[6] & 0x3f) | iph[7];
        const bool demuxed = iph[9] == 6 && ihl >= 20 && !fragment && tcp_.tcp_v4_early_demux(skb, ihl);
        k_.exec(demuxed ? path::ip_rcv_finish_demuxed : path::ip_rcv_finish);
        if (demuxed) k_.core.touch(tables_ + (route_lines - 1) * 64, 64, false);  // the dst: dst_check
        else k_.core.touch(tables_, route_lines * 64, false);
        k_.core.touch(skb->sim + 64, 16, true);  // skb_dst_set
    }
    const uint32_t daddr = uint32_t(iph[16]) << 24 | uint32_t(iph[17]) << 16 | uint32_t(iph[18]) << 8 | iph[19];
    if (p_.local_ipv4 && daddr != p_.local_ipv4) {
        // Not ours and forwarding off: the route is ip_error (IPSTATS_MIB_INADDRERRORS), freed.
        ++stats.not_local;
        skbs_.kfree_skb(skb);
        return;
    }
    {
        cpu::scope s(k_.core, "ip_local_deliver");
        k_.exec(path::ip_local_deliver);
    }
    if (iph[9] == 6 && ihl >= 20) {
        tcp_.tcp_v4_rcv(skb, ihl);
        return;
    }
    if (iph[9] != 17 || ihl < 20) {
        ++stats.non_ip;
        skbs_.kfree_skb(skb);
        return;
    }
    udp_rcv(skb, ihl);
}

void netstack::udp_rcv(sk_buff* skb, uint32_t ihl) {
    cpu::scope s(k_.core, "udp_rcv");
    k_.exec(path::udp_rcv);
    uint8_t uh[8];
    k_.core.read(skb->data + ihl, uh, sizeof uh);
    k_.core.touch(tables_ + route_lines * 64, udp_lookup_lines * 64, false);
    if (p_.sink == stack_sink::udp_no_socket) {
        ++stats.udp_no_socket;  // UDP_MIB_NOPORTS; the ICMP reply is rate limited and not modelled
        skbs_.kfree_skb(skb);
        return;
    }
    cpu::scope s2(k_.core, "udp_queue_rcv_skb");
    k_.exec(path::udp_queue_rcv_skb);
    k_.core.touch(sock_, 128, true);  // sk_rmem_alloc, receive queue, sk_drops
    if (sockq_.size() >= p_.socket_queue_limit) {
        ++stats.socket_drops;
        skbs_.kfree_skb(skb);
        return;
    }
    skb_allocator::skb_pull(skb, ihl + 8);
    sockq_.push_back(skb);
    ++stats.socket_queued;
    k_.exec(path::sock_def_readable);
}

void netstack::run_user_tasks() {
    tcp_.run_reader();
    if (sockq_.empty()) return;
    cpu::scope s(k_.core, "udp_recvmsg");
    while (!sockq_.empty()) {
        sk_buff* skb = sockq_.front();
        sockq_.pop_front();
        k_.exec(path::udp_recvmsg);
        k_.core.touch(sock_, 64, true);
        k_.core.copy(user_buf_, skb->data, std::min<uint32_t>(skb->len, PAGE_SIZE));
        ++stats.user_reads;
        skbs_.consume_skb(skb);
    }
}

}  // namespace fecsim::firmware
