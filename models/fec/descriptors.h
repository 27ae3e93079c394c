// ENET buffer descriptors: the legacy 8-byte `bufdesc` and the enhanced 32-byte `bufdesc_ex`
// (selected by ECR.EN1588), little-endian as on ARM/ARM64 with ECR.DBSWP set. Bit names are
// the kernel's (fec.h); the enhanced status words follow the i.MX reference manual.
// Source: the reference manual and fec.h as summarised in docs/models/fec.md (Registers, Behaviour).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fecsim::fec {

// cbd_sc, RX
constexpr uint16_t BD_ENET_RX_EMPTY = 0x8000;
constexpr uint16_t BD_ENET_RX_RO1 = 0x4000;   // software-owned
constexpr uint16_t BD_ENET_RX_WRAP = 0x2000;
constexpr uint16_t BD_ENET_RX_INTR = 0x1000;  // RO2, software-owned
constexpr uint16_t BD_ENET_RX_LAST = 0x0800;
constexpr uint16_t BD_ENET_RX_FIRST = 0x0400;
constexpr uint16_t BD_ENET_RX_MISS = 0x0100;  // accepted only because of RCR.PROM
constexpr uint16_t BD_ENET_RX_BC = 0x0080;
constexpr uint16_t BD_ENET_RX_MC = 0x0040;
constexpr uint16_t BD_ENET_RX_LG = 0x0020;
constexpr uint16_t BD_ENET_RX_NO = 0x0010;
constexpr uint16_t BD_ENET_RX_SH = 0x0008;
constexpr uint16_t BD_ENET_RX_CR = 0x0004;
constexpr uint16_t BD_ENET_RX_OV = 0x0002;
constexpr uint16_t BD_ENET_RX_TR = 0x0001;    // truncated at FTRL (kernel: BD_ENET_RX_CL)
constexpr uint16_t BD_ENET_RX_STATS = 0x013f;
// bits the hardware leaves as software wrote them
constexpr uint16_t BD_ENET_RX_SW_BITS = BD_ENET_RX_RO1 | BD_ENET_RX_WRAP | BD_ENET_RX_INTR;

// cbd_esc, RX (enhanced)
constexpr uint32_t BD_ENET_RX_ME = 0x80000000;   // MAC error (any of LG/NO/CR/OV/TR)
constexpr uint32_t BD_ENET_RX_UC = 0x01000000;   // unicast
constexpr uint32_t BD_ENET_RX_INT = 0x00800000;  // generate RXF/RXB (software-owned)
constexpr uint32_t BD_ENET_RX_VPCP_SHIFT = 13;   // VLAN priority, bits 15..13
constexpr uint32_t BD_ENET_RX_ICE = 0x00000020;  // IP header checksum error
constexpr uint32_t BD_ENET_RX_PCR = 0x00000010;  // protocol checksum error
constexpr uint32_t BD_ENET_RX_VLAN = 0x00000004;
constexpr uint32_t BD_ENET_RX_IPV6 = 0x00000002;
constexpr uint32_t BD_ENET_RX_FRAG = 0x00000001;
// cbd_prot, RX: header length (32-bit words) bits 31..27, protocol bits 23..16
constexpr uint32_t BD_ENET_RX_HL_SHIFT = 27;
constexpr uint32_t BD_ENET_RX_PROT_SHIFT = 16;

// cbd_sc, TX
constexpr uint16_t BD_ENET_TX_READY = 0x8000;
constexpr uint16_t BD_ENET_TX_PAD = 0x4000;
constexpr uint16_t BD_ENET_TX_WRAP = 0x2000;
constexpr uint16_t BD_ENET_TX_INTR = 0x1000;
constexpr uint16_t BD_ENET_TX_LAST = 0x0800;
constexpr uint16_t BD_ENET_TX_TC = 0x0400;
constexpr uint16_t BD_ENET_TX_DEF = 0x0200;
constexpr uint16_t BD_ENET_TX_HB = 0x0100;
constexpr uint16_t BD_ENET_TX_LC = 0x0080;
constexpr uint16_t BD_ENET_TX_RL = 0x0040;
constexpr uint16_t BD_ENET_TX_RCMASK = 0x003c;
constexpr uint16_t BD_ENET_TX_UN = 0x0002;
constexpr uint16_t BD_ENET_TX_CSL = 0x0001;
constexpr uint16_t BD_ENET_TX_STATUS = BD_ENET_TX_DEF | BD_ENET_TX_HB | BD_ENET_TX_LC | BD_ENET_TX_RL |
                                       BD_ENET_TX_RCMASK | BD_ENET_TX_UN | BD_ENET_TX_CSL;

// cbd_esc, TX (enhanced)
constexpr uint32_t BD_ENET_TX_INT = 0x40000000;
constexpr uint32_t BD_ENET_TX_TS = 0x20000000;
constexpr uint32_t BD_ENET_TX_PINS = 0x10000000;
constexpr uint32_t BD_ENET_TX_IINS = 0x08000000;
constexpr uint32_t BD_ENET_TX_ERRORS = 0x80003F00;  // TXE, UE, EE, FE, LCE, OE, TSE: written back as 0

// cbd_bdu: last-buffer-descriptor-update done
constexpr uint32_t BD_ENET_BDU = 0x80000000;

enum class bd_format { legacy, enhanced };

constexpr size_t bd_bytes(bd_format f) { return f == bd_format::legacy ? 8 : 32; }
constexpr size_t max_bd_bytes = 32;

// One descriptor, decoded. `raw` keeps the bytes as fetched so a write-back leaves the reserved
// fields exactly as software left them.
struct bd {
    uint16_t datlen = 0, sc = 0;
    uint32_t bufaddr = 0, esc = 0, prot = 0, bdu = 0, ts = 0;
    uint8_t raw[max_bd_bytes] = {};

    // Whole-word copies, swapped on a big-endian host: byte by byte, GCC left every descriptor
    // fetch and write-back a shift and an or per byte.
    static constexpr bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    static uint16_t le16(const uint8_t* p) {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return host_le ? v : __builtin_bswap16(v);
    }
    static uint32_t le32(const uint8_t* p) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return host_le ? v : __builtin_bswap32(v);
    }
    static void put16(uint8_t* p, uint16_t v) {
        if (!host_le) v = __builtin_bswap16(v);
        std::memcpy(p, &v, 2);
    }
    static void put32(uint8_t* p, uint32_t v) {
        if (!host_le) v = __builtin_bswap32(v);
        std::memcpy(p, &v, 4);
    }

    // Layout (fec.h, little-endian): datlen@0 sc@2 bufaddr@4 | esc@8 prot@12 bdu@16 ts@20 res@24.
    void decode(bd_format f) {
        datlen = le16(raw), sc = le16(raw + 2), bufaddr = le32(raw + 4);
        if (f == bd_format::enhanced) esc = le32(raw + 8), prot = le32(raw + 12), bdu = le32(raw + 16), ts = le32(raw + 20);
        else esc = prot = bdu = ts = 0;
    }
    void encode(bd_format f) {
        put16(raw, datlen), put16(raw + 2, sc), put32(raw + 4, bufaddr);
        if (f == bd_format::enhanced) put32(raw + 8, esc), put32(raw + 12, prot), put32(raw + 16, bdu), put32(raw + 20, ts);
    }
};

}  // namespace fecsim::fec
