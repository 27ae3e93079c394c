#include "firmware/fec/fec_main.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fecsim::firmware {

using namespace fec;

namespace {
constexpr uint32_t rx_skb_info_bytes = 16;  // struct { struct page *page; int offset; }
constexpr uint32_t tx_buf_bytes = 16;       // struct fec_tx_buffer { void *buf_p; enum type; }
constexpr uint32_t queue_struct_bytes = 256;
}  // namespace

bool fec::fec_quirks_for(const char* compatible, uint32_t* quirks) {
    const std::string c = compatible;
    const uint32_t imx6sx = FEC_QUIRK_ENET_MAC | FEC_QUIRK_HAS_GBIT | FEC_QUIRK_HAS_BUFDESC_EX |
                            FEC_QUIRK_HAS_CSUM | FEC_QUIRK_HAS_VLAN | FEC_QUIRK_HAS_AVB | FEC_QUIRK_ERR007885 |
                            FEC_QUIRK_BUG_CAPTURE | FEC_QUIRK_HAS_RACC | FEC_QUIRK_HAS_COALESCE |
                            FEC_QUIRK_CLEAR_SETUP_MII | FEC_QUIRK_HAS_MULTI_QUEUES | FEC_QUIRK_HAS_MDIO_C45;
    if (c == "fsl,imx6sx-fec") *quirks = imx6sx;
    else if (c == "fsl,imx8mq-fec") *quirks = imx6sx | FEC_QUIRK_HAS_EEE | FEC_QUIRK_WAKEUP_FROM_INT2;
    else if (c == "fsl,imx8qm-fec") *quirks = imx6sx | FEC_QUIRK_DELAYED_CLKS_SUPPORT;
    else if (c == "fsl,imx6ul-fec") *quirks = imx6sx & ~(FEC_QUIRK_HAS_AVB | FEC_QUIRK_HAS_MULTI_QUEUES);
    else if (c == "fsl,imx6q-fec")
        *quirks = FEC_QUIRK_ENET_MAC | FEC_QUIRK_HAS_GBIT | FEC_QUIRK_HAS_BUFDESC_EX | FEC_QUIRK_HAS_CSUM |
                  FEC_QUIRK_HAS_VLAN | FEC_QUIRK_ERR006358 | FEC_QUIRK_HAS_RACC | FEC_QUIRK_CLEAR_SETUP_MII |
                  FEC_QUIRK_HAS_PMQOS | FEC_QUIRK_HAS_MDIO_C45;
    else return false;
    return true;
}

fec_enet_private::fec_enet_private(kernel& k, xdp_core& xdp, skb_allocator& skbs, netstack& stack, softnet& sn,
                                   const fec_hw_params& hw, const driver_params& drv, bpf_prog* prog)
    : net_device(k, hw.name, hw.num_tx_queues), k_(k), xdp_(xdp), skbs_(skbs), stack_(stack), softnet_(sn),
      dev_(k, hw.dma_coherent), hw_(hw), drv_(drv) {
    if (hw_.num_rx_queues < 1 || hw_.num_rx_queues > int(FEC_ENET_MAX_RX_QS) || hw_.num_tx_queues < 1 ||
        hw_.num_tx_queues > int(FEC_ENET_MAX_TX_QS))
        throw std::invalid_argument(name + ": 1..3 RX and TX queues");
    if ((hw_.num_rx_queues > 1 || hw_.num_tx_queues > 1) && !(hw_.quirks & FEC_QUIRK_HAS_MULTI_QUEUES))
        throw std::invalid_argument(name + ": several queues need FEC_QUIRK_HAS_MULTI_QUEUES");
    if (prog && drv_.xdp_mode == xdp_attach_mode::native) {
        if (drv_.rx_buffers == rx_buffer_mode::legacy)
            throw std::invalid_argument("the legacy RX path has no native XDP support (use driver.xdp_mode=generic)");
        if (hw_.quirks & FEC_QUIRK_SWAP_FRAME) throw std::invalid_argument(name + ": XDP refused on SWAP_FRAME SoCs");
        xdp_prog_ = prog;
    }
    weight = drv_.napi_budget;
}

// ---------------------------------------------------------------------------------------------
// probe / open / restart

void fec_enet_private::fec_probe() {
    cpu::scope s(k_.core, "fec_probe");
    // fec_probe clears bufdesc_ex when the ptp clock is missing.
    bufdesc_ex_ = (hw_.quirks & FEC_QUIRK_HAS_BUFDESC_EX) && hw_.ptp_clock;
    if (hw_.quirks & FEC_QUIRK_HAS_MULTI_QUEUES) {
        tx_align_ = 0;
        rx_align_ = 0x3f;
    }
    sim_fep_ = k_.kmalloc(1024);
    fec_enet_init();
    // ndev->xdp_features: NDO_XMIT target only while a program is attached.
    xdp_redirect_target = xdp_prog_ != nullptr;
}

// fec_enet_init: one coherent allocation for all RX rings then all TX rings; IMASK.
void fec_enet_private::fec_enet_init() {
    const uint32_t dsize = bufdesc_ex_ ? SIZEOF_BUFDESC_EX : SIZEOF_BUFDESC;
    const uint32_t dsize_log2 = bufdesc_ex_ ? 5 : 3;
    rx_ring_size_ = drv_.rx_ring_size > 0 ? uint32_t(drv_.rx_ring_size)
                    : drv_.rx_buffers == rx_buffer_mode::legacy ? LEGACY_RX_RING_SIZE : RX_RING_SIZE;
    const uint32_t tx_ring = uint32_t(drv_.tx_ring_size);
    const uint64_t bytes = uint64_t(dsize) * (rx_ring_size_ * hw_.num_rx_queues + tx_ring * hw_.num_tx_queues);
    dma_addr_t dma = 0;
    rings_ = k_.coherent.dma_alloc_coherent(bytes, &dma);
    addr_t cbd = rings_;
    rxq_.resize(hw_.num_rx_queues);
    txq_.resize(hw_.num_tx_queues);
    for (int i = 0; i < hw_.num_rx_queues; ++i) {
        auto& q = rxq_[i];
        q.id = i;
        q.sim = k_.kmalloc(queue_struct_bytes);
        q.bd = {i, cbd, cbd, cbd + dsize * (rx_ring_size_ - 1), cbd, rx_ring_size_, dsize, dsize_log2,
                hw_.regs + FEC_R_DES_ACTIVE(i)};
        cbd += uint64_t(dsize) * rx_ring_size_;
        q.xdp_rxq = {this, uint32_t(i), MEM_TYPE_PAGE_SHARED, 0};
    }
    for (int i = 0; i < hw_.num_tx_queues; ++i) {
        auto& q = txq_[i];
        q.id = i;
        q.sim = k_.kmalloc(queue_struct_bytes);
        q.bd = {i, cbd, cbd, cbd + dsize * (tx_ring - 1), cbd, tx_ring, dsize, dsize_log2,
                hw_.regs + FEC_X_DES_ACTIVE(i)};
        cbd += uint64_t(dsize) * tx_ring;
        q.tx_buf.assign(tx_ring, {});
        q.tx_stop_threshold = FEC_MAX_SKB_DESCS;
        q.tx_wake_threshold = FEC_MAX_SKB_DESCS + 2 * MAX_SKB_FRAGS;
        q.info.elem = tx_buf_bytes;
        for (uint64_t off = 0; off < uint64_t(tx_ring) * tx_buf_bytes; off += PAGE_SIZE)
            q.info.chunks.push_back(k_.pages.alloc_boot_page("the TX buffer table")->addr);
    }
    if (hw_.quirks & FEC_QUIRK_HAS_CSUM) features |= NETIF_F_IP_CSUM;  // the "hw accelerator"
    writel(FEC_RX_DISABLED_IMASK, FEC_IMASK);
}

