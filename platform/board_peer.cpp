#include "platform/board_peer.h"

#include "traffic/live_report.h"
#include "traffic/pktgen.h"

#include <algorithm>

namespace fecsim {

namespace {

// The peer board's configuration: its profile, the experiment's link (speed, flow control), no
// XDP program, the generator NIC's TX ring, and its station address. Without rx_enabled the
// peer does not take the bounced frames (E1: the generator does not process them): its station
// address is then the device MAC with the locally administered bit flipped, so pktgen's source
// MAC, where xdp2 sends them back, misses its address filter.
config peer_config(const config& cfg, const traffic::pktgen_model_params& p) {
    const config_view g = cfg.view("generator");
    traffic::mac_addr station = p.dev.mac;
    if (!p.rx_enabled) station[0] ^= 0x02;
    nlohmann::json settings = {
        {"seed", cfg.seed()},
        {"link", cfg.tree().at("link")},
        {"driver", {{"xdp_prog", "none"}, {"tx_ring_size", g.integer("tx_ring_size")}}},
        {"soc", {{"fec", {{"mac_address", traffic::format_mac(station)}}}}},
    };
    const std::string& platform = g.string("platform");
    // The same SoC as the DUT: the core, memory and coherency parameters an experiment or a
    // --set gives (a calibration, a prediction band's CPI) are the chip's, so both boards take them.
    if (platform == cfg.tree().at("platform"))
        for (const char* chip : {"cpu", "mem", "coherency"}) settings[chip] = cfg.tree().at(chip);
    try {
        return config::for_platform(platform, settings, cfg.origin_of("/generator/platform") + " (generator.platform)");
    } catch (const config_error& e) {
        throw cfg.error_at("/generator/platform", "the peer board \"" + platform + "\": " + e.what());
    }
}

traffic::pktgen_model_params checked_params(const config& cfg) {
    traffic::pktgen_model_params p = traffic::pktgen_model_params_from(cfg, cfg.view("link").boolean("flow_control"));
    if (p.cmd.delay_ns)  // blame the commands a --set gave (else the experiment's), not only the kind
        throw cfg.error_at(param_error(std::vector<std::string>{"generator.kind", "generator.sample03",
                                                                "generator.pktgen_file", "generator.pktgen"},
                                       "pktgen's delay (delay, rate, ratep, sample03 -w) is not modelled on the board "
                                       "peer (generator.kind board) yet; use kind pktgen for a paced generator"));
    if (p.start_delay_ns > 0)
        throw cfg.error_at("/generator/start_delay_us", "not used by kind board (pktgen starts when the peer's driver is up)");
    return p;
}

}  // namespace

board_peer::board_peer(const config& cfg) {
    const traffic::pktgen_model_params p = checked_params(cfg);
    cfg_ = peer_config(cfg, p);
    notes_ = p.cmd.notes;
    builder_ = std::make_unique<traffic::pktgen_builder>(p.cmd, p.dev, p.seed);
    board_software sw;
    sw.local_ipv4 = p.dev.ipv4;
    firmware::pktgen_dev_params& pg = sw.pktgen.emplace();
    pg.count = p.cmd.count;
    pg.clone_skb = p.cmd.clone_skb;
    pg.burst = p.cmd.burst;
    // fill_packet's bytes from the same builder the abstract model uses (the FEC appends the FCS).
    pg.build = [this, frame = net::frame{}](std::vector<uint8_t>& out, uint32_t seq, sc_core::sc_time now) mutable {
        builder_->build(frame, seq, now);
        out.assign(frame.bytes.begin(), frame.bytes.end() - net::fcs_bytes);
    };
    board_ = std::make_unique<board>(cfg_, "peer_", sw);
}

board_peer::~board_peer() = default;

void board_peer::connect(net::eth_tx& tx) { board_->fec0().attach_wire(tx); }

void board_peer::frame_arrived(net::frame_ptr f) { board_->fec0().frame_arrived(std::move(f)); }

bool board_peer::frame_arriving(net::frame_ptr& f, const sc_core::sc_time& at) {
    return board_->fec0().frame_arriving(f, at);
}

net::frame_ptr board_peer::give_back_last(const sc_core::sc_time& now) { return board_->fec0().give_back_last(now); }

void board_peer::reset_stats() {
    board_->reset_stats();
    window_start_ = sc_core::sc_time_stamp();
}

uint64_t board_peer::tx_frames() const { return board_->fec0().stats().tx_frames; }

uint64_t board_peer::rx_frames() const { return board_->system().packets(); }

void board_peer::report(nlohmann::json& j) const {
    const double window_s = (sc_core::sc_time_stamp() - window_start_).to_seconds();
    nlohmann::json b;
    board_->report(b, window_s);
    j = std::move(b["dut"]);  // the FEC's and driver's statistics, laid out as the DUT's
    j["kind"] = "board";
    j["platform"] = cfg_.tree().at("platform");
    j["tx_frames"] = tx_frames();
    j["rx_frames"] = rx_frames();
    j["mem"] = std::move(b["mem"]);
    j["coherency"] = std::move(b["coherency"]);
    const firmware::pktgen_thread* pg = board_->system().pktgen();  // null until the driver is up
    const firmware::pktgen_dev_stats st = pg ? pg->stats : firmware::pktgen_dev_stats{};
    if (!notes_.empty()) j["notes"] = notes_;  // as the abstract model's: fecsim run prints them
    j["pktgen"] = {{"sofar", st.sofar}, {"tx_bytes", st.tx_bytes}, {"xmit_calls", st.xmit_calls},
                   {"skbs_built", st.skbs_built}, {"queue_stopped", st.queue_stopped}, {"errors", st.errors}};
    if (pg && !pg->running()) j["ended_s"] = pg->stopped().to_seconds();  // `count` packets sent, as pktgen's
    // The core's time per packet sent (pktgen's figure), not per packet received.
    nlohmann::json& core = b["cpu"]["core0"];
    for (auto& [category, ns] : core["time_ns"].items())
        core["ns_per_packet"][category] = st.sofar ? ns.get<double>() / double(st.sofar) : 0.0;
    j["cpu"] = std::move(core);
}

void board_peer::add_books(nlohmann::json& books) const {
    books["generator.fec.rx"] = board_->fec0().rx_ledger().to_json();
    books["generator.fec.tx"] = board_->fec0().tx_ledger().to_json();
}

std::string board_peer::final_summary() const {
    const firmware::pktgen_thread* started = board_->system().pktgen();
    if (!started) return "";
    const firmware::pktgen_thread& pg = *started;
    const sc_core::sc_time end = pg.running() ? sc_core::sc_time_stamp() : pg.stopped();
    const double elapsed_ns = end > pg.started() ? (end - pg.started()).to_seconds() * 1e9 : 0.0;
    return traffic::pktgen_result_line(uint64_t(elapsed_ns), 0, pg.sofar_total(), pg.last_pkt_size(), pg.stats.errors);
}

}  // namespace fecsim
