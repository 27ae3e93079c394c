// Live output formats of the modelled tools.
#include "models/sim_context.h"
#include "traffic/live_report.h"

#include <gtest/gtest.h>

namespace fecsim::traffic {
namespace {

TEST(live_report, xdp2_proto_line) {
    fresh_simulation();
    EXPECT_EQ(xdp2_line(17, 326539), "proto 17:     326539 pkt/s");
    EXPECT_EQ(xdp2_line(0, 0), "proto 0:          0 pkt/s");
}

TEST(live_report, grouping) {
    fresh_simulation();
    EXPECT_EQ(group_thousands(0), "0");
    EXPECT_EQ(group_thousands(999), "999");
    EXPECT_EQ(group_thousands(1000), "1,000");
    EXPECT_EQ(group_thousands(1234567890), "1,234,567,890");
}

TEST(live_report, xdp_redirect_and_xdp_bench_summaries) {
    fresh_simulation();
    EXPECT_EQ(xdp_redirect_summary(353918, 12, 353906), "Summary      353,918 rx/s           12 err,drop/s      353,906 xmit/s");
    EXPECT_EQ(xdp_bench_summary(1488095, 0), "Summary    1,488,095 rx/s            0 err,drop/s");
    EXPECT_EQ(xdp_bench_summary(1488095, 3, true), "Summary    1,488,095 rx/s            3 err/s");
    EXPECT_EQ(xdp_bench_redirect_line("eth0", "eth0", 5, 0, 5), "eth0->eth0            5 rx/s            0 err,drop/s            5 xmit/s");
}

TEST(live_report, pktgen_result_matches_the_documented_example) {
    fresh_simulation();
    // pktgen.rst: 100000 packets in 15430 usec -> 6480562pps; elapsed 15430759 ns reproduces the example.
    EXPECT_EQ(pktgen_result_line(15430759, 25000, 100000, 60, 0),
              "Result: OK: 15430(c15405+d25) usec, 100000 (60byte,0frags)\n"
              "  6480562pps 3110Mb/sec (3110669760bps) errors: 0");
    EXPECT_EQ(pktgen_result_line(0, 0, 0, 60, 0),
              "Result: OK: 0(c0+d0) usec, 0 (60byte,0frags)\n  0pps 0Mb/sec (0bps) errors: 0");
}

TEST(live_report, progress) {
    fresh_simulation();
    // 7.5 simulated seconds left at 0.5x: 15 wall seconds
    EXPECT_EQ(progress_line(2.5, 10, 5), "fecsim: 2.500 s simulated of 10.000 s, 0.50x real time, ETA 15s");
    EXPECT_EQ(progress_line(1, 10, 20), "fecsim: 1.000 s simulated of 10.000 s, 0.05x real time, ETA 3m00s");
    EXPECT_EQ(progress_line(0.1, 10, 100), "fecsim: 0.100 s simulated of 10.000 s, 0.00x real time, ETA 2h45m");
    EXPECT_EQ(progress_line(0, 10, 5), "fecsim: 0.000 s simulated of 10.000 s, 0.00x real time");
}

}  // namespace
}  // namespace fecsim::traffic
