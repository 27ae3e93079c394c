// drivers/net/ethernet/freescale/fec.h: register offsets, buffer-descriptor bits, interrupt
// bits, quirks and ring geometry, with the kernel's names (fec-driver.md §1, §2).
#pragma once

#include <cstdint>

namespace fecsim::firmware::fec {

// --- registers (ARM/ARM64 ENET)
constexpr uint32_t FEC_IEVENT = 0x004;
constexpr uint32_t FEC_IMASK = 0x008;
constexpr uint32_t FEC_R_DES_ACTIVE_0 = 0x010;
constexpr uint32_t FEC_X_DES_ACTIVE_0 = 0x014;
constexpr uint32_t FEC_ECNTRL = 0x024;
constexpr uint32_t FEC_MII_DATA = 0x040;
constexpr uint32_t FEC_MII_SPEED = 0x044;
constexpr uint32_t FEC_MIB_CTRLSTAT = 0x064;
constexpr uint32_t FEC_R_CNTRL = 0x084;
constexpr uint32_t FEC_X_CNTRL = 0x0c4;
constexpr uint32_t FEC_ADDR_LOW = 0x0e4;
constexpr uint32_t FEC_ADDR_HIGH = 0x0e8;
constexpr uint32_t FEC_OPD = 0x0ec;
constexpr uint32_t FEC_TXIC0 = 0x0f0, FEC_TXIC1 = 0x0f4, FEC_TXIC2 = 0x0f8;
constexpr uint32_t FEC_RXIC0 = 0x100, FEC_RXIC1 = 0x104, FEC_RXIC2 = 0x108;
constexpr uint32_t FEC_HASH_TABLE_HIGH = 0x118;
constexpr uint32_t FEC_HASH_TABLE_LOW = 0x11c;
constexpr uint32_t FEC_GRP_HASH_TABLE_HIGH = 0x120;
constexpr uint32_t FEC_GRP_HASH_TABLE_LOW = 0x124;
constexpr uint32_t FEC_X_WMRK = 0x144;
constexpr uint32_t FEC_R_FIFO_RSFL = 0x190;
constexpr uint32_t FEC_R_FIFO_RSEM = 0x194;
constexpr uint32_t FEC_R_FIFO_RAEM = 0x198;
constexpr uint32_t FEC_R_FIFO_RAFL = 0x19c;
constexpr uint32_t FEC_FTRL = 0x1b0;
constexpr uint32_t FEC_RACC = 0x1c4;
constexpr uint32_t FEC_R_DES_START(int x) { return x == 1 ? 0x160 : x == 2 ? 0x16c : 0x180; }
constexpr uint32_t FEC_X_DES_START(int x) { return x == 1 ? 0x164 : x == 2 ? 0x170 : 0x184; }
constexpr uint32_t FEC_R_BUFF_SIZE(int x) { return x == 1 ? 0x168 : x == 2 ? 0x174 : 0x188; }
constexpr uint32_t FEC_RCMR(int x) { return x == 1 ? 0x1c8 : 0x1cc; }
constexpr uint32_t FEC_DMA_CFG(int x) { return x == 1 ? 0x1d8 : 0x1dc; }
constexpr uint32_t FEC_R_DES_ACTIVE(int x) { return x == 1 ? 0x1e0 : x == 2 ? 0x1e8 : FEC_R_DES_ACTIVE_0; }
constexpr uint32_t FEC_X_DES_ACTIVE(int x) { return x == 1 ? 0x1e4 : x == 2 ? 0x1ec : FEC_X_DES_ACTIVE_0; }

// --- register fields
constexpr uint32_t FEC_ECR_ETHEREN = 1u << 1;
constexpr uint32_t FEC_ECR_EN1588 = 1u << 4;
constexpr uint32_t FEC_ECR_SPEED = 1u << 5;
constexpr uint32_t FEC_ECR_BYTESWP = 1u << 8;
constexpr uint32_t FEC_ENET_FCE = 1u << 5;
constexpr uint32_t FEC_RCR_DRT = 1u << 1;
constexpr uint32_t FEC_RCR_NLC = 1u << 30;
constexpr uint32_t FEC_TXWMRK_STRFWD = 1u << 8;
constexpr uint32_t FEC_RACC_IPDIS = 1u << 1;
constexpr uint32_t FEC_RACC_PRODIS = 1u << 2;
constexpr uint32_t FEC_RACC_SHIFT16 = 1u << 7;
constexpr uint32_t FEC_RACC_OPTIONS = FEC_RACC_IPDIS | FEC_RACC_PRODIS;
constexpr uint32_t FEC_ENET_RSEM_V = 0x84, FEC_ENET_RSFL_V = 16, FEC_ENET_RAEM_V = 0x8, FEC_ENET_RAFL_V = 0x8;
constexpr uint32_t FEC_ENET_OPD_V = 0xfff0;
constexpr uint32_t RCMR_MATCHEN = 1u << 16;
constexpr uint32_t RCMR_CMP_CFG(uint32_t v, uint32_t n) { return (v & 0x7) << (n << 2); }
constexpr uint32_t RCMR_CMP_1 = RCMR_CMP_CFG(0, 0) | RCMR_CMP_CFG(1, 1) | RCMR_CMP_CFG(2, 2) | RCMR_CMP_CFG(3, 3);
constexpr uint32_t RCMR_CMP_2 = RCMR_CMP_CFG(4, 0) | RCMR_CMP_CFG(5, 1) | RCMR_CMP_CFG(6, 2) | RCMR_CMP_CFG(7, 3);
constexpr uint32_t RCMR_CMP(int x) { return x == 1 ? RCMR_CMP_1 : RCMR_CMP_2; }
constexpr uint32_t DMA_CLASS_EN = 1u << 16;
constexpr uint32_t IDLE_SLOPE_MASK = 0xffff, IDLE_SLOPE_1 = 0x200, IDLE_SLOPE_2 = 0x200;
constexpr uint32_t IDLE_SLOPE(int x) { return (x == 1 ? IDLE_SLOPE_1 : IDLE_SLOPE_2) & IDLE_SLOPE_MASK; }
constexpr uint32_t FEC_ITR_EN = 1u << 31;
constexpr uint32_t FEC_ITR_CLK_SEL = 1u << 30;
constexpr uint32_t FEC_ITR_ICFT(uint32_t x) { return (x & 0xff) << 20; }
constexpr uint32_t FEC_ITR_ICTT(uint32_t x) { return x & 0xffff; }
constexpr uint32_t FEC_ITR_ICFT_DEFAULT = 200;
constexpr uint32_t FEC_ITR_ICTT_DEFAULT = 1000;

// --- interrupt events
constexpr uint32_t FEC_ENET_MII = 1u << 23;
constexpr uint32_t FEC_ENET_RXF_0 = 1u << 25, FEC_ENET_RXF_1 = 1u << 1, FEC_ENET_RXF_2 = 1u << 5;
constexpr uint32_t FEC_ENET_TXF_0 = 1u << 27, FEC_ENET_TXF_1 = 1u << 3, FEC_ENET_TXF_2 = 1u << 7;
constexpr uint32_t FEC_ENET_RXF = FEC_ENET_RXF_0 | FEC_ENET_RXF_1 | FEC_ENET_RXF_2;
constexpr uint32_t FEC_ENET_TXF = FEC_ENET_TXF_0 | FEC_ENET_TXF_1 | FEC_ENET_TXF_2;
constexpr uint32_t FEC_ENET_RXF_GET(int q) { return q == 0 ? FEC_ENET_RXF_0 : q == 1 ? FEC_ENET_RXF_1 : FEC_ENET_RXF_2; }
constexpr uint32_t FEC_DEFAULT_IMASK = FEC_ENET_TXF | FEC_ENET_RXF;
constexpr uint32_t FEC_RX_DISABLED_IMASK = FEC_DEFAULT_IMASK & ~FEC_ENET_RXF;

// --- buffer descriptors (little-endian ARM layout)
constexpr uint32_t BD_DATLEN = 0, BD_SC = 2, BD_BUFADDR = 4;                    // struct bufdesc
constexpr uint32_t BD_ESC = 8, BD_PROT = 12, BD_BDU = 16, BD_TS = 20;           // struct bufdesc_ex
constexpr uint32_t SIZEOF_BUFDESC = 8, SIZEOF_BUFDESC_EX = 32;
constexpr uint16_t BD_SC_WRAP = 0x2000;
constexpr uint16_t BD_ENET_RX_EMPTY = 0x8000, BD_ENET_RX_WRAP = 0x2000, BD_ENET_RX_INTR = 0x1000,
                   BD_ENET_RX_LAST = 0x0800, BD_ENET_RX_FIRST = 0x0400, BD_ENET_RX_MISS = 0x0100,
                   BD_ENET_RX_LG = 0x0020, BD_ENET_RX_NO = 0x0010, BD_ENET_RX_SH = 0x0008,
                   BD_ENET_RX_CR = 0x0004, BD_ENET_RX_OV = 0x0002, BD_ENET_RX_CL = 0x0001,
                   BD_ENET_RX_STATS = 0x013f;
constexpr uint32_t BD_ENET_RX_INT = 0x00800000, BD_ENET_RX_VLAN = 0x00000004, BD_ENET_RX_ICE = 0x20,
                   BD_ENET_RX_PCR = 0x10, FLAG_RX_CSUM_ERROR = BD_ENET_RX_ICE | BD_ENET_RX_PCR;
constexpr uint16_t BD_ENET_TX_READY = 0x8000, BD_ENET_TX_PAD = 0x4000, BD_ENET_TX_WRAP = 0x2000,
                   BD_ENET_TX_INTR = 0x1000, BD_ENET_TX_LAST = 0x0800, BD_ENET_TX_TC = 0x0400,
                   BD_ENET_TX_DEF = 0x0200, BD_ENET_TX_HB = 0x0100, BD_ENET_TX_LC = 0x0080,
                   BD_ENET_TX_RL = 0x0040, BD_ENET_TX_UN = 0x0002, BD_ENET_TX_CSL = 0x0001,
                   BD_ENET_TX_STATS = 0x0fff;
constexpr uint32_t BD_ENET_TX_INT = 0x40000000, BD_ENET_TX_TS = 0x20000000, BD_ENET_TX_PINS = 0x10000000,
                   BD_ENET_TX_IINS = 0x08000000;
constexpr uint32_t FEC_TX_BD_FTYPE(uint32_t q) { return (q & 0xf) << 20; }

// --- quirks (fec.h bit values)
constexpr uint32_t FEC_QUIRK_ENET_MAC = 1u << 0, FEC_QUIRK_SWAP_FRAME = 1u << 1, FEC_QUIRK_USE_GASKET = 1u << 2,
                   FEC_QUIRK_HAS_GBIT = 1u << 3, FEC_QUIRK_HAS_BUFDESC_EX = 1u << 4, FEC_QUIRK_HAS_CSUM = 1u << 5,
                   FEC_QUIRK_HAS_VLAN = 1u << 6, FEC_QUIRK_ERR006358 = 1u << 7, FEC_QUIRK_HAS_AVB = 1u << 8,
                   FEC_QUIRK_ERR007885 = 1u << 9, FEC_QUIRK_BUG_CAPTURE = 1u << 10,
                   FEC_QUIRK_SINGLE_MDIO = 1u << 11, FEC_QUIRK_HAS_RACC = 1u << 12,
                   FEC_QUIRK_HAS_COALESCE = 1u << 13, FEC_QUIRK_ERR006687 = 1u << 14,
                   FEC_QUIRK_MIB_CLEAR = 1u << 15, FEC_QUIRK_HAS_FRREG = 1u << 16,
                   FEC_QUIRK_CLEAR_SETUP_MII = 1u << 17, FEC_QUIRK_NO_HARD_RESET = 1u << 18,
                   FEC_QUIRK_HAS_MULTI_QUEUES = 1u << 19, FEC_QUIRK_HAS_EEE = 1u << 20,
                   FEC_QUIRK_DELAYED_CLKS_SUPPORT = 1u << 21, FEC_QUIRK_WAKEUP_FROM_INT2 = 1u << 22,
                   FEC_QUIRK_HAS_PMQOS = 1u << 23, FEC_QUIRK_HAS_MDIO_C45 = 1u << 24;

// fec_devinfo quirk sets by compatible (fec-driver.md §1.5). Returns false if unknown.
bool fec_quirks_for(const char* compatible, uint32_t* quirks);

// --- geometry
constexpr uint32_t PKT_MAXBUF_SIZE = 1984;
constexpr uint32_t OPT_FRAME_SIZE = PKT_MAXBUF_SIZE << 16;
constexpr uint32_t FEC_ENET_XDP_HEADROOM = 256;
constexpr uint32_t FEC_ENET_RX_FRSIZE = 4096 - FEC_ENET_XDP_HEADROOM - 320;  // 3520
constexpr uint32_t FEC_ENET_RX_PAGES = 256;
constexpr uint32_t RX_RING_SIZE = FEC_ENET_RX_PAGES;                         // FRPPG = 1
constexpr uint32_t TX_RING_SIZE = 1024;
constexpr uint32_t FEC_ENET_TX_FRSIZE = 2048;
constexpr uint32_t FEC_ENET_MAX_TX_QS = 3, FEC_ENET_MAX_RX_QS = 3;
constexpr uint32_t LEGACY_RX_FRSIZE = 2048, LEGACY_RX_RING_SIZE = 512;      // pre-page-pool fec.h
constexpr uint32_t COPYBREAK_DEFAULT = 256;
constexpr int FEC_MAX_TSO_SEGS = 100;
constexpr int FEC_MAX_SKB_DESCS = FEC_MAX_TSO_SEGS * 2 + 17;  // + MAX_SKB_FRAGS

// fec_enet_run_xdp result flags
constexpr uint32_t FEC_ENET_XDP_PASS = 0, FEC_ENET_XDP_CONSUMED = 1u << 0, FEC_ENET_XDP_TX = 1u << 1,
                   FEC_ENET_XDP_REDIR = 1u << 2;

// XDP statistics (fec_enet_priv_rx_q::stats)
enum { RX_XDP_REDIRECT = 0, RX_XDP_PASS, RX_XDP_DROP, RX_XDP_TX, RX_XDP_TX_ERRORS, TX_XDP_XMIT,
       TX_XDP_XMIT_ERRORS, XDP_STATS_TOTAL };

enum fec_txbuf_type { FEC_TXBUF_T_SKB, FEC_TXBUF_T_XDP_NDO, FEC_TXBUF_T_XDP_TX };

}  // namespace fecsim::firmware::fec