void fec_enet_private::fec_enet_create_page_pool(fec_enet_priv_rx_q& rxq) {
    page_pool_params pp;
    pp.order = 0;
    pp.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV;
    pp.pool_size = rxq.bd.ring_size;
    pp.dev = &dev_;
    pp.dma_dir = xdp_prog_ ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE;
    pp.offset = FEC_ENET_XDP_HEADROOM;
    pp.max_len = FEC_ENET_RX_FRSIZE;
    pools_owned_.push_back(std::make_unique<page_pool>(k_, pp, int(pools_owned_.size())));
    rxq.pool = pools_owned_.back().get();
    xdp_.xdp_rxq_info_reg_mem_model(rxq.xdp_rxq, rxq.pool);
}

void fec_enet_private::fec_enet_alloc_rxq_buffers(fec_enet_priv_rx_q& rxq) {
    cpu::scope s(k_.core, "fec_enet_alloc_rxq_buffers");
    const uint32_t n = rxq.bd.ring_size;
    const bool legacy = drv_.rx_buffers == rx_buffer_mode::legacy;
    rxq.info.elem = legacy ? 8 : rx_skb_info_bytes;
    for (uint64_t off = 0; off < uint64_t(n) * rxq.info.elem; off += PAGE_SIZE)
        rxq.info.chunks.push_back(k_.pages.alloc_boot_page("the RX buffer table")->addr);
    addr_t bdp = rxq.bd.base;
    if (legacy) {
        rxq.rx_skbuff.assign(n, nullptr);
        for (uint32_t i = 0; i < n; ++i, bdp = nextdesc(bdp, rxq.bd)) {
            sk_buff* skb = skbs_.netdev_alloc_skb(LEGACY_RX_FRSIZE);
            if (!skb) throw memory_exhausted(memory_exhausted::pool::dram, name + ": out of memory filling the RX ring");
            fec_enet_new_rxbdp(bdp, skb);
            rxq.rx_skbuff[i] = skb;
            k_.core.write16(bdp + BD_SC, BD_ENET_RX_EMPTY);
            if (bufdesc_ex_) k_.core.write32(bdp + BD_ESC, BD_ENET_RX_INT);
        }
    } else {
        fec_enet_create_page_pool(rxq);
        rxq.rx_page.assign(n, nullptr);
        for (uint32_t i = 0; i < n; ++i, bdp = nextdesc(bdp, rxq.bd)) {
            page* pg = rxq.pool->page_pool_alloc_pages();
            if (!pg) throw memory_exhausted(memory_exhausted::pool::dram, name + ": out of memory filling the RX ring");
            k_.core.write32(bdp + BD_BUFADDR, uint32_t(rxq.pool->page_pool_get_dma_addr(pg) + FEC_ENET_XDP_HEADROOM));
            rxq.rx_page[i] = pg;
            k_.core.touch(rxq.info.at(i), rx_skb_info_bytes, true);
            k_.core.write16(bdp + BD_SC, BD_ENET_RX_EMPTY);
            if (bufdesc_ex_) k_.core.write32(bdp + BD_ESC, BD_ENET_RX_INT);
        }
    }
    bdp = prevdesc(bdp, rxq.bd);
    k_.core.write16(bdp + BD_SC, uint16_t(k_.core.read16(bdp + BD_SC) | BD_SC_WRAP));
}

void fec_enet_private::fec_enet_alloc_buffers() {
    for (auto& q : rxq_) fec_enet_alloc_rxq_buffers(q);
    // TX bounce buffers are only used when data & tx_align; MULTI_QUEUES SoCs have tx_align 0
    // and the model never bounces (see docs/firmware.md).
}

void fec_enet_private::fec_enet_open() {
    cpu::scope s(k_.core, "fec_enet_open");
    fec_enet_alloc_buffers();
    fec_restart();
    // napi_enable, phy_start (link assumed up), netif_tx_start_all_queues.
    for (int q = 0; q < num_tx_queues(); ++q) netif_tx_wake_queue(q);
}

// fec_enet_bd_init: RX BDs with a buffer get E, TX BDs are cleared, W on the last of each.
void fec_enet_private::fec_enet_bd_init() {
    for (auto& q : rxq_) {
        addr_t bdp = q.bd.base;
        for (uint32_t i = 0; i < q.bd.ring_size; ++i, bdp = nextdesc(bdp, q.bd))
            k_.core.write16(bdp + BD_SC, k_.core.read32(bdp + BD_BUFADDR) ? BD_ENET_RX_EMPTY : 0);
        bdp = prevdesc(bdp, q.bd);
        k_.core.write16(bdp + BD_SC, uint16_t(k_.core.read16(bdp + BD_SC) | BD_SC_WRAP));
        q.bd.cur = q.bd.base;
    }
    for (auto& q : txq_) {
        addr_t bdp = q.bd.base;
        for (uint32_t i = 0; i < q.bd.ring_size; ++i, bdp = nextdesc(bdp, q.bd)) {
            k_.core.write16(bdp + BD_SC, 0);
            k_.core.write32(bdp + BD_BUFADDR, 0);
            q.tx_buf[i] = {};
        }
        bdp = prevdesc(bdp, q.bd);
        k_.core.write16(bdp + BD_SC, uint16_t(k_.core.read16(bdp + BD_SC) | BD_SC_WRAP));
        q.dirty_tx = bdp;
        q.bd.cur = q.bd.base;
    }
}

void fec_enet_private::fec_enet_enable_ring() {
    for (int i = 0; i < hw_.num_rx_queues; ++i) {
        writel(uint32_t(rxq_[i].bd.dma), FEC_R_DES_START(i));
        writel(PKT_MAXBUF_SIZE, FEC_R_BUFF_SIZE(i));
        if (i) writel(RCMR_MATCHEN | RCMR_CMP(i), FEC_RCMR(i));
    }
    for (int i = 0; i < hw_.num_tx_queues; ++i) {
        writel(uint32_t(txq_[i].bd.dma), FEC_X_DES_START(i));
        if (i) writel(DMA_CLASS_EN | IDLE_SLOPE(i), FEC_DMA_CFG(i));
    }
}

uint32_t fec_enet_private::fec_enet_us_to_itr_clock(uint32_t us) const {
    return uint32_t(uint64_t(us) * uint64_t(hw_.ahb_clock_hz / 64000) / 1000);
}

