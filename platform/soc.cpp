#include "platform/soc.h"

#include "platform/board_peer.h"
#include "traffic/live_report.h"

namespace fecsim {

namespace {

// XDP program runs: every verdict the driver counted (xdp2's `proto N: pkt/s` is this rate).
uint64_t program_runs(const nlohmann::json& xdp) {
    if (!xdp.is_object()) return 0;
    return xdp.value("pass", 0ull) + xdp.value("drop", 0ull) + xdp.value("tx", 0ull) + xdp.value("redirect", 0ull);
}

}  // namespace

soc::soc(const config& cfg, const soc_options& opt) {
    activity::recording = cfg.view("generator").string("kind") == "board" && cfg.view("cpu").boolean("cross_board_lookahead");
    activity::defer_steps = cfg.view("cpu").boolean("wire_starts_by_core");
    activity::defer_ends = cfg.view("cpu").boolean("ends_of_frame_by_core");
    if (!opt.trace_path.empty()) trace_ = std::make_unique<trace_writer>(opt.trace_path);
    board_software sw;
    sw.trace = trace_.get();
    dut_ = std::make_unique<board>(cfg, "", sw);
    xdp_prog_ = cfg.view("driver").string("xdp_prog");
    build_network(cfg, opt);
    build_lookahead(cfg);
}

soc::~soc() = default;

void soc::build_network(const config& cfg, const soc_options& opt) {
    const config_view l = cfg.view("link");
    const bool flow_control = l.boolean("flow_control");
    // The wire bridge takes the generator's place, or a switch port of its own next to it.
    const bool bridged = traffic::bridge_configured(cfg);
    const bool bridge_on_switch = bridged && cfg.view("bridge").string("port") == "switch";
    if (!bridged && cfg.view("bridge").string("port") == "switch")  // else silently a run without a host
        throw cfg.error_at("/bridge/port", "a switch port for the host needs --tap NAME or --udp-bridge HOST:PORT");
    if (bridge_on_switch && l.string("topology") != "switch")
        throw cfg.error_at("/bridge/port", "a switch port for the host needs link.topology switch");
    if (bridged) {
        bridge_owned_ = traffic::make_host_bridge("bridge", cfg);
        bridge_ = bridge_owned_.get();
    }
    if (bridged && !bridge_on_switch) {
        generator_ = std::move(bridge_owned_);
    } else if (cfg.view("generator").string("kind") == "board") {
        auto peer = std::make_unique<board_peer>(cfg);
        peer_ = peer.get();
        generator_ = std::move(peer);
    } else {
        generator_ = traffic::make_generator("generator", cfg, flow_control);
    }
    const net::link_params lp = net::link_params_from(l);

    // links_[0] always joins the DUT (side a) to its peer (side b): the capture point.
    links_.push_back(std::make_unique<net::link>("dut_link", lp));
    net::link& dut_link = *links_[0];
    fec::enet& fec = dut_->fec0();
    fec.attach_wire(dut_link.end_a());
    if (l.string("topology") == "direct") {
        dut_link.bind(fec, *generator_);
        generator_->connect(dut_link.end_b());
    } else {
        const net::switch_params sp = net::switch_params_from(l.section("switch"));
        if (auto problem = net::check(sp)) throw cfg.error_at("/link/switch/" + problem->key, problem->message);
        switch_ = std::make_unique<net::eth_switch>("switch", sp, bridge_on_switch ? 3 : 2);
        dut_link.bind(fec, switch_->port(0));
        switch_->attach(0, dut_link.end_b());
        links_.push_back(std::make_unique<net::link>("generator_link", lp));
        net::link& gen_link = *links_[1];
        gen_link.bind(*generator_, switch_->port(1));
        generator_->connect(gen_link.end_a());
        switch_->attach(1, gen_link.end_b());
        if (bridge_on_switch) {
            links_.push_back(std::make_unique<net::link>("bridge_link", lp));
            net::link& bridge_link = *links_[2];
            bridge_link.bind(*bridge_, switch_->port(2));
            bridge_->connect(bridge_link.end_a());
            switch_->attach(2, bridge_link.end_b());
        }
    }

    if (trace_) {
        dut_link.add_tap([this](int direction, const net::frame& f, sc_core::sc_time start, sc_core::sc_time end) {
            trace_->frame(direction, f, start, end);
        });
    }
    if (!opt.pcap_path.empty()) {
        capture_ = std::make_unique<traffic::pcap_writer>(opt.pcap_path);
        capturing_ = opt.pcap_warmup;
        // The DUT is side a of its link, so the link's direction is the capture interface.
        dut_link.add_tap([this](int direction, const net::frame& f, sc_core::sc_time start, sc_core::sc_time) {
            if (capturing_) capture_->write(f, start, direction);
        });
    }
}

// The boards share nothing but the wire: what one does at time x reaches another's MAC no earlier
// than x + L, L the shortest way a frame takes between them (a minimum frame on the wire plus
// propagation, per link; the switch stores and forwards, after its forwarding latency unless it
// emits PAUSE: a frame from one board can then make it send XON to the other at once). Each
// core passes sync points while only the other board has activity due that cannot reach it
// before the core checks again (models/cpu/core.h, docs/performance.md "Cross-board lookahead").
void soc::build_lookahead(const config& cfg) {
    // Arrivals into a board's MAC are that board's activity.
    links_[0]->deliver_into(net::link::b_to_a, dut_->record());
    if (!peer_) return;
    board& peer = peer_->hardware();
    net::link& peer_link = switch_ ? *links_[1] : *links_[0];
    const auto into_peer = switch_ ? net::link::b_to_a : net::link::a_to_b;
    peer_link.deliver_into(into_peer, peer.record());
    if (!cfg.view("cpu").boolean("cross_board_lookahead")) return;

    const net::link_params lp = links_[0]->params();
    const sc_core::sc_time hop((net::preamble_bytes + net::min_frame_bytes) * 8e3 / lp.speed_mbps + lp.propagation_ns,
                               sc_core::SC_NS);
    sc_core::sc_time latency = hop;
    if (switch_) latency = hop + hop + (switch_->params().emit_pause ? sc_core::SC_ZERO_TIME : sc_core::sc_time(switch_->params().forwarding_latency_ns, sc_core::SC_NS));
    // L counts a minimum frame: a shorter one from a board's MAC would arrive sooner (the MAC
    // pads every frame it appends the FCS to; the driver always has it do so).
    links_[0]->require_min_frame(net::link::a_to_b, net::min_frame_bytes);
    peer_link.require_min_frame(into_peer == net::link::a_to_b ? net::link::b_to_a : net::link::a_to_b, net::min_frame_bytes);
    dut_->core0().set_lookahead({&dut_->record(), {&peer.record()}, latency});
    peer.core0().set_lookahead({&peer.record(), {&dut_->record()}, latency});
}

std::vector<std::string> soc::live_lines(double interval_s) {
    std::vector<std::string> lines = generator_->live_lines(interval_s);  // iperf's interval lines
    const firmware::linux_system& system = dut_->system();
    nlohmann::json now;
    system.report(now);
    const auto& x = now["dut"]["xdp"];
    auto rate = [&](uint64_t cur, uint64_t& last) {
        const uint64_t d = cur - last;
        last = cur;
        return uint64_t(d / interval_s + 0.5);
    };
    if (const auto* proto = system.xdp_proto_counts()) {  // xdp1 / xdp2: per-protocol program runs
        for (unsigned p = 0; p < proto->size(); ++p)
            if ((*proto)[p] != last_proto_[p]) lines.push_back(traffic::xdp2_line(p, rate((*proto)[p], last_proto_[p])));
        return lines;
    }
    if (!x.is_object()) return lines;
    const uint64_t runs = program_runs(x);
    const uint64_t errors = x.value("tx_errors", 0ull) + (xdp_prog_ == "drop" ? 0 : x.value("drop", 0ull));
    const uint64_t rx = rate(runs, last_runs_), err = rate(errors, last_errors_);
    const uint64_t xmit = rate(dut_->fec0().stats().tx_frames, last_tx_);
    if (xdp_prog_ == "redirect") lines.push_back(traffic::xdp_redirect_summary(rx, err, xmit));
    else if (xdp_prog_ == "drop" || xdp_prog_ == "pass" || xdp_prog_ == "tx")
        lines.push_back(traffic::xdp_bench_summary(rx, err, xdp_prog_ == "drop"));
    return lines;
}

nlohmann::json soc::ring_occupancy() const { return dut_->ring_occupancy(); }

void soc::reset_stats() {
    if (trace_) trace_->start();
    capturing_ = true;
    dut_->reset_stats();
    generator_->reset_stats();
    if (bridge_owned_) bridge_owned_->reset_stats();
    // xdp1/xdp2's per-protocol map is not a window statistic (the tool reads it as it stands).
    const auto* proto = dut_->system().xdp_proto_counts();
    last_proto_ = proto ? *proto : decltype(last_proto_){};
    last_runs_ = last_errors_ = last_tx_ = 0;
    for (auto& l : links_) l->reset_stats();
    if (switch_) switch_->reset_stats();
}

nlohmann::json soc::report(double window_s) const {
    nlohmann::json j;
    dut_->report(j, window_s);
    generator_->report(j["generator"]);
    j["generator"]["final_summary"] = generator_->final_summary();  // what the tool prints when stopped
    links_[0]->report(j["link"]["dut"]);
    if (links_.size() > 1) links_[1]->report(j["link"]["generator"]);
    if (bridge_owned_) {  // on a switch port of its own
        bridge_owned_->report(j["bridge"]);
        j["bridge"]["final_summary"] = bridge_owned_->final_summary();
        links_[2]->report(j["link"]["bridge"]);
    }
    if (switch_) switch_->report(j["link"]["switch"]);

    nlohmann::json& books = j["accounting"];
    if (const auto nic = generator_->nic_books()) books["generator.nic_tx"] = nic->to_json();
    const char* link_names[] = {"link.dut", "link.generator", "link.bridge"};  // as in `link` above
    for (size_t i = 0; i < links_.size(); ++i)
        for (int d : {net::link::a_to_b, net::link::b_to_a})
            books[std::string(link_names[i]) + (d == net::link::a_to_b ? ".a_to_b" : ".b_to_a")] = links_[i]->books(d).to_json();
    books["dut.fec.rx"] = dut_->fec0().rx_ledger().to_json();
    books["dut.fec.tx"] = dut_->fec0().tx_ledger().to_json();
    if (peer_) peer_->add_books(books);

    const fec::enet_stats& fs = dut_->fec0().stats();
    j["rates"]["generator_tx_pps"] = generator_->tx_frames() / window_s;
    j["rates"]["generator_rx_pps"] = generator_->rx_frames() / window_s;
    generator_->report_rates(j["rates"], window_s);
    j["rates"]["dut_rx_pps"] = fs.rx_frames / window_s;
    j["rates"]["dut_tx_pps"] = fs.tx_frames / window_s;
    const auto& x = j["dut"]["xdp"];
    j["rates"]["xdp_prog_pps"] = program_runs(x) / window_s;
    return j;
}

void soc::check() const {
    dut_->check();
    if (peer_) peer_->hardware().check();
}

void soc::finish() {
    if (bridge_) bridge_->close();
    if (capture_) capture_->flush();
    if (trace_) {
        trace_->close_open_spans(sc_core::sc_time_stamp());
        trace_->close();
    }
    check();
}

}  // namespace fecsim
