#include "traffic/host_bridge.h"

#include "models/process.h"
#include "models/sim_stats.h"
#include "config/config.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

namespace fecsim::traffic {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
constexpr size_t min_frame_no_fcs = net::min_frame_bytes - net::fcs_bytes;
// realtime: simulated time this far behind wall time in the measurement window is reported
// once (a host scheduling hiccup stays well below it; a model slower than real time soon passes it).
constexpr double lag_warn_s = 0.1;
}  // namespace

bool bridge_configured(const config& cfg) {
    const config_view b = cfg.view("bridge");
    return !b.string("tap").empty() || !b.string("udp").empty();
}

host_inbox::host_inbox(size_t capacity) : sc_prim_channel(sc_core::sc_gen_unique_name("host_inbox")), capacity_(capacity) {}

bool host_inbox::push(host_frame&& f) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (queue_.size() >= capacity_) return false;
        queue_.push_back(std::move(f));
    }
    async_request_update();
    return true;
}

bool host_inbox::pop(host_frame& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty()) return false;
    f = std::move(queue_.front());
    queue_.pop_front();
    return true;
}

void host_inbox::update() { arrived_.notify(SC_ZERO_TIME); }

host_bridge::host_bridge(sc_core::sc_module_name name, const host_bridge_params& p, std::unique_ptr<host_socket> socket)
    : sc_module(name), p_(p), socket_(std::move(socket)), inbox_(p.queue_frames) {
    spawn_method("inject", {&inbox_.arrived(), &inject_ev_.event()}, [this] { inject(); });
    if (p_.realtime) {
        spawn_method("pace", pace_ev_, [this] { pace(); });
        pace_ev_.notify(SC_ZERO_TIME);
    }
    wall_zero_ = host_socket::clock::now();
    socket_->start([this](std::vector<uint8_t>&& bytes, host_socket::clock::time_point arrived) {
        if (!inbox_.push(host_frame{std::move(bytes), arrived}))
            socket_->lost(bridge_loss::queue_full_to_sim,
                          std::to_string(p_.queue_frames) + " host frames already wait for the simulation");
    });
}

host_bridge::~host_bridge() { close(); }

// realtime: the simulated time matching the frame's arrival on the host clock (pace() keeps
// simulated time at or behind wall time, so this is rarely in the past); otherwise: now.
sc_time host_bridge::due(const host_frame& f) const {
    if (!p_.realtime) return sc_core::sc_time_stamp();
    const double s = std::chrono::duration<double>(f.arrived - wall_zero_).count();
    return sc_time(std::max(s, 0.0), sc_core::SC_SEC);
}

void host_bridge::inject() {
    sim_stats::count_event();
    const sc_time now = sc_core::sc_time_stamp();
    for (;;) {
        if (!next_) {
            host_frame f;
            if (!inbox_.pop(f)) return;
            next_ = std::move(f);
        }
        const sc_time at = std::max({due(*next_), tx_->tx_free_at(), now});
        if (at > now) {
            inject_ev_.notify(at - now);
            return;
        }
        const std::vector<uint8_t>& b = next_->bytes;
        net::frame_ptr f = net::frame_pool::instance().get(std::max(b.size(), min_frame_no_fcs));
        std::memcpy(f->data(), b.data(), b.size());
        std::fill(f->bytes.begin() + b.size(), f->bytes.end(), 0);  // the NIC pads short frames
        f->created = now;
        net::append_fcs(*f);
        tx_->send(std::move(f));
        ++tx_frames_;
        next_.reset();
    }
}

void host_bridge::frame_arrived(net::frame_ptr f) {
    if (pause_.handle(*f, tx_->speed_mbps())) return;  // the host's MAC consumes it: no software sees it
    if (f->size() < min_frame_no_fcs + net::fcs_bytes || !net::fcs_ok(*f))
        return socket_->lost(bridge_loss::bad_fcs, "a " + std::to_string(f->size()) + "-byte frame from the DUT");
    ++rx_frames_;
    socket_->send(std::vector<uint8_t>(f->bytes.begin(), f->bytes.end() - net::fcs_bytes));
}