void fec_enet_private::fec_enet_itr_coal_set() {
    // Must be greater than zero to avoid unpredictable behaviour: otherwise left disabled.
    if (!hw_.rx_coalesce_usecs || !hw_.rx_coalesce_frames || !hw_.tx_coalesce_usecs || !hw_.tx_coalesce_frames)
        return;
    const uint32_t rx_itr = FEC_ITR_EN | FEC_ITR_CLK_SEL | FEC_ITR_ICFT(hw_.rx_coalesce_frames) |
                            FEC_ITR_ICTT(fec_enet_us_to_itr_clock(hw_.rx_coalesce_usecs));
    const uint32_t tx_itr = FEC_ITR_EN | FEC_ITR_CLK_SEL | FEC_ITR_ICFT(hw_.tx_coalesce_frames) |
                            FEC_ITR_ICTT(fec_enet_us_to_itr_clock(hw_.tx_coalesce_usecs));
    writel(tx_itr, FEC_TXIC0);
    writel(rx_itr, FEC_RXIC0);
    if (hw_.quirks & FEC_QUIRK_HAS_MULTI_QUEUES) {
        writel(tx_itr, FEC_TXIC1);
        writel(rx_itr, FEC_RXIC1);
        writel(tx_itr, FEC_TXIC2);
        writel(rx_itr, FEC_RXIC2);
    }
}

// fec_restart (fec-driver.md §2 "Driver programming"). Left out: PTP cycle counter start,
// EEE/LPI, the multicast list (hash tables cleared), MDIO.
void fec_enet_private::fec_restart() {
    cpu::scope s(k_.core, "fec_restart");
    uint32_t rcntl = OPT_FRAME_SIZE | 0x04;
    uint32_t ecntl = FEC_ECR_ETHEREN;
    if (hw_.quirks & (FEC_QUIRK_HAS_MULTI_QUEUES | FEC_QUIRK_NO_HARD_RESET)) writel(0, FEC_ECNTRL);
    else writel(1, FEC_ECNTRL);
    writel(uint32_t(hw_.mac[0]) << 24 | uint32_t(hw_.mac[1]) << 16 | uint32_t(hw_.mac[2]) << 8 | hw_.mac[3], FEC_ADDR_LOW);
    writel(uint32_t(hw_.mac[4]) << 24 | uint32_t(hw_.mac[5]) << 16, FEC_ADDR_HIGH);
    writel(0xffffffff & ~FEC_ENET_MII, FEC_IEVENT);
    fec_enet_bd_init();
    fec_enet_enable_ring();
    if (hw_.full_duplex) {
        writel(0x04, FEC_X_CNTRL);
    } else {
        rcntl |= FEC_RCR_DRT;
        writel(0x0, FEC_X_CNTRL);
    }
    const uint32_t mii_speed = uint32_t((hw_.ipg_clock_hz + 4999999) / 5000000) - 1;
    const uint32_t holdtime = uint32_t((hw_.ipg_clock_hz + 99999999) / 100000000) - 1;
    writel(mii_speed << 1 | holdtime << 8, FEC_MII_SPEED);
    if (hw_.quirks & FEC_QUIRK_HAS_RACC) {
        uint32_t val = readl(FEC_RACC);
        val |= FEC_RACC_SHIFT16 | FEC_RACC_OPTIONS;  // RX checksum offload on (driver default)
        writel(val, FEC_RACC);
        writel(PKT_MAXBUF_SIZE, FEC_FTRL);
    }
    if (hw_.quirks & FEC_QUIRK_ENET_MAC) {
        rcntl |= FEC_RCR_NLC | FEC_ENET_FCE;  // length check + flow control (FCE redone below)
        if (hw_.rgmii) rcntl |= 1u << 6;
        else rcntl &= ~(1u << 8);
        if (hw_.speed_mbps == 1000) ecntl |= FEC_ECR_SPEED;
        else if (hw_.speed_mbps == 100) rcntl &= ~(1u << 9);
        else rcntl |= 1u << 9;
    }
    if (hw_.pause) {
        rcntl |= FEC_ENET_FCE;
        writel(FEC_ENET_RSEM_V, FEC_R_FIFO_RSEM);
        writel(FEC_ENET_RSFL_V, FEC_R_FIFO_RSFL);
        writel(FEC_ENET_RAEM_V, FEC_R_FIFO_RAEM);
        writel(FEC_ENET_RAFL_V, FEC_R_FIFO_RAFL);
        writel(FEC_ENET_OPD_V, FEC_OPD);
    } else {
        rcntl &= ~FEC_ENET_FCE;
    }
    writel(rcntl, FEC_R_CNTRL);
    writel(0, FEC_GRP_HASH_TABLE_HIGH);
    writel(0, FEC_GRP_HASH_TABLE_LOW);
    writel(0, FEC_HASH_TABLE_HIGH);
    writel(0, FEC_HASH_TABLE_LOW);
    if (hw_.quirks & FEC_QUIRK_ENET_MAC) {
        ecntl |= FEC_ECR_BYTESWP;
        writel(FEC_TXWMRK_STRFWD, FEC_X_WMRK);
    }
    if (bufdesc_ex_) ecntl |= FEC_ECR_EN1588;
    writel(0u << 31, FEC_MIB_CTRLSTAT);
    writel(ecntl, FEC_ECNTRL);
    for (auto& q : rxq_) {  // fec_enet_active_rxring
        k_.writel(0, q.bd.reg_desc_active);
        ++dstats_.rdar_writes;
    }
    writel(link_ ? FEC_DEFAULT_IMASK : 0, FEC_IMASK);
    if (hw_.quirks & FEC_QUIRK_HAS_COALESCE) fec_enet_itr_coal_set();
}

// ---------------------------------------------------------------------------------------------
// interrupt and NAPI

bool fec_enet_private::fec_enet_collect_events() {
    k_.exec(path::fec_enet_collect_events);
    uint32_t int_events = readl(FEC_IEVENT);
    int_events &= ~FEC_ENET_MII;
    writel(int_events, FEC_IEVENT);
    return int_events != 0;
}

bool fec_enet_private::fec_enet_interrupt() {
    cpu::scope s(k_.core, "fec_enet_interrupt");
    k_.exec(path::fec_enet_interrupt);
    ++dstats_.irqs;
    if (fec_enet_collect_events() && link_) {
        if (softnet_.napi_schedule_prep(*this)) {
            writel(0, FEC_IMASK);  // disable interrupts
            softnet_.__napi_schedule(*this);
        }
        return true;
    }
    ++dstats_.irq_none;
    return false;
}

int fec_enet_private::napi_poll(int budget) {
    cpu::scope s(k_.core, "fec_enet_rx_napi");
    ++dstats_.napi_polls;
    int done = 0;
    do {
        k_.exec(path::fec_enet_rx_napi);
        done += fec_enet_rx(budget - done);
        fec_enet_tx(budget);
    } while (done < budget && fec_enet_collect_events());
    // napi_complete_done, or __napi_poll when the budget is used up (HZ < 1000: everything)
    stack_.napi_gro_flush();
    if (done < budget) {
        softnet_.napi_complete_done(*this, done);
        writel(FEC_DEFAULT_IMASK, FEC_IMASK);
    }
    return done;
}

