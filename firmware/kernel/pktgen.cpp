#include "firmware/kernel/pktgen.h"

#include <stdexcept>

namespace fecsim::firmware {

namespace {
constexpr uint32_t pktgen_dev_bytes = 128;  // the pktgen_dev fields the loop reads and writes
constexpr uint32_t pktgen_headroom = 16;    // fill_packet_ipv4: skb_reserve(skb, 16) after the pad
}  // namespace

pktgen_thread::pktgen_thread(kernel& k, skb_allocator& skbs, net_device& odev, const pktgen_dev_params& p)
    : k_(k), skbs_(skbs), odev_(odev), p_(p) {
    if (!p_.build) throw std::invalid_argument("pktgen: no packet builder");
    if (p_.burst < 1) throw std::invalid_argument("pktgen: burst must be >= 1");
    pkt_dev_ = k_.kmalloc(pktgen_dev_bytes);
}

// pktgen_thread_worker: the kthread's loop body (next_to_run over the thread's if_list, the
// need_resched check and cpu_relax), then pktgen_xmit for the running device.
void pktgen_thread::pktgen_thread_worker() {
    cpu::scope s(k_.core, "pktgen_thread_worker");
    k_.exec(path::pktgen_thread_worker);
    if (!started_set_) started_ = k_.core.now(), started_set_ = true;
    k_.core.touch(pkt_dev_, 64, false);  // if_list, running, skip
    pktgen_xmit();
}

// fill_packet -> fill_packet_ipv4: mod_cur_headers, __netdev_alloc_skb, the headers and the
// pktgen header written into the skb's data (pktgen_finalize_skb), ip_send_check.
sk_buff* pktgen_thread::fill_packet() {
    cpu::scope s(k_.core, "fill_packet_ipv4");
    k_.exec(path::fill_packet_ipv4);
    p_.build(frame_, seq_num_, k_.core.now());
    sk_buff* skb = skbs_.netdev_alloc_skb(uint32_t(frame_.size()) + pktgen_headroom);
    if (!skb) return nullptr;
    skb_allocator::skb_reserve(skb, pktgen_headroom);
    k_.core.write(skb->data, frame_.data(), frame_.size());
    skb_allocator::skb_put(skb, uint32_t(frame_.size()));
    skb->protocol = 0x0800;
    skb->dev = &odev_;
    k_.core.touch(skb->sim, 64, true);  // protocol, dev, priority, queue_mapping, ip_summed
    ++stats.skbs_built;
    return skb;
}

// pktgen_xmit, M_START_XMIT.
void pktgen_thread::pktgen_xmit() {
    cpu::scope s(k_.core, "pktgen_xmit");
    k_.exec(path::pktgen_xmit);
    ++stats.xmit_calls;
    k_.core.touch(pkt_dev_, pktgen_dev_bytes, true);
    if (!skb_ || (last_ok_ && ++clone_count_ >= p_.clone_skb)) {
        if (skb_) skbs_.kfree_skb(skb_);  // pktgen's own reference
        skb_ = fill_packet();
        if (!skb_) {  // "ERROR: couldn't allocate skb in fill_packet"
            ++stats.errors;
            --clone_count_;
            return;
        }
        last_pkt_size_ = skb_->len;
        clone_count_ = 0;
    }
    const int q = skb_->queue_mapping;
    odev_.__netif_tx_lock(q);  // local_bh_disable + HARD_TX_LOCK: no softirq until the unlock
    if (odev_.netif_tx_queue_stopped(q)) {
        last_ok_ = false;
        ++stats.queue_stopped;
    } else {
        uint32_t burst = p_.burst;
        skb_->users += int(burst);  // refcount_add(burst, &skb->users)
        k_.core.touch(skb_->sim, 8, true);
        do {
            // netdev_start_xmit(skb, odev, txq, --burst > 0): xmit_more tells the driver more
            // follow (the fec driver rings TDAR regardless).
            k_.exec(path::netdev_start_xmit);
            --burst;
            if (odev_.ndo_start_xmit(skb_) == NETDEV_TX_BUSY) {  // retried by the next call
                --skb_->users;
                last_ok_ = false;
                ++stats.queue_stopped;
                break;
            }
            last_ok_ = true;
            ++sofar_;
            ++stats.sofar;
            ++seq_num_;
            stats.tx_bytes += last_pkt_size_;
        } while (burst > 0 && !odev_.netif_tx_queue_stopped(q));
        if (burst) skb_->users -= int(burst);  // the copies not handed over
    }
    odev_.__netif_tx_unlock(q);
    if (p_.count && sofar_ >= p_.count) {  // pktgen_stop_device
        running_ = false;
        stopped_ = k_.core.now();
    }
}

}  // namespace fecsim::firmware
