// The receiving side of IPv4 TCP as Linux 6.1 runs it for one bulk flow (iperf -s): passive
// open, tcp_v4_rcv -> tcp_rcv_established -> tcp_data_queue (receive queue, out-of-order queue,
// socket memory accounting), delayed and quick ACKs (tcp_input.cpp); window selection, ACKs
// with timestamps and SACK blocks built as skbs and handed to the driver through
// ip_queue_xmit / dev_queue_xmit (tcp_output.cpp); the reading task's tcp_recvmsg with its
// copy to user memory, tcp_cleanup_rbuf and receive-buffer autotuning (tcp.cpp).
// The state the path decides on is a host mirror; struct tcp_sock lives in simulated memory
// and the lines each function uses are touched. Left out: sending data, congestion control
// (the DUT only receives), PAWS, DSACK, SACK compression (every out-of-order segment is
// answered at once), receive-queue coalescing/collapsing (a full buffer grows or drops), urgent data,
// RST replies, several connections at once (a new SYN replaces the connection).
#pragma once

#include "firmware/kernel/skbuff.h"
#include "firmware/kernel/timer.h"

#include <deque>
#include <functional>
#include <map>

namespace fecsim::firmware {

class net_device;

// The sysctls and socket options of the receiving application (driver.stack.tcp_*).
struct tcp_params {
    uint16_t port = 5001;                 // iperf's default listening port; 0 = no listener
    uint32_t rmem_default = 131072;       // net.ipv4.tcp_rmem[1]: the initial sk_rcvbuf
    uint32_t rmem_max = 6291456;          // net.ipv4.tcp_rmem[2]: autotuning's ceiling
    bool moderate_rcvbuf = true;          // net.ipv4.tcp_moderate_rcvbuf (receive autotuning)
    uint32_t read_bytes = 131072;         // the application's read() size (iperf2: 128 KiB)
    uint16_t mtu = 1500;
};

struct tcp_stats {
    uint64_t segs_in = 0, data_segs_in = 0, bytes_received = 0, bytes_read = 0, reads = 0;
    uint64_t acks_sent = 0, delayed_acks = 0, quick_acks = 0, dup_acks = 0, window_updates = 0;
    uint64_t ofo_queued = 0, ofo_delivered = 0, duplicates = 0, rcvq_drops = 0, out_of_window = 0;
    uint64_t no_socket = 0, connections = 0, gro_merged = 0, gro_flushes = 0, prunes = 0;
    // segments early demux gave their socket and its cached input route (no route lookup)
    uint64_t early_demux = 0;
    // tcp_rcv_established's data segments by path, and the socket memory accounting's page moves
    uint64_t fast_path = 0, slow_path = 0, mem_schedules = 0, mem_reclaims = 0;
    // tcp_grow_window's calls by branch: no room; the truesize test passing (2 * advmss); failing, with
    // __tcp_grow_window finding an increment (2 * rcv_mss) or none; and its loop's further passes
    uint64_t grow_no_room = 0, grow_advmss = 0, grow_scaled = 0, grow_none = 0, grow_halvings = 0;
};

// truesize_adjust (6.1): an skb without linear data (its payload all in frags) is judged without
// its head's overhead, SKB_TRUESIZE(skb_end_offset), unless that leaves less than its length.
uint32_t truesize_adjust(bool adjust, const sk_buff& skb);

// A TCP header as parsed from a segment in simulated memory.
struct tcp_hdr {
    uint32_t saddr = 0, daddr = 0, seq = 0, ack = 0, tsval = 0, tsecr = 0;
    uint16_t sport = 0, dport = 0, window = 0, mss = 0;
    uint8_t flags = 0, wscale = 0, doff = 0;
    bool has_ts = false, sack_ok = false, has_wscale = false;
    uint32_t payload = 0;  // data bytes
};

constexpr uint8_t TCPHDR_FIN = 0x01, TCPHDR_SYN = 0x02, TCPHDR_RST = 0x04, TCPHDR_PSH = 0x08,
                  TCPHDR_ACK = 0x10, TCPHDR_URG = 0x20;

// struct tcp_sock + inet_connection_sock + struct sock, as far as the receive path uses them.
struct tcp_sock {
    enum state_t { CLOSED, LISTEN, SYN_RECV, ESTABLISHED, CLOSE_WAIT, LAST_ACK } state = LISTEN;
    addr_t sim = 0;  // the struct in simulated memory
    uint32_t laddr = 0, raddr = 0;
    uint16_t lport = 0, rport = 0;
    uint8_t peer_mac[6] = {};
    uint32_t snd_nxt = 0, snd_una = 0, rcv_nxt = 0, rcv_wup = 0, rcv_wnd = 0, copied_seq = 0;
    uint32_t rcv_ssthresh = 0, window_clamp = 0, advmss = 0, rcv_mss = 0;
    uint8_t rcv_wscale = 0, snd_wscale = 0;
    bool tstamp_ok = false, sack_ok = false;
    uint32_t ts_recent = 0;
    bool sk_rx_dst = false;  // the input route cached for early demux (inet_sk_rx_dst_set)
    int64_t sk_rcvbuf = 0, sk_rmem_alloc = 0;
    // Bytes charged ahead from tcp_memory_allocated in whole pages; since 6.0 the reader's
    // uncharge gives back every whole page, so it stays below a page between skbs.
    int64_t sk_forward_alloc = 0;
    // icsk_ack
    uint8_t ack_pending = 0, ack_quick = 0;
    sc_core::sc_time ato, ack_timeout, lrcvtime;
    bool ato_set = false;
    timer_list delack_timer;
    // rcv_rtt_est / rcvq_space (tcp_rcv_space_adjust)
    sc_core::sc_time rtt_est, rtt_time, space_time;
    uint32_t rtt_seq = 0, space = 0, space_seq = 0;
    std::deque<sk_buff*> receive_queue;
    std::map<uint32_t, sk_buff*> out_of_order_queue;  // by seq (an rb-tree in the kernel)
    uint32_t last_ofo_seq = 0;                         // the most recent out-of-order arrival (first SACK block)
};

// inet_csk ack.pending bits
constexpr uint8_t ICSK_ACK_SCHED = 1, ICSK_ACK_TIMER = 2, ICSK_ACK_PUSHED = 4, ICSK_ACK_NOW = 16;

class tcp {
public:
    tcp(kernel& k, skb_allocator& skbs, timer_base& timers, const tcp_params& p);

