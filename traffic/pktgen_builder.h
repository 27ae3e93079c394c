// Builds pktgen's IPv4/UDP frames (net/core/pktgen.c: mod_cur_headers + fill_packet_ipv4) as
// real bytes: Ethernet (+802.1Q), IPv4 with header checksum, UDP (checksum with UDPCSUM), the
// 16-byte pktgen header (magic, sequence number, send time), zero fill, padding to 60 bytes
// and the FCS. See docs/traffic.md for the field-by-field description.
#pragma once

#include "models/net/frame.h"
#include "traffic/pktgen_commands.h"

#include <systemc>

#include <cstdint>
#include <random>
#include <vector>

namespace fecsim::traffic {

constexpr uint32_t pktgen_magic = 0xbe9be955;
constexpr size_t pktgen_hdr_bytes = 16;

// What pktgen takes from the sending device when the commands leave it unset.
struct pktgen_device {
    mac_addr mac{};      // source MAC when no src_mac command
    uint32_t ipv4 = 0;   // source address when no src_min/src_max (host order)
};

// Current header values, for tests and tracing.
struct pktgen_headers {
    uint32_t saddr = 0, daddr = 0;
    uint16_t udp_src = 0, udp_dst = 0, vlan_id = no_vlan;
    uint32_t pkt_size = 0;  // bytes without FCS, before padding
    uint16_t ip_id = 0;
    uint32_t flow = 0;
};

class pktgen_builder {
public:
    pktgen_builder(const pktgen_params& p, const pktgen_device& dev, uint64_t seed);

    // Advances the headers as mod_cur_headers does, then writes the frame into `f` (resized,
    // FCS appended) with sequence number `seq_num` and the send time `now` (zero with
    // NO_TIMESTAMP). Sets f.created = now.
    void build(net::frame& f, uint32_t seq_num, sc_core::sc_time now);

    const pktgen_headers& current() const { return cur_; }
    const pktgen_params& params() const { return p_; }
    mac_addr src_mac() const { return src_mac_; }
    mac_addr dst_mac() const { return dst_mac_; }

private:
    struct flow_state {
        uint32_t count = 0;
        bool init = false;
        uint32_t cur_daddr = 0;
    };
    void mod_cur_headers();
    uint32_t f_pick();
    uint32_t random_below(uint32_t n) { return n == 0 ? 0 : uint32_t(rng_() % n); }

    pktgen_params p_;
    mac_addr src_mac_{}, dst_mac_{};
    uint32_t saddr_min_ = 0, saddr_max_ = 0;
    pktgen_headers cur_;
    std::vector<flow_state> flows_;
    uint32_t curfl_ = 0;
    std::mt19937_64 rng_;
};

// Internet checksum helpers (RFC 1071), shared with the receive-side analysis.
uint16_t ipv4_header_checksum(const uint8_t* hdr, size_t len);
uint16_t udp_checksum(const uint8_t* ip_hdr, const uint8_t* udp, size_t udp_len);
// The checksum of a transport header + payload of `len` bytes with the IPv4 pseudo header of
// `ip_hdr` (0 when the checksum field of a received segment is correct).
uint16_t ipv4_transport_checksum(const uint8_t* ip_hdr, uint8_t protocol, const uint8_t* l4, size_t len);

}  // namespace fecsim::traffic
