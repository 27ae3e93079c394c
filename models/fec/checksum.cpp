#include "models/fec/checksum.h"

namespace fecsim::fec {

namespace {
constexpr uint16_t ethertype_ipv4 = 0x0800, ethertype_ipv6 = 0x86DD, ethertype_vlan = 0x8100;
constexpr uint8_t proto_icmp = 1, proto_tcp = 6, proto_udp = 17, proto_icmpv6 = 58;
constexpr size_t eth_header = 14, vlan_tag = 4, ipv6_header = 40;

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

uint32_t sum16(const uint8_t* p, size_t n, uint32_t s = 0) {
    for (; n > 1; p += 2, n -= 2) s += be16(p);
    if (n) s += uint32_t(p[0]) << 8;
    return s;
}
uint16_t fold(uint32_t s) {
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return uint16_t(s);
}

// Offset of the checksum field inside the L4 header, or 0 when the protocol has none we handle.
size_t l4_csum_field(uint8_t proto) {
    switch (proto) {
    case proto_tcp: return 16;
    case proto_udp: return 6;
    case proto_icmp: case proto_icmpv6: return 2;
    default: return 0;
    }
}

uint32_t pseudo_header(const uint8_t* f, const l3_info& i) {
    const uint8_t* ip = f + i.l3_offset;
    uint32_t s = i.ipv4 ? sum16(ip + 12, 8) : sum16(ip + 8, 32);
    if (i.ipv4 && i.protocol == proto_icmp) return 0;  // ICMPv4 has no pseudo header
    return s + i.protocol + uint32_t(i.l4_length);
}
}  // namespace

l3_info inspect(const uint8_t* f, size_t len) {
    l3_info i;
    if (len < eth_header) return i;
    size_t off = 12;
    uint16_t type = be16(f + off);
    if (type == ethertype_vlan && len >= eth_header + vlan_tag) {
        i.vlan = true;
        i.vlan_tci = be16(f + off + 2);
        off += vlan_tag;
        type = be16(f + off);
    }
    off += 2;
    i.l3_offset = off;
    const uint8_t* ip = f + off;
    const size_t avail = len - off;
    if (type == ethertype_ipv4 && avail >= 20 && (ip[0] >> 4) == 4) {
        const size_t ihl = size_t(ip[0] & 0xF) * 4;
        const size_t total = be16(ip + 2);
        if (ihl < 20 || ihl > avail || total < ihl || total > avail) return i;
        i.ipv4 = true;
        i.l3_header = ihl;
        i.protocol = ip[9];
        i.ip_header_error = fold(sum16(ip, ihl)) != 0xFFFF;
        i.fragment = (be16(ip + 6) & 0x3FFF) != 0;  // MF or a fragment offset
        i.l4_offset = off + ihl;
        i.l4_length = total - ihl;
    } else if (type == ethertype_ipv6 && avail >= ipv6_header && (ip[0] >> 4) == 6) {
        const size_t payload = be16(ip + 4);
        if (payload > avail - ipv6_header) return i;
        i.ipv6 = true;
        i.l3_header = ipv6_header;
        i.protocol = ip[6];  // extension headers are not followed
        i.l4_offset = off + ipv6_header;
        i.l4_length = payload;
    } else {
        return i;
    }
    const size_t field = l4_csum_field(i.protocol);
    if (i.fragment || !field || i.l4_length < field + 2) return i;
    const uint8_t* l4 = f + i.l4_offset;
    if (i.protocol == proto_udp && i.ipv4 && be16(l4 + 6) == 0) return i;  // UDP/IPv4 without checksum
    i.protocol_checked = true;
    i.protocol_error = fold(sum16(l4, i.l4_length, pseudo_header(f, i))) != 0xFFFF;
    return i;
}

void insert_checksums(uint8_t* f, size_t len, bool ip_header, bool protocol) {
    const l3_info i = inspect(f, len);
    if (ip_header && i.ipv4) {
        uint8_t* ip = f + i.l3_offset;
        ip[10] = ip[11] = 0;
        const uint16_t c = uint16_t(~fold(sum16(ip, i.l3_header)));
        ip[10] = uint8_t(c >> 8), ip[11] = uint8_t(c);
    }
    const size_t field = l4_csum_field(i.protocol);
    if (protocol && (i.ipv4 || i.ipv6) && !i.fragment && field && i.l4_length >= field + 2) {
        uint8_t* l4 = f + i.l4_offset;
        l4[field] = l4[field + 1] = 0;
        uint16_t c = uint16_t(~fold(sum16(l4, i.l4_length, pseudo_header(f, i))));
        if (c == 0 && i.protocol == proto_udp) c = 0xFFFF;
        l4[field] = uint8_t(c >> 8), l4[field + 1] = uint8_t(c);
    }
}

}  // namespace fecsim::fec
