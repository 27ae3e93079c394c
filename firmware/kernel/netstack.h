// Cost model of the network stack after napi_gro_receive (XDP_PASS and no-XDP traffic): the
// instruction costs of each layer (GRO, __netif_receive_skb_core, ip_rcv, routing, UDP), the
// packet header and kernel-table lines each layer touches, and where the packet ends: dropped
// at udp_rcv for lack of a socket (pktgen's port 9, the default), or queued on a UDP socket and
// read by a user task (recvmsg copies the payload to a user buffer and frees the skb, returning
// the page to its pool through the ptr_ring). Also generic (SKB-mode) XDP, which runs in
// __netif_receive_skb_core and transmits XDP_TX through ndo_start_xmit.
// TCP segments go through GRO and the TCP receive path (tcp.h); UDP's GRO callbacks are not
// charged. Left out: netfilter, ICMP port-unreachable replies, RPS, socket wakeups of other cores.
#pragma once

#include "firmware/kernel/skbuff.h"
#include "firmware/kernel/tcp.h"

#include <deque>
#include <vector>

namespace fecsim::firmware {

enum class stack_sink { udp_no_socket, udp_socket };

struct netstack_params {
    stack_sink sink = stack_sink::udp_no_socket;
    uint32_t socket_queue_limit = 256;  // skbs queued before udp drops (sk_rcvbuf stand-in)
    tcp_params tcp;
    uint32_t local_ipv4 = 0;            // the host's address (host order); 0: every destination is local
};

struct netstack_stats {
    uint64_t received = 0, non_ip = 0, not_local = 0, udp_no_socket = 0, socket_queued = 0, socket_drops = 0, user_reads = 0;
    uint64_t generic_xdp[5] = {};  // per xdp_action
    uint64_t generic_tx_errors = 0;
};

class netstack {
public:
    netstack(kernel& k, skb_allocator& skbs, xdp_core& xdp, timer_base& timers, const netstack_params& p);

    // XDP in generic mode on `dev` (do_xdp_generic in __netif_receive_skb_core).
    void set_generic_xdp(net_device* dev, bpf_prog* prog) { generic_dev_ = dev; generic_prog_ = prog; }

    // eth_type_trans: reads the Ethernet header, sets protocol, pulls ETH_HLEN.
    uint16_t eth_type_trans(sk_buff* skb, net_device* dev);
    // napi_gro_receive and everything after it, down to the sink.
    void napi_gro_receive(sk_buff* skb);
    // The end of every NAPI poll (napi_complete_done, or __napi_poll when the budget is used up):
    // napi_gro_flush sends up the skbs GRO holds, gro_normal_list the batch they join.
    void napi_gro_flush();
    // The user tasks: recvmsg on every queued UDP skb, the TCP reader (after the softirq work).
    void run_user_tasks();
    // The device the stack's own packets (TCP ACKs) leave through.
    void set_output(net_device* dev, const uint8_t mac[6]) { tcp_.set_output(dev, mac); }
    tcp& tcp_proto() { return tcp_; }
    size_t socket_backlog() const { return sockq_.size(); }

    netstack_stats stats;

private:
    bool do_xdp_generic(sk_buff* skb);
    // gro_normal_one: `skb` (of `segs` segments) joins napi->rx_list; a full batch goes up.
    void gro_normal_one(sk_buff* skb, uint32_t segs);
    // gro_normal_list: netif_receive_skb_list_internal on the batch, each skb up the stack.
    void gro_normal_list();
    void netif_receive_skb(sk_buff* skb);  // __netif_receive_skb_core and up
    void ip_rcv(sk_buff* skb);
    void udp_rcv(sk_buff* skb, uint32_t ihl);

    kernel& k_;
    skb_allocator& skbs_;
    xdp_core& xdp_;
    netstack_params p_;
    net_device* generic_dev_ = nullptr;
    bpf_prog* generic_prog_ = nullptr;
    addr_t tables_ = 0;       // routing / socket hash / protocol tables (kernel data lines)
    addr_t sock_ = 0;         // struct sock of the receiving socket
    addr_t user_buf_ = 0;     // the reader's buffer
    std::deque<sk_buff*> sockq_;
    std::vector<sk_buff*> rx_list_;  // napi->rx_list
    uint32_t rx_count_ = 0;          // napi->rx_count: segments on rx_list_
    tcp tcp_;
    std::function<void(sk_buff*)> deliver_;
};

}  // namespace fecsim::firmware
