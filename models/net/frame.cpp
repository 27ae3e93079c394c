#include "models/net/frame.h"

#include <array>
#include <cstring>

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

// The same bytes are checked more than once (the switch checks a frame, then the receiving MAC
// does; the MAC appends an FCS the switch then checks). Recent verdicts are kept with the
// bytes they were computed over, and one is reused only when every byte is equal: the answer
// is always the CRC's. Small frames only, where the copy and compare cost a fraction of a CRC.
constexpr size_t fcs_memo_bytes = 128;
struct fcs_verdict {
    uint64_t id = 0;
    size_t size = 0;
    bool ok = false;
    uint8_t bytes[fcs_memo_bytes];
};
std::array<fcs_verdict, 32> fcs_memo;

fcs_verdict* fcs_slot(const frame& f) {
    return f.size() <= fcs_memo_bytes ? &fcs_memo[f.id % fcs_memo.size()] : nullptr;
}

void remember_fcs(fcs_verdict* v, const frame& f, bool ok) {
    if (!v) return;
    v->id = f.id;
    v->size = f.size();
    v->ok = ok;
    std::memcpy(v->bytes, f.data(), f.size());
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
    const uint32_t c = crc32(f.data(), f.size());
    for (int i = 0; i < 4; ++i) f.bytes.push_back(uint8_t(c >> (8 * i)));
    remember_fcs(fcs_slot(f), f, true);
}

bool fcs_ok(const frame& f) {
    if (f.size() < fcs_bytes) return false;
    fcs_verdict* v = fcs_slot(f);
    if (v && v->id == f.id && v->size == f.size() && std::memcmp(v->bytes, f.data(), f.size()) == 0) return v->ok;
    const size_t n = f.size() - fcs_bytes;
    const uint32_t c = crc32(f.data(), n);
    bool ok = true;
    for (int i = 0; i < 4; ++i) ok = ok && f.bytes[n + i] == uint8_t(c >> (8 * i));
    remember_fcs(v, f, ok);
    return ok;
}

}  // namespace fecsim::net
