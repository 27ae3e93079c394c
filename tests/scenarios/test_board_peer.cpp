// generator.kind=board: the peer is a second i.MX8MP running pktgen's send loop on its own core,
// driver and FEC. Its rate comes out of its core model, so it must respond to burst and
// clone_skb as the kernel's pktgen does; its own RX path runs when the bounced frames reach it.
#include "config/config.h"
#include "models/net/eth_switch.h"
#include "models/net/link.h"
#include "models/process.h"
#include "models/sim_context.h"
#include "platform/board_peer.h"
#include "platform/simulation.h"
#include "traffic/pktgen.h"
#include "traffic/pktgen_builder.h"
#include "traffic/sink.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace fecsim {
namespace {

using nlohmann::json;
const std::string dir = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/";
const std::string e1 = dir + "imx8mp-xdp-tx.json", e2 = dir + "imx8mp-xdp-tx-gen-rx.json",
                  e3 = dir + "imx8mp-xdp-tx-flow-control.json";

json run(const std::string& experiment, std::vector<std::string> sets, double duration_s = 0.02) {
    run_options quiet;
    quiet.quiet = true;
    sets.insert(sets.begin(), "generator.kind=board");
    sets.push_back("warmup_s=0.02");
    sets.push_back("duration_s=" + std::to_string(duration_s));
    json r = run_simulation(config::load(experiment, sets), quiet);
    for (const std::string& line : unbalanced_books(r)) ADD_FAILURE() << experiment << ": " << line;
    return r;
}

double tx_pps(const json& r) { return r["rates"]["generator_tx_pps"].get<double>(); }

TEST(board_peer, e1_sends_from_its_own_driver_and_the_books_balance) {
    const json r = run(e1, {});
    const json& g = r["generator"];
    EXPECT_EQ(g["kind"], "board");
    EXPECT_EQ(g["platform"], "imx8mp");
    // A 64-byte frame every ~1.7 us: a CPU-bound rate below the 1.488 Mpps line rate, above the
    // DUT's ~0.4 Mpps.
    EXPECT_GT(tx_pps(r), 500e3);
    EXPECT_LT(tx_pps(r), 1.4e6);
    // Every frame went through fec_enet_start_xmit and was completed by fec_enet_tx_queue.
    EXPECT_NEAR(g["pktgen"]["sofar"].get<double>(), g["tx_frames"].get<double>(), 1100.0);
    EXPECT_NEAR(g["driver"]["tx_completions"].get<double>(), g["tx_frames"].get<double>(), 1100.0);
    EXPECT_GT(g["cpu"]["functions"]["pktgen_xmit"]["calls"].get<uint64_t>(), 0u);
    EXPECT_GT(g["cpu"]["functions"]["fec_enet_txq_submit_skb"]["calls"].get<uint64_t>(), 0u);
    // The peer's frames reach the DUT, which drops the excess when its RX FIFO overflows.
    const json& a = r["accounting"];
    for (const char* b : {"generator.fec.tx", "generator.fec.rx", "link.generator.a_to_b", "dut.fec.rx"}) {
        SCOPED_TRACE(b);
        ASSERT_TRUE(a.contains(b));
        EXPECT_TRUE(a[b]["balanced"].get<bool>());
    }
    EXPECT_EQ(a["generator.fec.tx"]["out"], a["link.generator.a_to_b"]["in"]);
    EXPECT_GT(r["dut"]["rx_fifo_overflow_drops"].get<uint64_t>(), 0u);
    // E1's generator does not process the bounced frames: its address filter drops them.
    EXPECT_EQ(g["rx_frames"], 0);
    EXPECT_GT(g["rx_filtered"].get<uint64_t>(), 1000u);
    EXPECT_NE(g["final_summary"].get<std::string>().find("Result: OK"), std::string::npos);
}

// The cross-board lookahead (cpu.cross_board_lookahead, docs/performance.md) is exact: every
// figure but the simulator's own (sim.*) is the same with it off, with fewer model events (the
// wire starts the cores run with it, cpu.wire_starts_by_core, are not: off here).
TEST(board_peer, cross_board_lookahead_changes_nothing_but_the_event_count) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> studies = {
        {e1, {}}, {e2, {}}, {e3, {}}, {e3, {"link.topology=direct"}}};
    for (const auto& [experiment, sets] : studies) {
        SCOPED_TRACE(experiment + (sets.empty() ? "" : " " + sets[0]));
        std::vector<std::string> on_sets = sets, off_sets = sets;
        on_sets.push_back("cpu.wire_starts_by_core=false");
        off_sets.push_back("cpu.cross_board_lookahead=false");
        json on = run(experiment, on_sets, 0.01), off = run(experiment, off_sets, 0.01);
        EXPECT_LT(on["sim"]["kernel_events"].get<double>(), 0.9 * off["sim"]["kernel_events"].get<double>());
        EXPECT_EQ(on["sim"]["unrecorded_activity"], 0);
        for (json* r : {&on, &off}) {
            r->erase("sim");
            (*r)["config"]["cpu"].erase("cross_board_lookahead");
            (*r)["config"]["cpu"].erase("wire_starts_by_core");
        }
        EXPECT_EQ(on.dump(), off.dump());
    }
}

