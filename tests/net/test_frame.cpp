// Frames: the 802.3 CRC-32, FCS append/check, the frame pool's reuse, MAC control PAUSE.
#include "models/net/frame.h"
#include "models/net/mac_control.h"
#include "models/sim_context.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace fecsim {
namespace {

uint32_t crc_of(const std::string& s) { return net::crc32(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

TEST(frame, crc32_known_vectors) {
    fresh_simulation();
    EXPECT_EQ(crc_of("123456789"), 0xCBF43926u);  // the CRC-32/IEEE check value
    EXPECT_EQ(crc_of("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
    EXPECT_EQ(crc_of(""), 0u);
    sc_core::sc_start(1, sc_core::SC_NS);
}

TEST(frame, append_fcs_is_little_endian_on_the_wire_and_checks) {
    fresh_simulation();
    auto f = net::frame_pool::instance().get(9);
    std::memcpy(f->data(), "123456789", 9);
    net::append_fcs(*f);
    ASSERT_EQ(f->size(), 13u);
    EXPECT_EQ(f->bytes[9], 0x26);  // 0xCBF43926, least significant byte first
    EXPECT_EQ(f->bytes[12], 0xCB);
    EXPECT_TRUE(net::fcs_ok(*f));
    for (size_t bit = 0; bit < f->size() * 8; bit += 13) {  // any single-bit error is caught
        f->bytes[bit / 8] ^= uint8_t(1u << (bit % 8));
        EXPECT_FALSE(net::fcs_ok(*f)) << "bit " << bit;
        f->bytes[bit / 8] ^= uint8_t(1u << (bit % 8));
    }
    f->bytes.resize(3);
    EXPECT_FALSE(net::fcs_ok(*f));  // shorter than an FCS
    sc_core::sc_start(1, sc_core::SC_NS);
}

// CRCs are reused for bytes seen before (a memo keyed by a hash of the bytes): every FCS must
// still be the CRC of its own bytes, for frames sent again, frames one byte away from one sent
// before, and more distinct frames than the memo holds.
TEST(frame, fcs_is_the_crc_of_the_bytes_whatever_was_sent_before) {
    fresh_simulation();
    std::mt19937_64 rng(3);
    std::vector<std::vector<uint8_t>> sent;
    for (int i = 0; i < 3000; ++i) {
        std::vector<uint8_t> b;
        if (!sent.empty() && rng() % 2) {
            b = sent[rng() % sent.size()];  // again, or one byte changed
            if (rng() % 2) b[rng() % b.size()] ^= uint8_t(1 + rng() % 255);
        } else {
            b.resize(1 + rng() % 200);  // below and above the memo's frame size
            for (auto& x : b) x = uint8_t(rng());
        }
        sent.push_back(b);
        auto f = net::frame_pool::instance().get(b.size());
        std::memcpy(f->data(), b.data(), b.size());
        net::append_fcs(*f);
        const uint32_t c = net::crc32(b.data(), b.size());
        for (int k = 0; k < 4; ++k) ASSERT_EQ(f->bytes[b.size() + k], uint8_t(c >> (8 * k))) << "frame " << i;
        ASSERT_TRUE(net::fcs_ok(*f)) << "frame " << i;
        f->bytes[rng() % f->size()] ^= 0x10;
        ASSERT_FALSE(net::fcs_ok(*f)) << "frame " << i;
    }
    sc_core::sc_start(1, sc_core::SC_NS);
}

TEST(frame, pool_reuses_released_frames) {
    fresh_simulation();
    auto& pool = net::frame_pool::instance();
    { auto warm = pool.get(1518); }
    const size_t allocated = pool.allocated();
    uint64_t last_id = 0;
    for (int i = 0; i < 1000; ++i) {
        auto f = pool.get(64 + i % 1455);
        EXPECT_GT(f->id, last_id);  // fresh id on every get
        last_id = f->id;
        EXPECT_EQ(f->size(), size_t(64 + i % 1455));
    }
    EXPECT_EQ(pool.allocated(), allocated);
    sc_core::sc_start(1, sc_core::SC_NS);
}

TEST(frame, wire_time_counts_preamble_and_ifg) {
    fresh_simulation();
    EXPECT_EQ(net::wire_time(64, 1000), sc_core::sc_time(672, sc_core::SC_NS));
    EXPECT_EQ(net::wire_time(1518, 1000), sc_core::sc_time(12304, sc_core::SC_NS));
    EXPECT_EQ(net::wire_time(64, 100), sc_core::sc_time(6720, sc_core::SC_NS));
    sc_core::sc_start(1, sc_core::SC_NS);
}

TEST(mac_control, pause_frame_bytes_and_decoding) {
    fresh_simulation();
    net::frame f;
    net::make_pause(f, 0x0200000000AAull, 0xFFF0);
    const uint8_t head[18] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0xAA, 0x88, 0x08, 0x00, 0x01, 0xFF, 0xF0};
    ASSERT_EQ(f.size(), net::min_frame_bytes);
    EXPECT_EQ(std::memcmp(f.data(), head, sizeof head), 0);
    for (size_t i = sizeof head; i < f.size() - net::fcs_bytes; ++i) EXPECT_EQ(f.bytes[i], 0) << i;
    EXPECT_TRUE(net::fcs_ok(f));
    EXPECT_EQ(net::pause_quanta(f), 0xFFF0);
    f.bytes[15] = 0x02;  // another MAC control opcode
    EXPECT_EQ(net::pause_quanta(f), -1);
    net::make_pause(f, 1, 7);
    f.bytes[0] = 0x02;   // not the reserved multicast address
    EXPECT_EQ(net::pause_quanta(f), -1);
    EXPECT_EQ(net::pause_duration(100, 1000), sc_core::sc_time(51200, sc_core::SC_NS));
    EXPECT_EQ(net::pause_duration(100, 100), sc_core::sc_time(512000, sc_core::SC_NS));
}

// The timer's running time over a window: a new PAUSE restarts it, XON ends it, and only the
// part inside the window counts.
TEST(mac_control, pause_timer_adds_up_the_time_held) {
    using sc_core::sc_time;
    const sc_time us(1, sc_core::SC_US);
    net::pause_timer t;
    t.start(0 * us, 10 * us);
    t.reset_window(4 * us);                 // window opens mid-pause: 6 us of it count
    EXPECT_TRUE(t.paused(9 * us));
    EXPECT_EQ(t.paused_time(8 * us), 4 * us);
    t.start(8 * us, 10 * us);               // restarted before it expired: runs to 18
    EXPECT_EQ(t.paused_time(20 * us), 14 * us);
    t.start(30 * us, 100 * us);
    t.stop(35 * us);                        // XON
    EXPECT_FALSE(t.paused(35 * us));
    EXPECT_EQ(t.paused_time(50 * us), 19 * us);
    t.reset_window(50 * us);
    EXPECT_EQ(t.paused_time(60 * us), sc_time(0, sc_core::SC_NS));
}

}  // namespace
}  // namespace fecsim
