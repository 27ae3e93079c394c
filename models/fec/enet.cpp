// sc_spawn registers the engine methods without SC_HAS_PROCESS (SystemC 2.3 and 3.0 alike).
#include "models/fec/enet.h"

#include "models/fec/checksum.h"
#include "models/net/mac_control.h"
#include "models/sim_stats.h"
#include "models/sim_time.h"
#include "config/config.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fecsim::fec {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;

namespace {
// IEEE 802.3 facts (not tunables).
constexpr uint16_t ethertype_vlan = 0x8100;
constexpr size_t min_payload_frame = net::min_frame_bytes - net::fcs_bytes;  // padding target
// RSEM: section-empty threshold in 64-bit words (b7..0) and STAT_SECTION_EMPTY in frames (b20..16).
constexpr uint32_t RSEM_WORDS_MASK = 0xFF, RSEM_FRAMES_SHIFT = 16, RSEM_FRAMES_MASK = 0x1F;
constexpr uint32_t RAFL_WORDS_MASK = 0xFF;
constexpr size_t fifo_word_bytes = 8;
// RGMII/GMII transmit clock: 125 MHz at 1 Gbit/s (8 bits per clock), 25 / 2.5 MHz (4 bits) below.
double mac_tx_clock_mhz(double speed_mbps) { return speed_mbps >= 1000 ? speed_mbps / 8 : speed_mbps / 4; }
// Largest frame the TX uDMA assembles (QEMU's ENET_MAX_FRAME_SIZE): beyond it BABT is raised.
constexpr size_t max_tx_frame_bytes = 16384;
constexpr size_t max_rx_frame_bytes = 16384;  // FTRL is 14 bits
// MDIO frame: 32-bit preamble + 32-bit frame, one bit per MDC cycle.
constexpr unsigned mdio_frame_bits = 64;
constexpr uint32_t MSCR_MII_SPEED_SHIFT = 1, MSCR_MII_SPEED_MASK = 0x3F;
constexpr uint32_t MMFR_OP_SHIFT = 28, MMFR_OP_READ = 2;

// EIR bits per ring: frame done / buffer done.
constexpr uint32_t rxf_bit[max_queues] = {FEC_ENET_RXF, FEC_ENET_RXF1, FEC_ENET_RXF2};
constexpr uint32_t rxb_bit[max_queues] = {FEC_ENET_RXB, FEC_ENET_RXB1, FEC_ENET_RXB2};
constexpr uint32_t txf_bit[max_queues] = {FEC_ENET_TXF, FEC_ENET_TXF1, FEC_ENET_TXF2};
constexpr uint32_t txb_bit[max_queues] = {FEC_ENET_TXB, FEC_ENET_TXB1, FEC_ENET_TXB2};
// Interrupt line of each EIR bit: ring 1 and ring 2 events on lines 1 and 2, the rest on 0.
constexpr uint32_t line_bits[max_irq_lines] = {~0xFFu, 0x0Fu, 0xF0u};

constexpr uint32_t rdar_off[max_queues] = {RDAR, RDAR1, RDAR2};
constexpr uint32_t tdar_off[max_queues] = {TDAR, TDAR1, TDAR2};
constexpr uint32_t rdsr_off[max_queues] = {RDSR, RDSR1, RDSR2};
constexpr uint32_t tdsr_off[max_queues] = {TDSR, TDSR1, TDSR2};
constexpr uint32_t mrbr_off[max_queues] = {MRBR, MRBR1, MRBR2};
constexpr uint32_t rxic_off[max_queues] = {RXIC0, RXIC1, RXIC2};
constexpr uint32_t txic_off[max_queues] = {TXIC0, TXIC1, TXIC2};

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
// Index into a circular queue of n slots for i < 2n (head + offset): no division per frame.
size_t wrap(size_t i, size_t n) { return i < n ? i : i - n; }
uint32_t ns32(const sc_time& t) { return uint32_t(uint64_t(t.to_seconds() * 1e9 + 0.5)); }
}  // namespace

enet_params enet_params_from(const config_view& v) {
    enet_params p;
    p.rx_fifo_bytes = uint32_t(v.integer("rx_fifo_bytes"));
    p.tx_fifo_bytes = uint32_t(v.integer("tx_fifo_bytes"));
    p.tx_prefetch_frames = unsigned(v.integer("tx_prefetch_frames"));
    p.desc_fetch_ns = v.number("dma.desc_fetch_ns");
    p.data_setup_ns = v.number("dma.data_setup_ns");
    p.writeback_ns = v.number("dma.writeback_ns");
    p.rx_mac_latency_ns = v.number("rx_mac_latency_ns");
    p.system_clock_mhz = v.number("system_clock_mhz");
    p.mdio_clock_mhz = v.number("mdio_clock_mhz");
    return p;
}

enet::enet(sc_core::sc_module_name name, const enet_params& p, activity& board)
    : sc_module(name), regs("regs"), dma("dma"), p_(p), desc_fetch_(p.desc_fetch_ns, SC_NS),
      data_setup_(p.data_setup_ns, SC_NS), writeback_(p.writeback_ns, SC_NS),
      rx_mac_latency_(p.rx_mac_latency_ns, SC_NS), board_(&board) {
    if (p.num_queues < 1 || p.num_queues > max_queues) throw std::invalid_argument("enet: num_queues must be 1..3");
    if (p.irq_lines < 1 || p.irq_lines > max_irq_lines) throw std::invalid_argument("enet: irq_lines must be 1..3");
    if (p.rx_fifo_bytes < net::min_frame_bytes || p.tx_fifo_bytes < net::min_frame_bytes)
        throw std::invalid_argument("enet: FIFOs must hold at least one minimum frame");
    if (p.system_clock_mhz <= 0) throw std::invalid_argument("enet: system_clock_mhz must be > 0");
    if (p.desc_fetch_ns < 0 || p.data_setup_ns < 0 || p.writeback_ns < 0 || p.rx_mac_latency_ns < 0)
        throw std::invalid_argument("enet: DMA step overheads must be >= 0");

    regs.bind(*this);
    for (auto& line : irq) line.initialize(false);

    // Fixed-capacity queues: no allocation per frame in steady state.
    rx_fifo_.resize(p.rx_fifo_bytes / net::min_frame_bytes + 1);
    tx_q_.resize(p.tx_prefetch_frames + 2);
    rx_scratch_.resize(max_rx_frame_bytes + 2);
    rx_wb_.reserve(16);

    declare_registers();
    for (unsigned q = 0; q < max_queues; ++q) tdar_[q] = &regs_.at(tdar_off[q]).value;

    auto method = [this, &board](timed_event& ev, void (enet::*fn)(), const char* name) {
        ev.record_in(board);
        sc_core::sc_spawn_options o;
        o.spawn_method();
        o.set_sensitivity(&ev.event());
        o.dont_initialize();
        sc_core::sc_spawn([this, fn] { (this->*fn)(); }, name, &o);
    };
    method(rx_ev_, &enet::rx_method, "rx_method");
    method(tx_ev_, &enet::tx_method, "tx_method");
    method(irq_ev_, &enet::irq_method, "irq_method");
    method(fc_ev_, &enet::fc_method, "fc_method");
    method(arrival_ev_, &enet::arrival_method, "arrival_method");
}

enet::~enet() { board_->cancel(*this); }

// ------------------------------------------------------------------------------------------
// Registers
// ------------------------------------------------------------------------------------------

