// The i.MX ENET (FEC with enhanced descriptors and AVB rings) Ethernet MAC: register file, RX and
// TX uDMA engines with descriptor rings, RX/TX FIFOs, MIB counters, 802.3x flow control,
// interrupt coalescing and the MAC interrupt lines. docs/models/fec.md describes every register,
// parameter and known deviation from silicon.
//
// Timing: event-driven. The RX engine and the TX engine are one SC_METHOD each, woken by their
// own event at the next meaningful step (descriptor fetch + data DMA, write-back, wire start,
// end of frame), unless a TDAR write runs the step, or the board's core runs a wire start or an
// end of frame (tx_step_by_core); a third method raises delayed or coalesced interrupts. DMA is b_transport
// through `dma` with the memory model's annotated delay plus the engine's own step overheads.
#pragma once

#include "models/accounting.h"
#include "models/activity.h"
#include "models/fec/checksum.h"
#include "models/fec/coalescer.h"
#include "models/fec/descriptors.h"
#include "models/fec/mib.h"
#include "models/fec/reg_table.h"
#include "models/net/eth_port.h"
#include "models/net/mac_control.h"
#include "models/net/taken_early.h"
#include "models/sim_time.h"

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace fecsim {
class config_view;
}

namespace fecsim::fec {

// Register offsets (reference manual names; fec.h names in docs/models/fec.md).
enum enet_reg : uint32_t {
    EIR = 0x004, EIMR = 0x008, RDAR = 0x010, TDAR = 0x014, ECR = 0x024, MMFR = 0x040, MSCR = 0x044,
    MIBC = 0x064, RCR = 0x084, TCR = 0x0C4, PALR = 0x0E4, PAUR = 0x0E8, OPD = 0x0EC,
    TXIC0 = 0x0F0, TXIC1 = 0x0F4, TXIC2 = 0x0F8, RXIC0 = 0x100, RXIC1 = 0x104, RXIC2 = 0x108,
    IAUR = 0x118, IALR = 0x11C, GAUR = 0x120, GALR = 0x124, TFWR = 0x144,
    RDSR1 = 0x160, TDSR1 = 0x164, MRBR1 = 0x168, RDSR2 = 0x16C, TDSR2 = 0x170, MRBR2 = 0x174,
    RDSR = 0x180, TDSR = 0x184, MRBR = 0x188,
    RSFL = 0x190, RSEM = 0x194, RAEM = 0x198, RAFL = 0x19C, TSEM = 0x1A0, TAEM = 0x1A4, TAFL = 0x1A8,
    TIPG = 0x1AC, FTRL = 0x1B0, TACC = 0x1C0, RACC = 0x1C4, RCMR1 = 0x1C8, RCMR2 = 0x1CC,
    DMA_CFG1 = 0x1D8, DMA_CFG2 = 0x1DC, RDAR1 = 0x1E0, TDAR1 = 0x1E4, RDAR2 = 0x1E8, TDAR2 = 0x1EC,
    QOS = 0x1F0, LPI_SLEEP = 0x1F4, LPI_WAKE = 0x1F8,
    ATCR = 0x400, ATVR = 0x404, ATOFF = 0x408, ATPER = 0x40C, ATCOR = 0x410, ATINC = 0x414, ATSTMP = 0x418,
    TGSR = 0x604,
};

constexpr uint32_t enet_window_bytes = 0x800;

// EIR / EIMR bits
constexpr uint32_t FEC_ENET_HBERR = 1u << 31, FEC_ENET_BABR = 1u << 30, FEC_ENET_BABT = 1u << 29;
constexpr uint32_t FEC_ENET_GRA = 1u << 28, FEC_ENET_TXF = 1u << 27, FEC_ENET_TXB = 1u << 26;
constexpr uint32_t FEC_ENET_RXF = 1u << 25, FEC_ENET_RXB = 1u << 24, FEC_ENET_MII = 1u << 23;
constexpr uint32_t FEC_ENET_EBERR = 1u << 22, FEC_ENET_TS_AVAIL = 1u << 16, FEC_ENET_TS_TIMER = 1u << 15;
constexpr uint32_t FEC_ENET_RXB1 = 1u << 0, FEC_ENET_RXF1 = 1u << 1, FEC_ENET_TXB1 = 1u << 2, FEC_ENET_TXF1 = 1u << 3;
constexpr uint32_t FEC_ENET_RXB2 = 1u << 4, FEC_ENET_RXF2 = 1u << 5, FEC_ENET_TXB2 = 1u << 6, FEC_ENET_TXF2 = 1u << 7;

// ECR, RCR, TCR, RACC, RDAR/TDAR, RCMR, OPD fields
constexpr uint32_t ECR_RESET = 1u << 0, ECR_ETHEREN = 1u << 1, ECR_EN1588 = 1u << 4, ECR_SPEED = 1u << 5;
constexpr uint32_t ECR_DBSWP = 1u << 8;
constexpr uint32_t RCR_LOOP = 1u << 0, RCR_PROM = 1u << 3, RCR_BC_REJ = 1u << 4, RCR_FCE = 1u << 5;
constexpr uint32_t RCR_MAX_FL_SHIFT = 16, RCR_MAX_FL_MASK = 0x3FFF, RCR_GRS = 1u << 31;
constexpr uint32_t TCR_GTS = 1u << 0, TCR_FDEN = 1u << 2, TCR_TFC_PAUSE = 1u << 3, TCR_RFC_PAUSE = 1u << 4;
constexpr uint32_t TCR_ADDINS = 1u << 8, TCR_CRCFWD = 1u << 9;
constexpr uint32_t RACC_PADREM = 1u << 0, RACC_IPDIS = 1u << 1, RACC_PRODIS = 1u << 2;
constexpr uint32_t RACC_LINEDIS = 1u << 6, RACC_SHIFT16 = 1u << 7;
constexpr uint32_t DES_ACTIVE = 1u << 24;  // RDAR / TDAR
constexpr uint32_t RCMR_MATCHEN = 1u << 16;
constexpr uint32_t OPD_PAUSE_DUR_MASK = 0xFFFF;
constexpr uint32_t ATCR_CAPTURE = 1u << 11;

constexpr unsigned max_queues = 3, max_irq_lines = 3;

struct enet_params {
    // Set by the platform from the SoC description (not part of the `fec` config section).
    unsigned num_queues = max_queues;  // RX and TX rings (1..3)
    unsigned irq_lines = max_irq_lines; // MAC interrupt lines wired (1..3)
    // The model's own parameters (`fec` section, docs/models/fec.md).
    uint32_t rx_fifo_bytes = 0;        // RX FIFO capacity
    uint32_t tx_fifo_bytes = 0;        // TX FIFO capacity (bounds TX prefetch)
    unsigned tx_prefetch_frames = 0;   // frames fetched ahead while one is on the wire
    double desc_fetch_ns = 0;          // engine overhead before each descriptor read
    double data_setup_ns = 0;          // engine overhead before each buffer transfer
    double writeback_ns = 0;           // engine overhead before each descriptor write-back
    double rx_mac_latency_ns = 0;      // last bit at the pins -> frame ready in the RX FIFO
    double system_clock_mhz = 0;       // ENET system clock (coalescing timer with CLK_SEL=1)
    double mdio_clock_mhz = 0;         // clock MSCR divides for MDC (ipg clock)
};

// Reads the `fec` section of a validated configuration. Throws std::invalid_argument when the
// values are inconsistent (the schema checks types and ranges).
enet_params enet_params_from(const fecsim::config_view& fec_section);

struct enet_stats {
    uint64_t rx_frames = 0, rx_bytes = 0;            // written to memory (incl. FCS)
    uint64_t tx_frames = 0, tx_bytes = 0;            // put on the wire (incl. FCS, excl. pause)
    uint64_t rx_fifo_overflow_drops = 0;             // did not fit the RX FIFO (less the RAFL reserve)
    uint64_t rx_descriptor_waits = 0;                // times the FIFO head found no empty descriptor
    uint64_t rx_fifo_peak_bytes = 0;                 // highest RX FIFO level
    uint64_t rx_filtered = 0;                        // address filter, runts, RACC discards
    uint64_t rx_disabled_drops = 0;                  // arrived while ETHEREN = 0
    uint64_t pause_frames_sent = 0, pause_frames_received = 0;
    uint64_t dma_errors = 0;                         // bus errors (EBERR)
    uint64_t dma_transactions = 0;
    uint64_t tx_no_link_drops = 0;                   // transmitted with no wire attached
    // for the books (ledger): what entered each direction and the causes not counted above
    uint64_t rx_arrived = 0;                         // frames the wire delivered to the MAC
    uint64_t rx_pause_consumed = 0;                  // PAUSE frames the MAC acted on or discarded
    uint64_t rx_dma_error_drops = 0;                 // bus error before the frame was written
    uint64_t rx_reset_drops = 0, tx_reset_drops = 0; // in the FIFOs when ETHEREN cleared
    uint64_t tx_fetched = 0;                         // frames read from TX descriptors
    uint64_t rx_in_flight_start = 0, tx_in_flight_start = 0;
};

// The ENET is its own register target: the router's call reaches b_transport in one virtual
// call (a callback socket adds a second hop to every register access). Blocking and debug
// transport only; a non-blocking call is refused, DMI is not offered.
class enet : public sc_core::sc_module, public net::eth_sink, public deferred_step,
             private tlm::tlm_fw_transport_if<> {
public:
    tlm::tlm_target_socket<> regs;
    tlm_utils::simple_initiator_socket<enet> dma;
    sc_core::sc_out<bool> irq[max_irq_lines];

    // `board`: the record of the board the MAC is on (models/activity.h).
    enet(sc_core::sc_module_name name, const enet_params& p, activity& board = activity::shared());
    ~enet() override;

    // The link end this MAC transmits into; frames from the link arrive via frame_arrived.
    void attach_wire(net::eth_tx& tx) { wire_ = &tx; }
    void frame_arrived(net::frame_ptr f) override;
    // Takes a frame at its sending when what the MAC does with it at its arrival changes nothing
    // but counters (enabled, and a runt, or refused by the address filter and no PAUSE frame the
    // MAC acts on): it is counted when anything could see the counters, without a
    // delivery event (docs/models/fec.md, "Frames taken early").
    bool frame_arriving(net::frame_ptr& f, const sc_core::sc_time& at) override;
    net::frame_ptr give_back_last(const sc_core::sc_time& now) override;

    const enet_params& params() const { return p_; }
    const enet_stats& stats() const {
        settle();
        return stats_;
    }
    // The RX descriptor the DMA engine fills next on ring q, and whether it found it not empty
    // since the last RDAR write (the ring is full): the ring's occupancy, with the driver's index.
    uint64_t rx_next_descriptor(unsigned q) const { return rx_ptr_[q]; }
    bool rx_starved(unsigned q) const { return rx_starved_[q]; }
    uint32_t mib_counter(uint32_t offset) const {
        settle();
        return mib_.read(offset);
    }
    // Clears the model statistics (e.g. after warm-up); the MMIO-visible MIB is left alone.
    // Starts a measurement window: clears the model counters and remembers the MIB (which
    // software sees unchanged).
    void reset_stats();
    // The books of the receive path (wire -> memory) and of the transmit path (descriptors ->
    // wire) since the last reset_stats().
    ledger rx_ledger() const;
    ledger tx_ledger() const;
    // Writes mib.<NAME> (counted since reset_stats), rx_fifo_overflow_drops, pause_frames_sent,
    // ... into `out` (the platform passes the result's "dut" object).
    void report(nlohmann::json& out) const;

private:
    // ---- registers -------------------------------------------------------------------------
    void declare_registers();
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) override;
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override;
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) override;
    void write_ecr(uint32_t old);
    void write_rdar(unsigned ring, reg& r);
    void write_tdar(unsigned ring, reg& r);
    void write_ic(bool rx, unsigned ring, uint32_t v);
    void update_irq();
    void raise(uint32_t eir_bits);
    bool enabled() const { return regs_.get(ECR) & ECR_ETHEREN; }
    bd_format format() const { return (regs_.get(ECR) & ECR_EN1588) ? bd_format::enhanced : bd_format::legacy; }
    void reset_engines();

    // ---- DMA -------------------------------------------------------------------------------
    bool dma_access(tlm::tlm_command cmd, uint64_t addr, void* data, size_t len, sc_core::sc_time& delay);
    void bus_error(bool rx, unsigned ring, const sc_core::sc_time& at);

    // ---- receive ---------------------------------------------------------------------------
    struct rx_entry {
        net::frame_ptr f;
        unsigned ring = 0;
        uint16_t sc_flags = 0;  // MAC status (LG, CR, TR, BC, MC, MISS)
        std::optional<l3_info> l3;  // inspect() of the frame, when the MAC's RACC checks made it
    };
    struct rx_wb {              // a descriptor waiting for its write-back
        uint64_t addr;
        bd desc;
    };
    void mac_receive(net::frame_ptr f);
    void rx_fifo_push(net::frame_ptr f, uint16_t sc_flags, const std::optional<l3_info>& l3);
    enum class rx_step { written, wait, dropped };  // what became of the FIFO head
    void rx_method();
    void rx_start(sc_core::sc_time delay);
    rx_step rx_dma_frame(rx_entry& e, sc_core::sc_time& delay);
    rx_step rx_wait_for_descriptor(unsigned ring);
    size_t rx_in_flight() const { return rx_count_ - (rx_busy_ ? 1 : 0); }  // the busy head is written
    size_t tx_in_flight() const;
    unsigned classify(const net::frame& f);
    bool address_accepted(const net::frame& f, bool& miss);
    void receive(net::frame_ptr f);
    bool only_counted(const net::frame& f);
    static bool reads_or_sets_reception(uint32_t off, bool write);
    void take_arrivals(const sc_core::sc_time& now);
    void settle() const;
    void arrival_method();
    void handle_pause_frame(const net::frame& f);

    // ---- transmit --------------------------------------------------------------------------
    struct tx_entry {
        net::frame_ptr f;
        unsigned ring = 0;
        size_t bytes = 0;
        sc_core::sc_time ready, end;
        bool fcs_appended = false;  // the MAC appended the FCS (TC set, no CRCFWD)
        std::vector<rx_wb> bds;  // descriptors of the frame (capacity kept across reuse)
    };
    void tx_method();
    void tx_run(sc_core::sc_time at);
    void tx_wake(const sc_core::sc_time& delay);
    void tx_complete(tx_entry& e, sc_core::sc_time& delay);
    bool tx_fetch(sc_core::sc_time& delay);
    bool tx_fetch_ring(unsigned ring, tx_entry& e, sc_core::sc_time& delay);
    void tx_send(tx_entry& e, const sc_core::sc_time& at);
    void count_tx_started(const sc_core::sc_time& now);
    bool tx_may_fetch() const;
    size_t tx_waiting() const;
    void tx_schedule(const sc_core::sc_time& at);
    bool tx_step_by_core(const sc_core::sc_time& at, bool start);
    void run_deferred(const sc_core::sc_time& at) override;
    sc_core::sc_time undefer() {  // the step (start or end) left to the core, taken back from it
        const sc_core::sc_time at = deferred_at;
        board_->cancel(*this);
        return at;
    }
    void core_stops(const sc_core::sc_time& at) override { tx_wake(at - sim_time()); }
    sc_core::sc_time pause_duration(uint16_t quanta) const;  // at the wire's speed

    // ---- flow control, interrupts ------------------------------------------------------------
    void evaluate_flow_control();
    void fc_method();
    void send_pause(uint16_t quanta);
    void irq_method();
    void schedule_eir(uint32_t bits, const sc_core::sc_time& at);
    void frame_interrupt(bool rx, unsigned ring, const sc_core::sc_time& at);
    double coalesce_clock_mhz(uint32_t ic_reg) const;
    void count_mib_tx(const net::frame& f, bool pause);
    // `fcs_appended`: the MAC computed the FCS over these very bytes (no need to check it).
    mib_frame describe(const net::frame& f, bool fcs_appended = false) const;
    uint64_t mac_address() const { return uint64_t(regs_.get(PALR)) << 16 | (regs_.get(PAUR) >> 16); }

    enet_params p_;
    sc_core::sc_time desc_fetch_, data_setup_, writeback_, rx_mac_latency_;
    reg_table regs_{enet_window_bytes};
    mib mib_;
    mib::values mib_base_{};
    enet_stats stats_;
    net::eth_tx* wire_ = nullptr;
    tlm::tlm_generic_payload gp_;
    sc_core::sc_time access_delay_;  // annotated delay of the MMIO access being served
    // The time the ENET acts at: the annotated time of the register access being served (the
    // core does not sync before it), SystemC time in the engines.
    sc_core::sc_time now() const { return sim_time() + access_delay_; }
    bool irq_level_[max_irq_lines] = {};  // wanted by EIR & EIMR
    bool irq_state_[max_irq_lines] = {};  // driven on the ports
    sc_core::sc_time irq_due_;            // when irq_level_ takes effect

    // RX
    std::vector<rx_entry> rx_fifo_;  // circular, capacity fixed at construction
    size_t rx_head_ = 0, rx_count_ = 0, rx_level_ = 0;
    bool rx_busy_ = false;
    std::vector<rx_wb> rx_wb_;
    std::array<uint64_t, max_queues> rx_ptr_{};
    std::array<bool, max_queues> rx_halted_{}, rx_starved_{};
    std::vector<uint8_t> rx_scratch_;
    timed_event rx_ev_;
    // Frames taken at their sending (frame_arriving), in arrival order, received once anything
    // could see their counters: an access to a reception register, a statistics read, the next
    // frame. A register write that makes one of them more than counted (its address now
    // accepted, say) hands them all to arrival_ev_, which receives each at its arrival time.
    net::taken_early arriving_;
    bool arrivals_by_event_ = false;
    timed_event arrival_ev_;

    // TX
    std::vector<tx_entry> tx_q_;     // circular, capacity tx_prefetch_frames + 2
    size_t tx_head_ = 0, tx_count_ = 0, tx_level_ = 0;
    // Frames go onto the wire in queue order: the first tx_sent_ entries are on it, the rest wait.
    size_t tx_sent_ = 0;
    std::array<uint64_t, max_queues> tx_ptr_{};
    std::array<bool, max_queues> tx_halted_{};
    // Each ring's TDAR value, in the register table (fixed once declared): tx_fetch looks at
    // every ring's for every frame.
    std::array<const uint32_t*, max_queues> tdar_{};
    unsigned tx_rr_ = 0;
    net::pause_timer tx_pause_;      // PAUSE received from the partner
    double ifg_mbps_ = 0;            // line rate ifg_time_ was computed for
    sc_core::sc_time ifg_time_;      // the inter-frame gap at that rate
    bool gra_pending_ = false;
    timed_event tx_ev_;
    sc_core::sc_time tx_wake_at_;    // earliest pending notification of tx_ev_ (tx_wake)
    bool tx_wake_pending_ = false;
    activity* board_;                // the board's record: its core runs deferred wire starts
    // A frame started ahead of SystemC time (by the core, or in place) is counted (MIB,
    // tx_frames) when anything could see it started: at or after its start (happened_by).
    struct uncounted_start {
        bool pending = false;
        sc_core::sc_time at;
        mib_frame m;
        size_t bytes = 0;
    };
    uncounted_start tx_uncounted_;

    // flow control
    bool xoff_ = false;              // the partner was last sent XOFF
    sc_core::sc_time xoff_refresh_at_;
    timed_event fc_ev_;

    // address filter: hash of the last destination address (~0: none yet)
    uint64_t hash_dst_ = ~0ull;
    uint32_t hash_ = 0;

    // interrupts
    std::array<coalescer, max_queues> rx_ic_, tx_ic_;
    struct pending_irq { sc_core::sc_time at; uint32_t bits; };
    std::vector<pending_irq> pending_;
    timed_event irq_ev_;
};

}  // namespace fecsim::fec
