#include "firmware/kernel/skbuff.h"

#include <stdexcept>

namespace fecsim::firmware {

namespace {
constexpr uint32_t skb_header_clear_bytes = 192;  // memset(skb, 0, offsetof(struct sk_buff, tail))
constexpr uint32_t shinfo_clear_bytes = 48;       // memset(shinfo, 0, offsetof(dataref)) + dataref
}  // namespace

sk_buff* skb_allocator::get() {
    if (free_.empty()) {
        all_.push_back(std::make_unique<sk_buff>());
        free_.push_back(all_.back().get());
    }
    sk_buff* s = free_.back();
    free_.pop_back();
    *s = sk_buff{};
    ++live_;
    return s;
}

void skb_allocator::put(sk_buff* s) {
    free_.push_back(s);
    --live_;
}

sk_buff* skb_allocator::build_skb(addr_t data, uint32_t frag_size) {
    cpu::scope sc(k_.core, "build_skb");
    k_.exec(path::build_skb);
    const addr_t obj = k_.skbuff_head_cache.alloc();
    if (!obj) return nullptr;
    sk_buff* s = get();
    s->sim = obj;
    s->head = s->data = data;
    s->end = data + frag_size - SIZEOF_SKB_SHARED_INFO;
    s->head_alloc = frag_size;
    s->head_kind = skb_head_kind::page;
    k_.core.touch(obj, skb_header_clear_bytes, true);
    k_.core.touch(s->end, shinfo_clear_bytes, true);
    return s;
}

sk_buff* skb_allocator::netdev_alloc_skb(uint32_t len) {
    cpu::scope sc(k_.core, "__netdev_alloc_skb");
    k_.exec(path::netdev_alloc_skb);
    len += NET_SKB_PAD;
    const uint32_t size = SKB_DATA_ALIGN(len) + SIZEOF_SKB_SHARED_INFO;
    // Small heads (<= SKB_WITH_OVERHEAD(1024)) come from kmalloc, the rest from page_frag.
    const bool small = len <= 1024 - SIZEOF_SKB_SHARED_INFO;
    const addr_t head = small ? k_.kmalloc_atomic(size) : k_.frags.page_frag_alloc(size);
    if (!head) return nullptr;
    const addr_t obj = k_.skbuff_head_cache.alloc();
    if (!obj) {
        if (small) k_.kfree(head, size); else k_.frags.page_frag_free(head);
        return nullptr;
    }
    sk_buff* s = get();
    s->sim = obj;
    s->head = s->data = head;
    s->end = head + SKB_DATA_ALIGN(len);
    s->head_alloc = size;
    s->head_kind = small ? skb_head_kind::kmalloc : skb_head_kind::frag;
    k_.core.touch(obj, skb_header_clear_bytes, true);
    k_.core.touch(s->end, shinfo_clear_bytes, true);
    skb_reserve(s, NET_SKB_PAD);
    return s;
}

void skb_allocator::skb_free_head(sk_buff* s, bool napi_safe) {
    switch (s->head_kind) {
    case skb_head_kind::kmalloc: k_.kfree(s->head, s->head_alloc); return;
    case skb_head_kind::frag: k_.frags.page_frag_free(s->head); return;
    case skb_head_kind::page: {
        page* p = k_.pages.virt_to_page(s->head);
        if (!p) throw std::logic_error("skb_free_head: head is not in the page allocator's range");
        k_.core.touch(k_.pages.page_struct(p), 8, false);  // pp_magic, pp
        if (s->pp_recycle && p->pp) {
            // napi_pp_put_page: direct recycling only if the pool is bound to this NAPI
            // (pp->p.napi, not set by fec in v6.6), else through the ptr_ring.
            k_.exec(path::skb_free_head_pp);
            (void)napi_safe;
            p->pp->page_pool_put_full_page(p, false);
            return;
        }
        // A plain page (page_pool released it at RX, or never a pool page): put_page.
        k_.pages.__free_pages(p);
        return;
    }
    }
}

void skb_allocator::release(sk_buff* s, bool napi_safe, path p) {
    cpu::scope sc(k_.core, p == path::napi_consume_skb ? "napi_consume_skb" : "kfree_skb");
    k_.exec(p);
    k_.core.touch(s->sim, 64, false);     // users, head, data, flags
    k_.core.touch(s->end, 8, true);       // shinfo->dataref
    for (int i = 0; i < s->nr_frags; ++i) {
        page* fp = k_.pages.virt_to_page(s->frags[i].addr);
        if (fp) k_.pages.__free_pages(fp);
    }
    skb_free_head(s, napi_safe);
    k_.skbuff_head_cache.free(s->sim);
    put(s);
}

}  // namespace fecsim::firmware