void enet::declare_registers() {
    auto irq_update = [this](reg&, uint32_t, uint32_t) { update_irq(); };
    regs_.add("EIR", EIR, 0, reg_access::w1c).on_write = irq_update;
    regs_.add("EIMR", EIMR, 0).on_write = irq_update;
    regs_.add("ECR", ECR, 0x70000000, reg_access::rw, 0x00000FFF).on_write =
        [this](reg&, uint32_t old, uint32_t) { write_ecr(old); };
    auto& mmfr = regs_.add("MMFR", MMFR, 0);
    mmfr.on_write = [this](reg& r, uint32_t, uint32_t) {
        // No PHY is modelled: reads return all ones, as on an unconnected MDIO bus.
        if (((r.value >> MMFR_OP_SHIFT) & 3) == MMFR_OP_READ) r.value |= 0xFFFF;
        const uint32_t div = (regs_.get(MSCR) >> MSCR_MII_SPEED_SHIFT) & MSCR_MII_SPEED_MASK;
        if (div == 0) return;  // MDC off: the transfer never completes
        const double ns = p_.mdio_clock_mhz > 0 ? mdio_frame_bits * (div + 1) * 2 * 1e3 / p_.mdio_clock_mhz : 0;
        schedule_eir(FEC_ENET_MII, now() + sc_time(ns, SC_NS));
    };
    regs_.add("MSCR", MSCR, 0, reg_access::rw, 0x7FE);
    auto& mibc = regs_.add("MIBC", MIBC, MIBC_DIS | MIBC_IDLE, reg_access::rw, MIBC_DIS | MIBC_CLEAR);
    mibc.on_read = [this](const reg&) { return mib_.control(); };
    mibc.on_write = [this](reg& r, uint32_t, uint32_t) { mib_.control(r.value); };
    regs_.add("RCR", RCR, 0x05EE0001, reg_access::rw, 0x7FFFFFFF).on_write = [this](reg&, uint32_t, uint32_t) {
        // With FCE a received PAUSE may hold a frame: a start left to the core goes back to the event.
        if (deferred_at != activity::never && (regs_.get(RCR) & RCR_FCE)) tx_wake(undefer() - sim_time());
        evaluate_flow_control();
    };
    auto& tcr = regs_.add("TCR", TCR, 0, reg_access::rw, 0x3EF);
    tcr.on_read = [this](const reg& r) {
        return r.value | (tx_pause_.paused(now()) ? TCR_RFC_PAUSE : 0);
    };
    tcr.on_write = [this](reg& r, uint32_t old, uint32_t) {
        if (r.value & TCR_TFC_PAUSE) {  // software-requested PAUSE, bit clears once sent
            send_pause(uint16_t(regs_.get(OPD) & OPD_PAUSE_DUR_MASK));
            r.value &= ~TCR_TFC_PAUSE;
        }
        if ((r.value ^ old) & TCR_GTS) {
            gra_pending_ = r.value & TCR_GTS;
            tx_wake(access_delay_);
        }
    };
    regs_.add("PALR", PALR, 0);
    regs_.add("PAUR", PAUR, net::ethertype_mac_control, reg_access::rw, 0xFFFF0000);
    regs_.add("OPD", OPD, uint32_t(net::mac_control_pause) << 16, reg_access::rw, OPD_PAUSE_DUR_MASK);
    for (unsigned q = 0; q < max_queues; ++q) {
        const std::string n = std::to_string(q);
        regs_.add("TXIC" + n, txic_off[q], 0, reg_access::rw, 0xCFF0FFFF).on_write =
            [this, q](reg& r, uint32_t, uint32_t) { write_ic(false, q, r.value); };
        regs_.add("RXIC" + n, rxic_off[q], 0, reg_access::rw, 0xCFF0FFFF).on_write =
            [this, q](reg& r, uint32_t, uint32_t) { write_ic(true, q, r.value); };
        const std::string s = q ? std::to_string(q) : "";
        // The write itself is the doorbell (the driver writes 0): mask 0, the callback sets the bit.
        regs_.add("RDAR" + s, rdar_off[q], 0, reg_access::rw, 0).on_write =
            [this, q](reg& r, uint32_t, uint32_t) { write_rdar(q, r); };
        regs_.add("TDAR" + s, tdar_off[q], 0, reg_access::rw, 0).on_write =
            [this, q](reg& r, uint32_t, uint32_t) { write_tdar(q, r); };
        regs_.add("RDSR" + s, rdsr_off[q], 0, reg_access::rw, 0xFFFFFFF8).on_write =
            [this, q](reg& r, uint32_t, uint32_t) { rx_ptr_[q] = r.value; };
        regs_.add("TDSR" + s, tdsr_off[q], 0, reg_access::rw, 0xFFFFFFF8).on_write =
            [this, q](reg& r, uint32_t, uint32_t) { tx_ptr_[q] = r.value; };
        regs_.add("MRBR" + s, mrbr_off[q], 0, reg_access::rw, 0x3FF0);
    }
    regs_.add("IAUR", IAUR, 0);
    regs_.add("IALR", IALR, 0);
    regs_.add("GAUR", GAUR, 0);
    regs_.add("GALR", GALR, 0);
    regs_.add("TFWR", TFWR, 0, reg_access::rw, 0x13F);
    regs_.add("RSFL", RSFL, 0, reg_access::rw, 0xFF);
    regs_.add("RSEM", RSEM, 0, reg_access::rw, 0x001F00FF).on_write = [this](reg&, uint32_t, uint32_t) {
        evaluate_flow_control();
    };
    regs_.add("RAEM", RAEM, 4, reg_access::rw, 0xFF);
    regs_.add("RAFL", RAFL, 4, reg_access::rw, 0xFF);
    regs_.add("TSEM", TSEM, 0, reg_access::rw, 0xFF);
    regs_.add("TAEM", TAEM, 4, reg_access::rw, 0xFF);
    regs_.add("TAFL", TAFL, 8, reg_access::rw, 0xFF);
    regs_.add("TIPG", TIPG, 12, reg_access::rw, 0x1F);
    regs_.add("FTRL", FTRL, 0x7FF, reg_access::rw, 0x3FFF);
    regs_.add("TACC", TACC, 0, reg_access::rw, 0x19);
    regs_.add("RACC", RACC, 0, reg_access::rw, 0xC7);
    regs_.add("RCMR1", RCMR1, 0, reg_access::rw, RCMR_MATCHEN | 0x7777);
    regs_.add("RCMR2", RCMR2, 0, reg_access::rw, RCMR_MATCHEN | 0x7777);
    regs_.add("DMA_CFG1", DMA_CFG1, 0, reg_access::rw, 0x3FFFF);
    regs_.add("DMA_CFG2", DMA_CFG2, 0, reg_access::rw, 0x3FFFF);
    regs_.add("QOS", QOS, 0, reg_access::rw, 0x1F);
    regs_.add("LPI_SLEEP", LPI_SLEEP, 0);
    regs_.add("LPI_WAKE", LPI_WAKE, 0);
    // 1588 timer: storage only; CAPTURE latches the simulated time in ns into ATVR.
    regs_.add("ATCR", ATCR, 0).on_write = [this](reg& r, uint32_t, uint32_t) {
        if (r.value & ATCR_CAPTURE) {
            regs_.set(ATVR, ns32(now()));
            r.value &= ~ATCR_CAPTURE;
        }
    };
    regs_.add("ATVR", ATVR, 0);
    regs_.add("ATOFF", ATOFF, 0);
    regs_.add("ATPER", ATPER, 1000000000);
    regs_.add("ATCOR", ATCOR, 0);
    regs_.add("ATINC", ATINC, 0);
    regs_.add("ATSTMP", ATSTMP, 0, reg_access::ro);
    regs_.add("TGSR", TGSR, 0, reg_access::w1c);
    for (unsigned c = 0; c < 4; ++c) {
        regs_.add("TCSR" + std::to_string(c), TGSR + 4 + 8 * c, 0);
        regs_.add("TCCR" + std::to_string(c), TGSR + 8 + 8 * c, 0);
    }
    // The MIB block: values live in mib_, MMIO goes through it.
    for (uint32_t off = MIB_FIRST; off <= MIB_LAST; off += 4) {
        if (!mib::is_counter(off)) continue;
        auto& r = regs_.add(mib::name(off), off, 0);
        r.on_read = [this, off](const reg&) { return mib_.read(off); };
        r.on_write = [this, off](reg&, uint32_t, uint32_t v) { mib_.write(off, v); };
    }
}

