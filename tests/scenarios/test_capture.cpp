// The DUT's wire captured with --pcap (pcapng, one interface per direction) and decoded by tshark: xdp2 sends back UDP frames with
// the MACs swapped relative to the ones it received; a TCP transfer with drops shows only the resends.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string capture(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
}

TEST(capture, xdp2_returns_udp_frames_with_swapped_macs) {
    if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh installs it)";
    const fs::path pcap = fs::temp_directory_path() / ("fecsim-e1-" + std::to_string(::getpid()) + ".pcap");
    const std::string run = std::string(FECSIM_BINARY_DIR) + "/fecsim run " FECSIM_SOURCE_CONFIG_DIR
                            "/experiments/imx8mp-xdp-tx.json --quiet --set warmup_s=0.002 --set duration_s=0.002 --pcap-warmup --pcap " +
                            pcap.string();
    ASSERT_EQ(std::system(run.c_str()), 0);
    const fs::path err = pcap.string() + ".err";
    const std::string fields = capture("tshark -r " + pcap.string() +
                                       " -T fields -e frame.interface_name -e eth.src -e eth.dst -e ip.proto -e pktgen.seqnum 2>" + err.string());
    // tshark's only remark may be its notice about running as root; anything else is a problem
    // with the capture.
    const std::string remarks = capture("grep -v 'Running as user' " + err.string() + " || true");
    fs::remove(pcap);
    fs::remove(err);
    EXPECT_EQ(remarks, "");

    const std::string dut = "00:04:9f:07:9f:01";
    std::map<std::string, std::pair<std::string, std::string>> received;  // seq -> (src, dst) towards the DUT
    int to_dut = 0, from_dut = 0, swapped = 0;
    std::istringstream in(fields);
    std::string iface, src, dst, proto, seq;
    while (in >> iface >> src >> dst >> proto >> seq) {
        EXPECT_EQ(proto, "17");
        // One capture interface per direction of the DUT's wire.
        EXPECT_EQ(iface, dst == dut ? "dut-rx" : "dut-tx");
        if (dst == dut) {
            ++to_dut;
            received[seq] = {src, dst};
        } else if (src == dut) {
            ++from_dut;
            auto it = received.find(seq);
            ASSERT_NE(it, received.end()) << "frame " << seq << " left the DUT before it arrived";
            swapped += (src == it->second.second && dst == it->second.first);
        }
    }
    EXPECT_GT(to_dut, 1000);
    EXPECT_GT(from_dut, 500);
    EXPECT_EQ(swapped, from_dut);
}

// TCP into the DUT with a 16-descriptor RX ring: the DUT drops frames and the client recovers.
// tshark (checksums verified) finds no errors; its only warnings are resent segments it calls
// out of order, and every segment it flags was on the wire before: the drops explain them.
TEST(capture, a_tcp_transfer_with_drops_reads_in_tshark_with_only_the_resends_flagged) {
    if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh installs it)";
    const std::string base = (fs::temp_directory_path() / ("fecsim-tcp-" + std::to_string(::getpid()))).string();
    {
        FILE* f = std::fopen((base + ".json").c_str(), "w");
        std::fputs(R"({"platform": "imx8qxp", "driver": {"xdp_prog": "none", "rx_ring_size": 16},
                      "generator": {"kind": "tcp", "start_delay_us": 20000}, "duration_s": 0.05})", f);
        std::fclose(f);
    }
    const std::string run = std::string(FECSIM_BINARY_DIR) + "/fecsim run " + base + ".json --quiet --pcap-warmup --pcap " +
                            base + ".pcap --out " + base + ".out.json";
    ASSERT_EQ(std::system(run.c_str()), 0);
    const std::string tshark = "tshark -n -r " + base + ".pcap -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE ";
    const std::string expert = capture(tshark + "-q -z expert,warn 2>/dev/null");
    EXPECT_EQ(expert.find("Errors ("), std::string::npos) << expert;
    std::istringstream lines(expert);
    for (std::string l; std::getline(lines, l);) {
        if (l.find(" TCP ") != std::string::npos) {
            EXPECT_NE(l.find("out-of-order segment"), std::string::npos) << l;
        }
    }
    // Every data segment tshark flags (out of order, retransmission) repeats one sent before.
    const std::string segs = capture(tshark + "-Y 'tcp.len > 0 and ip.dst == 198.18.0.42' -T fields -e tcp.seq_raw "
                                              "-e tcp.analysis.out_of_order -e tcp.analysis.retransmission 2>/dev/null");
    std::map<std::string, int> seen;
    int flagged = 0, resent = 0;
    std::istringstream in(segs);
    for (std::string l; std::getline(in, l);) {
        const std::string seq = l.substr(0, l.find('\t'));
        const bool flag = l.find_first_not_of("\t", seq.size()) != std::string::npos;
        resent += seen[seq]++ > 0;
        if (flag) {
            ++flagged;
            EXPECT_GT(seen[seq], 1) << "segment " << seq << " flagged but never sent before";
        }
    }
    EXPECT_GT(flagged, 0) << "the 16-entry ring drops frames";
    EXPECT_EQ(flagged, resent);
    for (const char* ext : {".json", ".pcap", ".out.json"}) fs::remove(base + ext);
}

}  // namespace
