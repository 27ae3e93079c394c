#include "platform/watch.h"

#include "traffic/host_socket.h"
#include "traffic/live_report.h"

#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

namespace fecsim {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// A run started in the same breath may not listen yet: connecting is retried this long.
constexpr auto connect_patience = std::chrono::seconds(10);
constexpr auto connect_retry = std::chrono::milliseconds(100);
constexpr int header_every_rows = 20;
constexpr int bar_width = 20;

std::string grouped(double v) { return traffic::group_thousands(uint64_t(v < 0 ? 0 : v + 0.5)); }

std::string progress_bar(double done, double total, double eta_s) {
    const double f = total > 0 ? std::min(1.0, done / total) : 1.0;
    const int filled = int(f * bar_width + 0.5);
    char tail[64];
    std::snprintf(tail, sizeof tail, "] %3d%% ETA %.0f s", int(f * 100 + 0.5), eta_s);
    return "[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + tail;
}

// "used/size" of a ring, summed over its queues.
std::string ring_text(const nlohmann::json& rings, const char* which, const char* size_key) {
    if (!rings.contains(which) || rings[which].empty()) return "-";
    int64_t used = 0;
    for (const auto& n : rings[which]) used += n.get<int64_t>();
    return std::to_string(used) + "/" + std::to_string(rings.value(size_key, int64_t(0)) * int64_t(rings[which].size()));
}

void print_header() {
    std::printf("%8s %-7s %12s %12s %12s %12s %10s %10s %8s %8s  %s\n", "sim_s", "phase", "gen_tx_pps", "dut_rx_pps",
                "dut_tx_pps", "xdp_pps", "rx_ring", "tx_ring", "drops", "ns/pkt", "progress");
}

void print_row(const nlohmann::json& j) {
    for (const auto& line : j.value("lines", nlohmann::json::array())) std::printf("%s\n", line.get<std::string>().c_str());
    const auto& r = j["rates"];
    uint64_t drops = 0;
    for (const auto& [cause, n] : j["drops"].items()) drops += n.get<uint64_t>();
    double ns = 0;
    for (const auto& [category, v] : j["ns_per_packet"].items())
        if (category != "idle") ns += v.get<double>();
    std::printf("%8.3f %-7s %12s %12s %12s %12s %10s %10s %8s %8s  %s\n", j["simulated_s"].get<double>(),
                j["phase"].get<std::string>().c_str(), grouped(r["generator_tx_pps"]).c_str(),
                grouped(r["dut_rx_pps"]).c_str(), grouped(r["dut_tx_pps"]).c_str(), grouped(r["xdp_prog_pps"]).c_str(),
                ring_text(j["rings"], "rx", "rx_size").c_str(), ring_text(j["rings"], "tx", "tx_size").c_str(),
                grouped(double(drops)).c_str(), grouped(ns).c_str(),
                progress_bar(j["simulated_s"], j["total_s"], j["eta_s"]).c_str());
    std::fflush(stdout);
}

}  // namespace

int watch_main(const std::vector<std::string>& args) {
    traffic::host_port hp;
    std::string error;
    if (args.size() != 1) error = "watch needs one ADDR:PORT";
    else if (!traffic::parse_host_port(args[0], hp, error)) error = args[0] + ": " + error;
    if (!error.empty()) {
        std::cerr << "fecsim: " << error << "\nusage: fecsim watch ADDR:PORT\n";
        return 2;
    }
    asio::io_context ctx;
    tcp::socket socket(ctx);
    const tcp::endpoint ep(asio::ip::make_address(hp.host), hp.port);
    const auto give_up = std::chrono::steady_clock::now() + connect_patience;
    boost::system::error_code ec;
    for (;;) {
        socket.connect(ep, ec);
        if (!ec || std::chrono::steady_clock::now() > give_up) break;
        socket.close();
        std::this_thread::sleep_for(connect_retry);
    }
    if (ec) {
        std::cerr << "fecsim watch: cannot connect to " << args[0] << ": " << ec.message() << '\n';
        return 1;
    }
    asio::streambuf buffer;
    int rows = 0;
    double simulated_s = 0, total_s = 1;
    for (;;) {
        asio::read_until(socket, buffer, '\n', ec);
        if (ec) break;
        std::istream in(&buffer);
        std::string line;
        std::getline(in, line);
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
            if (rows++ % header_every_rows == 0) print_header();
            print_row(j);
            simulated_s = j["simulated_s"];
            total_s = j["total_s"];
        } catch (const nlohmann::json::exception& e) {
            std::cerr << "fecsim watch: " << args[0] << " sent a line that is not telemetry: " << e.what() << '\n';
            return 1;
        }
    }
    // The run closes the connection when it ends; earlier means it died or was stopped.
    if (simulated_s + 1e-9 < total_s) {
        std::cerr << "fecsim watch: " << args[0] << " closed the connection at " << simulated_s << " s of " << total_s
                  << " s simulated\n";
        return 1;
    }
    return 0;
}

}  // namespace fecsim
