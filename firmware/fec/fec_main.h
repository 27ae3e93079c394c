// The port of fec_main.c's data path (v6.6-era, fec-driver.md §3-§8): probe/open, restart,
// the interrupt handler and NAPI poll, the page-pool RX queue with XDP, XDP_TX in the three
// historical variants, ndo_xdp_xmit, TX completion, the legacy copybreak RX path and the
// stack's ndo_start_xmit. Descriptors are accessed uncached through the core, registers as
// MMIO, buffers through the cache, and every function charges its code-path cost.
#pragma once

#include "firmware/fec/fec.h"
#include "firmware/kernel/netstack.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fecsim::firmware {

enum class xdp_tx_variant { v4, sync_len, merged };
enum class rx_buffer_mode { page_pool, page_pool_no_recycle, legacy };
enum class tx_doorbell_mode { per_frame, per_poll };
enum class xdp_attach_mode { native, generic };

// The driver knobs (config section `driver`, configs/schema/driver.json).
struct driver_params {
    xdp_attach_mode xdp_mode = xdp_attach_mode::native;
    xdp_tx_variant tx_variant = xdp_tx_variant::merged;
    rx_buffer_mode rx_buffers = rx_buffer_mode::page_pool;
    tx_doorbell_mode tx_doorbell = tx_doorbell_mode::per_frame;
    int napi_budget = 64;
    int rx_ring_size = 0;  // 0: the driver's RX_RING_SIZE for the buffer mode (256 / 512)
    int tx_ring_size = static_cast<int>(fec::TX_RING_SIZE);
    uint32_t rx_copybreak = fec::COPYBREAK_DEFAULT;
    bool err007885_xdp_tdar_check = false;  // Dec 2025 fix: read TDAR up to 4x before writing it
    bool skip_rx_sync = false;              // fault: no dma_sync_single_for_cpu on RX
    int tx_sync_bytes = -1;                 // fault: bytes synced at XDP_TX transmit (-1 = off)
};

// What the device tree, the clocks and the FEC model's config tell the driver.
struct fec_hw_params {
    std::string name = "eth0";
    addr_t regs = 0;                 // register base (device memory)
    uint32_t quirks = 0;             // FEC_QUIRK_* (fec_quirks_for(compatible))
    int num_rx_queues = 1, num_tx_queues = 1;
    bool ptp_clock = true;           // enhanced descriptors need a ptp clock (fec.descriptor_format)
    uint32_t rx_coalesce_frames = fec::FEC_ITR_ICFT_DEFAULT, rx_coalesce_usecs = fec::FEC_ITR_ICTT_DEFAULT;
    uint32_t tx_coalesce_frames = fec::FEC_ITR_ICFT_DEFAULT, tx_coalesce_usecs = fec::FEC_ITR_ICTT_DEFAULT;
    double ahb_clock_hz = 266e6;     // clk_ahb: coalescing timer unit is 64 of its cycles
    double ipg_clock_hz = 66e6;      // clk_ipg: MDIO clock divider
    uint8_t mac[6] = {0x00, 0x04, 0x9f, 0x00, 0x00, 0x01};
    int speed_mbps = 1000;
    bool full_duplex = true;
    bool pause = false;              // 802.3x flow control (FCE + FIFO thresholds + OPD)
    bool rgmii = true;
    bool dma_coherent = false;
};

struct fec_tx_buffer {
    fec::fec_txbuf_type type = fec::FEC_TXBUF_T_SKB;
    page* pg = nullptr;        // XDP_TX (merged)
    addr_t xdpf = 0;           // XDP_NDO, XDP_TX (v4 / sync_len)
    sk_buff* skb = nullptr;    // SKB
    bool mapped = false;       // SKB/NDO: bufaddr holds a streaming mapping
};

