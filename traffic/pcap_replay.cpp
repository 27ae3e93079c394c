#include "traffic/pcap_replay.h"

#include "models/process.h"
#include "models/sim_stats.h"
#include "config/config.h"
#include "traffic/pktgen_commands.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

namespace fecsim::traffic {

using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {
constexpr size_t max_frame_no_fcs = 9600;  // the ENET's jumbo limit; anything larger is not Ethernet we can send
constexpr size_t min_frame_no_fcs = net::min_frame_bytes - net::fcs_bytes;
}  // namespace

pcap_trace load_pcap(const std::string& path) {
    check_input_file(path);
    char err[PCAP_ERRBUF_SIZE] = "";
    std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(
        pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err), pcap_close);
    if (!p) throw config_error(path + ": cannot read capture: " + err);
    if (const int dlt = pcap_datalink(p.get()); dlt != DLT_EN10MB) {
        const char* name = pcap_datalink_val_to_name(dlt);
        throw config_error(path + ": link type " + (name ? std::string(name) + " (" + std::to_string(dlt) + ")" : std::to_string(dlt)) +
                           " is not Ethernet (EN10MB)");
    }
    pcap_trace t;
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    for (size_t n = 1;; ++n) {
        const int rc = pcap_next_ex(p.get(), &h, &data);
        if (rc == PCAP_ERROR_BREAK) break;  // end of file
        if (rc != 1) throw config_error(path + ": packet " + std::to_string(n) + ": " + pcap_geterr(p.get()));
        if (h->caplen < h->len)
            throw config_error(path + ": packet " + std::to_string(n) + ": only " + std::to_string(h->caplen) + " of " +
                               std::to_string(h->len) + " bytes captured (snaplen); whole frames are needed to replay");
        if (h->caplen < 14 || h->caplen > max_frame_no_fcs)
            throw config_error(path + ": packet " + std::to_string(n) + ": " + std::to_string(h->caplen) +
                               " bytes is not a frame that can be sent (14 to " + std::to_string(max_frame_no_fcs) + ")");
        if (t.bytes.size() + h->caplen > max_input_bytes)  // a pipe or device without end
            throw input_too_large(path);
        t.offset.push_back(t.bytes.size());
        t.bytes.insert(t.bytes.end(), data, data + h->caplen);
        t.time_ns.push_back(uint64_t(h->ts.tv_sec) * 1000000000ull + uint64_t(h->ts.tv_usec));
    }
    if (t.size() == 0) throw config_error(path + ": the capture holds no packets");
    return t;
}

pcap_replay_params pcap_replay_params_from(const config& cfg, bool flow_control) {
    const config_view g = cfg.view("generator");
    pcap_replay_params p;
    p.path = g.string("pcap_file");
    // Blame the key the user changed: kind set by a --set, or the file left out of the experiment.
    if (p.path.empty())
        throw cfg.error_at(param_error(std::vector<std::string>{"generator.kind", "generator.pcap_file"},
                                       "generator.kind pcap needs a capture file (generator.pcap_file)"));
    p.path = resolve_config_path(cfg, "/generator/pcap_file");
    try {  // no file there: blame the key that named it (a bad capture's errors name the capture)
        check_input_file(p.path);
        if (!std::ifstream(p.path)) throw input_file_error(p.path + ": cannot open file");
    } catch (const input_file_error& e) {
        throw cfg.error_at("/generator/pcap_file", e.what());
    }
    for (auto [key, mac] : {std::pair{"dst_mac", &p.dst_mac}, std::pair{"src_mac", &p.src_mac}}) {
        const std::string& text = g.string(std::string("pcap.") + key);
        if (text.empty()) continue;
        *mac = parse_mac(text);
        if (!*mac) throw cfg.error_at(std::string("/generator/pcap/") + key, "expected aa:bb:cc:dd:ee:ff, got \"" + text + "\"");
    }
    const std::string& mode = g.string("pcap.mode");
    p.mode = mode == "rate" ? replay_mode::rate : mode == "line" ? replay_mode::line : replay_mode::recorded;
    p.rate_pps = g.number("pcap.rate_pps");
    p.loops = uint64_t(g.integer("pcap.loops"));
    p.flow_control = flow_control;
    p.start_delay_ns = g.number("start_delay_us") * 1e3;
    return p;
}

pcap_replay::pcap_replay(sc_core::sc_module_name name, const pcap_replay_params& p)
    : sc_module(name), p_(p), trace_(load_pcap(p.path)), pause_(p.flow_control) {
    for (size_t i = 0; i < trace_.size(); ++i) {  // every frame has its 14-byte header (load_pcap)
        if (p.dst_mac) std::copy(p.dst_mac->begin(), p.dst_mac->end(), trace_.bytes.begin() + trace_.offset[i]);
        if (p.src_mac) std::copy(p.src_mac->begin(), p.src_mac->end(), trace_.bytes.begin() + trace_.offset[i] + 6);
    }
    // As tcpreplay: each frame waits for its gap to the previous one; a frame stamped earlier
    // than its predecessor goes at once instead of being due centuries later.
    recorded_ns_.resize(trace_.size());
    for (size_t i = 1; i < trace_.size(); ++i)
        recorded_ns_[i] = recorded_ns_[i - 1] + (trace_.time_ns[i] > trace_.time_ns[i - 1] ? trace_.time_ns[i] - trace_.time_ns[i - 1] : 0);
    spawn_method("on_tx", tx_ev_, [this] { on_tx(); });
    started_at_ = loop_base_ = sc_time(p.start_delay_ns, SC_NS);
    tx_ev_.notify(started_at_);
}