// The cores running their FECs' ends of frame too (cpu.ends_of_frame_by_core, docs/performance.md)
// is exact: every figure but the simulator's own (sim.*) is the same with it off, on E1 and E2
// (the peer receiving the bounced frames: RX steps of its own board due between its ends), and
// on E3 (flow control: the ends keep their events); E1 takes at least a fifth of an event fewer
// per frame.
TEST(board_peer, ends_of_frame_run_by_the_cores_change_nothing_but_the_event_count) {
    for (const std::string& experiment : {e1, e2, e3}) {
        SCOPED_TRACE(experiment);
        json on = run(experiment, {}, 0.01), off = run(experiment, {"cpu.ends_of_frame_by_core=false"}, 0.01);
        const double frames = on["dut"]["tx_frames"].get<double>() + on["generator"]["tx_frames"].get<double>();
        if (experiment == e1) {
            EXPECT_LT(on["sim"]["kernel_events"].get<double>(), off["sim"]["kernel_events"].get<double>() - 0.2 * frames);
        }
        EXPECT_EQ(on["sim"]["unrecorded_activity"], 0);
        for (json* r : {&on, &off}) {
            r->erase("sim");
            (*r)["config"]["cpu"].erase("ends_of_frame_by_core");
        }
        EXPECT_EQ(on.dump(), off.dump());
    }
}

// The cores running their FECs' wire starts (cpu.wire_starts_by_core, docs/performance.md) take
// one TX event per frame instead of two; E1's rates stay within a frame or two of the events'
// (the start's DMA can meet other DMA on the bus in another order), and with flow control
// (E3) nothing changes: the PAUSE frames keep the events.
TEST(board_peer, wire_starts_run_by_the_cores_keep_the_rates_with_fewer_events) {
    const json on = run(e1, {}, 0.01), off = run(e1, {"cpu.wire_starts_by_core=false"}, 0.01);
    const double frames = on["dut"]["tx_frames"].get<double>() + on["generator"]["tx_frames"].get<double>();
    EXPECT_LT(on["sim"]["kernel_events"].get<double>(), off["sim"]["kernel_events"].get<double>() - 0.9 * frames);
    for (const char* rate : {"xdp_prog_pps", "generator_tx_pps"})
        EXPECT_NEAR(on["rates"][rate].get<double>(), off["rates"][rate].get<double>(), 200.0) << rate;  // 2 frames in 10 ms
    json e3_on = run(e3, {}, 0.01), e3_off = run(e3, {"cpu.wire_starts_by_core=false"}, 0.01);
    EXPECT_EQ(e3_on["sim"]["kernel_events"], e3_off["sim"]["kernel_events"]);
    for (json* r : {&e3_on, &e3_off}) {
        r->erase("sim");
        (*r)["config"]["cpu"].erase("wire_starts_by_core");
    }
    EXPECT_EQ(e3_on.dump(), e3_off.dump());
}