int fec_enet_private::fec_enet_rx(int budget) {
    k_.exec(path::fec_enet_rx);
    int done = 0;
    // Higher-index (AVB) queues first, each with the remaining budget.
    for (int i = hw_.num_rx_queues - 1; i >= 0; --i)
        done += drv_.rx_buffers == rx_buffer_mode::legacy ? fec_enet_rx_queue_legacy(budget - done, i)
                                                          : fec_enet_rx_queue(budget - done, i);
    return done;
}

// ---------------------------------------------------------------------------------------------
// RX, page-pool era (fec_enet_rx_queue, v6.6: sync, then refill, then XDP or skb)

bool fec_enet_private::fec_enet_rx_error(uint16_t status) {
    k_.exec(path::fec_enet_rx_error);
    stats.rx_errors++;
    if (status & BD_ENET_RX_OV) {
        stats.rx_fifo_errors++;
        return true;
    }
    if (status & (BD_ENET_RX_LG | BD_ENET_RX_SH | BD_ENET_RX_LAST)) stats.rx_length_errors++;
    if (status & BD_ENET_RX_CR) stats.rx_crc_errors++;
    if (status & (BD_ENET_RX_NO | BD_ENET_RX_CL)) stats.rx_frame_errors++;
    return true;
}

// fec_enet_update_cbd (<= v6.13): new page from the pool into rx_skb_info and cbd_bufaddr.
void fec_enet_private::fec_enet_update_cbd(fec_enet_priv_rx_q& rxq, addr_t bdp, uint32_t index) {
    cpu::scope s(k_.core, "fec_enet_update_cbd");
    k_.exec(path::fec_enet_update_cbd);
    page* new_page = rxq.pool->page_pool_alloc_pages();
    if (!new_page) throw std::runtime_error(name + ": page_pool_dev_alloc_pages failed (the v6.6 driver "
                                                   "dereferences NULL here): simulated DRAM exhausted");
    rxq.rx_page[index] = new_page;
    k_.core.touch(rxq.info.at(index), rx_skb_info_bytes, true);
    k_.core.write32(bdp + BD_BUFADDR, uint32_t(rxq.pool->page_pool_get_dma_addr(new_page) + FEC_ENET_XDP_HEADROOM));
}

// rx_processing_done: clear status, set E (W kept), enhanced fields, barrier, sc, RDAR.
void fec_enet_private::rx_processing_done(fec_enet_priv_rx_q& rxq, addr_t bdp, uint16_t status) {
    status &= ~BD_ENET_RX_STATS;
    status |= BD_ENET_RX_EMPTY;
    if (bufdesc_ex_) {
        k_.core.write32(bdp + BD_ESC, BD_ENET_RX_INT);
        k_.core.write32(bdp + BD_PROT, 0);
        k_.core.write32(bdp + BD_BDU, 0);
    }
    k_.wmb();  // descriptor updates before ownership
    k_.core.write16(bdp + BD_SC, status);
    k_.writel(0, rxq.bd.reg_desc_active);
    ++dstats_.rdar_writes;
}

int fec_enet_private::fec_enet_rx_queue(int budget, int queue_id) {
    cpu::scope s(k_.core, "fec_enet_rx_queue");
    k_.exec(path::fec_enet_rx_queue);
    auto& rxq = rxq_[queue_id];
    k_.core.touch(rxq.sim, 64, false);
    const bool racc = hw_.quirks & FEC_QUIRK_HAS_RACC;
    const uint32_t data_start = FEC_ENET_XDP_HEADROOM + (racc ? 2 : 0);
    const uint32_t sub_len = 4 + (racc ? 2 : 0);
    const int cpu = k_.smp_processor_id();
    bpf_prog* prog = xdp_prog_;
    uint32_t xdp_result = FEC_ENET_XDP_PASS;
    xdp_buff xdp;
    xdp_init_buff(xdp, PAGE_SIZE, &rxq.xdp_rxq);
    int pkt_received = 0;
    addr_t bdp = rxq.bd.cur;

    for (uint16_t status; !((status = k_.core.read16(bdp + BD_SC)) & BD_ENET_RX_EMPTY);) {
        if (pkt_received >= budget) break;
        pkt_received++;
        if (!fec_rx_descriptor_start(rxq, queue_id, bdp, status)) continue;
        stats.rx_packets++;
        const uint16_t pkt_len = k_.core.read16(bdp + BD_DATLEN);
        stats.rx_bytes += pkt_len;
        const uint32_t index = bd_index(bdp, rxq.bd);
        k_.core.touch(rxq.info.at(index), rx_skb_info_bytes, false);
        page* pg = rxq.rx_page[index];
        const uint32_t bufaddr = k_.core.read32(bdp + BD_BUFADDR);
        if (!drv_.skip_rx_sync) dev_.dma_sync_single_for_cpu(bufaddr, pkt_len, DMA_FROM_DEVICE);
        // prefetch(page_address(page)): the headroom line, which xdp_convert_buff_to_frame may
        // write later, starts filling now (non-blocking)
        k_.core.prefetch(pg->addr);
        fec_enet_update_cbd(rxq, bdp, index);

        if (prog) {
            xdp_prepare_buff(xdp, pg->addr, data_start, pkt_len - sub_len, false);
            const uint32_t ret = fec_enet_run_xdp(*prog, xdp, rxq, cpu);
            xdp_result |= ret;
            if (ret != FEC_ENET_XDP_PASS) {
                rx_processing_done(rxq, bdp, status);
                bdp = nextdesc(bdp, rxq.bd);
                continue;
            }
        }
        fec_enet_rx_skb(rxq, bdp, pg, data_start, pkt_len - sub_len);
        rx_processing_done(rxq, bdp, status);
        bdp = nextdesc(bdp, rxq.bd);
    }
    rxq.bd.cur = bdp;
    k_.core.touch(rxq.sim, 8, true);
    if (xdp_result & FEC_ENET_XDP_REDIR) xdp_.xdp_do_flush();
    if (drv_.tx_doorbell == tx_doorbell_mode::per_poll)
        for (auto& q : txq_)
            if (q.xdp_tx_pending) {
                q.xdp_tx_pending = false;
                fec_txq_trigger_xmit(q, drv_.err007885_xdp_tdar_check);
            }
    return pkt_received;
}

