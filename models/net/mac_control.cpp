#include "models/net/mac_control.h"

#include <cstring>

namespace fecsim::net {

namespace {
uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
constexpr size_t pause_body_bytes = min_frame_bytes - fcs_bytes;
}  // namespace

int pause_quanta(const frame& f) {
    if (f.size() < 18) return -1;
    const uint8_t* d = f.data();
    if (std::memcmp(d, pause_dst_mac, mac_bytes) != 0 || be16(d + 12) != ethertype_mac_control ||
        be16(d + 14) != mac_control_pause)
        return -1;
    return be16(d + 16);
}

void make_pause(frame& f, uint64_t src_mac, uint16_t quanta, uint16_t opcode) {
    f.bytes.assign(pause_body_bytes, 0);
    uint8_t* b = f.data();
    std::memcpy(b, pause_dst_mac, mac_bytes);
    for (size_t i = 0; i < mac_bytes; ++i) b[6 + i] = uint8_t(src_mac >> (8 * (5 - i)));
    b[12] = uint8_t(ethertype_mac_control >> 8), b[13] = uint8_t(ethertype_mac_control);
    b[14] = uint8_t(opcode >> 8), b[15] = uint8_t(opcode);
    b[16] = uint8_t(quanta >> 8), b[17] = uint8_t(quanta);
    append_fcs(f);
}

}  // namespace fecsim::net
