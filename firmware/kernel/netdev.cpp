#include "firmware/kernel/netdev.h"

namespace fecsim::firmware {

net_device::net_device(kernel& k, std::string n, int num_tx_queues) : name(std::move(n)), k_(k) {
    sim = k_.kmalloc(256);
    txq_.resize(num_tx_queues);
    for (auto& q : txq_) q.sim = k_.kmalloc(64);
}

// spin_lock on the queue's _xmit_lock: an exclusive load-acquire/store pair on its line (an
// acquire holds back later accesses only, which an in-order core does anyway: no wait).
void net_device::__netif_tx_lock(int q) { k_.core.touch(txq_[q].sim, 8, true); }

// spin_unlock: a store-release, which waits for every earlier write to be acknowledged.
void net_device::__netif_tx_unlock(int q) { k_.core.store_release(txq_[q].sim, 8); }

// txq_trans_cond_update: trans_start = jiffies when it changed.
void net_device::txq_trans_cond_update(int q) { k_.core.touch(txq_[q].sim + 16, 8, true); }

bool softnet::napi_schedule_prep(napi_struct& n) {
    if (n.scheduled) return false;
    n.scheduled = true;
    return true;
}

void softnet::__napi_schedule(napi_struct& n) {
    k_.exec(path::napi_schedule);
    poll_list_.push_back(&n);
}

bool softnet::napi_complete_done(napi_struct& n, int) {
    cpu::scope s(k_.core, "napi_complete_done");
    k_.exec(path::napi_complete_done);
    n.scheduled = false;
    ++completions;
    return true;
}

void softnet::net_rx_action() {
    cpu::scope s(k_.core, "net_rx_action");
    int budget = netdev_budget;
    while (!poll_list_.empty() && budget > 0) {
        napi_struct* n = poll_list_.front();
        poll_list_.pop_front();
        k_.exec(path::net_rx_action);
        ++polls;
        const int work = n->napi_poll(n->weight);
        budget -= work;
        if (work >= n->weight && n->scheduled) {
            ++budget_exhausted;
            poll_list_.push_back(n);  // budget used up: poll again
        }
    }
}

}  // namespace fecsim::firmware
