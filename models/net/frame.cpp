#include "models/net/frame.h"

#include <array>
#include <cstring>

namespace fecsim::net {

frame_pool::ptr frame_pool::get(size_t size, uint64_t id) {
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
    f->id = id;
    f->created = sc_core::SC_ZERO_TIME;
    return ptr(f);
}

namespace {
// Slicing-by-8 tables: table[0] is the classic byte table, table[k] advances a byte that sits
// k positions further back, so the loop folds 8 bytes per step (every frame is checked at least
// twice: by the switch and by the receiving MAC, so this is on the hot path).
constexpr std::array<std::array<uint32_t, 256>, 8> make_crc_tables() {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    return t;
}
constexpr auto crc_tables = make_crc_tables();

// The CRCs of the last few distinct byte strings, reused only when every byte is equal: the
// answer is always the CRC's. The same bytes come round often: the switch checks a frame the
// receiving MAC checks again, the MAC appends an FCS the switch then checks, and a generator
// sends one frame many times (pktgen's clone_skb) that a reflector sends back. Small frames
// only, where a few compares (most fail within the first bytes) cost a fraction of a CRC.
constexpr size_t crc_memo_bytes = 128;
struct crc_memo_entry {
    size_t size = ~size_t{0};  // empty
    uint32_t crc = 0;
    uint8_t bytes[crc_memo_bytes];
};
std::array<crc_memo_entry, 4> crc_memo;
size_t crc_memo_next = 0;  // replaced in turn

uint32_t memo_crc32(const uint8_t* data, size_t n) {
    if (n > crc_memo_bytes) return crc32(data, n);
    for (const crc_memo_entry& e : crc_memo)
        if (e.size == n && std::memcmp(e.bytes, data, n) == 0) return e.crc;
    crc_memo_entry& e = crc_memo[crc_memo_next];
    crc_memo_next = (crc_memo_next + 1) % crc_memo.size();
    e.size = n;
    e.crc = crc32(data, n);
    std::memcpy(e.bytes, data, n);
    return e.crc;
}
}  // namespace

uint32_t crc32(const uint8_t* data, size_t len) {
    const auto& t = crc_tables;
    uint32_t c = 0xFFFFFFFFu;
    for (; len >= 8; data += 8, len -= 8) {
        const uint32_t lo = c ^ (uint32_t(data[0]) | uint32_t(data[1]) << 8 | uint32_t(data[2]) << 16 | uint32_t(data[3]) << 24);
        const uint32_t hi = uint32_t(data[4]) | uint32_t(data[5]) << 8 | uint32_t(data[6]) << 16 | uint32_t(data[7]) << 24;
        c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
            t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    }
    while (len--) c = t[0][(c ^ *data++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void append_fcs(frame& f) {
    const uint32_t c = memo_crc32(f.data(), f.size());
    for (int i = 0; i < 4; ++i) f.bytes.push_back(uint8_t(c >> (8 * i)));
}

bool fcs_ok(const frame& f) {
    if (f.size() < fcs_bytes) return false;
    const size_t n = f.size() - fcs_bytes;
    const uint8_t* fcs = f.data() + n;  // least significant byte first
    return memo_crc32(f.data(), n) == (uint32_t(fcs[0]) | uint32_t(fcs[1]) << 8 | uint32_t(fcs[2]) << 16 | uint32_t(fcs[3]) << 24);
}

}  // namespace fecsim::net
