// TCP segments on the wire as real bytes: Ethernet II / IPv4 / TCP with the options Linux
// writes (tcp_options_write: MSS, SACK-permitted, timestamps, window scale, SACK blocks) and
// correct IPv4 and TCP checksums, and the parser for what comes back. Shared by the TCP
// sender (traffic/tcp_sender) and any receiver that checks its stream (tests, the DUT).
#pragma once

#include "models/net/frame.h"
#include "traffic/pktgen_commands.h"

#include <array>
#include <cstdint>
#include <optional>

namespace fecsim::traffic {

namespace tcp_flags {
constexpr uint8_t fin = 0x01, syn = 0x02, rst = 0x04, psh = 0x08, ack = 0x10;
}

constexpr size_t tcp_frame_headers = 14 + 20;  // Ethernet II + IPv4 without options
constexpr uint8_t ipproto_tcp = 6;

struct sack_block {
    uint32_t left = 0, right = 0;  // [left, right) in sequence space
};

struct tcp_segment {
    mac_addr src_mac{}, dst_mac{};
    uint32_t src_ip = 0, dst_ip = 0;   // host order
    uint16_t ip_id = 0;
    uint16_t src_port = 0, dst_port = 0;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = 0;
    uint16_t window = 0;               // the field as sent (before window scaling)
    // Options; the SYN-only ones are written only with the SYN flag.
    uint16_t mss = 0;                  // 0: none
    int wscale = -1;                   // -1: none
    bool sack_permitted = false;
    bool has_timestamps = false;
    uint32_t tsval = 0, tsecr = 0;
    std::array<sack_block, 4> sack{};
    uint8_t sack_count = 0;
    // Payload: built from / parsed into these (parse: points into the frame).
    const uint8_t* payload = nullptr;
    uint32_t payload_len = 0;
    bool checksums_ok = true;          // parse: IPv4 header and TCP checksums both correct

    // Sequence space the segment occupies (payload + SYN + FIN).
    uint32_t seq_len() const { return payload_len + ((flags & tcp_flags::syn) ? 1 : 0) + ((flags & tcp_flags::fin) ? 1 : 0); }
};

// Bytes of TCP options `s` carries (a multiple of 4, at most 40).
size_t tcp_options_bytes(const tcp_segment& s);

// Writes `s` into `f` (resized; padded to 60 bytes; FCS appended): IPv4 with DF, TTL 64, the
// header checksum; TCP with the options in Linux's order and the checksum. f.created is left.
void build_tcp_frame(net::frame& f, const tcp_segment& s);

// The TCP segment in `f` (with FCS), or nullopt when it is not an IPv4/TCP frame that can be
// parsed (wrong EtherType, IP version, fragment, lengths past the frame, bad data offset).
// Checksums are checked, not required: see checksums_ok. Unknown options are skipped.
std::optional<tcp_segment> parse_tcp_frame(const net::frame& f);

// The sender's payload: the byte at stream offset k (k = 0 is the first byte after the SYN)
// is byte k % 4 of the big-endian 32-bit word k / 4, so a receiver can check that every byte
// arrived at its place.
inline uint8_t tcp_payload_byte(uint64_t k) { return uint8_t(uint32_t(k >> 2) >> (8 * (3 - (k & 3)))); }

// Writes the sender's payload for stream offsets [offset, offset + len) to `dst`.
void fill_tcp_payload(uint8_t* dst, uint64_t offset, size_t len);

// Sequence number comparison modulo 2^32 (RFC 793: before(), after() in the kernel).
inline bool seq_before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }
inline bool seq_after(uint32_t a, uint32_t b) { return seq_before(b, a); }

}  // namespace fecsim::traffic