// The skb half of the RX loop (XDP_PASS or no program): build_skb on the page, recycle mark,
// eth_type_trans, checksum / VLAN status from the enhanced BD, napi_gro_receive.
void fec_enet_private::fec_enet_rx_skb(fec_enet_priv_rx_q& rxq, addr_t bdp, page* pg, uint32_t data_start,
                                       uint32_t len) {
    cpu::scope s(k_.core, "fec_enet_rx_skb");
    k_.exec(path::fec_enet_rx_skb);
    const bool no_recycle = drv_.rx_buffers == rx_buffer_mode::page_pool_no_recycle;
    if (no_recycle) rxq.pool->page_pool_release_page(pg);  // v6.1: the stack frees the page
    sk_buff* skb = skbs_.build_skb(pg->addr, PAGE_SIZE);
    if (!skb) {
        if (!no_recycle) rxq.pool->page_pool_recycle_direct(pg);
        else k_.pages.__free_pages(pg);
        stats.rx_dropped++;
        return;
    }
    skb_allocator::skb_reserve(skb, data_start);
    skb_allocator::skb_put(skb, len);
    if (!no_recycle) skb_allocator::skb_mark_for_recycle(skb);
    skb->protocol = stack_.eth_type_trans(skb, this);
    if (bufdesc_ex_) {
        (void)k_.core.read32(bdp + BD_ESC);  // VLAN tag status (NETIF_F_HW_VLAN_CTAG_RX)
        (void)k_.core.read32(bdp + BD_ESC);  // checksum status -> CHECKSUM_UNNECESSARY
    }
    skb->queue_mapping = uint16_t(rxq.id);
    stack_.napi_gro_receive(skb);
}

uint32_t fec_enet_private::fec_enet_run_xdp(bpf_prog& prog, xdp_buff& xdp, fec_enet_priv_rx_q& rxq, int cpu) {
    cpu::scope s(k_.core, "fec_enet_run_xdp");
    k_.exec(path::fec_enet_run_xdp);
    const uint32_t len = uint32_t(xdp.data_end - xdp.data);
    const xdp_action act = xdp_.bpf_prog_run_xdp(prog, xdp);
    // DMA sync for_device must cover the max length the CPU touched (adjust_tail/head).
    const uint32_t sync = std::max(uint32_t(xdp.data_end - xdp.data), len);
    switch (act) {
    case XDP_PASS:
        rxq.stats[RX_XDP_PASS]++;
        return FEC_ENET_XDP_PASS;
    case XDP_REDIRECT:
        rxq.stats[RX_XDP_REDIRECT]++;
        if (xdp_.xdp_do_redirect(this, xdp, prog) == 0) return FEC_ENET_XDP_REDIR;
        break;  // xdp_err: consumed, not counted as a drop
    case XDP_TX:
        rxq.stats[RX_XDP_TX]++;
        if (fec_enet_xdp_tx_xmit(cpu, xdp, sync) == 0) return FEC_ENET_XDP_TX;
        rxq.stats[RX_XDP_TX_ERRORS]++;
        break;
    case XDP_ABORTED:
        rxq.xdp_aborted++;
        [[fallthrough]];
    default:  // XDP_DROP and invalid actions
        rxq.stats[RX_XDP_DROP]++;
        break;
    }
    rxq.pool->page_pool_put_page(k_.pages.virt_to_page(xdp.data), int32_t(sync), true);
    return FEC_ENET_XDP_CONSUMED;
}

// ---------------------------------------------------------------------------------------------
// XDP_TX and ndo_xdp_xmit

int fec_enet_private::fec_enet_xdp_get_tx_queue(int cpu) const {
    int index = cpu < 0 ? 0 : cpu;
    while (index >= hw_.num_tx_queues) index -= hw_.num_tx_queues;
    return index;
}

int fec_enet_private::fec_enet_get_free_txdesc_num(const fec_enet_priv_tx_q& txq) const {
    const int64_t entries = ((int64_t(txq.dirty_tx) - int64_t(txq.bd.cur)) >> txq.bd.dsize_log2) - 1;
    return int(entries >= 0 ? entries : entries + txq.bd.ring_size);
}

// fec_enet_xdp_tx_xmit: one xmit-lock round trip per frame. v4 / sync_len convert the buffer
// to an xdp_frame first (V4 and V5 1/2 of the 2023 series); merged (v6.6) passes the buff.
int fec_enet_private::fec_enet_xdp_tx_xmit(int cpu, xdp_buff& xdp, uint32_t dma_sync_len) {
    cpu::scope s(k_.core, "fec_enet_xdp_tx_xmit");
    k_.exec(path::fec_enet_xdp_tx_xmit);
    const int queue = fec_enet_xdp_get_tx_queue(cpu);
    auto& txq = txq_[queue];
    addr_t xdpf = 0;
    if (drv_.tx_variant != xdp_tx_variant::merged) {
        xdpf = xdp_.xdp_convert_buff_to_frame(xdp);
        if (!xdpf) return -75;  // -EOVERFLOW
    }
    __netif_tx_lock(queue);
    txq_trans_cond_update(queue);
    const int ret = drv_.tx_variant == xdp_tx_variant::merged
                        ? fec_enet_txq_xmit_frame(txq, &xdp, 0, dma_sync_len, false)
                        : fec_enet_txq_xmit_frame(txq, nullptr, xdpf, dma_sync_len, false);
    __netif_tx_unlock(queue);
    return ret;
}

void fec_enet_private::fec_txq_trigger_xmit(fec_enet_priv_tx_q& txq, bool err007885) {
    k_.exec(path::fec_txq_trigger_xmit);
    if (err007885 && (hw_.quirks & FEC_QUIRK_ERR007885)) {
        bool idle = false;
        for (int i = 0; i < 4 && !idle; ++i) {
            ++dstats_.tdar_reads;
            idle = k_.readl(txq.bd.reg_desc_active) == 0;
        }
        if (!idle) return;
    }
    k_.writel(0, txq.bd.reg_desc_active);
    ++dstats_.tdar_writes;
}

