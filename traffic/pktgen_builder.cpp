#include "traffic/pktgen_builder.h"

#include <algorithm>
#include <cstring>

namespace fecsim::traffic {
namespace {

constexpr size_t eth_hdr_bytes = 14, vlan_tag_bytes = 4, ipv4_hdr_bytes = 20, udp_hdr_bytes = 8;
constexpr size_t min_frame_no_fcs = net::min_frame_bytes - net::fcs_bytes;  // the NIC pads to 60
constexpr uint8_t pktgen_ttl = 32;
constexpr uint16_t ethertype_ipv4 = 0x0800, ethertype_vlan = 0x8100;
constexpr uint8_t ipproto_udp = 17;

void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v)); }

uint32_t sum16(const uint8_t* p, size_t len, uint32_t acc) {
    for (size_t i = 0; i + 1 < len; i += 2) acc += uint32_t(p[i]) << 8 | p[i + 1];
    if (len & 1) acc += uint32_t(p[len - 1]) << 8;
    return acc;
}
uint16_t fold(uint32_t acc) {
    while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
    return uint16_t(~acc);
}

// ipv4_is_loopback/multicast/lbcast/zeronet/local_multicast: pktgen never draws these with IPDST_RND.
bool excluded_random_daddr(uint32_t a) {
    return (a >> 24) == 127 || (a >> 28) == 0xe || a == 0xffffffffu || (a >> 24) == 0;
}

}  // namespace

uint16_t ipv4_header_checksum(const uint8_t* hdr, size_t len) { return fold(sum16(hdr, len, 0)); }

uint16_t ipv4_transport_checksum(const uint8_t* ip, uint8_t protocol, const uint8_t* l4, size_t len) {
    uint32_t acc = sum16(ip + 12, 8, 0);  // pseudo header: saddr, daddr
    acc += protocol;
    acc += uint32_t(len);
    return fold(sum16(l4, len, acc));
}

uint16_t udp_checksum(const uint8_t* ip, const uint8_t* udp, size_t udp_len) {
    const uint16_t c = ipv4_transport_checksum(ip, ipproto_udp, udp, udp_len);
    return c == 0 ? 0xffff : c;  // CSUM_MANGLED_0: 0 means "no checksum" in UDP
}

pktgen_builder::pktgen_builder(const pktgen_params& p, const pktgen_device& dev, uint64_t seed)
    : p_(p), rng_(seed ^ 0x706b7467656eull /* "pktgen": its own stream of the experiment seed */) {
    src_mac_ = p.src_mac ? *p.src_mac : dev.mac;
    dst_mac_ = p.dst_mac ? *p.dst_mac : mac_addr{};
    if (!p.saddr_min && !p.saddr_max) {
        saddr_min_ = saddr_max_ = dev.ipv4;
    } else {
        saddr_min_ = p.saddr_min.value_or(0);
        saddr_max_ = p.saddr_max.value_or(0);
    }
    // pktgen_setup_inject: the current values start at the minimum; mod_cur_headers runs before
    // the first frame, so a cycling range's first frame carries min + 1.
    cur_.saddr = saddr_min_;
    cur_.daddr = p.daddr_min;
    cur_.udp_src = p.udp_src_min;
    cur_.udp_dst = p.udp_dst_min;
    cur_.vlan_id = p.vlan_id;
    cur_.pkt_size = p.min_pkt_size;
    flows_.resize(p.flows);
}

uint32_t pktgen_builder::f_pick() {
    const uint32_t lflow = p_.flowlen;
    if (p_.has(F_FLOW_SEQ)) {
        if (flows_[curfl_].count >= lflow) {
            flows_[curfl_].count = 0;
            flows_[curfl_].init = false;
            if (++curfl_ >= flows_.size()) curfl_ = 0;
        }
    } else {
        curfl_ = random_below(uint32_t(flows_.size()));
        if (flows_[curfl_].count > lflow) {
            flows_[curfl_].count = 0;
            flows_[curfl_].init = false;
        }
    }
    return curfl_;
}