TEST(board_peer, burst_raises_the_rate_and_shares_one_skb) {
    const json b1 = run(e1, {"generator.sample03=-b 1"});
    const json b32 = run(e1, {});  // sample03's default burst 32
    // burst 1: one pktgen_xmit call (lock, refcount, clone check, fill_packet) per packet.
    EXPECT_GT(tx_pps(b32), 1.1 * tx_pps(b1));
    const json& p1 = b1["generator"]["pktgen"];
    const json& p32 = b32["generator"]["pktgen"];
    // One call may straddle an edge of the window (counted at its start, its packet at the end).
    EXPECT_NEAR(p1["xmit_calls"].get<double>(),
                p1["sofar"].get<double>() + p1["queue_stopped"].get<double>() + p1["errors"].get<double>(), 1.0);
    EXPECT_NEAR(p32["sofar"].get<double>() / p32["xmit_calls"].get<double>(), 32.0, 1.0);
    // clone_skb 0 builds a new skb per call, which burst sends 32 times.
    EXPECT_NEAR(p32["skbs_built"].get<double>(), p32["xmit_calls"].get<double>(), 2.0);
}

TEST(board_peer, clone_skb_0_costs_an_skb_per_packet) {
    const json fresh = run(e1, {"generator.sample03=-b 1 -c 0"});
    const json cloned = run(e1, {"generator.sample03=-b 1 -c 1000000"});
    EXPECT_NEAR(fresh["generator"]["pktgen"]["skbs_built"].get<double>(),
                fresh["generator"]["pktgen"]["sofar"].get<double>(), 2.0);
    EXPECT_LE(cloned["generator"]["pktgen"]["skbs_built"].get<uint64_t>(), 1u);
    EXPECT_GT(tx_pps(cloned), 1.1 * tx_pps(fresh));
    EXPECT_GT(fresh["generator"]["cpu"]["functions"]["fill_packet_ipv4"]["calls"].get<uint64_t>(), 2000u);
}

TEST(board_peer, e2_peer_receives_and_its_ip_layer_drops_what_is_not_its_own) {
    const json e1r = run(e1, {});
    const json r = run(e2, {});
    const json& g = r["generator"];
    // xdp2 swaps the MACs but not the addresses: the bounce is for 198.18.0.42, not the peer.
    EXPECT_GT(g["rx_frames"].get<uint64_t>(), 1000u);
    // Every frame GRO received, but a batch (gro_normal_batch, 8) the window's start or end caught
    // on its way up.
    const int64_t received = g["stack"]["received"], not_local = g["stack"]["not_local"];
    EXPECT_LE(std::abs(received - not_local), 8);
    EXPECT_GT(g["stack"]["not_local"].get<uint64_t>(), 1000u);
    EXPECT_EQ(g["stack"]["udp_no_socket"], 0);
    EXPECT_GT(g["cpu"]["functions"]["napi_gro_receive"]["calls"].get<uint64_t>(), 0u);
    // Its softirq takes the core from the pktgen kthread, so it sends slower than in E1.
    EXPECT_LT(tx_pps(r), 0.9 * tx_pps(e1r));
}

// E3: both boards run flow control; the DUT's RX FIFO crosses RSEM while the peer bursts. On a
// direct cable its XOFF reaches the peer's MAC, which holds its transmitter; through the switch
// the switch port takes the PAUSE (and does not forward it), so the peer is never paused. A
// 64-entry RX ring fills between the DUT's coalesced interrupts, so its FIFO crosses RSEM in a
// short run (with 256 entries it may not: E3's peer sends at the DUT's pace).
TEST(board_peer, e3_a_direct_cable_pauses_the_peer_and_the_switch_keeps_the_pause) {
    const json direct = run(e3, {"link.topology=direct", "driver.rx_ring_size=64"}),
               sw = run(e3, {"link.topology=switch", "driver.rx_ring_size=64"});
    const uint64_t sent_direct = direct["dut"]["pause_frames_sent"];
    EXPECT_GT(sent_direct, 0u);
    EXPECT_NEAR(double(direct["generator"]["pause_frames_received"].get<uint64_t>()), double(sent_direct), 2.0);
    EXPECT_GT(direct["generator"]["tx_paused_s"].get<double>(), 0.0);
    EXPECT_GT(sw["dut"]["pause_frames_sent"].get<uint64_t>(), 0u);
    EXPECT_EQ(sw["generator"]["pause_frames_received"], 0);
    EXPECT_EQ(sw["generator"]["tx_paused_s"].get<double>(), 0.0);
}