// When frame `next_` of the current loop is due.
sc_time pcap_replay::due(sc_time now) const {
    switch (p_.mode) {
    case replay_mode::recorded:
        return loop_base_ + sc_time(double(recorded_ns_[next_]), SC_NS);
    case replay_mode::rate:
        return started_at_ + sc_time(double(sent_total_) * 1e9 / p_.rate_pps, SC_NS);
    case replay_mode::line:
        break;
    }
    return now;
}

void pcap_replay::on_tx() {
    sim_stats::count_event();
    if (finished_) return;
    const sc_time now = sc_core::sc_time_stamp();
    // The NIC hands a frame over only when the wire is free and no PAUSE holds it.
    sc_time at = std::max(due(now), tx_->tx_free_at());
    if (pause_.paused(now)) at = std::max(at, pause_.until());
    if (at > now) {
        tx_ev_.notify(at - now);
        return;
    }
    const size_t len = trace_.length(next_);
    net::frame_ptr f = net::frame_pool::instance().get(std::max(len, min_frame_no_fcs));
    std::memcpy(f->data(), trace_.bytes.data() + trace_.offset[next_], len);
    std::fill(f->bytes.begin() + len, f->bytes.end(), 0);  // the NIC pads short frames
    f->created = now;
    net::append_fcs(*f);
    tx_bytes_ += f->size();
    tx_->send(std::move(f));
    ++tx_frames_;
    ++sent_total_;
    if (++next_ == trace_.size()) {
        next_ = 0;
        ++loop_;
        if (p_.loops && loop_ >= p_.loops) {
            finished_ = true;
            ended_at_ = tx_->tx_free_at();
            finished_ev_.notify(SC_ZERO_TIME);
            return;
        }
        // The next loop starts when the last frame of this one has left.
        loop_base_ = tx_->tx_free_at();
    }
    tx_ev_.notify(std::max(due(now), tx_->tx_free_at()) - now);
}

void pcap_replay::frame_arrived(net::frame_ptr f) {
    const sc_time now = sc_core::sc_time_stamp();
    take_arrivals(now);
    receive(std::move(f), now);
}

bool pcap_replay::frame_arriving(net::frame_ptr& f, const sc_time& at) {
    take_arrivals(sc_core::sc_time_stamp());
    if (!only_analysed(*f)) return false;
    arriving_.push(at, std::move(f));
    return true;
}

// Whether receiving `f` changes nothing but the statistics (pause_frames_received, the
// analysis), so that it may be received later than its arrival, with its arrival time: any
// frame but a PAUSE frame with flow control on, which holds the transmitter. Fixed for the run.
bool pcap_replay::only_analysed(const net::frame& f) const {
    return !pause_.flow_control() || net::pause_quanta(f) < 0;
}

// Receives the frames taken early that the link would have delivered by `now`, each with its
// own arrival time (the analysis' latency).
void pcap_replay::take_arrivals(const sc_time& now) {
    arriving_.arrived_by(now, [this](net::frame_ptr f, const sc_time& at) { receive(std::move(f), at); });
}

// The statistics readers are const: receiving the frames the link would have delivered by now
// (happened_by) changes what they read exactly as its delivery would have.
void pcap_replay::settle() const { const_cast<pcap_replay*>(this)->take_arrivals(sc_core::sc_time_stamp()); }

// A frame at its arrival `at` (now), or one only analysed (only_analysed) at any time after it.
void pcap_replay::receive(net::frame_ptr f, const sc_time& at) {
    if (pause_.handle(*f, tx_ ? tx_->speed_mbps() : 1000.0)) {
        if (pause_.flow_control() && !finished_) tx_ev_.notify(SC_ZERO_TIME);
        return;
    }
    rx_.analyse(*f, at);
}

void pcap_replay::reset_stats() {
    take_arrivals(sc_core::sc_time_stamp());  // those that arrived before the window
    tx_frames_ = tx_bytes_ = 0;
    rx_.reset();
    pause_.reset_window();
}

void pcap_replay::report(nlohmann::json& j) const {
    settle();
    j["kind"] = "pcap";
    j["tx_frames"] = tx_frames_;
    j["tx_bytes"] = tx_bytes_;
    j["rx_frames"] = rx_.stats().frames;
    pause_.report(j);
    j["loops_completed"] = loop_;
    if (finished_) j["ended_s"] = ended_at_.to_seconds();  // the last frame has left
    rx_.report(j["rx"]);
}

std::string pcap_replay::final_summary() const {
    return "pcap replay: " + std::to_string(sent_total_) + " frames sent (" + std::to_string(loop_) +
           " complete loops of " + std::to_string(trace_.size()) + ") from " + p_.path;
}

}  // namespace fecsim::traffic
