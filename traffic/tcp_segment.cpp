#include "traffic/tcp_segment.h"

#include "traffic/pktgen_builder.h"

#include <algorithm>
#include <cstring>

namespace fecsim::traffic {
namespace {

constexpr uint16_t ethertype_ipv4 = 0x0800;
constexpr uint8_t ip_ttl = 64;          // Linux's default (net.ipv4.ip_default_ttl)
constexpr uint16_t ip_df = 0x4000;
constexpr size_t tcp_hdr_bytes = 20;
constexpr size_t min_frame_no_fcs = net::min_frame_bytes - net::fcs_bytes;
// TCP option kinds (RFC 9293, 2018, 7323).
constexpr uint8_t opt_eol = 0, opt_nop = 1, opt_mss = 2, opt_wscale = 3, opt_sack_perm = 4, opt_sack = 5, opt_ts = 8;

void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v)); }
uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
uint32_t get32(const uint8_t* p) { return uint32_t(get16(p)) << 16 | get16(p + 2); }

bool is_syn(const tcp_segment& s) { return s.flags & tcp_flags::syn; }

// tcp_options_write: the layout Linux sends, NOPs included, so captures look like Linux's.
uint8_t* write_options(uint8_t* p, const tcp_segment& s) {
    const bool syn = is_syn(s);
    if (syn && s.mss) {
        p[0] = opt_mss, p[1] = 4;
        put16(p + 2, s.mss);
        p += 4;
    }
    const bool sack_perm = syn && s.sack_permitted;
    if (s.has_timestamps) {
        if (sack_perm) p[0] = opt_sack_perm, p[1] = 2;
        else p[0] = p[1] = opt_nop;
        p[2] = opt_ts, p[3] = 10;
        put32(p + 4, s.tsval);
        put32(p + 8, s.tsecr);
        p += 12;
    } else if (sack_perm) {
        p[0] = p[1] = opt_nop;
        p[2] = opt_sack_perm, p[3] = 2;
        p += 4;
    }
    if (syn && s.wscale >= 0) {
        p[0] = opt_nop, p[1] = opt_wscale, p[2] = 3, p[3] = uint8_t(s.wscale);
        p += 4;
    }
    if (s.sack_count) {
        p[0] = p[1] = opt_nop;
        p[2] = opt_sack, p[3] = uint8_t(2 + 8 * s.sack_count);
        p += 4;
        for (unsigned i = 0; i < s.sack_count; ++i, p += 8) {
            put32(p, s.sack[i].left);
            put32(p + 4, s.sack[i].right);
        }
    }
    return p;
}

void parse_options(const uint8_t* p, const uint8_t* end, tcp_segment& s) {
    while (p < end) {
        const uint8_t kind = p[0];
        if (kind == opt_eol) break;
        if (kind == opt_nop) {
            ++p;
            continue;
        }
        if (end - p < 2 || p[1] < 2 || p[1] > end - p) break;  // malformed: ignore the rest
        const uint8_t len = p[1];
        if (kind == opt_mss && len == 4) s.mss = get16(p + 2);
        else if (kind == opt_wscale && len == 3) s.wscale = std::min<int>(p[2], 14);  // RFC 7323: at most 14
        else if (kind == opt_sack_perm && len == 2) s.sack_permitted = true;
        else if (kind == opt_ts && len == 10) {
            s.has_timestamps = true;
            s.tsval = get32(p + 2);
            s.tsecr = get32(p + 6);
        } else if (kind == opt_sack && len >= 10 && (len - 2) % 8 == 0) {
            s.sack_count = uint8_t(std::min<size_t>((len - 2) / 8, s.sack.size()));
            for (unsigned i = 0; i < s.sack_count; ++i) s.sack[i] = {get32(p + 2 + 8 * i), get32(p + 6 + 8 * i)};
        }
        p += len;
    }
}

}  // namespace

size_t tcp_options_bytes(const tcp_segment& s) {
    const bool syn = is_syn(s);
    size_t n = (syn && s.mss) ? 4 : 0;
    if (s.has_timestamps) n += 12;
    else if (syn && s.sack_permitted) n += 4;
    if (syn && s.wscale >= 0) n += 4;
    if (s.sack_count) n += 4 + 8 * size_t(s.sack_count);
    return n;
}

