#include "firmware/kernel/xdp.h"

#include <cstring>

namespace fecsim::firmware {

const char* to_string(xdp_action a) {
    switch (a) {
    case XDP_ABORTED: return "XDP_ABORTED";
    case XDP_DROP: return "XDP_DROP";
    case XDP_PASS: return "XDP_PASS";
    case XDP_TX: return "XDP_TX";
    case XDP_REDIRECT: return "XDP_REDIRECT";
    }
    return "XDP_INVALID";
}

void xdp_core::xdp_rxq_info_reg_mem_model(xdp_rxq_info& rxq, page_pool* pool) {
    pools_.push_back(pool);
    rxq.mem_type = MEM_TYPE_PAGE_POOL;
    rxq.mem_id = static_cast<uint32_t>(pools_.size());
}

xdp_action xdp_core::bpf_prog_run_xdp(bpf_prog& prog, xdp_buff& xdp) {
    cpu::scope s(k_.core, prog.name());
    k_.exec(path::bpf_prog_run_xdp);
    return prog.run(k_, *this, xdp);
}

xdp_action xdp_core::bpf_redirect(int ifindex, uint64_t) {
    ri_tgt_index_ = ifindex;
    return XDP_REDIRECT;
}

addr_t xdp_core::xdp_convert_buff_to_frame(const xdp_buff& xdp) {
    cpu::scope s(k_.core, "xdp_convert_buff_to_frame");
    k_.exec(path::xdp_convert_buff_to_frame);
    const uint64_t headroom = xdp.data - xdp.data_hard_start;
    const uint64_t metasize = xdp.data_meta < xdp.data ? xdp.data - xdp.data_meta : 0;
    if (headroom < metasize + SIZEOF_XDP_FRAME) return 0;
    // Tailroom check (data_end must not reach into skb_shared_info) is a compare, no access.
    if (xdp.data_end > xdp.data_hard_start + xdp.frame_sz - SIZEOF_SKB_SHARED_INFO) return 0;
    uint8_t b[SIZEOF_XDP_FRAME] = {};
    const uint64_t data = xdp.data;
    const uint16_t len = static_cast<uint16_t>(xdp.data_end - xdp.data);
    const uint16_t hr = static_cast<uint16_t>(headroom - SIZEOF_XDP_FRAME);
    const uint32_t meta = static_cast<uint32_t>(metasize);
    const uint32_t mem_type = xdp.rxq ? xdp.rxq->mem_type : 0, mem_id = xdp.rxq ? xdp.rxq->mem_id : 0;
    const uint64_t dev_rx = xdp.rxq && xdp.rxq->dev ? xdp.rxq->dev->sim : 0;
    std::memcpy(b + 0, &data, 8);
    std::memcpy(b + 8, &len, 2);
    std::memcpy(b + 10, &hr, 2);
    std::memcpy(b + 12, &meta, 4);
    std::memcpy(b + 16, &mem_type, 4);
    std::memcpy(b + 20, &mem_id, 4);
    std::memcpy(b + 24, &dev_rx, 8);
    std::memcpy(b + 32, &xdp.frame_sz, 4);
    std::memcpy(b + 36, &xdp.flags, 4);
    k_.core.write(xdp.data_hard_start, b, SIZEOF_XDP_FRAME);
    return xdp.data_hard_start;
}

xdp_frame xdp_core::xdp_frame_read(addr_t frame) {
    uint8_t b[SIZEOF_XDP_FRAME];
    k_.core.read(frame, b, SIZEOF_XDP_FRAME);
    xdp_frame f;
    f.addr = frame;
    std::memcpy(&f.data, b + 0, 8);
    std::memcpy(&f.len, b + 8, 2);
    std::memcpy(&f.headroom, b + 10, 2);
    std::memcpy(&f.metasize, b + 12, 4);
    std::memcpy(&f.mem_type, b + 16, 4);
    std::memcpy(&f.mem_id, b + 20, 4);
    std::memcpy(&f.dev_rx, b + 24, 8);
    std::memcpy(&f.frame_sz, b + 32, 4);
    std::memcpy(&f.flags, b + 36, 4);
    return f;
}

// __xdp_return for MEM_TYPE_PAGE_POOL: page_pool_put_full_page(page->pp, page, napi_direct).
void xdp_core::xdp_return(addr_t frame, bool napi_direct) {
    cpu::scope s(k_.core, napi_direct ? "xdp_return_frame_rx_napi" : "xdp_return_frame");
    k_.exec(path::xdp_return_frame_rx_napi);
    uint8_t b[24];
    k_.core.read(frame, b, sizeof b);  // data + mem
    uint64_t data;
    uint32_t mem_type;
    std::memcpy(&data, b, 8);
    std::memcpy(&mem_type, b + 16, 4);
    page* p = k_.pages.virt_to_page(data);
    if (mem_type != MEM_TYPE_PAGE_POOL || !p || !p->pp)
        throw std::logic_error("xdp_return_frame: frame is not backed by a page_pool page");
    k_.core.touch(k_.pages.page_struct(p), 8, false);  // page->pp
    p->pp->page_pool_put_full_page(p, napi_direct);
}

int xdp_core::xdp_do_redirect(net_device* dev, xdp_buff& xdp, bpf_prog&) {
    cpu::scope s(k_.core, "xdp_do_redirect");
    k_.exec(path::xdp_do_redirect);
    net_device* fwd = take_redirect_target();
    if (!fwd || !fwd->xdp_redirect_target) {
        ++stats.redirect_errors;
        return fwd ? -95 /*EOPNOTSUPP*/ : -22 /*EINVAL*/;
    }
    const addr_t f = xdp_convert_buff_to_frame(xdp);
    if (!f) {
        ++stats.redirect_errors;
        return -75;  // EOVERFLOW
    }
    bq_enqueue(fwd, f, dev);
    return 0;
}

void xdp_core::bq_enqueue(net_device* dev, addr_t frame, net_device* dev_rx) {
    k_.exec(path::bq_enqueue);
    const size_t idx = static_cast<size_t>(dev->ifindex);
    if (bqs_.size() <= idx) bqs_.resize(idx + 1);
    if (!bqs_[idx]) {
        bqs_[idx] = std::make_unique<bulk_queue>();
        bqs_[idx]->dev = dev;
    }
    bulk_queue& bq = *bqs_[idx];
    if (bq.count == DEV_MAP_BULK_SIZE) bq_xmit_all(bq, 0);
    bq.dev_rx = dev_rx;
    bq.q[bq.count++] = frame;
    if (!bq.on_flush_list) {
        bq.on_flush_list = true;
        flush_list_.push_back(&bq);
    }
}

void xdp_core::bq_xmit_all(bulk_queue& bq, uint32_t flags) {
    cpu::scope s(k_.core, "bq_xmit_all");
    k_.exec(path::bq_xmit_all);
    if (bq.count == 0) return;
    const int sent = std::max(0, bq.dev->ndo_xdp_xmit(bq.count, bq.q.data(), flags));
    for (int i = sent; i < bq.count; ++i) {
        xdp_return_frame_rx_napi(bq.q[i]);
        ++stats.bulk_xmit_dropped;
    }
    bq.count = 0;
}

void xdp_core::xdp_do_flush() {
    cpu::scope s(k_.core, "xdp_do_flush");
    k_.exec(path::xdp_do_flush);
    ++stats.redirect_flushes;
    for (bulk_queue* bq : flush_list_) {
        bq_xmit_all(*bq, XDP_XMIT_FLUSH);
        bq->on_flush_list = false;
    }
    flush_list_.clear();
}

}  // namespace fecsim::firmware
