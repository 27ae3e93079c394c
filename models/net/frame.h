// Ethernet frames as they travel between models: real bytes, destination MAC first, FCS last.
// Frames come from a pool (no heap allocation per frame in steady state) and are owned by
// exactly one model at a time (frame_ptr is a unique_ptr that returns the frame to the pool).
#pragma once

#include <systemc>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace fecsim::net {

constexpr size_t preamble_bytes = 8;   // preamble + SFD
constexpr size_t ifg_bytes = 12;       // minimum inter-frame gap
constexpr size_t fcs_bytes = 4;
constexpr size_t min_frame_bytes = 64; // incl. FCS
constexpr size_t mac_bytes = 6;
constexpr uint64_t broadcast_mac = 0xFFFFFFFFFFFFull;

// The MAC address at `b` as a number, first byte most significant (the group bit is bit 40):
// two loads and a byte swap (the switch and the MAC's filter read every frame's addresses).
inline uint64_t mac48(const uint8_t* b) {
    uint64_t v = 0;
    std::memcpy(&v, b, mac_bytes);  // b[0] in the lowest byte on a little-endian host, the highest otherwise
    return (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap64(v) : v) >> 16;
}

struct frame {
    std::vector<uint8_t> bytes;        // incl. FCS; capacity is kept across reuse
    uint64_t id = 0;                   // unique per run, for tracing and captures
    sc_core::sc_time created;          // when the originator built it (latency measurements)

    size_t size() const { return bytes.size(); }
    uint8_t* data() { return bytes.data(); }
    const uint8_t* data() const { return bytes.data(); }
    // Bytes the frame occupies on the wire: preamble + frame + IFG.
    size_t wire_bytes() const { return preamble_bytes + bytes.size() + ifg_bytes; }
};

class frame_pool {
public:
    struct deleter {
        void operator()(frame* f) const { frame_pool::instance().release(f); }
    };
    using ptr = std::unique_ptr<frame, deleter>;

    // Inline: every frame taken and every frame given back asks for it.
    static frame_pool& instance() {
        static frame_pool pool;
        return pool;
    }
    // A frame of `size` bytes (contents unspecified) with a fresh id.
    ptr get(size_t size = 0) { return get(size, take_id()); }
    // A fresh id, for a model that numbers a frame where it starts one, before it knows whether
    // it needs the frame (get(size, id) then, or never).
    uint64_t take_id() { return next_id_++; }
    ptr get(size_t size, uint64_t id);
    size_t allocated() const { return all_.size(); }
    size_t available() const { return free_.size(); }

private:
    void release(frame* f) { free_.push_back(f); }
    std::vector<std::unique_ptr<frame>> all_;
    std::vector<frame*> free_;
    uint64_t next_id_ = 1;
};

using frame_ptr = frame_pool::ptr;

// IEEE 802.3 CRC-32 of `len` bytes (the FCS value, transmitted least significant byte first).
uint32_t crc32(const uint8_t* data, size_t len);
// Appends the FCS to a frame that holds header + payload.
void append_fcs(frame& f);
// True when the last 4 bytes are the correct FCS of the rest.
bool fcs_ok(const frame& f);

// Time one frame occupies a link of `speed_mbps`, incl. preamble and IFG.
inline sc_core::sc_time wire_time(size_t frame_bytes, double speed_mbps) {
    return sc_core::sc_time((preamble_bytes + frame_bytes + ifg_bytes) * 8 * 1e3 / speed_mbps, sc_core::SC_NS);
}

}  // namespace fecsim::net
