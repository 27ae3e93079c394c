// pktgen's send loop as the kernel runs it (net/core/pktgen.c, M_START_XMIT mode): the kthread
// (pktgen_thread_worker) calls pktgen_xmit for its one device; pktgen_xmit builds a new skb
// (fill_packet) every clone_skb calls, takes the queue's xmit lock and hands the same skb to
// ndo_start_xmit `burst` times (xmit_more), holding one reference per copy; the driver drops
// each at TX completion. Left out: the delay / rate spin (the platform refuses it), the other
// xmit modes, IPv6, multiple devices per thread, the procfs interface.
#pragma once

#include "firmware/kernel/netdev.h"
#include "firmware/kernel/skbuff.h"

#include <systemc>

#include <cstdint>
#include <functional>
#include <vector>

namespace fecsim::firmware {

// The pktgen device's settings (the parsed /proc/net/pktgen/<dev> commands, traffic/).
struct pktgen_dev_params {
    uint64_t count = 0;      // packets to send; 0 = forever
    uint32_t clone_skb = 0;  // a new skb when ++clone_count >= clone_skb (so 0 and 1 both build every call)
    uint32_t burst = 1;      // copies of the skb per pktgen_xmit call
    // fill_packet's bytes: the frame (Ethernet header .. padding, no FCS) for sequence number
    // `seq` sent at `now`, as mod_cur_headers + fill_packet_ipv4 write it.
    std::function<void(std::vector<uint8_t>& frame, uint32_t seq, sc_core::sc_time now)> build;
};

struct pktgen_dev_stats {
    uint64_t sofar = 0;       // packets ndo_start_xmit took (pkt_dev->sofar)
    uint64_t tx_bytes = 0;    // pkt_dev->tx_bytes (frame lengths without FCS)
    uint64_t xmit_calls = 0;  // pktgen_xmit calls
    uint64_t skbs_built = 0;  // fill_packet calls
    uint64_t queue_stopped = 0;  // calls that found the queue stopped (last_ok = 0)
    uint64_t errors = 0;      // fill_packet failures and refused transmits
};

class pktgen_thread {
public:
    pktgen_thread(kernel& k, skb_allocator& skbs, net_device& odev, const pktgen_dev_params& p);

    // One pass of pktgen_thread_worker's loop: next_to_run, then pktgen_xmit.
    void pktgen_thread_worker();
    // The device still has packets to send (count not reached); false: the thread sleeps.
    bool running() const { return running_; }

    void reset_stats() { stats = {}; }
    pktgen_dev_stats stats;
    uint64_t sofar_total() const { return sofar_; }  // since the start (pktgen's Result: line)
    sc_core::sc_time started() const { return started_; }
    sc_core::sc_time stopped() const { return stopped_; }
    uint32_t last_pkt_size() const { return last_pkt_size_; }

private:
    void pktgen_xmit();
    sk_buff* fill_packet();

    kernel& k_;
    skb_allocator& skbs_;
    net_device& odev_;
    pktgen_dev_params p_;
    addr_t pkt_dev_ = 0;  // struct pktgen_dev (hot fields)
    sk_buff* skb_ = nullptr;
    bool last_ok_ = true;
    bool running_ = true;
    uint32_t clone_count_ = 0;
    uint32_t seq_num_ = 1;
    uint32_t last_pkt_size_ = 0;
    uint64_t sofar_ = 0;
    sc_core::sc_time started_, stopped_;
    bool started_set_ = false;
    std::vector<uint8_t> frame_;
};

}  // namespace fecsim::firmware
