// The DUT's wire captured with --pcap (pcapng, one interface per direction) and decoded by tshark: xdp2 sends back UDP frames with
// the MACs swapped relative to the ones it received.
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

}  // namespace
