// The wire bridge: a port of the simulated network whose far end is the host (a TAP device or
// a UDP peer, traffic/host_socket.h), so a real tool on Linux is a traffic peer. It implements
// the generator interface: it takes the generator's place, or a switch port of its own.
//
// Host frames arrive on the bridge's I/O thread and cross into SystemC through a bounded,
// locked queue and async_request_update(); the simulation never runs on that thread. The FCS
// is appended on the way in and checked (and stripped) on the way out. Pacing:
//   realtime             simulated time never runs ahead of wall time; a host frame enters the
//                        wire at the simulated time matching its arrival (to within quantum);
//   as_fast_as_possible  the simulation runs freely; a host frame enters the wire at the
//                        simulated time it is picked up.
#pragma once

#include "models/activity.h"
#include "traffic/generator.h"
#include "traffic/host_socket.h"

#include <systemc>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace fecsim {
class config;
}

namespace fecsim::traffic {

struct host_bridge_params {
    std::string kind;  // "tap" or "udp"
    std::string port;  // bridge.port: "generator" or "switch"
    bool realtime = true;
    sc_core::sc_time quantum{100, sc_core::SC_US};  // realtime: how often simulated and wall time are matched
    size_t queue_frames = 1024;                      // per direction
};

// True when the configuration attaches a bridge (bridge.tap or bridge.udp set).
bool bridge_configured(const config& cfg);

// A frame the host sent, with its arrival time on the host clock.
struct host_frame {
    std::vector<uint8_t> bytes;  // no FCS
    host_socket::clock::time_point arrived;
};

// The thread-safe crossing into SystemC: push() from the I/O thread, pop() in the simulation.
// A push wakes the simulation through async_request_update(), so arrived() fires in the next
// update phase.
class host_inbox : public sc_core::sc_prim_channel {
public:
    explicit host_inbox(size_t capacity);
    bool push(host_frame&& f);  // false when full
    bool pop(host_frame& f);
    const sc_core::sc_event& arrived() const { return arrived_; }

private:
    void update() override;

    std::mutex mutex_;
    std::deque<host_frame> queue_;
    size_t capacity_;
    timed_event arrived_;
};

class host_bridge : public sc_core::sc_module, public generator {
public:
    host_bridge(sc_core::sc_module_name name, const host_bridge_params& p, std::unique_ptr<host_socket> socket);
    ~host_bridge() override;

    void connect(net::eth_tx& tx) override { tx_ = &tx; }
    void frame_arrived(net::frame_ptr f) override;  // from the DUT, to the host
    void reset_stats() override;
    void report(nlohmann::json& j) const override;
    uint64_t tx_frames() const override { return tx_frames_; }
    uint64_t rx_frames() const override { return rx_frames_; }
    std::string final_summary() const override;

    // Writes what is still queued for the host and stops the I/O thread.
    void close() { socket_->close(); }
    const host_socket& socket() const { return *socket_; }
    const host_bridge_params& params() const { return p_; }
    // realtime: how far simulated time has been behind wall time in the window, at most.
    double max_lag_s() const { return max_lag_s_; }

private:
    void inject();  // the next host frame onto the wire, when it is due and the wire is free
    void pace();    // realtime: sleeps while simulated time is ahead of wall time
    sc_core::sc_time due(const host_frame& f) const;

    host_bridge_params p_;
    std::unique_ptr<host_socket> socket_;
    host_inbox inbox_;
    net::eth_tx* tx_ = nullptr;
    std::optional<host_frame> next_;  // picked up, waiting for its time or the wire
    timed_event inject_ev_, pace_ev_;
    host_socket::clock::time_point wall_zero_;  // wall time at simulated time 0
    double max_lag_s_ = 0;  // in the measurement window
    bool measuring_ = false, lag_reported_ = false;
    pause_state pause_{false};                 // counts the DUT's PAUSE frames, honours none
    uint64_t tx_frames_ = 0, rx_frames_ = 0;  // window
};

// Builds the bridge bridge.tap or bridge.udp asks for; a device or socket that cannot be
// opened is a config_error naming the key.
std::unique_ptr<host_bridge> make_host_bridge(const char* name, const config& cfg);

}  // namespace fecsim::traffic