void enet::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    if (gp.get_data_length() != 4 || gp.get_streaming_width() < 4 || gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);  // 32-bit accesses only
        return;
    }
    const uint64_t off = gp.get_address();
    uint32_t v = 0;
    bool ok = false;
    // A wire start left to the core and due by the access's time comes first (the core would
    // have synced for its event). The core runs it at its sync points; this is for an access
    // made before the next one. An end of frame due by then goes back to its event: the core's
    // time is before it, so it did not sync for it, and the event would run after the access.
    if (deferred_at <= sim_time() + delay) {
        if (only_if_first) tx_wake(undefer() - sim_time());
        else run_deferred(undefer());
    }
    access_delay_ = delay;  // every effect happens at the access's annotated time: now()
    const bool sees_arrivals = off < enet_window_bytes && reads_or_sets_reception(uint32_t(off), gp.is_write());
    if (sees_arrivals) {
        take_arrivals(now());
        count_tx_started(now());  // the MIB, and what it counts by (MIBC, RCR.MAX_FL)
    }
    if (off < enet_window_bytes) {
        if (gp.is_read()) {
            ok = regs_.read(uint32_t(off), v);
            if (ok) std::memcpy(gp.get_data_ptr(), &v, 4);
        } else if (gp.is_write()) {
            std::memcpy(&v, gp.get_data_ptr(), 4);
            ok = regs_.write(uint32_t(off), v);
            // Frames taken early arrive after the write: it may have made one more than counted.
            if (sees_arrivals && !arrivals_by_event_ &&
                arriving_.any_of([this](const net::frame& f) { return !only_counted(f); })) {
                arrivals_by_event_ = true;
                arrival_ev_.notify(arriving_.next_arrival() - sim_time());
            }
        } else {
            ok = true;  // TLM_IGNORE_COMMAND
        }
    }
    access_delay_ = SC_ZERO_TIME;
    gp.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

// Debug reads see register values as a read at this time would (the frames taken early that have
// arrived are counted first, as their delivery would have), with no other side effect; debug
// writes are refused.
unsigned enet::transport_dbg(tlm::tlm_generic_payload& gp) {
    if (!gp.is_read() || gp.get_data_length() != 4 || gp.get_address() >= enet_window_bytes) return 0;
    settle();
    uint32_t v = 0;
    if (!regs_.read(uint32_t(gp.get_address()), v)) return 0;
    std::memcpy(gp.get_data_ptr(), &v, 4);
    return 4;
}

tlm::tlm_sync_enum enet::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_time&) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
}

// No DMI to registers: the whole address space is refused, as a callback socket without a DMI
// callback answers.
bool enet::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
    dmi.allow_read_write();
    dmi.set_start_address(0);
    dmi.set_end_address(~sc_dt::uint64(0));
    return false;
}

void enet::write_ecr(uint32_t old) {
    const uint32_t v = regs_.get(ECR);
    if (v & ECR_RESET) {
        // The MIB keeps its counts across a MAC reset (the driver clears it through MIBC).
        regs_.reset([](const reg& r) { return r.offset == MIBC || (r.offset >= MIB_FIRST && r.offset <= MIB_LAST); });
        for (unsigned q = 0; q < max_queues; ++q) {
            rx_ic_[q].configure(0, p_.system_clock_mhz);
            tx_ic_[q].configure(0, p_.system_clock_mhz);
        }
        reset_engines();
        update_irq();
        return;
    }
    if ((old & ECR_ETHEREN) && !(v & ECR_ETHEREN)) reset_engines();
    if (!(old & ECR_ETHEREN) && (v & ECR_ETHEREN)) {
        for (unsigned q = 0; q < max_queues; ++q) {
            rx_ptr_[q] = regs_.get(rdsr_off[q]);
            tx_ptr_[q] = regs_.get(tdsr_off[q]);
        }
    }
}

// Stops both engines, drops what the FIFOs hold and rewinds the rings (ETHEREN cleared, RESET).
void enet::reset_engines() {
    stats_.rx_reset_drops += rx_in_flight();
    stats_.tx_reset_drops += tx_waiting();
    for (size_t i = 0; i < rx_count_; ++i) rx_fifo_[wrap(rx_head_ + i, rx_fifo_.size())].f.reset();
    rx_head_ = rx_count_ = rx_level_ = 0;
    rx_busy_ = false;
    rx_wb_.clear();
    rx_ev_.cancel();
    count_tx_started(now());  // started by now: only a start later than the core's time is left to it
    for (auto& e : tx_q_) e.f.reset();
    tx_head_ = tx_count_ = tx_level_ = tx_sent_ = 0;
    tx_ev_.cancel();
    tx_wake_pending_ = false;
    board_->cancel(*this);
    for (unsigned q = 0; q < max_queues; ++q) {
        regs_.set(rdar_off[q], 0);
        regs_.set(tdar_off[q], 0);
        rx_ptr_[q] = regs_.get(rdsr_off[q]);
        tx_ptr_[q] = regs_.get(tdsr_off[q]);
        rx_halted_[q] = tx_halted_[q] = rx_starved_[q] = false;
        rx_ic_[q].fired();
        tx_ic_[q].fired();
    }
    tx_pause_.stop(now());
    xoff_ = false;
    fc_ev_.cancel();
    gra_pending_ = false;
    pending_.clear();
    irq_ev_.cancel();
}

void enet::write_rdar(unsigned q, reg& r) {
    if (!enabled() || q >= p_.num_queues || rx_halted_[q]) {
        r.value = 0;
        return;
    }
    r.value = DES_ACTIVE;
    rx_starved_[q] = false;
    // A frame held for want of a descriptor is retried at the write's time (the uDMA's steps carry
    // that offset; the FIFO level changes at the write-back event); a busy uDMA retries after
    // its write-back.
    if (!rx_busy_ && rx_count_ > 0) rx_start(access_delay_);
}

void enet::write_tdar(unsigned q, reg& r) {
    if (!enabled() || q >= p_.num_queues || tx_halted_[q]) {
        r.value = 0;
        return;
    }
    r.value = DES_ACTIVE;
    // When the engine's next step of its own (end of a frame, a frame's start) comes after the
    // write's annotated time, nothing it holds or waits for changes before then: the write runs
    // the step at that time at once, without an event.
    if (!tx_wake_pending_ || tx_wake_at_ > now()) tx_run(now());
    else tx_wake(access_delay_);
}

double enet::coalesce_clock_mhz(uint32_t ic) const {
    if (ic & IC_CS) return p_.system_clock_mhz;
    return mac_tx_clock_mhz(wire_ ? wire_->speed_mbps() : 1000);
}

void enet::write_ic(bool rx, unsigned q, uint32_t v) {
    coalescer& c = rx ? rx_ic_[q] : tx_ic_[q];
    // Frames counted but not yet signalled interrupt at once when coalescing is switched off.
    if (c.pending() && !(v & IC_EN)) raise(rx ? rxf_bit[q] : txf_bit[q]);
    c.configure(v, coalesce_clock_mhz(v));
}

// Recomputes the lines from EIR & EIMR. The ports are driven by irq_method alone (a signal has
// one writer) at now(): one delta cycle later from an engine, at the annotated time of a
// register write (EIR, EIMR, ...).
void enet::update_irq() {
    const uint32_t active = regs_.get(EIR) & regs_.get(EIMR);
    bool changed = false;
    for (unsigned l = 0; l < max_irq_lines; ++l) irq_level_[l] = false;
    for (unsigned l = 0; l < max_irq_lines; ++l)
        if (active & line_bits[l]) irq_level_[std::min(l, p_.irq_lines - 1)] = true;
    for (unsigned l = 0; l < max_irq_lines; ++l) changed = changed || irq_level_[l] != irq_state_[l];
    if (!changed) return;
    irq_due_ = now();
    irq_ev_.notify(access_delay_);
}

void enet::raise(uint32_t bits) {
    regs_.set(EIR, regs_.get(EIR) | bits);
    update_irq();
}

