// Store-and-forward Ethernet switch (an unmanaged 802.1D bridge with 802.3x MAC control).
// A frame is processed once fully received (its link delivers it at its last bit), learned by
// source MAC, and queued on the output port(s) it goes to; it may leave forwarding_latency after
// its reception ended. Each output port has a FIFO queue bounded in frames and/or bytes, with tail
// drop. PAUSE frames (01:80:C2:00:00:01, EtherType 0x8808) and every other MAC control or
// 802.1D link-local frame (01:80:C2:00:00:0X) are terminated, never forwarded; PAUSE is honoured
// on the output of the port it arrived on when configured, and the switch can emit PAUSE itself
// towards the senders feeding an output queue that crossed a threshold.
#pragma once

#include "models/activity.h"
#include "models/net/eth_port.h"
#include "models/net/frame.h"
#include "models/net/ring.h"

#include <nlohmann/json_fwd.hpp>
#include <systemc>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fecsim {
class config_view;
}

namespace fecsim::net {

struct switch_params {
    uint32_t queue_frames = 0;             // output queue limit in frames, 0 = no frame limit
    uint64_t queue_bytes = 131072;         // output queue limit in frame bytes, 0 = no byte limit
    double forwarding_latency_ns = 1000;   // end of reception -> earliest start of transmission
    bool check_fcs = true;                 // drop frames with a bad FCS (store-and-forward can)
    bool honour_pause = true;              // a received PAUSE stops that port's output
    bool emit_pause = false;               // send PAUSE to senders of a congested output queue
    uint64_t pause_threshold_bytes = 65536;  // output queue bytes at which PAUSE is sent
    uint64_t pause_resume_bytes = 32768;     // queue bytes at or below which XON is sent
    uint32_t pause_quanta = 0xFFFF;          // pause time carried by emitted PAUSE frames
    double aging_s = 300;                  // MAC table entry lifetime (802.1D default), 0 = never
    uint32_t mac_table_entries = 8192;     // learning stops when the table is full
};

// Reads the `link.switch` section (configs/schema/link.json).
switch_params switch_params_from(const config_view& switch_section);

// A combination the schema accepts but the switch cannot use: `key` names the parameter.
struct param_problem {
    std::string key, message;
};
std::optional<param_problem> check(const switch_params& p);

struct switch_port_stats {
    uint64_t rx_frames = 0, rx_bytes = 0;
    uint64_t tx_frames = 0, tx_bytes = 0;  // incl. PAUSE frames the switch emitted
    uint64_t tail_drops = 0;
    uint64_t max_queue_frames = 0, max_queue_bytes = 0;
};

struct switch_stats {
    uint64_t forwarded = 0;        // unicast frames sent to their learned port
    uint64_t flooded = 0;          // frames sent to every other port (unknown or group destination)
    uint64_t filtered = 0;         // destination learned on the port the frame came from
    uint64_t tail_drops = 0;       // copies dropped at a full output queue
    uint64_t fcs_errors = 0;
    uint64_t malformed = 0;        // shorter than a MAC header + FCS
    uint64_t pause_received = 0;   // PAUSE frames terminated (honoured or not)
    uint64_t pause_sent = 0;       // PAUSE frames with a non-zero pause time emitted
    uint64_t xon_sent = 0;         // PAUSE frames with pause time 0 emitted
    uint64_t control_filtered = 0; // other MAC control / link-local frames terminated
};

class eth_switch : public sc_core::sc_module {
public:
    eth_switch(sc_core::sc_module_name name, const switch_params& p, size_t n_ports);

    size_t ports() const { return ports_.size(); }
    // Port i receives what arrives through its link: pass it to link::bind as that side's sink.
    eth_sink& port(size_t i) { return *ports_.at(i); }
    // Port i transmits through `tx` (the switch-side end of its link). Every port needs one.
    void attach(size_t i, eth_tx& tx) { ports_.at(i)->tx = &tx; }

