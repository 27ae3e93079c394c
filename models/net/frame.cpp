#include "models/net/frame.h"

#include <array>

namespace fecsim::net {

frame_pool& frame_pool::instance() {
    static frame_pool pool;
    return pool;
}

frame_pool::ptr frame_pool::get(size_t size) {
    frame* f;
    if (free_.empty()) {
        all_.push_back(std::make_unique<frame>());
        f = all_.back().get();
        f->bytes.reserve(2048);
    } else {
        f = free_.back();
        free_.pop_back();
    }
    f->bytes.resize(size);
    f->id = next_id_++;
    f->created = sc_core::SC_ZERO_TIME;
    return ptr(f);
}

namespace {
constexpr std::array<uint32_t, 256> make_crc_table() {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
    }
    return t;
}
constexpr auto crc_table = make_crc_table();
}  // namespace

uint32_t crc32(const uint8_t* data, size_t len) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; ++i) c = crc_table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void append_fcs(frame& f) {
    const uint32_t c = crc32(f.data(), f.size());
    for (int i = 0; i < 4; ++i) f.bytes.push_back(uint8_t(c >> (8 * i)));
}

bool fcs_ok(const frame& f) {
    if (f.size() < fcs_bytes) return false;
    const size_t n = f.size() - fcs_bytes;
    const uint32_t c = crc32(f.data(), n);
    for (int i = 0; i < 4; ++i)
        if (f.bytes[n + i] != uint8_t(c >> (8 * i))) return false;
    return true;
}

}  // namespace fecsim::net