void enet::schedule_eir(uint32_t bits, const sc_time& at) {
    if (at <= now()) {
        raise(bits);
        return;
    }
    pending_.push_back({at, bits});
    irq_ev_.notify(at - sim_time());  // an earlier notification replaces a later one
}

// The coalescing timer's deadline is notified when the timer is armed; while it stays armed,
// irq_ev_ keeps a notification no later than it (irq_method notifies it again whenever it runs
// before it), so the frames counted after the first notify nothing (SystemC would ignore it).
void enet::frame_interrupt(bool rx, unsigned q, const sc_time& at) {
    coalescer& c = rx ? rx_ic_[q] : tx_ic_[q];
    const bool was_armed = c.timer_armed();
    if (c.frame_done(at)) schedule_eir(rx ? rxf_bit[q] : txf_bit[q], at);
    else if (!was_armed && c.timer_armed()) irq_ev_.notify(std::max(c.deadline() - sim_time(), SC_ZERO_TIME));
}

// Raises delayed interrupts and expired coalescing timers.
void enet::irq_method() {
    sim_stats::count_event();
    const sc_time now = sim_time();
    uint32_t bits = 0;
    sc_time next = sc_core::SC_ZERO_TIME;
    bool have_next = false;
    auto consider = [&](const sc_time& t) {
        if (!have_next || t < next) next = t, have_next = true;
    };
    for (size_t i = 0; i < pending_.size();) {
        if (pending_[i].at <= now) {
            bits |= pending_[i].bits;
            pending_[i] = pending_.back();
            pending_.pop_back();
        } else {
            consider(pending_[i++].at);
        }
    }
    for (unsigned q = 0; q < max_queues; ++q) {
        for (bool rx : {true, false}) {
            coalescer& c = rx ? rx_ic_[q] : tx_ic_[q];
            if (!c.timer_armed()) continue;
            if (c.deadline() <= now) {
                bits |= rx ? rxf_bit[q] : txf_bit[q];
                c.fired();
            } else {
                consider(c.deadline());
            }
        }
    }
    if (bits) raise(bits);
    if (irq_due_ > now) {  // woken early for another reason: a register write's effect is later
        consider(irq_due_);
    } else {
        for (unsigned l = 0; l < max_irq_lines; ++l) {
            if (irq_level_[l] == irq_state_[l]) continue;
            irq_state_[l] = irq_level_[l];
            irq[l].write(irq_level_[l]);
        }
    }
    if (have_next) irq_ev_.notify(next - now);
}

// ------------------------------------------------------------------------------------------
// DMA
// ------------------------------------------------------------------------------------------

bool enet::dma_access(tlm::tlm_command cmd, uint64_t addr, void* data, size_t len, sc_time& delay) {
    gp_.set_command(cmd);
    gp_.set_address(addr);
    gp_.set_data_ptr(static_cast<unsigned char*>(data));
    gp_.set_data_length(unsigned(len));
    gp_.set_streaming_width(unsigned(len));
    // No byte enables (none from construction, and no target sets them); the DMI hint a target
    // leaves is not read.
    gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    dma->b_transport(gp_, delay);
    ++stats_.dma_transactions;
    return gp_.is_response_ok();
}

// A DMA bus error halts the ring until the MAC is re-enabled (ETHEREN 0 -> 1) and raises EBERR.
void enet::bus_error(bool rx, unsigned q, const sc_time& at) {
    ++stats_.dma_errors;
    if (rx) rx_halted_[q] = true, regs_.set(rdar_off[q], 0);
    else tx_halted_[q] = true, regs_.set(tdar_off[q], 0);
    schedule_eir(FEC_ENET_EBERR, at);
}

// ------------------------------------------------------------------------------------------
// Receive
// ------------------------------------------------------------------------------------------

mib_frame enet::describe(const net::frame& f, bool fcs_appended) const {
    mib_frame m;
    m.bytes = f.size();
    if (f.size() >= net::mac_bytes) {
        const uint8_t* d = f.data();
        m.broadcast = std::all_of(d, d + net::mac_bytes, [](uint8_t b) { return b == 0xFF; });
        m.multicast = !m.broadcast && (d[0] & 1);
    }
    m.fcs_ok = fcs_appended || net::fcs_ok(f);
    m.pause = net::pause_quanta(f) >= 0;
    return m;
}

void enet::frame_arrived(net::frame_ptr f) {
    take_arrivals(sim_time());
    receive(std::move(f));
}

bool enet::frame_arriving(net::frame_ptr& f, const sc_time& at) {
    take_arrivals(sim_time());
    if (arrivals_by_event_ || !only_counted(*f)) return false;
    arriving_.push(at, std::move(f));
    return true;
}

net::frame_ptr enet::give_back_last(const sc_time& now) {
    net::frame_ptr f = arriving_.give_back(now);
    if (arrivals_by_event_ && arriving_.empty()) {  // as the link cancels its delivery
        arrival_ev_.cancel();
        arrivals_by_event_ = false;
    }
    return f;
}

// What the MAC does with `f` if it arrived now changes nothing but counters (mac_receive: a runt,
// or not a PAUSE frame the MAC acts on and refused by the address filter). Only register writes
// change that (the core's, each of which takes the arrivals before it first). A disabled MAC
// takes nothing early: the driver's open, which enables it, is a posted write, and the frames
// arriving between the core's time and the write's would be received before it, not after.
bool enet::only_counted(const net::frame& f) {
    if (!enabled()) return false;
    if (f.size() < net::min_frame_bytes) return true;
    if ((regs_.get(RCR) & RCR_FCE) && net::pause_quanta(f) >= 0) return false;
    bool miss = false;
    return !address_accepted(f, miss);
}

// The registers a frame that is only counted reads or changes (mac_receive: its counters, the
// enable, the filter's settings and addresses): the only accesses that must see frames taken
// early that have arrived by their time, or may change what becomes of those still to arrive.
// Inline in b_transport, which asks for every register access.
__attribute__((always_inline)) inline bool enet::reads_or_sets_reception(uint32_t off, bool write) {
    if (off == MIBC || (off >= MIB_FIRST && off <= MIB_LAST)) return true;
    if (!write) return false;
    switch (off) {
    case ECR: case RCR: case PALR: case PAUR: case IAUR: case IALR: case GAUR: case GALR: return true;
    default: return false;
    }
}

// Receives the frames taken early that the link would have delivered by `now`, with the
// registers as they were then (every register write takes them first). Those handed to
// arrival_ev_ wait for it.
void enet::take_arrivals(const sc_time& now) {
    if (!arrivals_by_event_) arriving_.arrived_by(now, [this](net::frame_ptr f, const sc_time&) { receive(std::move(f)); });
}

// The statistics readers are const: receiving the frames the link would have delivered by now
// (happened_by) changes what they read exactly as its delivery would have.
void enet::settle() const {
    enet* self = const_cast<enet*>(this);
    self->take_arrivals(sim_time());
    self->count_tx_started(sim_time());
}

void enet::arrival_method() {
    sim_stats::count_event();
    const sc_time now = sim_time();
    arriving_.arrived_by(now, [this](net::frame_ptr f, const sc_time&) { receive(std::move(f)); });
    if (arriving_.empty()) arrivals_by_event_ = false;
    else arrival_ev_.notify(arriving_.next_arrival() - now);
}

void enet::receive(net::frame_ptr f) {
    ++stats_.rx_arrived;
    if (!enabled()) {
        ++stats_.rx_disabled_drops;
        return;
    }
    mac_receive(std::move(f));
}

