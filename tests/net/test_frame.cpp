// Frames: the 802.3 CRC-32, FCS append/check, and the frame pool's reuse.
#include "models/net/frame.h"
#include "models/sim_context.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

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

}  // namespace
}  // namespace fecsim
