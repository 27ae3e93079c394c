// A minimal sk_buff (include/linux/skbuff.h, net/core/skbuff.c): the struct lives in the
// skbuff_head_cache slab and skb_shared_info at the end of the data buffer, both in simulated
// memory; the host mirror holds what the path decides on. Heads are a page_pool page
// (build_skb on the RX page, recycled on free when marked), a page_frag or a kmalloc buffer.
// Left out: clones, fclones, GSO, frag lists, destructors, skb extensions.
#pragma once

#include "firmware/kernel/page_pool.h"
#include "firmware/kernel/xdp.h"

#include <array>
#include <memory>
#include <vector>

namespace fecsim::firmware {

constexpr uint32_t NET_SKB_PAD = 64;
constexpr uint32_t NET_IP_ALIGN = 0;  // arm64
constexpr uint32_t SIZEOF_SK_BUFF = 256;
constexpr int MAX_SKB_FRAGS = 17;
constexpr uint32_t ETH_HLEN = 14;

inline uint32_t SKB_DATA_ALIGN(uint32_t x) { return (x + SMP_CACHE_BYTES - 1) & ~(SMP_CACHE_BYTES - 1); }

enum class skb_head_kind { page, frag, kmalloc };

struct skb_frag_t {
    addr_t addr = 0;
    uint32_t len = 0;
};

struct sk_buff {
    addr_t sim = 0;  // struct sk_buff
    addr_t head = 0, data = 0, end = 0;  // end = skb_shared_info
    uint32_t len = 0, mac_len = 0, head_alloc = 0;
    skb_head_kind head_kind = skb_head_kind::frag;
    bool pp_recycle = false;
    uint16_t protocol = 0;
    uint16_t queue_mapping = 0;
    net_device* dev = nullptr;
    int nr_frags = 0;
    std::array<skb_frag_t, MAX_SKB_FRAGS> frags{};
    sk_buff* next = nullptr;

    uint32_t headroom() const { return static_cast<uint32_t>(data - head); }
};

class skb_allocator {
public:
    explicit skb_allocator(kernel& k) : k_(k) {}

    // build_skb(data, frag_size): skb around an existing buffer (head_frag).
    sk_buff* build_skb(addr_t data, uint32_t frag_size);
    // __netdev_alloc_skb / napi_alloc_skb: NET_SKB_PAD headroom; small heads from kmalloc,
    // the rest from the page_frag cache.
    sk_buff* netdev_alloc_skb(uint32_t len);
    // skb_reserve / skb_put / skb_pull / skb_push (pointer arithmetic, no memory access).
    static void skb_reserve(sk_buff* s, uint32_t n) { s->data += n; }
    static void skb_put(sk_buff* s, uint32_t n) { s->len += n; }
    static void skb_pull(sk_buff* s, uint32_t n) { s->data += n; s->len -= n; }
    static void skb_push(sk_buff* s, uint32_t n) { s->data -= n; s->len += n; }
    static void skb_mark_for_recycle(sk_buff* s) { s->pp_recycle = true; }

    // kfree_skb / consume_skb / napi_consume_skb: release the head (page_pool recycle with a
    // full-length sync when marked), the frags and the struct. `napi_safe`: called from the
    // pool's own NAPI context (allow_direct recycling into the alloc cache).
    void kfree_skb(sk_buff* s) { release(s, false, path::kfree_skb); }
    void consume_skb(sk_buff* s) { release(s, false, path::kfree_skb); }
    void napi_consume_skb(sk_buff* s, int budget) { release(s, budget != 0, path::napi_consume_skb); }

    uint64_t live() const { return live_; }

private:
    sk_buff* get();
    void put(sk_buff* s);
    void release(sk_buff* s, bool napi_safe, path p);
    void skb_free_head(sk_buff* s, bool napi_safe);

    kernel& k_;
    std::vector<std::unique_ptr<sk_buff>> all_;
    std::vector<sk_buff*> free_;
    uint64_t live_ = 0;
};

}  // namespace fecsim::firmware