// The MAC receive side: statistics, PAUSE, address filter, checks, into the RX FIFO.
void enet::mac_receive(net::frame_ptr f) {
    const mib_frame m = describe(*f);
    const uint32_t rcr = regs_.get(RCR), racc = regs_.get(RACC);
    const size_t max_fl = (rcr >> RCR_MAX_FL_SHIFT) & RCR_MAX_FL_MASK;
    mib_.count_rx(m, max_fl);
    if (f->size() < net::min_frame_bytes) {  // runts never leave the MAC
        ++stats_.rx_filtered;
        return;
    }
    if (m.pause && (rcr & RCR_FCE)) {        // consumed by the MAC, never DMA'd
        ++stats_.rx_pause_consumed;
        if (m.fcs_ok) {
            mib_.count_rx_ok(m);
            handle_pause_frame(*f);
        }
        return;
    }
    bool miss = false;
    if (!address_accepted(*f, miss)) {
        ++stats_.rx_filtered;
        return;
    }
    uint16_t flags = 0;
    if (!m.fcs_ok) flags |= BD_ENET_RX_CR;
    if (f->size() > max_fl) flags |= BD_ENET_RX_LG;
    if (m.broadcast) flags |= BD_ENET_RX_BC;
    else if (m.multicast) flags |= BD_ENET_RX_MC;
    if (miss) flags |= BD_ENET_RX_MISS;
    if ((flags & (BD_ENET_RX_CR | BD_ENET_RX_LG)) && (racc & RACC_LINEDIS)) {
        ++stats_.rx_filtered;
        return;
    }
    if (!(flags & (BD_ENET_RX_CR | BD_ENET_RX_LG))) mib_.count_rx_ok(m);
    std::optional<l3_info> l3;
    if (racc & (RACC_IPDIS | RACC_PRODIS)) {
        l3 = inspect(f->data(), f->size() - net::fcs_bytes);
        if (((racc & RACC_IPDIS) && l3->ip_header_error) || ((racc & RACC_PRODIS) && l3->protocol_error)) {
            ++stats_.rx_filtered;
            return;
        }
    }
    const size_t ftrl = std::max<size_t>(regs_.get(FTRL), net::min_frame_bytes);
    if (f->size() > ftrl) {
        f->bytes.resize(ftrl);
        flags |= BD_ENET_RX_TR | BD_ENET_RX_LG;
        l3.reset();  // the descriptor describes the truncated bytes
    }
    rx_fifo_push(std::move(f), flags, l3);
}

bool enet::address_accepted(const net::frame& f, bool& miss) {
    const uint64_t dst = net::mac48(f.data());
    const uint32_t rcr = regs_.get(RCR);
    const bool multicast = (dst >> 40) & 1;
    bool ok;
    if (dst == net::broadcast_mac) {
        ok = !(rcr & RCR_BC_REJ);
    } else if (!multicast && dst == mac_address()) {
        ok = true;  // the station's own address, whatever the hash filter says
    } else {
        // Hash filter: the 6 upper bits of the (non-inverted) CRC-32 of the destination address
        // (kept for the last address seen: a flow repeats it).
        if (dst != hash_dst_) hash_dst_ = dst, hash_ = (~net::crc32(f.data(), net::mac_bytes)) >> 26;
        const uint32_t hash = hash_;
        const uint32_t hi = multicast ? regs_.get(GAUR) : regs_.get(IAUR);
        const uint32_t lo = multicast ? regs_.get(GALR) : regs_.get(IALR);
        ok = hash >= 32 ? (hi >> (hash - 32)) & 1 : (lo >> hash) & 1;
    }
    if (!ok && (rcr & RCR_PROM)) miss = ok = true;
    return ok;
}

// The pause timer holds new TX frames (tx_method, tx_schedule); the frame in progress ends.
void enet::handle_pause_frame(const net::frame& f) {
    ++stats_.pause_frames_received;
    // A frame due to start as the PAUSE arrives starts (as one sent ahead would): the TX
    // engine's step due now runs first, whatever order the kernel runs the two processes in.
    if (tx_wake_pending_ && tx_wake_at_ <= sim_time()) tx_run(sim_time());
    const uint16_t quanta = uint16_t(net::pause_quanta(f));
    tx_pause_.start(sim_time(), pause_duration(quanta));
    if (quanta == 0) tx_wake(SC_ZERO_TIME);  // XON: waiting frames go at once
}

sc_time enet::pause_duration(uint16_t quanta) const {
    return net::pause_duration(quanta, wire_ ? wire_->speed_mbps() : 1000);
}

unsigned enet::classify(const net::frame& f) {
    if (p_.num_queues < 2 || f.size() < 16 || be16(f.data() + 12) != ethertype_vlan) return 0;
    const unsigned pcp = f.data()[14] >> 5;
    const uint32_t rcmr[] = {regs_.get(RCMR1), regs_.get(RCMR2)};
    for (unsigned q = 1; q < p_.num_queues; ++q) {
        if (!(rcmr[q - 1] & RCMR_MATCHEN)) continue;
        for (unsigned k = 0; k < 4; ++k)
            if (((rcmr[q - 1] >> (4 * k)) & 7) == pcp) return q;
    }
    return 0;
}

// RAFL keeps that many words free: a frame that would eat into them overflows the FIFO.
void enet::rx_fifo_push(net::frame_ptr f, uint16_t flags, const std::optional<l3_info>& l3) {
    const size_t reserve = size_t(regs_.get(RAFL) & RAFL_WORDS_MASK) * fifo_word_bytes;
    const size_t room = p_.rx_fifo_bytes > reserve ? p_.rx_fifo_bytes - reserve : 0;
    if (rx_level_ + f->size() > room || rx_count_ == rx_fifo_.size()) {
        ++stats_.rx_fifo_overflow_drops;
        mib_.inc(IEEE_R_MACERR);
        return;
    }
    const unsigned q = classify(*f);
    f->created = sim_time() + rx_mac_latency_;  // ready for the uDMA (reused field)
    rx_level_ += f->size();
    rx_entry& e = rx_fifo_[wrap(rx_head_ + rx_count_++, rx_fifo_.size())];
    e.f = std::move(f);
    e.ring = q;
    e.sc_flags = flags;
    e.l3 = l3;
    stats_.rx_fifo_peak_bytes = std::max<uint64_t>(stats_.rx_fifo_peak_bytes, rx_level_);
    if (!rx_busy_) rx_start(SC_ZERO_TIME);
    else evaluate_flow_control();
}

// Starts the uDMA on the frame at the FIFO head, `delay` after now. A frame that finds no
// empty descriptor stays at the head until software writes RDAR (write_rdar); one lost to a
// bus error leaves the FIFO.
void enet::rx_start(sc_time delay) {
    const sc_time now = sim_time();
    while (rx_count_ > 0 && !rx_busy_) {
        rx_entry& e = rx_fifo_[rx_head_];
        if (e.f->created > now + delay) delay = e.f->created - now;
        const rx_step s = rx_dma_frame(e, delay);
        if (s == rx_step::wait) break;
        if (s == rx_step::written) {
            rx_busy_ = true;
            rx_ev_.notify(delay);
            break;
        }
        rx_level_ -= e.f->size();
        e.f.reset();
        rx_head_ = wrap(rx_head_ + 1, rx_fifo_.size());
        --rx_count_;
    }
    evaluate_flow_control();
}

// The ring has no empty descriptor (RDAR idle, or it found one not empty): the frame waits.
enet::rx_step enet::rx_wait_for_descriptor(unsigned q) {
    if (!rx_starved_[q]) ++stats_.rx_descriptor_waits;
    rx_starved_[q] = true;
    return rx_step::wait;
}

