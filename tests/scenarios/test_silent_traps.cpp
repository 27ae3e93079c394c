// Runs that used to end with exit 0 and a wrong or empty answer without a word: each now either
// does what the user meant or ends with a warning naming the likely cause.
#include "tests/support/shell.h"
#include "traffic/pcap_replay.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using fecsim::test::outcome;

const std::string fecsim = std::string(FECSIM_BINARY_DIR) + "/fecsim";
const std::string e1 = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx8mp-xdp-tx.json";
const std::string dut_mac = "00:04:9f:07:9f:01";

struct scratch {
    fs::path dir = fs::temp_directory_path() / ("fecsim-traps-" + std::to_string(::getpid()));
    scratch() { fs::create_directories(dir); }
    ~scratch() { fs::remove_all(dir); }
    std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

// `fecsim run EXPERIMENT ARGS --quiet --out result.json`: the outcome and the result document.
std::pair<outcome, nlohmann::json> run(const scratch& s, const std::string& args, const std::string& exp = e1) {
    const std::string out = s / "result.json";
    fs::remove(out);
    outcome o = fecsim::test::shell(fecsim + " run " + exp + " --quiet --out " + out + " " + args);
    nlohmann::json r;
    if (fs::exists(out)) r = nlohmann::json::parse(std::ifstream(out));
    return {o, r};
}

std::vector<std::string> stderr_warnings(const std::string& err) {
    std::vector<std::string> w;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("fecsim: warning: ", 0) == 0) w.push_back(line.substr(17));
    return w;
}

TEST(silent_traps, a_sample03_override_keeps_the_experiments_other_options) {
    scratch s;
    const double window_s = 0.05;
    const auto [o, r] = run(s, "--set duration_s=0.05 --set 'generator.sample03=-s 1500'");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(r["config"]["generator"]["sample03"], "-d 198.18.0.42 -m " + dut_mac + " -s 1500");
    // 1500-byte frames at line rate (81,274 pps with FCS, preamble and gap), all processed: the
    // program runs lag reception by at most one coalesced batch (200 frames) at the window's edge.
    EXPECT_NEAR(r["rates"]["dut_rx_pps"].get<double>(), 81274, 2000);
    EXPECT_NEAR(r["rates"]["xdp_prog_pps"].get<double>(), r["rates"]["dut_rx_pps"].get<double>(), 200 / window_s);
    EXPECT_EQ(r["warnings"], nlohmann::json::array());
    EXPECT_EQ(stderr_warnings(o.err), std::vector<std::string>{});
}

TEST(silent_traps, frames_the_dut_filters_out_end_with_a_warning_naming_the_mac) {
    scratch s;
    const auto [o, r] = run(s, "--set duration_s=0.01 --set 'generator.sample03=-m 02:00:00:00:00:01'");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(r["rates"]["xdp_prog_pps"], 0);
    const auto w = stderr_warnings(o.err);
    ASSERT_EQ(w.size(), 2u) << o.err;
    EXPECT_EQ(w[0], "100% of the frames reaching the DUT were dropped by its MAC address filter: set the "
                    "generator's destination MAC to the DUT's " + dut_mac + " (sample03 -m or pktgen dst_mac)");
    EXPECT_EQ(w[1], "the DUT processed no packets in the measurement window: every frame was dropped by the "
                    "DUT's address filter");
    EXPECT_EQ(r["warnings"], nlohmann::json(w)) << "the result file carries the same warnings";
}

TEST(silent_traps, frames_longer_than_the_duts_receive_limit_end_with_a_warning) {
    // pktgen sends 9000-byte frames (it checks no MTU); the DUT's FEC flags them LG and the
    // driver drops them, so XDP sees nothing while the DUT "receives" at line rate.
    scratch s;
    const auto [o, r] = run(s, "--set duration_s=0.01 --set 'generator.sample03=-s 9000'");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(r["rates"]["xdp_prog_pps"], 0);
    const uint64_t oversize = r["dut"]["mib"]["RMON_R_OVERSIZE"];
    EXPECT_GT(oversize, 100u);
    const auto w = stderr_warnings(o.err);
    ASSERT_EQ(w.size(), 1u) << o.err;
    EXPECT_EQ(w[0], std::to_string(oversize) + " frames reaching the DUT were longer than its receive limit, 1984 bytes "
                    "with the FCS (RCR MAX_FL; MIB RMON_R_OVERSIZE, RMON_R_JAB), and its driver dropped them as length "
                    "errors: pktgen's frames (sample03 -s, pkt_size) must fit it");
    EXPECT_EQ(r["warnings"], nlohmann::json(w));
}

