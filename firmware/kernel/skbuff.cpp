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

// The struct around a head of `alloc` bytes whose last SIZEOF_SKB_SHARED_INFO are the shinfo:
// memset of the struct up to `tail`, and of the shinfo.
sk_buff* skb_allocator::__build_skb_around(addr_t obj, addr_t head, uint32_t alloc, skb_head_kind kind) {
    sk_buff* s = get();
    s->sim = obj;
    s->head = s->data = head;
    s->end = head + alloc - SIZEOF_SKB_SHARED_INFO;
    s->head_alloc = alloc;
    s->head_kind = kind;
    s->truesize = SKB_DATA_ALIGN(SIZEOF_SK_BUFF) + alloc;  // SKB_TRUESIZE(alloc - shinfo)
    k_.core.touch(obj, skb_header_clear_bytes, true);
    k_.core.touch(s->end, shinfo_clear_bytes, true);
    return s;
}

sk_buff* skb_allocator::build_skb(addr_t data, uint32_t frag_size) {
    cpu::scope sc(k_.core, "build_skb");
    k_.exec(path::build_skb);
    const addr_t obj = k_.skbuff_head_cache.alloc();
    if (!obj) return nullptr;
    return __build_skb_around(obj, data, frag_size, skb_head_kind::page);
}

sk_buff* skb_allocator::netdev_alloc_skb(uint32_t len) {
    cpu::scope sc(k_.core, "__netdev_alloc_skb");
    len += NET_SKB_PAD;
    // Small heads (<= SKB_WITH_OVERHEAD(1024)) come from kmalloc through __alloc_skb; the rest
    // from the NAPI page_frag cache, with __build_skb around the frag.
    if (len <= 1024 - SIZEOF_SKB_SHARED_INFO) {
        k_.exec(path::netdev_alloc_skb_kmalloc);
        sk_buff* s = alloc_skb(len);
        if (s) skb_reserve(s, NET_SKB_PAD);
        return s;
    }
    k_.exec(path::netdev_alloc_skb);
    const uint32_t size = SKB_DATA_ALIGN(len) + SIZEOF_SKB_SHARED_INFO;
    const addr_t head = k_.frags.page_frag_alloc(size);
    if (!head) return nullptr;
    const addr_t obj = k_.skbuff_head_cache.alloc();
    if (!obj) {
        k_.frags.page_frag_free(head);
        return nullptr;
    }
    sk_buff* s = __build_skb_around(obj, head, size, skb_head_kind::frag);
    skb_reserve(s, NET_SKB_PAD);
    return s;
}

void skb_allocator::skb_free_head(sk_buff* s, bool napi_safe) {
    // napi_pp_put_page: direct recycling only if the pool is bound to this NAPI (pp->p.napi, not
    // set by fec in v6.6), else through the ptr_ring.
    (void)napi_safe;
    free_buffer(s->head, s->head_alloc, s->head_kind, s->pp_recycle);
}

void skb_allocator::free_buffer(addr_t a, uint32_t size, skb_head_kind kind, bool pp_recycle) {
    switch (kind) {
    case skb_head_kind::kmalloc: k_.kfree(a, size); return;
    case skb_head_kind::frag: k_.frags.page_frag_free(a); return;
    case skb_head_kind::page: {
        page* p = k_.pages.virt_to_page(a);
        if (!p) throw std::logic_error("skb_free_head: head is not in the page allocator's range");
        k_.core.touch(k_.pages.page_struct(p), 8, false);  // pp_magic, pp
        if (pp_recycle && p->pp) {
            k_.exec(path::skb_free_head_pp);
            p->pp->page_pool_put_full_page(p, false);
            return;
        }
        // A plain page (page_pool released it at RX, or never a pool page): put_page.
        k_.pages.__free_pages(p);
        return;
    }
    }
}

sk_buff* skb_allocator::alloc_skb(uint32_t size) {
    cpu::scope sc(k_.core, "__alloc_skb");
    k_.exec(path::alloc_skb);
    const uint32_t alloc = SKB_DATA_ALIGN(size) + SIZEOF_SKB_SHARED_INFO;
    const addr_t obj = k_.skbuff_head_cache.alloc();
    if (!obj) return nullptr;
    const addr_t head = k_.kmalloc_atomic(alloc);
    if (!head) {
        k_.skbuff_head_cache.free(obj);
        return nullptr;
    }
    return __build_skb_around(obj, head, alloc, skb_head_kind::kmalloc);
}

void skb_allocator::skb_gro_steal_head(sk_buff* to, sk_buff* from, addr_t frag_addr, uint32_t frag_len) {
    if (to->nr_frags >= MAX_SKB_FRAGS) throw std::logic_error("skb_gro_steal_head: no fragment slot left");
    // The new fragment is written into the head skb's skb_shared_info.
    to->frags[to->nr_frags++] = {frag_addr, frag_len, from->head_kind};
    k_.core.touch(to->end + 48 + 16 * uint32_t(to->nr_frags - 1), 16, true);
    to->len += frag_len;
    to->data_len += frag_len;
    to->truesize += from->truesize - SKB_DATA_ALIGN(SIZEOF_SK_BUFF);
    to->gso_segs++;
    k_.skbuff_head_cache.free(from->sim);
    put(from);
}

void skb_allocator::release(sk_buff* s, bool napi_safe, path p) {
    cpu::scope sc(k_.core, p == path::napi_consume_skb ? "napi_consume_skb" : "kfree_skb");
    if (s->users > 1) {  // skb_unref: another holder keeps it
        k_.exec(path::skb_unref);
        k_.core.touch(s->sim, 8, true);
        --s->users;
        return;
    }
    k_.exec(p);
    k_.core.touch(s->sim, 64, false);     // users, head, data, flags
    k_.core.touch(s->end, 8, true);       // shinfo->dataref
    for (int i = 0; i < s->nr_frags; ++i) free_buffer(s->frags[i].addr, 0, s->frags[i].kind, s->pp_recycle);
    skb_free_head(s, napi_safe);
    k_.skbuff_head_cache.free(s->sim);
    put(s);
}

}  // namespace fecsim::firmware