// Descriptor fetch(es) and data write of one frame.
enet::rx_step enet::rx_dma_frame(rx_entry& e, sc_time& delay) {
    const unsigned q = e.ring;
    if (!(regs_.get(rdar_off[q]) & DES_ACTIVE) || rx_halted_[q]) return rx_wait_for_descriptor(q);
    const sc_time now = sim_time();
    const bd_format fmt = format();
    const size_t bsz = bd_bytes(fmt);
    const net::frame& f = *e.f;
    const size_t shift = (regs_.get(RACC) & RACC_SHIFT16) ? 2 : 0;
    const size_t total = shift + f.size();
    const size_t mrbr = regs_.get(mrbr_off[q]);
    const size_t chunk = mrbr ? mrbr : total;
    const size_t nbd = (total + chunk - 1) / chunk;

    // Every descriptor the frame needs must be empty before any data moves.
    rx_wb_.clear();
    uint64_t a = rx_ptr_[q];
    for (size_t i = 0; i < nbd; ++i) {
        delay += desc_fetch_;
        rx_wb_.push_back({a, bd{}});
        bd& d = rx_wb_.back().desc;
        if (!dma_access(tlm::TLM_READ_COMMAND, a, d.raw, bsz, delay)) {
            bus_error(true, q, now + delay);
            ++stats_.rx_dma_error_drops;
            return rx_step::dropped;
        }
        d.decode(fmt);
        if (!(d.sc & BD_ENET_RX_EMPTY)) {
            regs_.set(rdar_off[q], 0);  // ring full: RDAR clears until software writes it
            rx_wb_.clear();
            return rx_wait_for_descriptor(q);
        }
        a = (d.sc & BD_ENET_RX_WRAP) ? regs_.get(rdsr_off[q]) : a + bsz;
    }

    std::memset(rx_scratch_.data(), 0, shift);
    std::memcpy(rx_scratch_.data() + shift, f.data(), f.size());
    l3_info l3;
    if (fmt == bd_format::enhanced)
        l3 = e.l3 ? *e.l3 : inspect(f.data(), f.size() >= net::fcs_bytes ? f.size() - net::fcs_bytes : 0);

    size_t off = 0;
    for (size_t i = 0; i < nbd; ++i) {
        bd& d = rx_wb_[i].desc;
        const size_t len = std::min(chunk, total - off);
        delay += data_setup_;
        if (!dma_access(tlm::TLM_WRITE_COMMAND, d.bufaddr, rx_scratch_.data() + off, len, delay)) {
            bus_error(true, q, now + delay);
            ++stats_.rx_dma_error_drops;
            rx_wb_.clear();
            return rx_step::dropped;
        }
        off += len;
        const bool last = i + 1 == nbd;
        // Last BD: whole frame length incl. FCS (and the SHIFT16 pad); others: bytes in the BD.
        d.datlen = uint16_t(last ? total : len);
        d.sc = uint16_t((d.sc & BD_ENET_RX_SW_BITS) | (last ? BD_ENET_RX_LAST | e.sc_flags : 0));
        if (fmt == bd_format::enhanced) {
            uint32_t esc = d.esc & BD_ENET_RX_INT;
            if (last) {
                if (e.sc_flags & (BD_ENET_RX_LG | BD_ENET_RX_NO | BD_ENET_RX_CR | BD_ENET_RX_OV | BD_ENET_RX_TR))
                    esc |= BD_ENET_RX_ME;
                if (!(e.sc_flags & (BD_ENET_RX_BC | BD_ENET_RX_MC))) esc |= BD_ENET_RX_UC;
                if (l3.vlan) esc |= BD_ENET_RX_VLAN | uint32_t(l3.vlan_tci >> 13) << BD_ENET_RX_VPCP_SHIFT;
                if (l3.ipv6) esc |= BD_ENET_RX_IPV6;
                if (l3.fragment) esc |= BD_ENET_RX_FRAG;
                if (l3.ip_header_error) esc |= BD_ENET_RX_ICE;
                if (l3.protocol_error) esc |= BD_ENET_RX_PCR;
                d.prot = (l3.ipv4 || l3.ipv6)
                    ? uint32_t(l3.l3_header / 4) << BD_ENET_RX_HL_SHIFT | uint32_t(l3.protocol) << BD_ENET_RX_PROT_SHIFT
                    : 0;
                d.ts = ns32(now + delay);
            }
            d.esc = esc;
            d.bdu = BD_ENET_BDU;
        }
        d.encode(fmt);
    }
    rx_ptr_[q] = a;
    ++stats_.rx_frames;
    stats_.rx_bytes += f.size();
    return rx_step::written;
}

// Write-back of the frame whose data has landed; then the next frame in the FIFO.
void enet::rx_method() {
    sim_stats::count_event();
    if (!rx_busy_) return;
    const sc_time now = sim_time();
    const bd_format fmt = format();
    rx_entry& e = rx_fifo_[rx_head_];
    const unsigned q = e.ring;
    sc_time d = SC_ZERO_TIME;
    bool ok = true;
    for (auto& w : rx_wb_) {
        d += writeback_;
        if (!dma_access(tlm::TLM_WRITE_COMMAND, w.addr, w.desc.raw, bd_bytes(fmt), d)) {
            bus_error(true, q, now + d);
            ok = false;
            break;
        }
    }
    if (ok) {
        for (size_t i = 0; i < rx_wb_.size(); ++i) {
            const bd& b = rx_wb_[i].desc;
            if (fmt == bd_format::enhanced && !(b.esc & BD_ENET_RX_INT)) continue;
            if (i + 1 < rx_wb_.size()) schedule_eir(rxb_bit[q], now + d);
            else frame_interrupt(true, q, now + d);
        }
    }
    rx_wb_.clear();
    rx_level_ -= e.f->size();
    e.f.reset();
    rx_head_ = wrap(rx_head_ + 1, rx_fifo_.size());
    --rx_count_;
    rx_busy_ = false;
    rx_start(d);
}

// ------------------------------------------------------------------------------------------
// Flow control
// ------------------------------------------------------------------------------------------

// With RCR.FCE: XOFF (pause time OPD.PAUSE_DUR) when the RX FIFO holds RSEM words or more, or
// RSEM.STAT_SECTION_EMPTY frames or more; XON (pause time 0) when it has drained below both.
// While it stays above, XOFF is sent again half-way through the pause it asked for, so the
// partner never resumes into a full FIFO (a refresh any time before expiry does; half-way
// leaves room for a maximum-size frame ahead of it on the wire).
void enet::evaluate_flow_control() {
    const uint32_t rsem = regs_.get(RSEM);
    const size_t words = rsem & RSEM_WORDS_MASK, frames = (rsem >> RSEM_FRAMES_SHIFT) & RSEM_FRAMES_MASK;
    const bool full = (words && rx_level_ >= words * fifo_word_bytes) || (frames && rx_count_ >= frames);
    const bool want = (regs_.get(RCR) & RCR_FCE) && enabled() && full;
    const sc_time now = this->now();
    if (want == xoff_ && !(want && now >= xoff_refresh_at_)) return;
    xoff_ = want;
    const uint16_t quanta = want ? uint16_t(regs_.get(OPD) & OPD_PAUSE_DUR_MASK) : 0;
    send_pause(quanta);
    if (!want || quanta == 0) {
        fc_ev_.cancel();
        return;
    }
    const sc_time half = pause_duration(quanta) / 2.0;
    xoff_refresh_at_ = now + half;
    fc_ev_.cancel();  // a refresh sent from another path replaces the pending one
    fc_ev_.notify(access_delay_ + half);
}

void enet::fc_method() {
    sim_stats::count_event();
    evaluate_flow_control();
}

// A MAC control PAUSE frame, real bytes with FCS; it goes out at the next gap on the wire,
// ahead of queued data frames.
void enet::send_pause(uint16_t quanta) {
    net::frame_ptr f = net::frame_pool::instance().get();
    net::make_pause(*f, mac_address(), quanta, uint16_t(regs_.get(OPD) >> 16));
    const sc_time at = now();
    f->created = at;
    count_mib_tx(*f, true);
    ++stats_.pause_frames_sent;
    if (!wire_) ++stats_.tx_no_link_drops;
    else if (at > sim_time() && wire_->sends_ahead()) wire_->send_at(std::move(f), at);  // from a register write
    else wire_->send(std::move(f));
}

void enet::count_mib_tx(const net::frame& f, bool pause) {
    mib_frame m = describe(f);
    m.pause = pause;
    mib_.count_tx(m, (regs_.get(RCR) >> RCR_MAX_FL_SHIFT) & RCR_MAX_FL_MASK);
}

// ------------------------------------------------------------------------------------------
// Transmit
// ------------------------------------------------------------------------------------------