int fec_enet_private::fec_enet_txq_xmit_frame(fec_enet_priv_tx_q& txq, xdp_buff* xdp, addr_t xdpf,
                                              uint32_t dma_sync_len, bool ndo_xmit) {
    cpu::scope s(k_.core, "fec_enet_txq_xmit_frame");
    k_.exec(path::fec_enet_txq_xmit_frame);
    k_.core.touch(txq.sim, 64, false);
    if (fec_enet_get_free_txdesc_num(txq) < MAX_SKB_FRAGS + 1) return -16;  // -EBUSY
    addr_t bdp = txq.bd.cur;
    uint16_t status = k_.core.read16(bdp + BD_SC);
    status &= ~BD_ENET_TX_STATS;
    const uint32_t index = bd_index(bdp, txq.bd);
    fec_tx_buffer& tb = txq.tx_buf[index];
    dma_addr_t dma = 0;
    uint32_t frame_len = 0;
    const uint32_t fault_len = drv_.tx_sync_bytes >= 0 ? uint32_t(drv_.tx_sync_bytes) : 0;
    const bool fault = drv_.tx_sync_bytes >= 0;
    if (ndo_xmit) {
        const xdp_frame f = xdp_.xdp_frame_read(xdpf);
        dma = dev_.dma_map_single(f.data, f.len, DMA_TO_DEVICE);
        frame_len = f.len;
        tb = {FEC_TXBUF_T_XDP_NDO, nullptr, xdpf, nullptr, true};
    } else if (xdp) {
        page* pg = k_.pages.virt_to_page(xdp->data);
        dma = pg->pp->page_pool_get_dma_addr(pg) + (xdp->data - xdp->data_hard_start);
        dev_.dma_sync_single_for_device(dma, fault ? fault_len : dma_sync_len, DMA_BIDIRECTIONAL);
        frame_len = uint32_t(xdp->data_end - xdp->data);
        tb = {FEC_TXBUF_T_XDP_TX, pg, 0, nullptr, false};
    } else {
        // V4 / V5 1/2: the DMA address comes from the frame (sizeof(*xdpf) + headroom).
        const xdp_frame f = xdp_.xdp_frame_read(xdpf);
        page* pg = k_.pages.virt_to_page(f.data);
        dma = pg->pp->page_pool_get_dma_addr(pg) + SIZEOF_XDP_FRAME + f.headroom;
        const uint32_t len = drv_.tx_variant == xdp_tx_variant::v4 ? f.len : dma_sync_len;
        dev_.dma_sync_single_for_device(dma, fault ? fault_len : len, DMA_BIDIRECTIONAL);
        frame_len = f.len;
        tb = {FEC_TXBUF_T_XDP_TX, nullptr, xdpf, nullptr, false};
    }
    k_.core.touch(txq.info.at(index), tx_buf_bytes, true);
    status |= BD_ENET_TX_INTR | BD_ENET_TX_LAST;
    k_.core.write32(bdp + BD_BUFADDR, uint32_t(dma));
    k_.core.write16(bdp + BD_DATLEN, uint16_t(frame_len));
    if (bufdesc_ex_) {
        uint32_t estatus = BD_ENET_TX_INT;
        if (hw_.quirks & FEC_QUIRK_HAS_AVB) estatus |= FEC_TX_BD_FTYPE(uint32_t(txq.bd.qid));
        k_.core.write32(bdp + BD_BDU, 0);
        k_.core.write32(bdp + BD_ESC, estatus);
    }
    k_.dma_wmb();
    status |= BD_ENET_TX_READY | BD_ENET_TX_TC;
    k_.core.write16(bdp + BD_SC, status);
    bdp = nextdesc(bdp, txq.bd);
    k_.dma_wmb();
    txq.bd.cur = bdp;
    k_.core.touch(txq.sim, 8, true);
    if (drv_.tx_doorbell == tx_doorbell_mode::per_frame) fec_txq_trigger_xmit(txq, drv_.err007885_xdp_tdar_check);
    else txq.xdp_tx_pending = true;
    return 0;
}

// fec_enet_xdp_xmit (ndo_xdp_xmit): one lock for the batch, map + BD per frame.
int fec_enet_private::ndo_xdp_xmit(int n, const addr_t* frames, uint32_t) {
    cpu::scope s(k_.core, "fec_enet_xdp_xmit");
    k_.exec(path::fec_enet_xdp_xmit);
    const int queue = fec_enet_xdp_get_tx_queue(k_.smp_processor_id());
    auto& txq = txq_[queue];
    __netif_tx_lock(queue);
    txq_trans_cond_update(queue);
    int sent = 0;
    for (int i = 0; i < n; ++i) {
        if (fec_enet_txq_xmit_frame(txq, nullptr, frames[i], 0, true) < 0) break;
        sent++;
    }
    __netif_tx_unlock(queue);
    if (drv_.tx_doorbell == tx_doorbell_mode::per_poll && sent > 0) {
        txq.xdp_tx_pending = false;
        fec_txq_trigger_xmit(txq, drv_.err007885_xdp_tdar_check);
    }
    return sent;
}

// ---------------------------------------------------------------------------------------------
// TX completion (fec_enet_tx_queue)

void fec_enet_private::fec_enet_tx(int budget) {
    k_.exec(path::fec_enet_tx);
    for (int i = hw_.num_tx_queues - 1; i >= 0; --i) fec_enet_tx_queue(i, budget);
}