// A simulated array (entries spread over whole pages) so per-entry accesses cost cache lines.
struct sim_array {
    std::vector<addr_t> chunks;
    uint32_t elem = 0;
    addr_t at(size_t i) const { return chunks[(i * elem) / PAGE_SIZE] + (i * elem) % PAGE_SIZE; }
};

struct bufdesc_prop {
    int qid = 0;
    addr_t base = 0, cur = 0, last = 0;
    dma_addr_t dma = 0;
    uint32_t ring_size = 0, dsize = 0, dsize_log2 = 0;
    addr_t reg_desc_active = 0;
};

struct fec_enet_priv_rx_q {
    bufdesc_prop bd;
    std::vector<page*> rx_page;      // rx_skb_info[i].page (page_pool modes)
    std::vector<sk_buff*> rx_skbuff; // legacy mode
    sim_array info;                  // rx_skb_info / rx_skbuff in kernel memory
    page_pool* pool = nullptr;
    xdp_rxq_info xdp_rxq;
    uint64_t stats[fec::XDP_STATS_TOTAL] = {};
    uint64_t xdp_aborted = 0;        // also counted in RX_XDP_DROP, as the kernel does
    addr_t sim = 0;                  // the queue struct
    int id = 0;
};

struct fec_enet_priv_tx_q {
    bufdesc_prop bd;
    std::vector<fec_tx_buffer> tx_buf;
    sim_array info;                  // tx_buf[] in kernel memory
    addr_t dirty_tx = 0;
    int tx_stop_threshold = 0, tx_wake_threshold = 0;
    bool xdp_tx_pending = false;     // per_poll doorbell: a frame was queued this RX pass
    addr_t sim = 0;
    int id = 0;
};

struct fec_driver_stats {
    uint64_t irqs = 0, irq_none = 0, napi_polls = 0, rx_frames = 0, tx_completions = 0;
    uint64_t rdar_writes = 0, tdar_writes = 0, tdar_reads = 0, err006358_kicks = 0;
    uint64_t legacy_copybreak = 0, legacy_map = 0;
};

class fec_enet_private : public net_device, public napi_struct {
public:
    fec_enet_private(kernel& k, xdp_core& xdp, skb_allocator& skbs, netstack& stack, softnet& sn,
                     const fec_hw_params& hw, const driver_params& drv, bpf_prog* prog);

    // fec_probe (fec_enet_init: rings, IMASK) and fec_enet_open (buffers, restart, napi).
    void fec_probe();
    void fec_enet_open();
    void fec_restart();

    // Hard IRQ handler; true = IRQ_HANDLED.
    bool fec_enet_interrupt();
    // fec_enet_rx_napi
    int napi_poll(int budget) override;

    int ndo_xdp_xmit(int n, const addr_t* frames, uint32_t flags) override;  // fec_enet_xdp_xmit
    netdev_tx_t ndo_start_xmit(sk_buff* skb) override;                       // fec_enet_start_xmit

    // Counters.
    uint64_t xdp_stat(int which) const;
    uint64_t xdp_aborted() const;
    const fec_driver_stats& driver_stats() const { return dstats_; }
    void reset_stats();
    std::vector<page_pool*> pools() const;
    int num_rx_queues() const { return int(rxq_.size()); }
    const fec_enet_priv_rx_q& rx_queue(int i) const { return rxq_[i]; }
    const fec_enet_priv_tx_q& tx_queue(int i) const { return txq_[i]; }
    bool bufdesc_ex() const { return bufdesc_ex_; }
    uint32_t rx_ring_size() const { return rx_ring_size_; }

private:
    // ring helpers (fec_enet_get_nextdesc / _prevdesc / _get_bd_index / free_txdesc_num)
    addr_t nextdesc(addr_t bdp, const bufdesc_prop& bd) const { return bdp >= bd.last ? bd.base : bdp + bd.dsize; }
    addr_t prevdesc(addr_t bdp, const bufdesc_prop& bd) const { return bdp <= bd.base ? bd.last : bdp - bd.dsize; }
    uint32_t bd_index(addr_t bdp, const bufdesc_prop& bd) const { return static_cast<uint32_t>((bdp - bd.base) >> bd.dsize_log2); }
    int fec_enet_get_free_txdesc_num(const fec_enet_priv_tx_q& txq) const;
    void writel(uint32_t v, uint32_t off) { k_.writel(v, hw_.regs + off); }
    uint32_t readl(uint32_t off) { return k_.readl(hw_.regs + off); }

