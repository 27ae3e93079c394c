// The ENET RMON/IEEE statistics block (MIB, offsets 0x200-0x2E0) and its control register MIBC.
// Counting rules follow the i.MX ENET reference manual as far as the model can tell frames
// apart; docs/models/fec.md lists what is counted where. Counters are 32-bit and wrap.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace fecsim::fec {

// Offsets of the counters (fec.h names).
enum mib_offset : uint32_t {
    RMON_T_DROP = 0x200, RMON_T_PACKETS = 0x204, RMON_T_BC_PKT = 0x208, RMON_T_MC_PKT = 0x20C,
    RMON_T_CRC_ALIGN = 0x210, RMON_T_UNDERSIZE = 0x214, RMON_T_OVERSIZE = 0x218, RMON_T_FRAG = 0x21C,
    RMON_T_JAB = 0x220, RMON_T_COL = 0x224, RMON_T_P64 = 0x228, RMON_T_P65TO127 = 0x22C,
    RMON_T_P128TO255 = 0x230, RMON_T_P256TO511 = 0x234, RMON_T_P512TO1023 = 0x238,
    RMON_T_P1024TO2047 = 0x23C, RMON_T_P_GTE2048 = 0x240, RMON_T_OCTETS = 0x244,
    IEEE_T_DROP = 0x248, IEEE_T_FRAME_OK = 0x24C, IEEE_T_1COL = 0x250, IEEE_T_MCOL = 0x254,
    IEEE_T_DEF = 0x258, IEEE_T_LCOL = 0x25C, IEEE_T_EXCOL = 0x260, IEEE_T_MACERR = 0x264,
    IEEE_T_CSERR = 0x268, IEEE_T_SQE = 0x26C, IEEE_T_FDXFC = 0x270, IEEE_T_OCTETS_OK = 0x274,
    RMON_R_PACKETS = 0x284, RMON_R_BC_PKT = 0x288, RMON_R_MC_PKT = 0x28C, RMON_R_CRC_ALIGN = 0x290,
    RMON_R_UNDERSIZE = 0x294, RMON_R_OVERSIZE = 0x298, RMON_R_FRAG = 0x29C, RMON_R_JAB = 0x2A0,
    RMON_R_RESVD_O = 0x2A4, RMON_R_P64 = 0x2A8, RMON_R_P65TO127 = 0x2AC, RMON_R_P128TO255 = 0x2B0,
    RMON_R_P256TO511 = 0x2B4, RMON_R_P512TO1023 = 0x2B8, RMON_R_P1024TO2047 = 0x2BC,
    RMON_R_P_GTE2048 = 0x2C0, RMON_R_OCTETS = 0x2C4,
    IEEE_R_DROP = 0x2C8, IEEE_R_FRAME_OK = 0x2CC, IEEE_R_CRC = 0x2D0, IEEE_R_ALIGN = 0x2D4,
    IEEE_R_MACERR = 0x2D8, IEEE_R_FDXFC = 0x2DC, IEEE_R_OCTETS_OK = 0x2E0,
};

constexpr uint32_t MIBC_OFFSET = 0x064;
constexpr uint32_t MIB_FIRST = 0x200, MIB_LAST = 0x2E0;
constexpr uint32_t MIBC_DIS = 1u << 31, MIBC_IDLE = 1u << 30, MIBC_CLEAR = 1u << 29;

// What the MAC knows about a frame when it counts it.
struct mib_frame {
    size_t bytes = 0;          // destination MAC .. FCS
    bool broadcast = false, multicast = false;
    bool fcs_ok = true;
    bool pause = false;        // MAC control PAUSE frame
};

class mib {
public:
    static constexpr size_t count = (MIB_LAST - MIB_FIRST) / 4 + 1;
    static bool is_counter(uint32_t off);           // a named counter (not a hole)
    static const char* name(uint32_t off);          // fec.h name, nullptr for holes

    // MIBC semantics: counting stops while MIB_DIS is set; counters read 0 while MIB_CLEAR is set.
    void control(uint32_t mibc);
    uint32_t control() const { return mibc_; }

    uint32_t read(uint32_t off) const { return c_[(off - MIB_FIRST) / 4]; }
    // Software may write a counter only while the block is disabled (the driver zeroes them so).
    void write(uint32_t off, uint32_t v) { if (mibc_ & MIBC_DIS) c_[(off - MIB_FIRST) / 4] = v; }

    // max_fl: RCR.MAX_FL, the oversize/jabber boundary.
    void count_tx(const mib_frame& f, size_t max_fl);
    void count_rx(const mib_frame& f, size_t max_fl);  // every frame the MAC sees
    void count_rx_ok(const mib_frame& f);              // passed the MAC checks (IEEE_R_FRAME_OK)
    void inc(uint32_t off, uint32_t n = 1) { if (counting()) c_[(off - MIB_FIRST) / 4] += n; }

    using values = std::array<uint32_t, count>;
    const values& snapshot() const { return c_; }
    // {"RMON_T_PACKETS": n, ...}: the counts since `base` (a snapshot), modulo 2^32 as software
    // subtracts two readings.
    void report(nlohmann::json& j, const values& base = {}) const;

private:
    bool counting() const { return !(mibc_ & (MIBC_DIS | MIBC_CLEAR)); }
    void count_size(uint32_t p64, size_t bytes);
    values c_{};
    uint32_t mibc_ = MIBC_DIS | MIBC_IDLE;
};

}  // namespace fecsim::fec
