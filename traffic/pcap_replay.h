// Replays a capture file (pcap or pcapng, read with libpcap) onto the wire: at the recorded
// timing, at a fixed frame rate, or back to back at line rate, a given number of times. The
// whole file is read and checked before the simulation starts, so a malformed or truncated
// capture is a config_error, never a crash. Captures hold frames without FCS (as Linux and
// fecsim's pcap_writer write them): the replay pads them to 60 bytes and appends the FCS.
// A received frame it only analyses costs no event: it is taken when the link sends it.
#pragma once

#include "models/activity.h"
#include "models/net/taken_early.h"
#include "traffic/generator.h"
#include "traffic/pktgen_commands.h"
#include "traffic/sink.h"

#include <systemc>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fecsim {
class config;
}

namespace fecsim::traffic {

enum class replay_mode { recorded, rate, line };

struct pcap_trace {
    std::vector<uint8_t> bytes;      // all frames back to back, without FCS
    std::vector<size_t> offset;      // frame i is bytes[offset[i], offset[i + 1])
    std::vector<uint64_t> time_ns;   // capture timestamps
    size_t size() const { return time_ns.size(); }
    size_t length(size_t i) const { return (i + 1 < offset.size() ? offset[i + 1] : bytes.size()) - offset[i]; }
};

// Reads every frame of `path`; config_error "PATH: message" on any problem.
pcap_trace load_pcap(const std::string& path);

struct pcap_replay_params {
    std::string path;
    std::optional<mac_addr> dst_mac, src_mac;  // rewrite every frame's addresses (tcpreplay --enet-dmac/-smac)
    replay_mode mode = replay_mode::recorded;
    double rate_pps = 100000;    // mode rate
    uint64_t loops = 1;          // 0 = until the simulation ends
    bool flow_control = false;
    double start_delay_ns = 0;
};

pcap_replay_params pcap_replay_params_from(const config& cfg, bool flow_control);

class pcap_replay : public sc_core::sc_module, public generator {
public:
    pcap_replay(sc_core::sc_module_name name, const pcap_replay_params& p);

    void connect(net::eth_tx& tx) override { tx_ = &tx; }
    void frame_arrived(net::frame_ptr f) override;
    // Takes a frame when the link sends it if all its arrival does here is count and analyse it
    // (any frame but a PAUSE frame with flow control on): analysed at its arrival time when
    // anything can see the statistics, without the link's delivery event (docs/traffic.md).
    bool frame_arriving(net::frame_ptr& f, const sc_core::sc_time& at) override;
    net::frame_ptr give_back_last(const sc_core::sc_time& now) override { return arriving_.give_back(now); }
    void reset_stats() override;
    void report(nlohmann::json& j) const override;
    uint64_t tx_frames() const override { return tx_frames_; }
    uint64_t rx_frames() const override {
        settle();
        return rx_.stats().frames;
    }
    std::string final_summary() const override;

    bool finished() const { return finished_; }
    const sc_core::sc_event& finished_event() const { return finished_ev_; }

private:
    void on_tx();  // SC_METHOD: one activation per frame handed to the wire
    sc_core::sc_time due(sc_core::sc_time now) const;
    void receive(net::frame_ptr f, const sc_core::sc_time& at);
    bool only_analysed(const net::frame& f) const;
    void take_arrivals(const sc_core::sc_time& now);
    void settle() const;

    pcap_replay_params p_;
    pcap_trace trace_;
    std::vector<uint64_t> recorded_ns_;  // mode recorded: when frame i is due after frame 0
    net::eth_tx* tx_ = nullptr;
    pause_state pause_;
    rx_analyzer rx_;
    size_t next_ = 0;                // next frame of the trace
    uint64_t loop_ = 0, sent_total_ = 0, tx_frames_ = 0, tx_bytes_ = 0;
    sc_core::sc_time loop_base_;     // recorded mode: when the current loop's first frame was due
    sc_core::sc_time started_at_, ended_at_;
    bool finished_ = false;
    // Frames taken when the link sent them (frame_arriving), until they have arrived and anything
    // could see their analysis: the next frame, the statistics, the report, the window's start.
    net::taken_early arriving_;
    timed_event tx_ev_, finished_ev_;
};

}  // namespace fecsim::traffic