void pktgen_builder::mod_cur_headers() {
    const uint32_t flow = flows_.empty() ? 0 : f_pick();
    cur_.flow = flow;
    if (p_.has(F_VID_RND) && p_.vlan_id != no_vlan) cur_.vlan_id = uint16_t(random_below(4096));

    // UDP port ranges are half-open: [min, max).
    auto step_port = [&](uint16_t& cur, uint16_t lo, uint16_t hi, bool rnd) {
        if (lo >= hi) return;
        if (rnd) cur = uint16_t(lo + random_below(uint32_t(hi - lo)));
        else if (++cur >= hi) cur = lo;
    };
    step_port(cur_.udp_src, p_.udp_src_min, p_.udp_src_max, p_.has(F_UDPSRC_RND));
    step_port(cur_.udp_dst, p_.udp_dst_min, p_.udp_dst_max, p_.has(F_UDPDST_RND));

    // IPv4 ranges include their max when stepping; the random draw is in [min, max).
    if (saddr_min_ < saddr_max_) {
        if (p_.has(F_IPSRC_RND)) cur_.saddr = saddr_min_ + random_below(saddr_max_ - saddr_min_);
        else if (++cur_.saddr > saddr_max_ || cur_.saddr == 0) cur_.saddr = saddr_min_;
    }
    if (!flows_.empty() && flows_[flow].init) {
        cur_.daddr = flows_[flow].cur_daddr;
    } else {
        const uint32_t lo = p_.daddr_min, hi = p_.daddr_max;
        if (lo < hi) {
            if (p_.has(F_IPDST_RND)) {
                uint32_t t;
                int tries = 0;  // a range of only excluded addresses must not hang the model
                do t = lo + random_below(hi - lo);
                while (excluded_random_daddr(t) && ++tries < 1000);
                cur_.daddr = t;
            } else if (++cur_.daddr > hi || cur_.daddr == 0) {
                cur_.daddr = lo;
            }
        }
        if (!flows_.empty()) {
            flows_[flow].init = true;
            flows_[flow].cur_daddr = cur_.daddr;
        }
    }
    if (p_.min_pkt_size < p_.max_pkt_size) {
        if (p_.has(F_TXSIZE_RND)) cur_.pkt_size = p_.min_pkt_size + random_below(p_.max_pkt_size - p_.min_pkt_size);
        else if (++cur_.pkt_size > p_.max_pkt_size) cur_.pkt_size = p_.min_pkt_size;
    }
    if (!p_.imix.empty()) cur_.pkt_size = p_.imix[p_.imix_distribution[random_below(100)]].first;
    if (!flows_.empty()) ++flows_[flow].count;
}

void pktgen_builder::build(net::frame& f, uint32_t seq_num, sc_core::sc_time now) {
    mod_cur_headers();
    const bool vlan = cur_.vlan_id != no_vlan;
    const size_t l2 = eth_hdr_bytes + (vlan ? vlan_tag_bytes : 0);
    const size_t hdrs = l2 + ipv4_hdr_bytes + udp_hdr_bytes;
    const size_t datalen = std::max<size_t>(pktgen_hdr_bytes, cur_.pkt_size > hdrs ? cur_.pkt_size - hdrs : 0);
    const size_t len = hdrs + datalen;
    f.bytes.assign(std::max(len, min_frame_no_fcs), 0);
    uint8_t* d = f.data();

    std::memcpy(d, dst_mac_.data(), 6);
    std::memcpy(d + 6, src_mac_.data(), 6);
    if (vlan) {
        put16(d + 12, ethertype_vlan);
        put16(d + 14, uint16_t(p_.vlan_p << 13 | p_.vlan_cfi << 12 | cur_.vlan_id));
    }
    put16(d + l2 - 2, ethertype_ipv4);

    uint8_t* ip = d + l2;
    ip[0] = 0x45;
    ip[1] = p_.tos;
    put16(ip + 2, uint16_t(ipv4_hdr_bytes + udp_hdr_bytes + datalen));
    put16(ip + 4, cur_.ip_id);
    ++cur_.ip_id;  // pktgen: one identification per built packet
    ip[8] = pktgen_ttl;
    ip[9] = ipproto_udp;
    put32(ip + 12, cur_.saddr);
    put32(ip + 16, cur_.daddr);
    put16(ip + 10, ipv4_header_checksum(ip, ipv4_hdr_bytes));

    uint8_t* udp = ip + ipv4_hdr_bytes;
    put16(udp, cur_.udp_src);
    put16(udp + 2, cur_.udp_dst);
    put16(udp + 4, uint16_t(udp_hdr_bytes + datalen));

    uint8_t* pgh = udp + udp_hdr_bytes;
    put32(pgh, pktgen_magic);
    put32(pgh + 4, seq_num);
    if (!p_.has(F_NO_TIMESTAMP)) {
        const uint64_t ns = uint64_t(now.value() / sc_core::sc_time(1, sc_core::SC_NS).value());
        put32(pgh + 8, uint32_t(ns / 1000000000ull));
        put32(pgh + 12, uint32_t(ns % 1000000000ull / 1000));
    }
    if (p_.has(F_UDPCSUM)) put16(udp + 6, udp_checksum(ip, udp, udp_hdr_bytes + datalen));

    f.created = now;
    net::append_fcs(f);
}

}  // namespace fecsim::traffic