    void fec_enet_init();
    void fec_enet_alloc_buffers();
    void fec_enet_alloc_rxq_buffers(fec_enet_priv_rx_q& rxq);
    void fec_enet_create_page_pool(fec_enet_priv_rx_q& rxq);
    void fec_enet_bd_init();
    void fec_enet_enable_ring();
    void fec_enet_itr_coal_set();
    uint32_t fec_enet_us_to_itr_clock(uint32_t us) const;
    bool fec_enet_collect_events();

    int fec_enet_rx(int budget);
    int fec_enet_rx_queue(int budget, int queue_id);
    int fec_enet_rx_queue_legacy(int budget, int queue_id);
    void fec_enet_update_cbd(fec_enet_priv_rx_q& rxq, addr_t bdp, uint32_t index);
    void rx_processing_done(fec_enet_priv_rx_q& rxq, addr_t bdp, uint16_t status);
    bool fec_rx_descriptor_start(fec_enet_priv_rx_q& rxq, int queue_id, addr_t& bdp, uint16_t& status);
    bool fec_enet_rx_error(uint16_t status);
    void fec_enet_rx_skb(fec_enet_priv_rx_q& rxq, addr_t bdp, page* pg, uint32_t data_start, uint32_t len);
    uint32_t fec_enet_run_xdp(bpf_prog& prog, xdp_buff& xdp, fec_enet_priv_rx_q& rxq, int cpu);
    int fec_enet_xdp_get_tx_queue(int cpu) const;
    int fec_enet_xdp_tx_xmit(int cpu, xdp_buff& xdp, uint32_t dma_sync_len);
    int fec_enet_txq_xmit_frame(fec_enet_priv_tx_q& txq, xdp_buff* xdp, addr_t xdpf, uint32_t dma_sync_len, bool ndo_xmit);
    // The TDAR doorbell; `err007885`: on quirk SoCs read TDAR up to 4 times first and write it
    // only when a read returns 0 (the skb path always, the XDP path with the Dec 2025 fix).
    void fec_txq_trigger_xmit(fec_enet_priv_tx_q& txq, bool err007885);
    bool fec_enet_copybreak(sk_buff** skb, addr_t bdp, uint32_t length);
    void fec_enet_new_rxbdp(addr_t bdp, sk_buff* skb);

    void fec_enet_tx(int budget);
    void fec_enet_tx_queue(int queue_id, int budget);
    netdev_tx_t fec_enet_txq_submit_skb(fec_enet_priv_tx_q& txq, sk_buff* skb);
    void fec_enet_clear_csum(sk_buff* skb);

    kernel& k_;
    xdp_core& xdp_;
    skb_allocator& skbs_;
    netstack& stack_;
    softnet& softnet_;
    dma_device dev_;
    fec_hw_params hw_;
    driver_params drv_;
    bpf_prog* xdp_prog_ = nullptr;  // native mode only
    bool bufdesc_ex_ = false;
    bool link_ = true;
    uint32_t rx_align_ = 0xf, tx_align_ = 0xf;
    uint32_t rx_ring_size_ = 0;
    addr_t rings_ = 0;
    addr_t sim_fep_ = 0;
    std::vector<fec_enet_priv_rx_q> rxq_;
    std::vector<fec_enet_priv_tx_q> txq_;
    std::vector<std::unique_ptr<page_pool>> pools_owned_;
    fec_driver_stats dstats_;
};

}  // namespace fecsim::firmware
