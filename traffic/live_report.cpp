#include "traffic/live_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fecsim::traffic {

std::string group_thousands(uint64_t v) {
    std::string digits = std::to_string(v), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

namespace {
// A right-aligned, grouped number column as the samples' "%'12llu".
std::string col(uint64_t v, int width = 12) {
    std::string s = group_thousands(v);
    if (int(s.size()) < width) s.insert(0, size_t(width) - s.size(), ' ');
    return s;
}
}  // namespace

std::string xdp2_line(unsigned proto, uint64_t pps) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "proto %u: %10llu pkt/s", proto, static_cast<unsigned long long>(pps));
    return buf;
}

std::string xdp_redirect_summary(uint64_t rx_pps, uint64_t err_drop_pps, uint64_t xmit_pps) {
    return "Summary " + col(rx_pps) + " rx/s " + col(err_drop_pps) + " err,drop/s " + col(xmit_pps) + " xmit/s";
}

std::string xdp_bench_summary(uint64_t rx_pps, uint64_t err_pps, bool drop_subcommand) {
    return "Summary " + col(rx_pps) + " rx/s " + col(err_pps) + (drop_subcommand ? " err/s" : " err,drop/s");
}

std::string xdp_bench_redirect_line(const std::string& in_dev, const std::string& out_dev, uint64_t rx_pps,
                                    uint64_t err_drop_pps, uint64_t xmit_pps) {
    return in_dev + "->" + out_dev + " " + col(rx_pps) + " rx/s " + col(err_drop_pps) + " err,drop/s " +
           col(xmit_pps) + " xmit/s";
}

std::string pktgen_result_line(uint64_t elapsed_ns, uint64_t idle_ns, uint64_t sofar, uint32_t pkt_size,
                               uint64_t errors) {
    using ull = unsigned long long;
    const uint64_t pps = elapsed_ns ? uint64_t((unsigned __int128)sofar * 1000000000u / elapsed_ns) : 0;
    const uint64_t bps = pps * 8 * pkt_size;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "Result: OK: %llu(c%llu+d%llu) usec, %llu (%ubyte,0frags)\n  %llupps %lluMb/sec (%llubps) errors: %llu",
                  ull(elapsed_ns / 1000), ull((elapsed_ns - idle_ns) / 1000), ull(idle_ns / 1000), ull(sofar),
                  pkt_size, ull(pps), ull(bps / 1000000), ull(bps), ull(errors));
    return buf;
}

namespace {
// iperf's byte_snprintf with an adaptive format: 'A' (bytes, 1024) or 'a' (bits, 1000).
std::string iperf_adaptive(double v, double base, const char* const units[4]) {
    int u = 0;
    while (v >= base && u < 3) v /= base, ++u;
    const char* fmt = v < 9.995 ? "%4.2f %s" : v < 99.95 ? "%4.1f %s" : "%4.0f %s";
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, v, units[u]);
    return buf;
}
}  // namespace

std::string iperf_interval_line(unsigned id, double begin_s, double end_s, uint64_t bytes) {
    static const char* const byte_units[] = {"Bytes", "KBytes", "MBytes", "GBytes"};
    static const char* const bit_units[] = {"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec"};
    const double span = end_s - begin_s;
    char buf[160];
    std::snprintf(buf, sizeof buf, "[%3u] %.4f-%.4f sec  %s  %s", id, begin_s, end_s,
                  iperf_adaptive(double(bytes), 1024, byte_units).c_str(),
                  iperf_adaptive(span > 0 ? double(bytes) * 8 / span : 0.0, 1000, bit_units).c_str());
    return buf;
}

std::string progress_line(double simulated_s, double total_s, double wall_s) {
    char buf[160];
    const double speed = wall_s > 0 ? simulated_s / wall_s : 0.0;
    int n = std::snprintf(buf, sizeof buf, "fecsim: %.3f s simulated of %.3f s, %.2fx real time", simulated_s,
                          total_s, speed);
    // The rest at the speed so far (which includes elaboration and warm-up: slightly pessimistic).
    if (speed > 0) {
        const long eta = std::lround(std::max(0.0, total_s - simulated_s) / speed);
        if (eta >= 3600) n += std::snprintf(buf + n, sizeof buf - n, ", ETA %ldh%02ldm", eta / 3600, eta / 60 % 60);
        else if (eta >= 60) n += std::snprintf(buf + n, sizeof buf - n, ", ETA %ldm%02lds", eta / 60, eta % 60);
        else std::snprintf(buf + n, sizeof buf - n, ", ETA %lds", eta);
    }
    return buf;
}

}  // namespace fecsim::traffic
