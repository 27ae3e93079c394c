// Live output in the format of the tools fecsim models (reference/test-tools.md T.2, T.3, T.5).
// The platform samples its counters once per simulated second and prints these lines; the
// functions only format (no trailing newline).
#pragma once

#include <cstdint>
#include <string>

namespace fecsim::traffic {

// "1234567" -> "1,234,567" (xdp_redirect and xdp-bench print with the en_US locale's grouping).
std::string group_thousands(uint64_t v);

// xdp1/xdp2 (xdp1_user.c): "proto 17:     326539 pkt/s" ("proto %u: %10llu pkt/s").
std::string xdp2_line(unsigned proto, uint64_t pps);

// xdp_redirect: "Summary      353,918 rx/s            0 err,drop/s      353,918 xmit/s".
std::string xdp_redirect_summary(uint64_t rx_pps, uint64_t err_drop_pps, uint64_t xmit_pps);

// xdp-bench drop/pass/tx: "Summary      353,918 rx/s            0 err,drop/s"; the drop
// subcommand labels its error column "err/s".
std::string xdp_bench_summary(uint64_t rx_pps, uint64_t err_pps, bool drop_subcommand = false);

// xdp-bench redirect: "eth0->eth0      353,918 rx/s            0 err,drop/s      353,918 xmit/s".
std::string xdp_bench_redirect_line(const std::string& in_dev, const std::string& out_dev, uint64_t rx_pps,
                                    uint64_t err_drop_pps, uint64_t xmit_pps);

// pktgen's final result as /proc/net/pktgen/<dev> shows it (two lines):
// "Result: OK: 15430(c15405+d25) usec, 100000 (60byte,0frags)\n  6480562pps 3110Mb/sec (3110669760bps) errors: 0".
// pps = sofar * 1e9 / elapsed_ns; Mb/sec counts pkt_size bytes only (no FCS, preamble or IFG).
std::string pktgen_result_line(uint64_t elapsed_ns, uint64_t idle_ns, uint64_t sofar, uint32_t pkt_size,
                               uint64_t errors);

// iperf2's interval and total lines: "[  1] 0.0000-1.0000 sec   111 MBytes   933 Mbits/sec"
// (bytes in powers of 1024, bits in powers of 1000, two, one or no decimals as iperf's
// byte_snprintf chooses them for the value).
std::string iperf_interval_line(unsigned id, double begin_s, double end_s, uint64_t bytes);

// Progress on stderr for long runs: "fecsim: 2.500 s simulated of 10.000 s, 0.73x real time, ETA 10s"
// (the time left at the speed so far; "ETA 4m05s", "ETA 2h10m" for longer).
std::string progress_line(double simulated_s, double total_s, double wall_s);

}  // namespace fecsim::traffic