// The peer is the same SoC as the DUT: a --set of the chip's parameters (the prediction band's
// CPI) moves its rate too (less than the CPI: its uncached descriptor and TDAR reads do not
// shrink); its own profile is used when the platforms differ.
TEST(board_peer, the_same_chip_takes_the_experiments_cpu_parameters) {
    const json slow = run(e1, {}), fast = run(e1, {"cpu.cpi=1.0"});
    EXPECT_GT(tx_pps(fast), 1.2 * tx_pps(slow));
    const json other = run(e1, {"cpu.cpi=1.0", "generator.platform=imx8mm"});
    EXPECT_EQ(other["generator"]["platform"], "imx8mm");
    EXPECT_LT(tx_pps(other), 1.1 * tx_pps(slow));
}

// A switch port takes back the frames it sent ahead that have not started when its partner
// sends it a PAUSE. The board peer's FEC takes early the frames its address filter refuses, so
// the peer must give such a frame back (board_peer::give_back_last, forwarded to its FEC) or the
// link throws. The smallest configuration that reaches it: E3's peer (flow control on,
// rx_enabled) on port 1 of a two-port switch (unbounded queue: no tail drop), a host on port 0
// sending it rounds of 64-byte frames: two for its station address, a gap (the link has then
// delivered them, so the next are offered early), two for another address (refused, taken
// early), and an idle time that shrinks every 2 ms. Once the accepted frames come faster than the
// peer's core takes them off its RX ring (about 330 kpps now), the ring fills and its FEC sends XOFF
// when the RX FIFO crosses RSEM, just after an accepted frame: the switch then takes back the
// refused frames it sent ahead. Sweeping the rate keeps that point inside the run if the peer's
// costs move.
struct withdrawal_run {
    std::vector<std::pair<uint64_t, uint64_t>> seen;  // the peer FEC's (rx_arrived, rx_filtered), every us
    nlohmann::json peer, sw, wire;                      // reports at the end
    uint64_t refused_sent = 0, given_back = 0;
};

// Between the switch's port and the peer: counts the frames the peer gives back.
struct counting_port : net::eth_sink {
    explicit counting_port(board_peer& p) : peer(p) {}
    void frame_arrived(net::frame_ptr f) override { peer.frame_arrived(std::move(f)); }
    bool frame_arriving(net::frame_ptr& f, const sc_core::sc_time& at) override { return peer.frame_arriving(f, at); }
    net::frame_ptr give_back_last(const sc_core::sc_time& now) override {
        net::frame_ptr f = peer.give_back_last(now);
        given_back += f != nullptr;
        return f;
    }
    board_peer& peer;
    uint64_t given_back = 0;
};

withdrawal_run run_withdrawals(bool tap) {
    using sc_core::SC_MS;
    using sc_core::SC_NS;
    using sc_core::SC_US;
    using sc_core::sc_time;
    fresh_simulation();
    activity::recording = false;  // one board: no cross-board lookahead
    const config cfg = config::load(e3, {"link.switch.queue_bytes=0", "link.switch.queue_frames=1000000"});
    board_peer peer(cfg);
    const net::link_params lp = net::link_params_from(cfg.view("link"));
    net::eth_switch sw("switch", net::switch_params_from(cfg.view("link").section("switch")), 2);
    net::link host_link("host_link", lp), peer_link("peer_link", lp);
    traffic::sink host;
    counting_port port(peer);
    host_link.bind(host, sw.port(0));
    sw.attach(0, host_link.end_b());
    peer_link.bind(port, sw.port(1));
    peer.connect(peer_link.end_a());
    sw.attach(1, peer_link.end_b());
    if (tap) peer_link.add_tap([](int, const net::frame&, sc_time, sc_time) {});  // the link delivers every frame

    // What the DUT's xdp2 would send back: pktgen's frame with the MACs swapped, to the peer's
    // station address (rx_enabled); the refused ones go to another unicast address.
    const traffic::pktgen_model_params p = traffic::pktgen_model_params_from(cfg, true);
    traffic::pktgen_builder builder(p.cmd, p.dev, p.seed);
    net::frame accepted, refused;
    builder.build(accepted, 1, sc_core::SC_ZERO_TIME);
    traffic::swap_macs(accepted);
    refused = accepted;
    refused.bytes[5] ^= 0x40;
    refused.bytes.resize(refused.size() - net::fcs_bytes);
    net::append_fcs(refused);

    withdrawal_run r;
    const sc_time start(20, SC_MS), end(60, SC_MS);  // the peer's driver is up by 20 ms; 6 ms to drain
    spawn_thread("host", [&] {
        wait(start);
        auto send = [&](const net::frame& f) {
            net::frame_ptr copy = net::frame_pool::instance().get(f.size());
            copy->bytes = f.bytes;
            wait(host_link.end_a().send(std::move(copy)) - sc_core::sc_time_stamp());
        };
        for (int idle_ns = 4000; idle_ns >= 0; idle_ns -= 250) {  // 234 to 445 kpps accepted
            const sc_time until = sc_core::sc_time_stamp() + sc_time(2, SC_MS);
            while (sc_core::sc_time_stamp() < until) {
                send(accepted), send(accepted);
                wait(sc_time(1800, SC_NS));
                send(refused), send(refused);
                r.refused_sent += 2;
                wait(sc_time(idle_ns, SC_NS));
            }
        }
    });
    // Off the nanosecond grid every arrival is on, so no read ties with a delivery.
    spawn_thread("look", [&] {
        wait(start + sc_time(0.5, SC_NS));
        while (sc_core::sc_time_stamp() < end) {
            const fec::enet_stats& s = peer.hardware().fec0().stats();
            r.seen.emplace_back(s.rx_arrived, s.rx_filtered);
            wait(sc_time(1, SC_US));
        }
    });
    run_for(end + sc_time(1, SC_US));
    peer.report(r.peer);
    sw.report(r.sw);
    peer_link.report(r.wire);
    r.given_back = port.given_back;
    return r;
}