    // The device ACKs and SYN-ACKs leave through (ip_queue_xmit -> dev_queue_xmit).
    void set_output(net_device* dev, const uint8_t mac[6]);
    // Called with every byte range the application reads, in order (user address, length):
    // tests check the payload there.
    std::function<void(addr_t, uint32_t)> on_read;

    // GRO (dev_gro_receive's TCP part, inet_gro_receive / tcp4_gro_receive / skb_gro_receive):
    // merges `skb` into the held skb of its flow or holds it, charging the walks that outcome
    // takes; false when the segment must go up alone at once (GRO_NORMAL).
    bool tcp_gro_receive(sk_buff* skb, const std::function<void(sk_buff*)>& deliver);
    // napi_gro_flush: delivers the held skbs (napi_gro_complete).
    void napi_gro_flush(const std::function<void(sk_buff*)>& deliver);

    // tcp_v4_early_demux (ip_rcv_finish_core): puts the established socket of the segment's
    // 4-tuple on the skb; true when its cached input route spares the route lookup.
    bool tcp_v4_early_demux(sk_buff* skb, uint32_t ihl);
    // tcp_v4_rcv: `skb->data` at the IP header of `ihl` bytes; consumes the skb.
    void tcp_v4_rcv(sk_buff* skb, uint32_t ihl);
    // The reading task (iperf -s): reads while data is queued; true if it ran.
    bool run_reader();
    bool reader_runnable() const { return reader_woken_; }

    const tcp_sock& sock() const { return sk_; }
    tcp_stats stats;

private:
    // tcp_input.cpp
    void ensure_memory();
    bool tcp_parse(sk_buff* skb, uint32_t ihl, tcp_hdr& seg);
    void tcp_conn_request(const tcp_hdr& seg, const sk_buff* skb);
    void tcp_rcv_established(sk_buff* skb, const tcp_hdr& seg, uint32_t hdrlen);
    void tcp_data_queue(sk_buff* skb, const tcp_hdr& seg);
    void tcp_data_queue_ofo(sk_buff* skb);
    void tcp_ofo_queue();
    bool tcp_prune_queue();
    bool tcp_try_rmem_schedule(const sk_buff* skb);
    void sk_mem_schedule(const sk_buff* skb, bool forced);
    void tcp_queue_rcv(sk_buff* skb);
    void tcp_event_data_recv(const sk_buff* skb);
    void tcp_grow_window(const sk_buff* skb, bool adjust);
    uint32_t __tcp_grow_window(const sk_buff* skb, uint32_t truesize);
    void tcp_rcv_rtt_measure();
    void tcp_incr_quickack(unsigned max_quickacks);
    void __tcp_ack_snd_check(bool ofo_possible);
    void tcp_delack_timer_handler();
    void tcp_fin();
    // tcp_output.cpp
    uint32_t tcp_space() const;
    uint32_t tcp_full_space() const;
    uint32_t __tcp_select_window();
    uint16_t tcp_select_window();
    void tcp_send_delayed_ack();
    void tcp_send_ack() { __tcp_send_ack(TCPHDR_ACK); }
    void __tcp_send_ack(uint8_t flags);
    void tcp_transmit_skb(sk_buff* skb, uint8_t flags, bool syn_options);
    void skb_checksum_help(sk_buff* skb);
    // tcp.cpp
    void tcp_recvmsg();
    void tcp_cleanup_rbuf(uint32_t copied);
    void tcp_rcv_space_adjust();
    void tcp_eat_recv_skb(sk_buff* skb);
    void skb_set_owner_r(const sk_buff* skb);
    void sock_rfree(const sk_buff* skb);

    uint32_t tcp_receive_window() const;
    uint32_t tcp_time_stamp() const;  // ms, tcp_time_stamp_raw
    bool tcp_in_quickack_mode() const { return sk_.ack_quick != 0; }

    kernel& k_;
    skb_allocator& skbs_;
    timer_base& timers_;
    tcp_params p_;
    tcp_sock sk_;
    net_device* dev_ = nullptr;
    uint8_t mac_[6] = {};
    addr_t ehash_ = 0;        // the established hash bucket + listener lines
    std::vector<addr_t> user_buf_;  // the application's read buffer, page by page
    sk_buff* gro_held_ = nullptr;   // the flow's skb on napi->gro_hash (one flow)
    tcp_hdr gro_seg_;           // its first segment's header
    uint8_t gro_opts_[40] = {};     // its TCP options (merged segments must carry the same)
    uint32_t gro_next_seq_ = 0;
    uint32_t iss_ = 0x1000;
    uint16_t ip_id_ = 0;
    bool reader_woken_ = false;     // the reader is runnable (woken by data or the FIN)
};

}  // namespace fecsim::firmware
