// Internet checksums as the ENET accelerator computes them: IPv4 header checksum and the
// TCP/UDP/ICMP protocol checksum over IPv4 or IPv6 (RACC on receive, IINS/PINS on transmit).
// Frames are Ethernet II, optionally with one 802.1Q tag.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fecsim::fec {

struct l3_info {
    bool ipv4 = false, ipv6 = false;
    bool vlan = false;
    uint16_t vlan_tci = 0;
    bool fragment = false;
    size_t l3_offset = 0;       // from the destination MAC
    size_t l3_header = 0;       // IP header bytes
    size_t l4_offset = 0, l4_length = 0;
    uint8_t protocol = 0;       // IP protocol / IPv6 next header
    bool ip_header_error = false;  // IPv4 header checksum wrong
    bool protocol_error = false;   // TCP/UDP/ICMP checksum wrong
    bool protocol_checked = false;
};

// Parses the frame (`len` bytes without FCS) and verifies its checksums.
l3_info inspect(const uint8_t* frame, size_t len);

// Fills in the checksums of an outgoing frame (`len` bytes without FCS).
void insert_checksums(uint8_t* frame, size_t len, bool ip_header, bool protocol);

}  // namespace fecsim::fec