TEST(silent_traps, a_tcp_client_addressing_another_mac_is_told_so) {
    // The SYN is filtered in the warm-up and sent again only after 1 s: the window sees no frame,
    // so only the TCP warning can name the cause (it named the receiver and the start delay).
    scratch s;
    const std::string e6 = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx8qxp-iperf-rx.json";
    const auto [o, r] = run(s, "--set duration_s=0.05 --set generator.tcp.dst_mac=02:00:00:00:00:01", e6);
    ASSERT_EQ(o.status, 0) << o.err;
    const auto w = stderr_warnings(o.err);
    ASSERT_GE(w.size(), 1u) << o.err;
    EXPECT_EQ(w[0], "the TCP connection was never established (no SYN-ACK from 198.18.0.42): generator.tcp.dst_mac "
                    "02:00:00:00:00:01 is not the DUT's MAC " + r["config"]["soc"]["fec"]["mac_address"].get<std::string>() +
                    ", whose address filter drops the SYN (\"\" sends to the DUT's)");
}

TEST(silent_traps, xdp_tx_frames_dropped_for_a_full_tx_ring_end_with_a_warning) {
    // A TX ring shorter than what one NAPI poll sends back: most XDP_TX frames find it full, so
    // xdp_prog_pps (what xdp2 prints) is above what the DUT transmits.
    scratch s;
    const auto [o, r] = run(s, "--set duration_s=0.01 --set driver.tx_ring_size=36");
    ASSERT_EQ(o.status, 0) << o.err;
    const uint64_t tx = r["dut"]["xdp"]["tx"], full = r["dut"]["xdp"]["tx_errors"];
    EXPECT_GT(full, tx / 2);
    EXPECT_GT(r["rates"]["xdp_prog_pps"].get<double>(), r["rates"]["dut_tx_pps"].get<double>());
    const auto w = stderr_warnings(o.err);
    ASSERT_EQ(w.size(), 1u) << o.err;
    EXPECT_EQ(w[0].rfind(std::to_string(full) + " of " + std::to_string(tx) + " XDP_TX frames (", 0), 0u) << w[0];
    EXPECT_NE(w[0].find("found the TX ring full and were dropped (dut.xdp.tx_errors): xdp_prog_pps counts them, "
                        "dut_tx_pps does not (driver.tx_ring_size 36)"),
              std::string::npos)
        << w[0];
    EXPECT_EQ(r["warnings"], nlohmann::json(w));
}