void host_bridge::pace() {
    const auto wall = host_socket::clock::now();
    if (sc_core::sc_time_stamp() == SC_ZERO_TIME) wall_zero_ = wall;
    const double ahead = sc_core::sc_time_stamp().to_seconds() - std::chrono::duration<double>(wall - wall_zero_).count();
    if (ahead > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
    } else if (measuring_) {  // the driver's boot may lag: no concern of the host's
        max_lag_s_ = std::max(max_lag_s_, -ahead);
        if (!lag_reported_ && -ahead > lag_warn_s) {
            lag_reported_ = true;
            std::fprintf(stderr,
                         "fecsim: bridge (%s): the simulation runs %.0f ms behind real time (the model is slower than "
                         "the wire): the host sees stretched timing\n",
                         socket_->description().c_str(), -ahead * 1e3);
        }
    }
    pace_ev_.notify(p_.quantum);
}

void host_bridge::reset_stats() {
    tx_frames_ = rx_frames_ = 0;
    pause_.reset_window();
    measuring_ = true;
    max_lag_s_ = 0;
}

void host_bridge::report(nlohmann::json& j) const {
    j["kind"] = p_.kind;
    j["host"] = socket_->description();
    j["port"] = p_.port;
    j["pacing"] = p_.realtime ? "realtime" : "as_fast_as_possible";
    j["tx_frames"] = tx_frames_;  // window: into the simulated wire
    j["rx_frames"] = rx_frames_;  // window: out of it, to the host
    pause_.report(j);
    // Since the run started: everything the host side saw, including the warm-up.
    j["frames_from_host"] = socket_->frames_from_host();
    j["frames_to_host"] = socket_->frames_to_host();
    uint64_t total = 0;
    for (int c = 0; c < bridge_loss_causes; ++c) {
        const uint64_t n = socket_->losses(bridge_loss(c));
        j["lost"][bridge_loss_name(bridge_loss(c))] = n;
        total += n;
    }
    j["lost_total"] = total;
    if (p_.realtime) j["realtime_max_lag_ms"] = max_lag_s_ * 1e3;
}

std::string host_bridge::final_summary() const {
    uint64_t lost = 0;
    for (int c = 0; c < bridge_loss_causes; ++c) lost += socket_->losses(bridge_loss(c));
    std::string s = "bridge " + socket_->description() + ": " + std::to_string(socket_->frames_from_host()) +
                    " frames from the host, " + std::to_string(socket_->frames_to_host()) + " to the host, " +
                    std::to_string(lost) + " lost";
    if (p_.realtime) {
        char lag[96];
        std::snprintf(lag, sizeof lag, "; at most %.1f ms behind real time", max_lag_s_ * 1e3);
        s += lag;
    }
    return s;
}

std::unique_ptr<host_bridge> make_host_bridge(const char* name, const config& cfg) {
    const config_view b = cfg.view("bridge");
    host_bridge_params p;
    p.port = b.string("port");
    p.realtime = b.string("pacing") == "realtime";
    p.quantum = sc_time(b.number("quantum_us"), sc_core::SC_US);
    p.queue_frames = size_t(b.integer("queue_frames"));
    const std::string &tap = b.string("tap"), &udp = b.string("udp");
    if (!tap.empty() && !udp.empty())
        throw cfg.error_at("/bridge/udp", "the generator's port joins either a TAP device or a UDP peer, not both");
    const std::string key = tap.empty() ? "/bridge/udp" : "/bridge/tap";
    std::unique_ptr<host_socket> socket;
    try {
        if (!tap.empty()) {
            p.kind = "tap";
            socket = host_socket::open_tap(tap, p.queue_frames);
        } else {
            p.kind = "udp";
            host_port peer, local;
            std::string error;
            if (!parse_host_port(udp, peer, error)) throw cfg.error_at("/bridge/udp", error);
            if (peer.port == 0) throw cfg.error_at("/bridge/udp", "the peer's port must not be 0");
            if (!parse_host_port(b.string("udp_local"), local, error)) throw cfg.error_at("/bridge/udp_local", error);
            const auto v6 = [](const host_port& h) { return h.host.find(':') != std::string::npos; };
            if (v6(peer) != v6(local))  // an IPv6 literal has colons, IPv4 none
                throw cfg.error_at(param_error(std::vector<std::string>{"bridge.udp", "bridge.udp_local"},
                                               "the peer " + udp + " and the local address " + b.string("udp_local") +
                                                   " (bridge.udp_local) must both be IPv4 or both IPv6"));
            socket = host_socket::open_udp(peer, local, p.queue_frames);
        }
    } catch (const host_bind_error& e) {
        throw cfg.error_at("/bridge/udp_local", e.what());
    } catch (const host_socket_error& e) {
        throw cfg.error_at(key, e.what());
    }
    return std::make_unique<host_bridge>(name, p, std::move(socket));
}

}  // namespace fecsim::traffic
