// A minimal sk_buff (include/linux/skbuff.h, net/core/skbuff.c): the struct lives in the
// skbuff_head_cache slab and skb_shared_info at the end of the data buffer, both in simulated
// memory; the host mirror holds what the path decides on. Heads are a page_pool page
// (build_skb on the RX page, recycled on free when marked), a page_frag or a kmalloc buffer.
// skb->users counts references (pktgen hands one skb to the driver `burst` times); the last
// kfree_skb / consume frees it. Left out: clones, fclones, GSO, frag lists, destructors, skb extensions.
#pragma once

#include "firmware/kernel/page_pool.h"
#include "firmware/kernel/xdp.h"

#include <array>
#include <memory>
#include <vector>

namespace fecsim::firmware {

struct tcp_sock;

constexpr uint32_t NET_SKB_PAD = 64;
constexpr uint32_t NET_IP_ALIGN = 0;  // arm64
constexpr uint32_t SIZEOF_SK_BUFF = 256;
constexpr int MAX_SKB_FRAGS = 17;
constexpr uint32_t ETH_HLEN = 14;

inline uint32_t SKB_DATA_ALIGN(uint32_t x) { return (x + SMP_CACHE_BYTES - 1) & ~(SMP_CACHE_BYTES - 1); }
// SKB_TRUESIZE: a buffer of `x` bytes with its sk_buff and skb_shared_info
inline uint32_t SKB_TRUESIZE(uint32_t x) { return x + SKB_DATA_ALIGN(SIZEOF_SK_BUFF) + SKB_DATA_ALIGN(SIZEOF_SKB_SHARED_INFO); }

enum class skb_head_kind { page, frag, kmalloc };

// skb->ip_summed on transmit: CHECKSUM_PARTIAL leaves the transport checksum to the device
// (the field at csum_start + csum_offset holds the pseudo-header sum).
enum : uint8_t { CHECKSUM_NONE = 0, CHECKSUM_PARTIAL = 3 };

// A fragment: `len` bytes at `addr`, in a buffer of `kind` (GRO steals the head buffers of
// merged segments as fragments; freeing the skb frees them as their owner would).
struct skb_frag_t {
    addr_t addr = 0;
    uint32_t len = 0;
    skb_head_kind kind = skb_head_kind::page;
};

struct sk_buff {
    addr_t sim = 0;  // struct sk_buff
    addr_t head = 0, data = 0, end = 0;  // end = skb_shared_info
    uint32_t len = 0, mac_len = 0, head_alloc = 0;
    uint32_t data_len = 0;   // bytes in frags (len - data_len is in the head)
    uint32_t truesize = 0;   // memory charged to a socket (SKB_TRUESIZE of the buffers)
    uint16_t gso_size = 0, gso_segs = 0;  // GRO: segment size and count of a merged skb
    uint32_t seq = 0, end_seq = 0;        // TCP_SKB_CB(skb)->seq / end_seq
    int users = 1;  // refcount_t users
    skb_head_kind head_kind = skb_head_kind::frag;
    bool pp_recycle = false;
    uint16_t protocol = 0;
    uint8_t ip_proto = 0;     // the IPv4 protocol field, read by eth_type_trans
    uint8_t ip_summed = CHECKSUM_NONE;
    uint16_t csum_offset = 0;  // the checksum field, from csum_start
    uint32_t csum_start = 0;   // the transport header, from head
    uint16_t queue_mapping = 0;
    net_device* dev = nullptr;
    tcp_sock* sk = nullptr;  // the socket early demux found (tcp_v4_rcv takes it)
    int nr_frags = 0;
    std::array<skb_frag_t, MAX_SKB_FRAGS> frags{};
    sk_buff* next = nullptr;

    uint32_t headroom() const { return static_cast<uint32_t>(data - head); }
    uint32_t headlen() const { return len - data_len; }
};

class skb_allocator {
public:
    explicit skb_allocator(kernel& k) : k_(k) {}

    // build_skb(data, frag_size): skb around an existing buffer (head_frag).
    sk_buff* build_skb(addr_t data, uint32_t frag_size);
    // __netdev_alloc_skb (softirq context): NET_SKB_PAD headroom; small heads from kmalloc
    // (__alloc_skb), the rest from the NAPI page_frag cache.
    sk_buff* netdev_alloc_skb(uint32_t len);
    // skb_reserve / skb_put / skb_pull / skb_push (pointer arithmetic, no memory access).
    static void skb_reserve(sk_buff* s, uint32_t n) { s->data += n; }
    static void skb_put(sk_buff* s, uint32_t n) { s->len += n; }
    static void skb_pull(sk_buff* s, uint32_t n) { s->data += n; s->len -= n; }
    static void skb_push(sk_buff* s, uint32_t n) { s->data -= n; s->len += n; }
    static void skb_mark_for_recycle(sk_buff* s) { s->pp_recycle = true; }

    // kfree_skb / consume_skb / napi_consume_skb: drop one reference (skb_unref); the last one
    // releases the head (page_pool recycle with a
    // full-length sync when marked), the frags and the struct. `napi_safe`: called from the
    // pool's own NAPI context (allow_direct recycling into the alloc cache).
    void kfree_skb(sk_buff* s) { release(s, false, path::kfree_skb); }
    void consume_skb(sk_buff* s) { release(s, false, path::kfree_skb); }
    void napi_consume_skb(sk_buff* s, int budget) { release(s, budget != 0, path::napi_consume_skb); }
    // __alloc_skb(size) with a kmalloc head (the stack's own packets: ACKs), no headroom reserved.
    sk_buff* alloc_skb(uint32_t size);
    // skb_gro_receive with a stolen head (head_frag): `from`'s buffer becomes fragment `frag_addr`
    // .. + `frag_len` of `to`, and `from`'s struct is freed (napi_skb_free_stolen_head).
    void skb_gro_steal_head(sk_buff* to, sk_buff* from, addr_t frag_addr, uint32_t frag_len);

    uint64_t live() const { return live_; }

private:
    sk_buff* get();
    sk_buff* __build_skb_around(addr_t obj, addr_t head, uint32_t alloc, skb_head_kind kind);
    void put(sk_buff* s);
    void release(sk_buff* s, bool napi_safe, path p);
    void skb_free_head(sk_buff* s, bool napi_safe);
    void free_buffer(addr_t a, uint32_t size, skb_head_kind kind, bool pp_recycle);

    kernel& k_;
    std::vector<std::unique_ptr<sk_buff>> all_;
    std::vector<sk_buff*> free_;
    uint64_t live_ = 0;
};

}  // namespace fecsim::firmware
