// struct net_device as far as the driver path needs it: counters (ndev->stats), TX queues with
// their xmit lock and trans_start in simulated memory, the ndo hooks XDP redirect and the stack
// call, and NAPI (one napi_struct per device, polled from net_rx_action).
#pragma once

#include "firmware/kernel/kernel.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace fecsim::firmware {

struct sk_buff;

struct net_device_stats {
    uint64_t rx_packets = 0, rx_bytes = 0, rx_errors = 0, rx_dropped = 0, rx_fifo_errors = 0,
             rx_length_errors = 0, rx_crc_errors = 0, rx_frame_errors = 0;
    uint64_t tx_packets = 0, tx_bytes = 0, tx_errors = 0, tx_dropped = 0, tx_heartbeat_errors = 0,
             tx_window_errors = 0, tx_aborted_errors = 0, tx_fifo_errors = 0, tx_carrier_errors = 0,
             collisions = 0;
};

enum netdev_tx_t { NETDEV_TX_OK = 0, NETDEV_TX_BUSY = 0x10 };
constexpr uint64_t NETIF_F_IP_CSUM = 1ull << 1;  // TCP/UDP over IPv4 checksums by the device
constexpr uint32_t XDP_XMIT_FLUSH = 1u << 0;

struct netdev_queue {
    addr_t sim = 0;  // _xmit_lock, xmit_lock_owner, trans_start, state: one line
    bool stopped = false;
};

class net_device {
public:
    net_device(kernel& k, std::string name, int num_tx_queues);
    virtual ~net_device() = default;

    // ndo_xdp_xmit: returns the number of frames queued (the rest stay with the caller).
    virtual int ndo_xdp_xmit(int n, const addr_t* frames, uint32_t flags) = 0;
    // ndo_start_xmit: takes the skb (frees it on error) or returns NETDEV_TX_BUSY.
    virtual netdev_tx_t ndo_start_xmit(sk_buff* skb) = 0;

    void __netif_tx_lock(int q);
    void __netif_tx_unlock(int q);
    void txq_trans_cond_update(int q);
    bool netif_tx_queue_stopped(int q) const { return txq_[q].stopped; }
    void netif_tx_stop_queue(int q) { txq_[q].stopped = true; }
    void netif_tx_wake_queue(int q) { txq_[q].stopped = false; }
    int num_tx_queues() const { return static_cast<int>(txq_.size()); }

    std::string name;
    int ifindex = 0;
    net_device_stats stats;
    uint64_t features = 0;             // NETIF_F_*
    bool xdp_redirect_target = false;  // NETDEV_XDP_ACT_NDO_XMIT advertised
    addr_t sim = 0;                    // the struct net_device (hot part)

protected:
    kernel& k_;
    std::vector<netdev_queue> txq_;
};

// napi_struct + the softirq poll list (net_rx_action). One core runs all NAPI work.
class napi_struct {
public:
    virtual ~napi_struct() = default;
    // The driver's poll function; returns the work done (== budget: poll again).
    virtual int napi_poll(int budget) = 0;
    int weight = 64;
    bool scheduled = false;
};

class softnet {
public:
    explicit softnet(kernel& k) : k_(k) {}
    bool napi_schedule_prep(napi_struct& n);
    void __napi_schedule(napi_struct& n);
    bool napi_complete_done(napi_struct& n, int work_done);
    bool pending() const { return !poll_list_.empty(); }
    // net_rx_action: polls until the list is empty or netdev_budget frames are done; the rest
    // waits for the next call (ksoftirqd in the kernel, after the tasks the scheduler runs in
    // between). The 2-jiffy limit and ksoftirqd's own scheduling cost are not modelled.
    void net_rx_action();
    static constexpr int netdev_budget = 300;

    uint64_t polls = 0, budget_exhausted = 0, completions = 0;

private:
    kernel& k_;
    std::deque<napi_struct*> poll_list_;
};

// Looks net devices up by ifindex (dev_get_by_index_rcu).
class netdev_registry {
public:
    int register_netdev(net_device* d) {
        devs_.push_back(d);
        d->ifindex = static_cast<int>(devs_.size());
        return d->ifindex;
    }
    net_device* dev_get_by_index(int ifindex) const {
        return ifindex >= 1 && ifindex <= static_cast<int>(devs_.size()) ? devs_[ifindex - 1] : nullptr;
    }
    const std::vector<net_device*>& all() const { return devs_; }

private:
    std::vector<net_device*> devs_;
};

}  // namespace fecsim::firmware