void fec_enet_private::fec_enet_tx_queue(int queue_id, int budget) {
    cpu::scope s(k_.core, "fec_enet_tx_queue");
    k_.exec(path::fec_enet_tx_queue);
    auto& txq = txq_[queue_id];
    k_.core.touch(txq.sim, 64, false);
    addr_t bdp = nextdesc(txq.dirty_tx, txq.bd);
    while (bdp != txq.bd.cur) {
        k_.rmb();  // order the load of bd.cur and cbd_sc
        const uint16_t status = k_.core.read16(bdp + BD_SC);
        if (status & BD_ENET_TX_READY) break;
        const uint32_t index = bd_index(bdp, txq.bd);
        k_.exec(path::fec_enet_tx_queue_bd);
        k_.core.touch(txq.info.at(index), tx_buf_bytes, false);
        fec_tx_buffer& tb = txq.tx_buf[index];
        uint32_t frame_len = 0;
        bool skip = false;
        if (tb.type == FEC_TXBUF_T_SKB) {
            const uint32_t bufaddr = k_.core.read32(bdp + BD_BUFADDR);
            if (bufaddr && tb.mapped)
                dev_.dma_unmap_single(bufaddr, k_.core.read16(bdp + BD_DATLEN), DMA_TO_DEVICE);
            k_.core.write32(bdp + BD_BUFADDR, 0);
            skip = tb.skb == nullptr;
        } else {
            if (budget == 0) break;  // netpoll: page_pool must not be touched
            if (tb.type == FEC_TXBUF_T_XDP_NDO) {
                const uint32_t bufaddr = k_.core.read32(bdp + BD_BUFADDR);
                if (bufaddr) dev_.dma_unmap_single(bufaddr, k_.core.read16(bdp + BD_DATLEN), DMA_TO_DEVICE);
            }
            k_.core.write32(bdp + BD_BUFADDR, 0);
            if (!tb.pg && !tb.xdpf) {
                tb.type = FEC_TXBUF_T_SKB;
                skip = true;
            } else {
                frame_len = k_.core.read16(bdp + BD_DATLEN);
            }
        }
        if (!skip) {
            if (status & (BD_ENET_TX_HB | BD_ENET_TX_LC | BD_ENET_TX_RL | BD_ENET_TX_UN | BD_ENET_TX_CSL)) {
                stats.tx_errors++;
                if (status & BD_ENET_TX_HB) stats.tx_heartbeat_errors++;
                if (status & BD_ENET_TX_LC) stats.tx_window_errors++;
                if (status & BD_ENET_TX_RL) stats.tx_aborted_errors++;
                if (status & BD_ENET_TX_UN) stats.tx_fifo_errors++;
                if (status & BD_ENET_TX_CSL) stats.tx_carrier_errors++;
            } else {
                stats.tx_packets++;
                stats.tx_bytes += tb.type == FEC_TXBUF_T_SKB ? tb.skb->len : frame_len;
            }
            if (status & BD_ENET_TX_DEF) stats.collisions++;
            ++dstats_.tx_completions;
            if (tb.type == FEC_TXBUF_T_SKB) {
                skbs_.napi_consume_skb(tb.skb, budget);
            } else if (tb.type == FEC_TXBUF_T_XDP_NDO) {
                xdp_.xdp_return_frame_rx_napi(tb.xdpf);
            } else if (tb.pg) {
                // merged: dma_sync_size = 0 as XDP_TX has already synced DMA for_device
                tb.pg->pp->page_pool_put_page(tb.pg, 0, true);
            } else if (drv_.tx_variant == xdp_tx_variant::v4) {
                xdp_.xdp_return_frame_rx_napi(tb.xdpf);  // full max_len sync on recycle
            } else {
                // sync_len: page_pool_put_page(pp, virt_to_head_page(xdpf->data), 0, true)
                uint64_t data = k_.core.read64(tb.xdpf);
                page* pg = k_.pages.virt_to_page(data);
                pg->pp->page_pool_put_page(pg, 0, true);
            }
            tb = {};
            k_.core.touch(txq.info.at(index), tx_buf_bytes, true);
        }
        k_.wmb();
        txq.dirty_tx = bdp;
        bdp = nextdesc(bdp, txq.bd);
        if (netif_tx_queue_stopped(queue_id) && fec_enet_get_free_txdesc_num(txq) >= txq.tx_wake_threshold)
            netif_tx_wake_queue(queue_id);
    }
    // ERR006358: keep the transmitter going if frames are still queued and TDAR reads 0.
    if (bdp != txq.bd.cur) {
        ++dstats_.tdar_reads;
        if (k_.readl(txq.bd.reg_desc_active) == 0) {
            k_.writel(0, txq.bd.reg_desc_active);
            ++dstats_.tdar_writes;
            ++dstats_.err006358_kicks;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// legacy RX (copybreak era, <= v6.0)

void fec_enet_private::fec_enet_new_rxbdp(addr_t bdp, sk_buff* skb) {
    k_.exec(path::fec_enet_new_rxbdp);
    const uint32_t off = uint32_t(skb->data & rx_align_);
    if (off) skb_allocator::skb_reserve(skb, rx_align_ + 1 - off);
    const dma_addr_t dma = dev_.dma_map_single(skb->data, LEGACY_RX_FRSIZE - rx_align_, DMA_FROM_DEVICE);
    k_.core.write32(bdp + BD_BUFADDR, uint32_t(dma));
    ++dstats_.legacy_map;
}

bool fec_enet_private::fec_enet_copybreak(sk_buff** skb, addr_t bdp, uint32_t length) {
    cpu::scope s(k_.core, "fec_enet_copybreak");
    k_.exec(path::fec_enet_copybreak);
    if (length > drv_.rx_copybreak) return false;
    sk_buff* new_skb = skbs_.netdev_alloc_skb(length);
    if (!new_skb) return false;
    const uint32_t bufaddr = k_.core.read32(bdp + BD_BUFADDR);
    if (!drv_.skip_rx_sync) dev_.dma_sync_single_for_cpu(bufaddr, LEGACY_RX_FRSIZE - rx_align_, DMA_FROM_DEVICE);
    k_.core.copy(new_skb->data, (*skb)->data, length);
    *skb = new_skb;
    return true;
}

// The start of every RX descriptor in both RX paths (§3.2 steps 2-3): clear this ring's RXF,
// and for a frame with an error bit (or without L) count it and re-arm the descriptor with its
// own buffer, without a DMA sync. Returns false when it did so (bdp then points past it).
bool fec_enet_private::fec_rx_descriptor_start(fec_enet_priv_rx_q& rxq, int queue_id, addr_t& bdp, uint16_t& status) {
    k_.exec(path::fec_enet_rx_queue_bd);
    ++dstats_.rx_frames;
    writel(FEC_ENET_RXF_GET(queue_id), FEC_IEVENT);
    status ^= BD_ENET_RX_LAST;
    if (!(status & (BD_ENET_RX_LG | BD_ENET_RX_SH | BD_ENET_RX_NO | BD_ENET_RX_CR | BD_ENET_RX_OV |
                    BD_ENET_RX_LAST | BD_ENET_RX_CL)))
        return true;
    fec_enet_rx_error(status);
    rx_processing_done(rxq, bdp, status);
    bdp = nextdesc(bdp, rxq.bd);
    return false;
}

int fec_enet_private::fec_enet_rx_queue_legacy(int budget, int queue_id) {
    cpu::scope s(k_.core, "fec_enet_rx_queue");
    k_.exec(path::fec_enet_rx_queue);
    auto& rxq = rxq_[queue_id];
    k_.core.touch(rxq.sim, 64, false);
    const bool racc = hw_.quirks & FEC_QUIRK_HAS_RACC;
    int pkt_received = 0;
    addr_t bdp = rxq.bd.cur;
    for (uint16_t status; !((status = k_.core.read16(bdp + BD_SC)) & BD_ENET_RX_EMPTY);) {
        if (pkt_received >= budget) break;
        pkt_received++;
        if (!fec_rx_descriptor_start(rxq, queue_id, bdp, status)) continue;
        stats.rx_packets++;
        const uint16_t pkt_len = k_.core.read16(bdp + BD_DATLEN);
        stats.rx_bytes += pkt_len - (racc ? 2 : 0);
        const uint32_t index = bd_index(bdp, rxq.bd);
        k_.core.touch(rxq.info.at(index), 8, false);
        sk_buff* skb = rxq.rx_skbuff[index];
        const bool is_copybreak = fec_enet_copybreak(&skb, bdp, pkt_len - 4u);
        sk_buff* new_skb = nullptr;
        if (!is_copybreak) {
            new_skb = skbs_.netdev_alloc_skb(LEGACY_RX_FRSIZE);
            if (!new_skb) {
                stats.rx_dropped++;
                rx_processing_done(rxq, bdp, status);
                bdp = nextdesc(bdp, rxq.bd);
                continue;
            }
            dev_.dma_unmap_single(k_.core.read32(bdp + BD_BUFADDR), LEGACY_RX_FRSIZE - rx_align_, DMA_FROM_DEVICE);
        } else {
            ++dstats_.legacy_copybreak;
        }
        k_.core.prefetch(skb->data - NET_IP_ALIGN);
        skb_allocator::skb_put(skb, pkt_len - 4u);
        if (racc) skb_allocator::skb_pull(skb, 2);
        skb->protocol = stack_.eth_type_trans(skb, this);
        if (bufdesc_ex_) {
            (void)k_.core.read32(bdp + BD_ESC);
            (void)k_.core.read32(bdp + BD_ESC);
        }
        skb->queue_mapping = uint16_t(queue_id);
        stack_.napi_gro_receive(skb);
        if (is_copybreak) {
            dev_.dma_sync_single_for_device(k_.core.read32(bdp + BD_BUFADDR), LEGACY_RX_FRSIZE - rx_align_,
                                            DMA_FROM_DEVICE);
        } else {
            rxq.rx_skbuff[index] = new_skb;
            k_.core.touch(rxq.info.at(index), 8, true);
            fec_enet_new_rxbdp(bdp, new_skb);
        }
        rx_processing_done(rxq, bdp, status);
        bdp = nextdesc(bdp, rxq.bd);
    }
    rxq.bd.cur = bdp;
    return pkt_received;
}

// ---------------------------------------------------------------------------------------------
// stack-originated TX (fec_enet_start_xmit -> fec_enet_txq_submit_skb, non-TSO)

netdev_tx_t fec_enet_private::ndo_start_xmit(sk_buff* skb) {
    cpu::scope s(k_.core, "fec_enet_start_xmit");
    k_.exec(path::fec_enet_start_xmit);
    const int queue = skb->queue_mapping < txq_.size() ? skb->queue_mapping : 0;
    auto& txq = txq_[queue];
    const netdev_tx_t ret = fec_enet_txq_submit_skb(txq, skb);
    if (ret != NETDEV_TX_OK) return ret;
    if (fec_enet_get_free_txdesc_num(txq) <= txq.tx_stop_threshold) netif_tx_stop_queue(queue);
    return NETDEV_TX_OK;
}

// The ENET inserts both checksums over zeroed fields (its protocol checksum includes the
// pseudo-header): an skb the stack left the TCP/UDP checksum to has both cleared. Not cloned.
void fec_enet_private::fec_enet_clear_csum(sk_buff* skb) {
    if (skb->ip_summed != CHECKSUM_PARTIAL) return;
    const addr_t iph = skb->data + ETH_HLEN;
    if (skb->protocol == 0x0800 && k_.core.read8(iph) >> 4 == 4) k_.core.write16(iph + 10, 0);
    k_.core.write16(skb->head + skb->csum_start + skb->csum_offset, 0);
}

netdev_tx_t fec_enet_private::fec_enet_txq_submit_skb(fec_enet_priv_tx_q& txq, sk_buff* skb) {
    cpu::scope s(k_.core, "fec_enet_txq_submit_skb");
    k_.exec(skb->ip_summed == CHECKSUM_PARTIAL ? path::fec_enet_txq_submit_skb_csum : path::fec_enet_txq_submit_skb);
    k_.core.touch(txq.sim, 64, false);
    k_.core.touch(skb->sim, 64, false);
    const int nr_frags = skb->nr_frags;
    if (fec_enet_get_free_txdesc_num(txq) < nr_frags + 1) {
        skbs_.kfree_skb(skb);
        return NETDEV_TX_OK;  // dropped ("NOT enough BD for SG!")
    }
    fec_enet_clear_csum(skb);
    addr_t bdp = txq.bd.cur;
    const addr_t last_bdp_first = bdp;
    uint16_t status = k_.core.read16(bdp + BD_SC);
    status &= ~BD_ENET_TX_STATS;
    uint32_t buflen = skb->len;
    for (int i = 0; i < nr_frags; ++i) buflen -= skb->frags[i].len;  // linear part
    const uint32_t index = bd_index(bdp, txq.bd);
    // tx_align is 0 on MULTI_QUEUES SoCs; other SoCs would bounce unaligned data (not modelled).
    const dma_addr_t addr = dev_.dma_map_single(skb->data, buflen, DMA_TO_DEVICE);
    uint32_t estatus = 0;
    if (bufdesc_ex_) {
        estatus = BD_ENET_TX_INT;
        if (hw_.quirks & FEC_QUIRK_HAS_AVB) estatus |= FEC_TX_BD_FTYPE(uint32_t(txq.bd.qid));
        if (skb->ip_summed == CHECKSUM_PARTIAL) estatus |= BD_ENET_TX_PINS | BD_ENET_TX_IINS;
    }
    addr_t last_bdp = bdp;
    if (nr_frags) {
        // fec_enet_txq_submit_frag_skb: one BD per fragment, INTR|LAST on the final one.
        addr_t fb = bdp;
        for (int f = 0; f < nr_frags; ++f) {
            k_.exec(path::fec_enet_txq_submit_frag);
            fb = nextdesc(fb, txq.bd);
            uint16_t fs = uint16_t(k_.core.read16(fb + BD_SC) & ~BD_ENET_TX_STATS);
            fs |= BD_ENET_TX_TC | BD_ENET_TX_READY;
            if (f == nr_frags - 1) fs |= BD_ENET_TX_LAST | BD_ENET_TX_INTR;
            if (bufdesc_ex_) {
                k_.core.write32(fb + BD_ESC, estatus);
                k_.core.write32(fb + BD_BDU, 0);
            }
            const dma_addr_t fa = dev_.dma_map_single(skb->frags[f].addr, skb->frags[f].len, DMA_TO_DEVICE);
            k_.core.write32(fb + BD_BUFADDR, uint32_t(fa));
            k_.core.write16(fb + BD_DATLEN, uint16_t(skb->frags[f].len));
            k_.core.write16(fb + BD_SC, fs);
            auto& ftb = txq.tx_buf[bd_index(fb, txq.bd)];
            ftb = {FEC_TXBUF_T_SKB, nullptr, 0, nullptr, true};
        }
        last_bdp = fb;
    } else {
        status |= BD_ENET_TX_INTR | BD_ENET_TX_LAST;
    }
    if (bufdesc_ex_) {
        k_.core.write32(bdp + BD_BDU, 0);
        k_.core.write32(bdp + BD_ESC, estatus);
    }
    const uint32_t last_index = bd_index(last_bdp, txq.bd);
    txq.tx_buf[index] = {FEC_TXBUF_T_SKB, nullptr, 0, nullptr, true};
    txq.tx_buf[last_index].skb = skb;  // the skb is freed when its last BD completes
    txq.tx_buf[last_index].mapped = true;
    k_.core.touch(txq.info.at(last_index), tx_buf_bytes, true);
    k_.core.write32(bdp + BD_BUFADDR, uint32_t(addr));
    k_.core.write16(bdp + BD_DATLEN, uint16_t(buflen));
    k_.wmb();  // descriptor contents before the ready bit
    status |= BD_ENET_TX_READY | BD_ENET_TX_TC;
    k_.core.write16(last_bdp_first + BD_SC, status);
    // skb_tx_timestamp; the ready bit before bd.cur (a second wmb, as 6.1 compiles it)
    k_.wmb();
    txq.bd.cur = nextdesc(last_bdp, txq.bd);
    k_.core.touch(txq.sim, 8, true);
    // The doorbell, with the ERR007885 check the skb path has on quirk SoCs (6.1, lines 695-700).
    fec_txq_trigger_xmit(txq, true);
    return NETDEV_TX_OK;
}

// ---------------------------------------------------------------------------------------------

uint64_t fec_enet_private::xdp_stat(int which) const {
    uint64_t v = 0;
    for (auto& q : rxq_) v += q.stats[which];
    return v;
}

uint64_t fec_enet_private::xdp_aborted() const {
    uint64_t v = 0;
    for (auto& q : rxq_) v += q.xdp_aborted;
    return v;
}

void fec_enet_private::reset_stats() {
    stats = {};
    dstats_ = {};
    for (auto& q : rxq_) {
        std::fill(std::begin(q.stats), std::end(q.stats), 0);
        q.xdp_aborted = 0;
        if (q.pool) q.pool->reset_stats();
    }
}

std::vector<page_pool*> fec_enet_private::pools() const {
    std::vector<page_pool*> v;
    for (auto& p : pools_owned_) v.push_back(p.get());
    return v;
}

}  // namespace fecsim::firmware