void fill_tcp_payload(uint8_t* dst, uint64_t offset, size_t len) {
    size_t i = 0;
    for (; i < len && ((offset + i) & 3); ++i) dst[i] = tcp_payload_byte(offset + i);
    for (; i + 4 <= len; i += 4) put32(dst + i, uint32_t((offset + i) >> 2));
    for (; i < len; ++i) dst[i] = tcp_payload_byte(offset + i);
}

void build_tcp_frame(net::frame& f, const tcp_segment& s) {
    const size_t tcp_len = tcp_hdr_bytes + tcp_options_bytes(s);
    const size_t l3 = 20 + tcp_len + s.payload_len;
    const size_t len = 14 + l3;
    f.bytes.assign(std::max(len, min_frame_no_fcs), 0);
    uint8_t* d = f.data();
    std::copy(s.dst_mac.begin(), s.dst_mac.end(), d);
    std::copy(s.src_mac.begin(), s.src_mac.end(), d + 6);
    put16(d + 12, ethertype_ipv4);
    uint8_t* ip = d + 14;
    ip[0] = 0x45;
    put16(ip + 2, uint16_t(l3));
    put16(ip + 4, s.ip_id);
    put16(ip + 6, ip_df);
    ip[8] = ip_ttl;
    ip[9] = ipproto_tcp;
    put32(ip + 12, s.src_ip);
    put32(ip + 16, s.dst_ip);
    put16(ip + 10, ipv4_header_checksum(ip, 20));
    uint8_t* th = ip + 20;
    put16(th, s.src_port);
    put16(th + 2, s.dst_port);
    put32(th + 4, s.seq);
    put32(th + 8, s.ack);
    th[12] = uint8_t((tcp_len / 4) << 4);
    th[13] = s.flags;
    put16(th + 14, s.window);
    uint8_t* payload = write_options(th + tcp_hdr_bytes, s);
    if (s.payload_len) std::memcpy(payload, s.payload, s.payload_len);
    put16(th + 16, ipv4_transport_checksum(ip, ipproto_tcp, th, tcp_len + s.payload_len));
    net::append_fcs(f);
}

std::optional<tcp_segment> parse_tcp_frame(const net::frame& f) {
    if (f.size() < net::fcs_bytes + tcp_frame_headers + tcp_hdr_bytes) return std::nullopt;
    const uint8_t* d = f.data();
    const size_t avail = f.size() - net::fcs_bytes - 14;  // IPv4 bytes the frame can hold
    if (get16(d + 12) != ethertype_ipv4) return std::nullopt;
    const uint8_t* ip = d + 14;
    const size_t ihl = size_t(ip[0] & 0x0f) * 4;
    const size_t total = get16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != ipproto_tcp || total > avail || total < ihl + tcp_hdr_bytes)
        return std::nullopt;
    if (get16(ip + 6) & 0x3fff) return std::nullopt;  // a fragment (MF or an offset)
    const uint8_t* th = ip + ihl;
    const size_t doff = size_t(th[12] >> 4) * 4;
    if (doff < tcp_hdr_bytes || ihl + doff > total) return std::nullopt;
    tcp_segment s;
    std::copy(d, d + 6, s.dst_mac.begin());
    std::copy(d + 6, d + 12, s.src_mac.begin());
    s.ip_id = get16(ip + 4);
    s.src_ip = get32(ip + 12);
    s.dst_ip = get32(ip + 16);
    s.src_port = get16(th);
    s.dst_port = get16(th + 2);
    s.seq = get32(th + 4);
    s.ack = get32(th + 8);
    s.flags = th[13];
    s.window = get16(th + 14);
    parse_options(th + tcp_hdr_bytes, th + doff, s);
    s.payload = th + doff;
    s.payload_len = uint32_t(total - ihl - doff);
    s.checksums_ok = ipv4_header_checksum(ip, ihl) == 0 && ipv4_transport_checksum(ip, ipproto_tcp, th, total - ihl) == 0;
    return s;
}

}  // namespace fecsim::traffic