bool enet::tx_may_fetch() const {
    if (tx_count_ == tx_q_.size()) return false;
    if (tx_count_ == 0) return true;
    if (tx_level_ >= p_.tx_fifo_bytes) return false;
    return tx_waiting() < p_.tx_prefetch_frames;
}

bool enet::tx_fetch(sc_time& delay) {
    for (unsigned k = 0; k < p_.num_queues; ++k) {
        const unsigned q = unsigned(wrap(tx_rr_ + k, p_.num_queues));
        if (!(*tdar_[q] & DES_ACTIVE) || tx_halted_[q]) continue;
        tx_entry& e = tx_q_[wrap(tx_head_ + tx_count_, tx_q_.size())];
        if (!tx_fetch_ring(q, e, delay)) continue;
        tx_rr_ = unsigned(wrap(q + 1, p_.num_queues));
        ++tx_count_;
        ++stats_.tx_fetched;
        tx_level_ += e.bytes;
        return true;
    }
    return false;
}

// Fetches the descriptors of one frame of ring q and reads its buffers. False when the ring is
// empty (TDAR self-clears) or on a bus error.
bool enet::tx_fetch_ring(unsigned q, tx_entry& e, sc_time& delay) {
    const sc_time now = sim_time();
    const bd_format fmt = format();
    const size_t bsz = bd_bytes(fmt);
    // The frame is numbered at its first descriptor read, where the uDMA starts it, and taken
    // from the pool once a descriptor is ready: half the reads find the ring empty.
    const uint64_t id = net::frame_pool::instance().take_id();
    net::frame_ptr f;
    e.bds.clear();
    uint64_t a = tx_ptr_[q];
    for (;;) {
        delay += desc_fetch_;
        e.bds.push_back({a, bd{}});
        bd& d = e.bds.back().desc;
        if (!dma_access(tlm::TLM_READ_COMMAND, a, d.raw, bsz, delay)) {
            bus_error(false, q, now + delay);
            return false;
        }
        d.decode(fmt);
        if (!(d.sc & BD_ENET_TX_READY)) {
            // Ring empty (or a frame not fully handed over): stop here, TDAR self-clears.
            regs_.set(tdar_off[q], 0);
            return false;
        }
        if (!f) f = net::frame_pool::instance().get(0, id);
        if (d.datlen) {
            delay += data_setup_;
            const size_t old = f->size();
            f->bytes.resize(old + d.datlen);
            if (!dma_access(tlm::TLM_READ_COMMAND, d.bufaddr, f->data() + old, d.datlen, delay)) {
                bus_error(false, q, now + delay);
                return false;
            }
        }
        a = (d.sc & BD_ENET_TX_WRAP) ? regs_.get(tdsr_off[q]) : a + bsz;
        if (d.sc & BD_ENET_TX_LAST) break;
        if (f->size() > max_tx_frame_bytes) {  // babbling: close the frame here
            schedule_eir(FEC_ENET_BABT, now + delay);
            break;
        }
    }
    tx_ptr_[q] = a;

    // MAC transmit processing: checksum insertion, source address, pad + FCS.
    const bd& last = e.bds.back().desc;
    const uint32_t tcr = regs_.get(TCR);
    const bool add_crc = (last.sc & BD_ENET_TX_TC) && !(tcr & TCR_CRCFWD);
    const size_t body = add_crc ? f->size() : (f->size() >= net::fcs_bytes ? f->size() - net::fcs_bytes : 0);
    if (fmt == bd_format::enhanced && (last.esc & (BD_ENET_TX_PINS | BD_ENET_TX_IINS)))
        insert_checksums(f->data(), body, last.esc & BD_ENET_TX_IINS, last.esc & BD_ENET_TX_PINS);
    if ((tcr & TCR_ADDINS) && f->size() >= 2 * net::mac_bytes) {
        const uint64_t mac = mac_address();
        for (size_t i = 0; i < net::mac_bytes; ++i) f->bytes[6 + i] = uint8_t(mac >> (8 * (5 - i)));
    }
    if (add_crc) {
        if (f->size() < min_payload_frame) f->bytes.resize(min_payload_frame, 0);
        net::append_fcs(*f);
    }
    e.fcs_appended = add_crc;
    e.ring = q;
    e.bytes = f->size();
    e.f = std::move(f);
    e.ready = now + delay;
    return true;
}

// Puts e on the wire at `at`: SystemC time in the engine's event, later when the start runs
// ahead of it (tx_step_by_core); then it is counted when anything could see it started.
void enet::tx_send(tx_entry& e, const sc_time& at) {
    const net::frame& f = *e.f;
    mib_frame m = describe(f, e.fcs_appended);
    m.pause = false;
    count_tx_started(at);  // an earlier start, if still uncounted: the counters keep their order
    tx_uncounted_ = {true, at, m, f.size()};
    count_tx_started(sim_time());  // at once in the engine's event
    e.f->created = at;
    ++tx_sent_;
    if (!wire_) {
        ++stats_.tx_no_link_drops;
        e.f.reset();
        e.end = at;
        return;
    }
    const double mbps = wire_->speed_mbps();
    if (mbps != ifg_mbps_) ifg_mbps_ = mbps, ifg_time_ = sc_time(net::ifg_bytes * 8 * 1e3 / mbps, SC_NS);
    const sc_time free_at = at > sim_time() ? wire_->send_at(std::move(e.f), at) : wire_->send(std::move(e.f));
    e.end = free_at - ifg_time_;  // last bit, before the IFG
}

// Counts the frame started ahead if its start happened by `now` (happened_by: at the end of a
// run window, not one starting at that very time, as its event would have run after).
void enet::count_tx_started(const sc_time& now) {
    if (!tx_uncounted_.pending || !happened_by(tx_uncounted_.at, now)) return;
    tx_uncounted_.pending = false;
    mib_.count_tx(tx_uncounted_.m, (regs_.get(RCR) >> RCR_MAX_FL_SHIFT) & RCR_MAX_FL_MASK);
    ++stats_.tx_frames;
    stats_.tx_bytes += tx_uncounted_.bytes;
}

// After the frame's last bit: clear R, write the descriptors back, TXF/TXB.
void enet::tx_complete(tx_entry& e, sc_time& delay) {
    const sc_time now = sim_time();
    const bd_format fmt = format();
    for (size_t i = 0; i < e.bds.size(); ++i) {
        bd& d = e.bds[i].desc;
        const bool last = i + 1 == e.bds.size();
        d.sc &= uint16_t(~(BD_ENET_TX_READY | BD_ENET_TX_STATUS));
        if (fmt == bd_format::enhanced) {
            d.esc &= ~BD_ENET_TX_ERRORS;
            if (last) {
                d.bdu = BD_ENET_BDU;
                d.ts = ns32(e.end);
            }
        }
        d.encode(fmt);
        delay += writeback_;
        if (!dma_access(tlm::TLM_WRITE_COMMAND, e.bds[i].addr, d.raw, bd_bytes(fmt), delay)) {
            bus_error(false, e.ring, now + delay);
            return;
        }
        if (fmt == bd_format::enhanced && !(d.esc & BD_ENET_TX_INT)) continue;
        if (last) frame_interrupt(false, e.ring, now + delay);
        else schedule_eir(txb_bit[e.ring], now + delay);
    }
}

// tx_ev_ keeps its earliest notification; the engine remembers that one is pending. A wake-up
// at or after a pending one later than now is what the kernel and the record already hold
// (timed_event::notify), and is not made again (a TDAR write finds the end of the frame on the
// wire pending, most of the time).
void enet::tx_wake(const sc_time& delay) {
    const sc_time at = sim_time() + delay;
    if (tx_wake_pending_ && tx_wake_at_ <= at && tx_wake_at_ > sim_time()) return;
    if (!tx_wake_pending_ || at < tx_wake_at_) tx_wake_at_ = at, tx_wake_pending_ = true;
    tx_ev_.notify(delay);
}

void enet::tx_method() {
    sim_stats::count_event();
    tx_wake_pending_ = false;
    tx_run(sim_time());
}