    // The port a MAC address was learned on (and not aged out), for tests and debugging.
    std::optional<size_t> learned_port(const uint8_t mac[mac_bytes]) const;

    const switch_params& params() const { return p_; }
    switch_stats stats() const;
    switch_port_stats port_stats(size_t i) const;
    size_t queue_frames(size_t i) const { return occupancy(*ports_.at(i)).frames; }
    uint64_t queue_bytes(size_t i) const { return occupancy(*ports_.at(i)).bytes; }
    void reset_stats();
    // Fills `j` with the switch counters and a "ports" array of per-port counters.
    void report(nlohmann::json& j) const;

private:
    struct queued {
        frame_ptr f;
        sc_core::sc_time ready;  // reception end + forwarding latency
        size_t ingress = 0;
    };
    // A frame handed to the egress link ahead of its start (docs/models/net.md, "Events"): it
    // still occupies the queue until `start`.
    struct ahead {
        sc_core::sc_time ready, start;
        size_t bytes = 0, ingress = 0;
        sc_core::sc_time arrives;  // taken from the ingress link early: counted received then
        bool early = false;
    };
    struct port_state : eth_sink {
        eth_switch* sw = nullptr;
        size_t index = 0;
        eth_tx* tx = nullptr;
        ring<queued> queue;               // waiting for the output scheduler
        ring<ahead> sent;                 // sent ahead, in start order
        uint64_t queue_bytes = 0;         // of both
        frame_ptr control;                 // a PAUSE/XON to send ahead of the queue
        sc_core::sc_time paused_until;     // PAUSE received on this port
        bool congested = false;            // queue passed pause_threshold_bytes, not yet resumed
        bool pausing_peer = false;         // we sent a PAUSE on this port and no XON since
        sc_core::sc_time pause_refresh_at; // when a still-congested switch re-sends PAUSE
        timed_event wake;
        switch_port_stats stats;

        void frame_arrived(frame_ptr f) override { sw->receive(index, std::move(f)); }
        bool frame_arriving(frame_ptr& f, const sc_core::sc_time& at) override { return sw->arriving(index, f, at); }
    };
    struct mac_entry {
        size_t port;
        sc_core::sc_time last_seen;
    };

    void receive(size_t in, frame_ptr f);
    bool arriving(size_t in, frame_ptr& f, const sc_core::sc_time& at);
    // The entry of `mac` when it was learned on `port` and has not aged out by `at`, else nullptr.
    mac_entry* learned_until(uint64_t mac, size_t port, const sc_core::sc_time& at);
    void count_received(const ahead& a);
    void learn(uint64_t mac, size_t port);
    void flood(size_t in, frame_ptr f);
    void enqueue(size_t out, frame_ptr f, size_t ingress);
    void settle(port_state& ps);
    void withdraw(port_state& ps);
    struct ahead_count {
        size_t frames = 0;
        uint64_t bytes = 0;
    };
    // Frames sent ahead that have started by now; occupancy(): the queue now, as the scheduler
    // alone would hold it.
    static ahead_count started_ahead(const port_state& ps);
    static ahead_count occupancy(const port_state& ps);
    static ahead_count queue_at_arrival(const port_state& ps, const sc_core::sc_time& at, size_t taken);
    void run_port(size_t p);
    void port_step(size_t p);
    void request_pause(size_t p);
    void release_pauses();
    void queue_control(size_t p, uint16_t quanta);
    sc_core::sc_time pause_time(size_t p, uint16_t quanta) const;
    void check_wiring();

    switch_params p_;
    sc_core::sc_time forwarding_latency_, aging_;
    std::vector<std::unique_ptr<port_state>> ports_;
    std::unordered_map<uint64_t, mac_entry> table_;
    size_t congested_ports_ = 0;
    bool wired_ = false;
    switch_stats stats_;
};

}  // namespace fecsim::net
