// The pktgen peer: a Linux board running pktgen (net/core/pktgen.c) on one CPU, sending through
// its own NIC. The CPU pays a cost per packet handed to the driver, per xmit call (the burst
// rings the TX doorbell once) and per frame built; with rx_enabled the same CPU also pays for
// every frame it receives (RX softirq preempts the pktgen thread), so it sends slower. The NIC
// has a TX ring; frames leave at line rate and stop while a PAUSE from the partner holds.
// Kernel events: one per xmit call (plus one per burst preempted by RX, and with flow control
// on, one per frame handed to the wire so that a PAUSE takes effect after the current frame).
// A received frame it only counts costs none: it is taken when the link sends it.
#pragma once

#include "models/activity.h"
#include "models/net/taken_early.h"
#include "traffic/generator.h"
#include "traffic/pktgen_builder.h"
#include "traffic/sink.h"

#include <systemc>

#include <cstdint>
#include <vector>

namespace fecsim {
class config;
}

namespace fecsim::traffic {

// CPU cost of the generator board (generator.cpu.*, docs/traffic.md for their derivation).
struct pktgen_cpu_params {
    double per_packet_ns = 1053.44;    // ndo_start_xmit + descriptor setup + TX completion, per packet
    double per_burst_ns = 100;         // per pktgen_xmit call: queue lock, TDAR doorbell write
    double build_ns = 400;             // fill_packet: skb allocation and header fill
    double rx_per_packet_ns = 2795;    // per received frame when rx_enabled
};

struct pktgen_model_params {
    pktgen_params cmd;
    pktgen_device dev;
    pktgen_cpu_params cpu;
    uint32_t tx_ring_size = 1024;      // generator NIC TX descriptors
    bool rx_enabled = false;
    bool flow_control = false;         // link.flow_control: honour PAUSE frames
    double start_delay_ns = 0;         // first xmit call after this much simulated time
    uint64_t seed = 1;
};

// generator.* of a resolved configuration (pktgen commands included); config_error on bad input.
pktgen_model_params pktgen_model_params_from(const config& cfg, bool flow_control);

struct pktgen_stats {
    uint64_t tx_frames = 0, tx_bytes = 0;  // handed to the NIC (bytes incl. FCS)
    uint64_t rx_frames = 0;                // received and processed (rx_enabled)
    uint64_t rx_ignored = 0;               // received while rx is disabled (filtered by the MAC)
    uint64_t tx_busy = 0;                  // xmit calls that found the TX ring full
    uint64_t wire_frames = 0;              // handed from the ring to the wire
    uint64_t ring_at_start = 0;            // queued but not on the wire when the window began
    double cpu_busy_ns = 0;
};

class pktgen : public sc_core::sc_module, public generator {
public:
    pktgen(sc_core::sc_module_name name, const pktgen_model_params& p);

    void connect(net::eth_tx& tx) override { tx_ = &tx; }
    void frame_arrived(net::frame_ptr f) override;
    // Takes a frame when the link sends it if all its arrival does here is count it (rx
    // disabled, or a PAUSE frame without flow control): counted at its arrival time when
    // anything can see the counters, without the link's delivery event (docs/traffic.md).
    bool frame_arriving(net::frame_ptr& f, const sc_core::sc_time& at) override;
    net::frame_ptr give_back_last(const sc_core::sc_time& now) override { return arriving_.give_back(now); }
    void reset_stats() override;
    void report(nlohmann::json& j) const override;
    uint64_t tx_frames() const override { return s_.tx_frames; }
    uint64_t rx_frames() const override { return s_.rx_frames; }
    std::string final_summary() const override;
    std::optional<ledger> nic_books() const override;

    const pktgen_stats& stats() const {
        settle();
        return s_;
    }
    const rx_analyzer& rx_analysis() const { return rx_; }
    uint64_t pause_frames_received() const {
        settle();
        return pause_.received();
    }
    uint64_t sofar() const { return sofar_; }     // packets sent since the start
    bool finished() const { return finished_; }   // `count` packets sent
    const sc_core::sc_event& finished_event() const { return finished_ev_; }
    const pktgen_builder& builder() const { return builder_; }

private:
    struct slot {
        net::frame_ptr f;
        sc_core::sc_time done;  // end of frame + IFG once handed to the link
    };
    enum class cpu_state { waiting, running };

    void on_cpu();                     // SC_METHOD: a doorbell or a wake-up of the pktgen thread
    void on_nic();                     // SC_METHOD: hand frames to the wire when flow control gates it
    void xmit_call(sc_core::sc_time now);
    void nic_commit(sc_core::sc_time now);
    void reclaim(sc_core::sc_time now);
    void wake_for_slot(sc_core::sc_time now);
    void receive(net::frame_ptr f);
    bool only_counted(const net::frame& f) const;
    void take_arrivals(const sc_core::sc_time& now);
    void settle() const;
    size_t free_slots() const { return ring_.size() - size_t(tail_ - head_); }
    slot& at(uint64_t i) { return ring_[i % ring_.size()]; }

    pktgen_model_params p_;
    pktgen_builder builder_;
    net::eth_tx* tx_ = nullptr;
    pause_state pause_;
    rx_analyzer rx_;
    pktgen_stats s_;

    // pktgen_dev state
    net::frame_ptr skb_;               // the frame being cloned / bursted
    bool last_ok_ = true;
    uint32_t clone_count_ = 0;
    uint32_t seq_num_ = 1;
    uint64_t sofar_ = 0;
    sc_core::sc_time next_tx_;
    bool slot_claimed_ = false;        // waited for next_tx_, slot not yet consumed
    bool finished_ = false;

    // the CPU
    cpu_state state_ = cpu_state::waiting;
    bool waiting_for_slot_ = false;
    sc_core::sc_time preempt_;         // RX work that arrived while the burst was running
    sc_core::sc_time rx_busy_until_;   // RX work that arrived while pktgen waited
    sc_core::sc_time started_at_, finished_at_, window_start_;
    double busy_total_ns_ = 0;
    double idle_total_ns_ = 0;         // spent waiting for delay slots (pktgen's idle_acc)

    // the NIC TX ring: [head, commit) on the wire, [commit, visible) seen by the NIC,
    // [visible, tail) queued by the CPU before the doorbell
    std::vector<slot> ring_;
    uint64_t head_ = 0, commit_ = 0, visible_ = 0, tail_ = 0;

    // Frames taken when the link sent them (frame_arriving), in arrival order, until they have
    // arrived and anything could see their counters: the next frame, the statistics, the report.
    net::taken_early arriving_;

    timed_event cpu_ev_, nic_ev_, finished_ev_;
};

}  // namespace fecsim::traffic
