// XDP core (include/net/xdp.h, net/core/xdp.c, net/core/filter.c, kernel/bpf/devmap.c):
// xdp_buff (on the stack, host-only), xdp_frame written as a real 40-byte struct at
// data_hard_start in simulated memory, memory-model registration, frame return, and
// XDP_REDIRECT through bpf_redirect + the devmap-style per-CPU bulk queue (16 frames) flushed
// to ndo_xdp_xmit by xdp_do_flush. Left out: metadata, multi-buffer frags, cpumap/xskmap,
// tracepoints.
#pragma once

#include "firmware/kernel/netdev.h"
#include "firmware/kernel/page_pool.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace fecsim::firmware {

enum xdp_action : uint32_t { XDP_ABORTED = 0, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT };
const char* to_string(xdp_action a);
enum xdp_mem_type : uint32_t { MEM_TYPE_PAGE_SHARED = 0, MEM_TYPE_PAGE_ORDER0, MEM_TYPE_PAGE_POOL, MEM_TYPE_XSK_BUFF_POOL };

constexpr uint32_t XDP_PACKET_HEADROOM = 256;
constexpr uint32_t SIZEOF_XDP_FRAME = 40;      // struct xdp_frame on 64-bit (fec-driver.md §12)
constexpr uint32_t SIZEOF_SKB_SHARED_INFO = 320; // SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
constexpr int DEV_MAP_BULK_SIZE = 16;

struct xdp_rxq_info {
    net_device* dev = nullptr;
    uint32_t queue_index = 0;
    uint32_t mem_type = MEM_TYPE_PAGE_SHARED;
    uint32_t mem_id = 0;
};

struct xdp_buff {
    addr_t data = 0, data_end = 0, data_meta = 0, data_hard_start = 0;
    xdp_rxq_info* rxq = nullptr;
    uint32_t frame_sz = 0;
    uint32_t flags = 0;
};

inline void xdp_init_buff(xdp_buff& x, uint32_t frame_sz, xdp_rxq_info* rxq) {
    x.frame_sz = frame_sz;
    x.rxq = rxq;
    x.flags = 0;
}
inline void xdp_prepare_buff(xdp_buff& x, addr_t hard_start, uint32_t headroom, uint32_t data_len, bool meta_valid) {
    x.data_hard_start = hard_start;
    x.data = hard_start + headroom;
    x.data_end = x.data + data_len;
    x.data_meta = meta_valid ? x.data : x.data + 1;
}

// Decoded struct xdp_frame (the bytes live in simulated memory).
struct xdp_frame {
    addr_t addr = 0;  // where the struct is
    addr_t data = 0;
    uint16_t len = 0, headroom = 0;
    uint32_t metasize = 0, mem_type = 0, mem_id = 0;
    uint64_t dev_rx = 0;
    uint32_t frame_sz = 0, flags = 0;
};

class xdp_core;

// A loaded XDP program. run() reads/writes the packet through the core and charges its own
// instruction cost; bpf_prog_run_xdp adds the dispatcher.
class bpf_prog {
public:
    virtual ~bpf_prog() = default;
    virtual const char* name() const = 0;
    virtual xdp_action run(kernel& k, xdp_core& x, xdp_buff& xdp) = 0;
};

struct xdp_stats {
    uint64_t redirect_flushes = 0, redirect_errors = 0, bulk_xmit_dropped = 0;
};

class xdp_core {
public:
    explicit xdp_core(kernel& k, netdev_registry& devs) : k_(k), devs_(devs) {}

    // xdp_rxq_info_reg_mem_model(MEM_TYPE_PAGE_POOL, pool)
    void xdp_rxq_info_reg_mem_model(xdp_rxq_info& rxq, page_pool* pool);

    xdp_action bpf_prog_run_xdp(bpf_prog& prog, xdp_buff& xdp);
    // bpf_redirect(ifindex, flags): sets the per-CPU redirect info, returns XDP_REDIRECT.
    xdp_action bpf_redirect(int ifindex, uint64_t flags);

    // The device bpf_redirect() chose (consumes the per-CPU redirect info); nullptr if none.
    net_device* take_redirect_target() {
        net_device* d = devs_.dev_get_by_index(ri_tgt_index_);
        ri_tgt_index_ = 0;
        return d;
    }

    // xdp_convert_buff_to_frame: writes the 40-byte frame at data_hard_start. 0 on failure.
    addr_t xdp_convert_buff_to_frame(const xdp_buff& xdp);
    // Reads the struct back (touches its line).
    xdp_frame xdp_frame_read(addr_t frame);
    // xdp_return_frame_rx_napi / xdp_return_frame: __xdp_return -> page_pool full put.
    void xdp_return_frame_rx_napi(addr_t frame) { xdp_return(frame, true); }
    void xdp_return_frame(addr_t frame) { xdp_return(frame, false); }

    // xdp_do_redirect: ifindex redirect -> convert + bq_enqueue on the target. 0 or -errno.
    int xdp_do_redirect(net_device* dev, xdp_buff& xdp, bpf_prog& prog);
    // xdp_do_flush (__dev_flush): bq_xmit_all(XDP_XMIT_FLUSH) for every queued device.
    void xdp_do_flush();

    page_pool* pool_of(uint32_t mem_id) const { return mem_id >= 1 && mem_id <= pools_.size() ? pools_[mem_id - 1] : nullptr; }
    xdp_stats stats;

private:
    struct bulk_queue {
        net_device* dev = nullptr;
        net_device* dev_rx = nullptr;
        std::array<addr_t, DEV_MAP_BULK_SIZE> q{};
        int count = 0;
        bool on_flush_list = false;
    };
    void xdp_return(addr_t frame, bool napi_direct);
    void bq_enqueue(net_device* dev, addr_t frame, net_device* dev_rx);
    void bq_xmit_all(bulk_queue& bq, uint32_t flags);

    kernel& k_;
    netdev_registry& devs_;
    std::vector<page_pool*> pools_;  // mem id -> pool
    int ri_tgt_index_ = 0;           // per-CPU bpf_redirect_info
    std::vector<std::unique_ptr<bulk_queue>> bqs_;  // per target device (ifindex)
    std::vector<bulk_queue*> flush_list_;
};

}  // namespace fecsim::firmware