TEST(silent_traps, a_pktgen_count_that_runs_out_in_the_warmup_says_so) {
    scratch s;
    const auto [o, r] = run(s, "--set duration_s=0.01 --set 'generator.sample03=-n 1000'");
    ASSERT_EQ(o.status, 0) << o.err;
    const auto w = stderr_warnings(o.err);
    ASSERT_EQ(w.size(), 2u) << o.err;
    EXPECT_NE(w[0].find("pktgen sent its count of packets and stopped at 0.00"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("count 0 (sample03 -n 0) sends until the run ends"), std::string::npos) << w[0];
    EXPECT_EQ(w[1], "the DUT processed no packets in the measurement window: the generator sent nothing in the window");
}

// A 10 ms capture of E1's wire, both directions, window only (the default).
std::string e1_capture(const scratch& s) {
    const std::string pcap = s / "e1.pcapng";
    const outcome o = fecsim::test::shell(fecsim + " run " + e1 + " --quiet --set warmup_s=0.005 --set duration_s=0.01 --pcap " + pcap);
    EXPECT_EQ(o.status, 0) << o.err;
    return pcap;
}

TEST(silent_traps, the_capture_holds_the_measurement_window_unless_the_warmup_is_asked_for) {
    scratch s;
    const auto window = fecsim::traffic::load_pcap(e1_capture(s));
    ASSERT_GT(window.size(), 1000u);
    // nothing from the 5 ms warm-up but the frame on the wire when it ended (12.3 us at most)
    EXPECT_GE(window.time_ns.front(), 4'987'000u);
    EXPECT_LE(window.time_ns.back(), 15'000'000u);

    const std::string all = s / "all.pcapng";
    ASSERT_EQ(fecsim::test::shell(fecsim + " run " + e1 + " --quiet --set warmup_s=0.005 --set duration_s=0.01 --pcap " +
                                  all + " --pcap-warmup").status, 0);
    const auto with_warmup = fecsim::traffic::load_pcap(all);
    EXPECT_LT(with_warmup.time_ns.front(), 5'000'000u);
    EXPECT_GT(with_warmup.size(), window.size());
    EXPECT_EQ(fecsim::test::shell(fecsim + " run " + e1 + " --pcap-warmup").status, 2) << "needs --pcap";
}

// Replaying E1's capture: frames of both directions, so the rewrite sends them all to the DUT
// from the generator's MAC.
std::string replay_of(const std::string& pcap, const std::string& rewrite) {
    return "--set generator.kind=pcap --set generator.pcap_file=" + pcap + " " + rewrite;
}
const std::string to_dut = "--set generator.pcap.dst_mac=" + dut_mac + " --set generator.pcap.src_mac=00:04:9f:00:00:02";

TEST(silent_traps, a_replay_that_ends_in_the_warmup_says_so_and_how_to_loop_it) {
    scratch s;
    const std::string replay = replay_of(e1_capture(s), to_dut) + " --set warmup_s=0.1 --set duration_s=0.01";
    const auto [once, r1] = run(s, replay);
    ASSERT_EQ(once.status, 0) << once.err;
    EXPECT_EQ(r1["rates"]["dut_rx_pps"], 0);
    const auto w = stderr_warnings(once.err);
    ASSERT_EQ(w.size(), 2u) << once.err;
    EXPECT_NE(w[0].find("the capture replay ended at 0.0"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("inside the 0.100 s warm-up"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("generator.pcap.loops=0"), std::string::npos) << w[0];
    EXPECT_EQ(w[1], "the DUT processed no packets in the measurement window: the generator sent nothing in the window");

    const auto [looped, r2] = run(s, replay + " --set generator.pcap.loops=0");
    ASSERT_EQ(looped.status, 0) << looped.err;
    EXPECT_GT(r2["rates"]["dut_rx_pps"].get<double>(), 400000);  // as many as the DUT takes in
    EXPECT_EQ(r2["warnings"], nlohmann::json::array());
}

TEST(silent_traps, a_real_captures_frames_reach_the_dut_with_the_mac_rewrite) {
    scratch s;
    const std::string pcap = e1_capture(s);  // a third of its frames are addressed to the generator
    const std::string common = " --set generator.pcap.loops=0 --set warmup_s=0.005 --set duration_s=0.005";
    const auto [direct, r1] = run(s, replay_of(pcap, "--set link.topology=direct") + common);
    ASSERT_EQ(direct.status, 0) << direct.err;
    EXPECT_GT(r1["dut"]["rx_filtered"].get<double>(), 1000);
    EXPECT_GT(r1["dut"]["rx_frames"].get<double>(), 1000);

    // Through the switch the DUT's own frames, replayed, teach it that the DUT is on the
    // generator's port: it drops every frame for the DUT.
    const auto [switched, r2] = run(s, replay_of(pcap, "--set generator.pcap.dst_mac=" + dut_mac) + common);
    ASSERT_EQ(switched.status, 0) << switched.err;
    EXPECT_EQ(r2["dut"]["rx_frames"], 0);
    const auto w = stderr_warnings(switched.err);
    ASSERT_EQ(w.size(), 1u) << switched.err;
    EXPECT_NE(w[0].find("the switch dropped frames for a MAC it learned on the generator's port"), std::string::npos);
    EXPECT_NE(w[0].find("rewrite it with generator.pcap.src_mac"), std::string::npos);

    const auto [rewritten, r3] = run(s, replay_of(pcap, to_dut) + common);
    ASSERT_EQ(rewritten.status, 0) << rewritten.err;
    EXPECT_EQ(r3["dut"]["rx_filtered"], 0);
    EXPECT_GT(r3["dut"]["rx_frames"].get<double>(), 2000);  // as many as the DUT takes in 5 ms
    EXPECT_EQ(r3["warnings"], nlohmann::json::array());

    const outcome bad = fecsim::test::shell(fecsim + " validate " + e1 + " " + replay_of(pcap, "--set generator.pcap.dst_mac=00:04"));
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, "--set generator.pcap.dst_mac=00:04: /generator/pcap/dst_mac: expected aa:bb:cc:dd:ee:ff, got \"00:04\"\n");
}

}  // namespace