TEST(board_peer, a_frame_its_fec_took_early_that_the_switch_takes_back_is_given_back_and_counted_at_its_arrival) {
    const withdrawal_run taken = run_withdrawals(false), delivered = run_withdrawals(true);
    EXPECT_GT(taken.peer["pause_frames_sent"].get<uint64_t>(), 0u);
    EXPECT_GT(taken.given_back, 0u) << "no frame the peer took early was taken back by the switch: the sweep of "
                                       "rates no longer crosses the peer's RX capacity";
    EXPECT_EQ(delivered.given_back, 0u);
    // Each refused frame is counted at its arrival (after the pause for those given back), as
    // when the link delivers every frame; every one of them reached the peer and was filtered.
    EXPECT_EQ(taken.seen, delivered.seen);
    EXPECT_EQ(taken.peer.dump(), delivered.peer.dump());
    EXPECT_EQ(taken.sw.dump(), delivered.sw.dump());
    EXPECT_EQ(taken.wire.dump(), delivered.wire.dump());
    EXPECT_EQ(taken.peer["rx_filtered"], taken.refused_sent);
    EXPECT_EQ(taken.seen.back().second, taken.refused_sent);
    EXPECT_EQ(taken.sw["ports"][1]["tx_frames"], taken.seen.back().first);
}

// A script line without meaning in the model is noted in the result (and so on stderr), as
// with the abstract model.
TEST(board_peer, script_lines_without_meaning_are_noted_in_the_result) {
    const json r = run(e1, {"generator.pktgen=[\"count 0\", \"start\"]"});
    ASSERT_TRUE(r["generator"].contains("notes")) << r["generator"].dump();
    ASSERT_EQ(r["generator"]["notes"].size(), 1u);
    EXPECT_EQ(r["generator"]["notes"][0], "generator.pktgen.1: start: the generator starts with the simulation");
}

TEST(board_peer, bad_settings_name_the_key) {
    auto message = [](std::vector<std::string> sets) {
        sets.insert(sets.begin(), "generator.kind=board");
        try {
            check_assembly(config::load(e1, sets));
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message({"generator.platform=imx9000"}).find("/generator/platform"), std::string::npos);
    EXPECT_NE(message({"generator.sample03=-w 1000"}).find("/generator/kind"), std::string::npos);
    // E1's kind is the experiment's: the --set that brought the delay is to blame.
    try {
        check_assembly(config::load(e1, {"generator.pktgen=[\"ratep 1000\"]"}));
        ADD_FAILURE() << "accepted";
    } catch (const config_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("--set generator.pktgen=[\"ratep 1000\"]: /generator/pktgen: pktgen's delay", 0), 0u)
            << e.what();
    }
    EXPECT_NE(message({"generator.start_delay_us=5"}).find("/generator/start_delay_us"), std::string::npos);
}

}  // namespace
}  // namespace fecsim