// One step of the TX engine at `at`: SystemC time in its event, the annotated time of a TDAR
// write (a frame fetched then is ready after it, so none starts before then), or the time of a
// wire start or end of frame run ahead of SystemC time (tx_step_by_core). Its DMA carries at -
// SystemC time.
void enet::tx_run(sc_time at) {  // a copy: cancel() below clears deferred_at
    board_->cancel(*this);          // the step decides again what comes next
    sc_time d = at - sim_time();
    // 1. frames whose last bit has left: write-back
    while (tx_sent_ > 0 && tx_q_[tx_head_].end <= at) {
        tx_entry& e = tx_q_[tx_head_];
        tx_complete(e, d);
        tx_level_ -= e.bytes;
        tx_head_ = wrap(tx_head_ + 1, tx_q_.size());
        --tx_count_;
        --tx_sent_;
    }
    // 2. prefetch while the FIFO has room
    if (enabled())
        while (tx_may_fetch() && tx_fetch(d)) {}
    // 3. the next frame onto the wire
    tx_entry* w = tx_sent_ < tx_count_ ? &tx_q_[wrap(tx_head_ + tx_sent_, tx_q_.size())] : nullptr;
    const bool gts = regs_.get(TCR) & TCR_GTS;
    if (w && !gts && w->ready <= at && !tx_pause_.paused(at) && (!wire_ || wire_->tx_free_at() <= at)) {
        tx_send(*w, at);
        // the FIFO slot it held as "waiting" is free: fetch ahead while it serialises
        if (enabled())
            while (tx_may_fetch() && tx_fetch(d)) {}
    }
    // 4. graceful stop reached, at the step's time (an end of frame the core runs ahead of
    // SystemC time must not raise it earlier)
    if (gts && gra_pending_ && tx_sent_ == 0) {
        gra_pending_ = false;
        schedule_eir(FEC_ENET_GRA, at);
    }
    tx_schedule(at);
}

// Wakes the TX engine at its next step: end of the frame on the wire, or the start of the next
// (which the board's core may run instead, tx_step_by_core).
void enet::tx_schedule(const sc_time& at) {
    bool have = false, start = false;
    sc_time next;
    auto consider = [&](const sc_time& t, bool is_start) {
        if (!have || t < next) next = t, have = true, start = is_start;
    };
    const bool gts = regs_.get(TCR) & TCR_GTS;
    for (size_t i = 0; i < tx_count_; ++i) {
        const tx_entry& e = tx_q_[wrap(tx_head_ + i, tx_q_.size())];
        if (i < tx_sent_) {
            consider(e.end, false);
        } else if (!gts) {
            sc_time t = std::max(e.ready, tx_pause_.until());
            if (wire_) t = std::max(t, wire_->tx_free_at());
            consider(t, true);
            break;
        }
    }
    if (!have) return;
    if (next > at && tx_step_by_core(next, start)) return;
    const sc_time now = sim_time();
    tx_wake(next > now ? next - now : SC_ZERO_TIME);
}

// The step (wire start or end of frame) left to the core, at its time `at`. An event of the
// engine's own due by then (a GTS toggle, an XON, a TDAR write that found a step due) runs first
// in time: it decides again.
void enet::run_deferred(const sc_time& at) {
    if (tx_wake_pending_ && tx_wake_at_ <= at) return;
    tx_run(at);
}

// A wire start touches no memory (its prefetch only reads a descriptor and a buffer) and of
// the registers only TDAR and the MIB, so it needs no event while something runs it before
// anything could see it or change it:
// - the board's core, when it may still act before the start (it runs, reached by its own
//   register access, or waits in a sync until before the start): the core runs the step when
//   its time reaches the start, at its sync points and before its register accesses, where it
//   synced for the event (models/activity.h, deferred_step); a register write before then acts
//   on the frame still waiting;
// - this activation, when the core waits in a sync past the start (it can make no access
//   before it).
// An end of frame writes the descriptors back and counts toward TXF: memory and a register
// the core reads. The core runs it in the same places, where it synced for its event, so its
// accesses before then see the memory as they did; and only while nothing else can act on the
// board by its time (deferred_step::only_if_first, so its DMA keeps its order on the DDR with
// every other step of the board); otherwise, and for a register access annotated at or after
// it, its event runs it. Never in place: another step may come before it.
// Not with flow control (RCR.FCE, or an XOFF sent): a PAUSE received, or sent, between SystemC
// time and the start would come after the step; nor when no core reports to the record or it
// waits for an interrupt: the event runs it.
bool enet::tx_step_by_core(const sc_time& at, bool start) {
    if (!activity::defer_steps || !wire_ || !wire_->sends_ahead()) return false;
    if ((regs_.get(RCR) & RCR_FCE) || xoff_) return false;
    if (!start && !(activity::defer_ends && board_->orders_steps())) return false;
    switch (board_->core()) {
    case activity::core_state::running:
        board_->defer(*this, at, !start);
        return true;
    case activity::core_state::waiting:
        if (at > board_->core_wake()) {
            board_->defer(*this, at, !start);
            return true;
        }
        if (!start || (tx_wake_pending_ && tx_wake_at_ <= at)) return false;
        tx_run(at);
        return true;
    default:
        return false;
    }
}

// ------------------------------------------------------------------------------------------
// Results
// ------------------------------------------------------------------------------------------

void enet::reset_stats() {
    settle();
    stats_ = enet_stats{};
    mib_base_ = mib_.snapshot();
    tx_pause_.reset_window(sim_time());
    stats_.rx_in_flight_start = rx_in_flight();
    stats_.tx_in_flight_start = tx_in_flight();
}

// Fetched and not yet on the wire.
size_t enet::tx_waiting() const { return tx_count_ - tx_sent_; }

// In the books: fetched and not yet counted as sent (a start ahead of SystemC time is counted at it).
size_t enet::tx_in_flight() const { return tx_waiting() + (tx_uncounted_.pending ? 1 : 0); }

ledger enet::rx_ledger() const {
    settle();
    const enet_stats& s = stats_;
    return {s.rx_in_flight_start, s.rx_arrived, s.rx_frames,
            {{"disabled", s.rx_disabled_drops}, {"filtered", s.rx_filtered}, {"pause", s.rx_pause_consumed},
             {"fifo_overflow", s.rx_fifo_overflow_drops}, {"dma_error", s.rx_dma_error_drops},
             {"reset", s.rx_reset_drops}},
            rx_in_flight()};
}

ledger enet::tx_ledger() const {
    settle();
    const enet_stats& s = stats_;
    return {s.tx_in_flight_start, s.tx_fetched, s.tx_frames - s.tx_no_link_drops,
            {{"no_link", s.tx_no_link_drops}, {"reset", s.tx_reset_drops}}, tx_in_flight()};
}

void enet::report(nlohmann::json& out) const {
    settle();
    mib_.report(out["mib"], mib_base_);
    out["rx_fifo_overflow_drops"] = stats_.rx_fifo_overflow_drops;
    out["rx_descriptor_waits"] = stats_.rx_descriptor_waits;
    out["rx_fifo_peak_bytes"] = stats_.rx_fifo_peak_bytes;
    out["rx_filtered"] = stats_.rx_filtered;
    out["rx_disabled_drops"] = stats_.rx_disabled_drops;
    out["pause_frames_sent"] = stats_.pause_frames_sent;
    out["pause_frames_received"] = stats_.pause_frames_received;
    out["tx_paused_s"] = tx_pause_.paused_time(sim_time()).to_seconds();
    out["rx_frames"] = stats_.rx_frames;
    out["rx_bytes"] = stats_.rx_bytes;
    out["tx_frames"] = stats_.tx_frames;
    out["tx_bytes"] = stats_.tx_bytes;
    out["dma_errors"] = stats_.dma_errors;
    out["dma_transactions"] = stats_.dma_transactions;
    out["tx_no_link_drops"] = stats_.tx_no_link_drops;
}

}  // namespace fecsim::fec
