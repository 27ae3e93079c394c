// What the platform sees of a traffic generator (pktgen model, pcap replay, TCP sender): an Ethernet
// device with one link end to transmit on, its statistics and its final summary lines.
#pragma once

#include "models/accounting.h"
#include "models/net/eth_port.h"
#include "models/net/frame.h"
#include "models/net/mac_control.h"

#include <nlohmann/json.hpp>
#include <systemc>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fecsim {
class config;
}

namespace fecsim::traffic {

class generator : public net::eth_sink {
public:
    // The link end this device transmits on; must be called before the simulation starts.
    virtual void connect(net::eth_tx& tx) = 0;
    // Zeroes the window statistics (the final summary keeps counting from the start).
    virtual void reset_stats() = 0;
    // Window statistics as the `generator` object of the result file (docs/traffic.md).
    virtual void report(nlohmann::json& j) const = 0;
    virtual uint64_t tx_frames() const = 0;  // in the window
    virtual uint64_t rx_frames() const = 0;  // in the window (0 unless the generator receives)
    // What the modelled tool prints when it stops (pktgen: the "Result:" lines).
    virtual std::string final_summary() const = 0;
    // Rates of the modelled tool for the result's `rates` (TCP: tcp_goodput_mbps).
    virtual void report_rates(nlohmann::json& /*rates*/, double /*window_s*/) const {}
    // The lines the modelled tool prints once per simulated second of the window (iperf -i 1).
    virtual std::vector<std::string> live_lines(double /*interval_s*/) { return {}; }
    // The books of the generator's own NIC ring (queued by its CPU -> handed to the wire),
    // for a generator that models one.
    virtual std::optional<ledger> nic_books() const { return std::nullopt; }
};

// Builds the generator `generator.kind` asks for. `flow_control` is the link's setting
// (link.flow_control): whether the generator's MAC honours PAUSE frames. Bad settings
// (malformed pktgen commands, unreadable capture, TCP keys that do not fit) throw config_error.
std::unique_ptr<generator> make_generator(const char* name, const config& cfg, bool flow_control);

// 802.3x flow control of a peer's transmitter (annex 31B): a PAUSE frame stops the transmitter
// for pause_time x 512 bit-times after the frame has arrived; pause_time 0 resumes at once.
class pause_state {
public:
    explicit pause_state(bool flow_control) : flow_control_(flow_control) {}

    // True when `f` is a MAC control PAUSE frame (counted; honoured only with flow control).
    bool handle(const net::frame& f, double speed_mbps);
    bool paused(sc_core::sc_time now) const { return timer_.paused(now); }
    sc_core::sc_time until() const { return timer_.until(); }
    bool flow_control() const { return flow_control_; }
    uint64_t received() const { return received_; }
    void reset_window();
    // pause_frames_received and, when PAUSE is honoured, tx_paused_s (time the timer ran).
    void report(nlohmann::json& j) const;

private:
    bool flow_control_;
    uint64_t received_ = 0;  // PAUSE frames seen (window)
    net::pause_timer timer_;
};

}  // namespace fecsim::traffic
