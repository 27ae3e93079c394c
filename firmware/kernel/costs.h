// Code-path instruction costs (configs/costs/*.json, docs/design.md §2): every ported kernel function
// charges the instruction count of its own body; the core turns it into time with its CPI.
// Memory, uncached, MMIO, cache-maintenance and barrier costs are charged separately by the
// core when the firmware performs those operations.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace fecsim::firmware {

// Every code path the firmware charges. The names match the keys of the costs file.
#define FECSIM_COST_PATHS(X)                                                                          \
    /* interrupts, softirq, NAPI */                                                                   \
    X(generic_handle_irq) X(fec_enet_interrupt) X(fec_enet_collect_events) X(napi_schedule)           \
    X(net_rx_action) X(fec_enet_rx_napi) X(napi_complete_done) X(fec_enet_rx) X(fec_enet_rx_queue)    \
    X(fec_enet_rx_queue_bd) X(fec_enet_rx_error) X(fec_enet_update_cbd) X(fec_enet_tx)               \
    X(fec_enet_tx_queue) X(fec_enet_tx_queue_bd)                                                      \
    /* DMA API */                                                                                     \
    X(dma_sync_single) X(dma_map_single) X(dma_map_single_skip_sync) X(dma_unmap_single)             \
    X(dma_unmap_single_from_device) X(dma_unmap_single_skip_sync) X(dcache_by_line_op)              \
    X(outer_cache_range) X(outer_cache_line)                                                          \
    /* swiotlb bounce buffers (a mapping beyond the device's DMA mask) */                            \
    X(swiotlb_map) X(swiotlb_unmap) X(swiotlb_release_merge) X(swiotlb_sync_single) X(swiotlb_bounce) \
    X(swiotlb_bounce_line)                                                                            \
    /* page allocator, slab, page_frag */                                                             \
    X(alloc_pages) X(free_pages) X(prep_compound_page) X(prep_compound_tail) X(kmem_cache_alloc)      \
    X(kmem_cache_free) X(page_frag_alloc) X(page_frag_free)                                           \
    /* page_pool */                                                                                   \
    X(page_pool_alloc_fast) X(page_pool_refill) X(page_pool_refill_page) X(page_pool_alloc_slow)      \
    X(page_pool_alloc_slow_page) X(page_pool_dma_map) X(page_pool_put_page) X(page_pool_put_page_ring) \
    X(page_pool_recycle_ring) X(page_pool_return_page)                                                \
    /* XDP core */                                                                                    \
    X(bpf_prog_run_xdp) X(fec_enet_run_xdp) X(xdp_convert_buff_to_frame) X(xdp_return_frame_rx_napi) \
    X(xdp_do_redirect) X(bq_enqueue) X(xdp_do_flush) X(bq_xmit_all)                                   \
    /* XDP TX / ndo_xdp_xmit */                                                                       \
    X(fec_enet_xdp_tx_xmit) X(fec_enet_txq_xmit_frame) X(fec_enet_xdp_xmit) X(fec_txq_trigger_xmit)   \
    /* XDP programs (JITed bodies) */                                                                 \
    X(xdp_prog_pass) X(xdp_prog_drop) X(xdp_prog_tx) X(xdp_prog_parse) X(xdp_prog_count) X(xdp_prog_swap_macs)      \
    X(xdp_prog_redirect)                                                                              \
    /* skb and the network stack after napi_gro_receive */                                            \
    X(build_skb) X(fec_enet_rx_skb) X(napi_gro_receive) X(napi_gro_receive_held) X(napi_gro_receive_normal) \
    X(netif_receive_skb_list_internal) X(netif_receive_skb_core) X(netif_receive_skb_list_next)       \
    X(do_xdp_generic)                                                                                 \
    X(ip_rcv) X(ip_rcv_finish) X(ip_rcv_finish_demuxed) X(ip_local_deliver) X(udp_rcv) X(udp_queue_rcv_skb) X(sock_def_readable) \
    X(udp_recvmsg) X(kfree_skb) X(napi_consume_skb) X(skb_free_head_pp) X(generic_xdp_tx)            \
    /* legacy (pre-page-pool) RX */                                                                   \
    X(netdev_alloc_skb) X(netdev_alloc_skb_kmalloc) X(fec_enet_copybreak) X(fec_enet_new_rxbdp)       \
    /* stack-originated TX */                                                                         \
    X(fec_enet_start_xmit) X(fec_enet_txq_submit_skb) X(fec_enet_txq_submit_skb_csum) X(fec_enet_txq_submit_frag)                   \
    /* TCP receive path, its ACKs, the reading task, timers */                                        \
    X(inet_gro_receive) X(inet_gro_receive_held) X(napi_gro_complete) X(tcp_v4_rcv) X(tcp_v4_rcv_demuxed) X(tcp_v4_early_demux) X(tcp_rcv_established) \
    X(tcp_rcv_established_slow) X(tcp_data_queue) X(tcp_data_queue_in_order) X(tcp_queue_rcv)         \
    X(tcp_event_data_recv) X(tcp_grow_window) X(tcp_grow_window_no_room) X(tcp_grow_window_scaled)     \
    X(tcp_grow_window_none) X(tcp_grow_window_halve) X(tcp_grow_window_adjust)                        \
    X(sk_mem_schedule) X(sk_forced_mem_schedule)                                                      \
    X(sock_rfree) X(sock_rfree_reclaim)                                                               \
    X(tcp_ofo_queue) X(tcp_ack_snd_check) X(tcp_send_ack) X(alloc_skb) X(ip_queue_xmit)               \
    X(dev_queue_xmit) X(tcp_conn_request) X(tcp_recvmsg) X(tcp_recvmsg_skb) X(skb_copy_datagram_iter) X(copy_to_user)    \
    X(copy_to_user_line) X(tcp_cleanup_rbuf) X(try_to_wake_up) X(context_switch)                      \
    X(arch_timer_handler) X(run_timer_softirq) X(tcp_delack_timer)                     \
    /* pktgen's send loop (the board peer) and the shared-skb unref */                                \
    X(pktgen_thread_worker) X(pktgen_xmit) X(netdev_start_xmit) X(fill_packet_ipv4) X(skb_unref)

enum class path : uint16_t {
#define FECSIM_COST_ENUM(n) n,
    FECSIM_COST_PATHS(FECSIM_COST_ENUM)
#undef FECSIM_COST_ENUM
        count
};
constexpr size_t path_count = static_cast<size_t>(path::count);
const char* to_string(path p);

// The loaded table. load() rejects unknown and missing keys and non-integer or negative
// counts with "FILE: /paths/KEY: message" (config_error).
class cost_table {
public:
    static cost_table load(const std::string& file);
    // A table with every path at `instructions` (tests).
    static cost_table uniform(uint64_t instructions);

    uint64_t operator[](path p) const { return instr_[static_cast<size_t>(p)]; }
    void set(path p, uint64_t instructions) { instr_[static_cast<size_t>(p)] = instructions; }
    const std::string& source() const { return source_; }

private:
    std::array<uint64_t, path_count> instr_{};
    std::string source_;
};

}  // namespace fecsim::firmware
