#include "platform/inspect.h"

#include "config/config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

namespace fecsim::inspect {
using nlohmann::json;
using nlohmann::ordered_json;

json read_result(const std::string& path) {
    // Read as every input is: a directory, a file past the size limit or nesting too deep is a
    // clear error, not a crash.
    const json j = parse_json_file(read_input_file(path), path);
    if (!j.is_object() || !j.contains("sim")) throw config_error(path + ": /sim: missing (not a fecsim result file)");
    return j;
}

namespace {

void flatten(const json& node, const std::string& prefix, std::vector<std::pair<std::string, ordered_json>>& out) {
    for (auto& [k, v] : node.items()) {
        const std::string key = prefix.empty() ? k : prefix + "." + k;
        if (v.is_object()) flatten(v, key, out);
        else if (v.is_number() || v.is_boolean()) out.emplace_back(key, ordered_json(v));
    }
}

// The fec driver's fec_stats[]: the ethtool name and the MIB counter it reads, in its order.
constexpr std::pair<const char*, const char*> fec_stats[] = {
    {"tx_dropped", "RMON_T_DROP"}, {"tx_packets", "RMON_T_PACKETS"}, {"tx_broadcast", "RMON_T_BC_PKT"},
    {"tx_multicast", "RMON_T_MC_PKT"}, {"tx_crc_errors", "RMON_T_CRC_ALIGN"}, {"tx_undersize", "RMON_T_UNDERSIZE"},
    {"tx_oversize", "RMON_T_OVERSIZE"}, {"tx_fragment", "RMON_T_FRAG"}, {"tx_jabber", "RMON_T_JAB"},
    {"tx_collision", "RMON_T_COL"}, {"tx_64byte", "RMON_T_P64"}, {"tx_65to127byte", "RMON_T_P65TO127"},
    {"tx_128to255byte", "RMON_T_P128TO255"}, {"tx_256to511byte", "RMON_T_P256TO511"},
    {"tx_512to1023byte", "RMON_T_P512TO1023"}, {"tx_1024to2047byte", "RMON_T_P1024TO2047"},
    {"tx_GTE2048byte", "RMON_T_P_GTE2048"}, {"tx_octets", "RMON_T_OCTETS"},
    {"IEEE_tx_drop", "IEEE_T_DROP"}, {"IEEE_tx_frame_ok", "IEEE_T_FRAME_OK"}, {"IEEE_tx_1col", "IEEE_T_1COL"},
    {"IEEE_tx_mcol", "IEEE_T_MCOL"}, {"IEEE_tx_def", "IEEE_T_DEF"}, {"IEEE_tx_lcol", "IEEE_T_LCOL"},
    {"IEEE_tx_excol", "IEEE_T_EXCOL"}, {"IEEE_tx_macerr", "IEEE_T_MACERR"}, {"IEEE_tx_cserr", "IEEE_T_CSERR"},
    {"IEEE_tx_sqe", "IEEE_T_SQE"}, {"IEEE_tx_fdxfc", "IEEE_T_FDXFC"}, {"IEEE_tx_octets_ok", "IEEE_T_OCTETS_OK"},
    {"rx_packets", "RMON_R_PACKETS"}, {"rx_broadcast", "RMON_R_BC_PKT"}, {"rx_multicast", "RMON_R_MC_PKT"},
    {"rx_crc_errors", "RMON_R_CRC_ALIGN"}, {"rx_undersize", "RMON_R_UNDERSIZE"}, {"rx_oversize", "RMON_R_OVERSIZE"},
    {"rx_fragment", "RMON_R_FRAG"}, {"rx_jabber", "RMON_R_JAB"}, {"rx_64byte", "RMON_R_P64"},
    {"rx_65to127byte", "RMON_R_P65TO127"}, {"rx_128to255byte", "RMON_R_P128TO255"},
    {"rx_256to511byte", "RMON_R_P256TO511"}, {"rx_512to1023byte", "RMON_R_P512TO1023"},
    {"rx_1024to2047byte", "RMON_R_P1024TO2047"}, {"rx_GTE2048byte", "RMON_R_P_GTE2048"},
    {"rx_octets", "RMON_R_OCTETS"},
    {"IEEE_rx_drop", "IEEE_R_DROP"}, {"IEEE_rx_frame_ok", "IEEE_R_FRAME_OK"}, {"IEEE_rx_crc", "IEEE_R_CRC"},
    {"IEEE_rx_align", "IEEE_R_ALIGN"}, {"IEEE_rx_macerr", "IEEE_R_MACERR"}, {"IEEE_rx_fdxfc", "IEEE_R_FDXFC"},
    {"IEEE_rx_octets_ok", "IEEE_R_OCTETS_OK"},
};

// fec_xdp_stat_strs[], summed over the RX queues as fec_enet_get_xdp_stats does.
constexpr const char* xdp_stats[] = {"rx_xdp_redirect", "rx_xdp_pass",        "rx_xdp_drop", "rx_xdp_tx",
                                     "rx_xdp_tx_errors", "tx_xdp_xmit", "tx_xdp_xmit_errors"};

// page_pool_ethtool_stats_get_strings(), and the result's page_pool key behind each. The
// driver allocates order-0 pages on one NUMA node, so high-order and waived allocations are 0.
constexpr std::pair<const char*, const char*> pp_stats[] = {
    {"rx_pp_alloc_fast", "alloc_fast"},       {"rx_pp_alloc_slow", "alloc_slow"},
    {"rx_pp_alloc_slow_ho", nullptr},         {"rx_pp_alloc_empty", "alloc_empty"},
    {"rx_pp_alloc_refill", "alloc_refill"},   {"rx_pp_alloc_waive", nullptr},
    {"rx_pp_recycle_cached", "recycle_cached"}, {"rx_pp_recycle_cache_full", "recycle_cache_full"},
    {"rx_pp_recycle_ring", "recycle_ring"},   {"rx_pp_recycle_ring_full", "recycle_ring_full"},
    {"rx_pp_recycle_released_ref", "recycle_released_refcnt"},
};

uint64_t counter(const json& r, const std::string& pointer, const std::string& path) {
    const json::json_pointer p(pointer);
    if (!r.contains(p) || !r[p].is_number_unsigned())
        throw config_error(path + ": " + pointer + ": missing (a result of an older fecsim?)");
    return r[p].get<uint64_t>();
}

std::string format(double v) {
    char buf[64];
    if (std::isinf(v)) return "-";
    if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

std::vector<std::pair<std::string, ordered_json>> metrics(const json& result) {
    std::vector<std::pair<std::string, ordered_json>> out;
    for (auto& [k, v] : result.items())
        if (k != "config") {
            if (v.is_object()) flatten(v, k, out);
            else if (v.is_number() || v.is_boolean()) out.emplace_back(k, ordered_json(v));
        }
    return out;
}

int stats_main(const std::vector<std::string>& args) {
    if (args.size() != 1 || args[0].rfind("-", 0) == 0) {
        std::cerr << "fecsim: usage: fecsim stats RESULT.json\n";
        return 2;
    }
    const std::string& path = args[0];
    try {
        const json r = read_result(path);
        std::string out = "NIC statistics:\n";
        auto line = [&](const std::string& name, uint64_t v) { out += "     " + name + ": " + std::to_string(v) + "\n"; };
        for (auto& [name, mib] : fec_stats) line(name, counter(r, std::string("/dut/mib/") + mib, path));
        const json::json_pointer queues_ptr("/dut/rx_queues");
        if (!r.contains(queues_ptr) || !r[queues_ptr].is_array() || r[queues_ptr].empty())
            throw config_error(path + ": /dut/rx_queues: missing (a result of an older fecsim?)");
        const size_t queues = r[queues_ptr].size();
        auto per_queue = [&](size_t q, const std::string& what) { return "/dut/rx_queues/" + std::to_string(q) + what; };
        for (const char* name : xdp_stats) {
            uint64_t sum = 0;
            for (size_t q = 0; q < queues; ++q) sum += counter(r, per_queue(q, "/xdp/") + name, path);
            line(name, sum);
        }
        for (auto& [name, key] : pp_stats) {
            uint64_t sum = 0;
            for (size_t q = 0; key && q < queues; ++q) sum += counter(r, per_queue(q, "/page_pool/") + key, path);
            line(name, sum);
        }
        // The driver keeps the XDP and page-pool counters per RX queue and prints their sums.
        if (queues > 1)
            for (size_t q = 0; q < queues; ++q) {
                out += "RX queue " + std::to_string(q) + ":\n";
                for (const char* name : xdp_stats) line(name, counter(r, per_queue(q, "/xdp/") + name, path));
                for (auto& [name, key] : pp_stats) line(name, key ? counter(r, per_queue(q, "/page_pool/") + key, path) : 0);
            }
        std::fputs(out.c_str(), stdout);
    } catch (const config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    }
    return 0;
}

int diff_main(const std::vector<std::string>& args) {
    std::vector<std::string> files;
    double threshold_pct = 0;
    bool threshold_given = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--threshold" || a.rfind("--threshold=", 0) == 0) {
            if (threshold_given) {
                std::cerr << "fecsim: --threshold given twice\n";
                return 2;
            }
            threshold_given = true;
            std::string v = a.size() > 11 ? a.substr(12) : (i + 1 < args.size() ? args[++i] : "");
            if (!v.empty() && v.back() == '%') v.pop_back();
            char* end = nullptr;
            threshold_pct = std::strtod(v.c_str(), &end);
            if (v.empty() || *end || !(threshold_pct >= 0) || std::isinf(threshold_pct)) {
                std::cerr << "fecsim: --threshold: expected a percentage >= 0, got '" << v << "'\n";
                return 2;
            }
        } else if (a.rfind("-", 0) == 0) {
            std::cerr << "fecsim: unknown option '" << a << "' for diff\n";
            return 2;
        } else {
            files.push_back(a);
        }
    }
    if (files.size() != 2) {
        std::cerr << "fecsim: usage: fecsim diff A.json B.json [--threshold PCT]\n";
        return 2;
    }
    std::map<std::string, double> a, b;
    try {
        for (int side = 0; side < 2; ++side)
            for (auto& [k, v] : metrics(read_result(files[side])))
                if (k != "sim.wall_s" && k != "sim.speed")  // host timing, never the same twice
                    (side ? b : a)[k] = v.is_boolean() ? double(v.get<bool>()) : v.get<double>();
    } catch (const config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    }
    struct change { std::string key; double a, b, rel; bool in_a, in_b; };
    std::vector<change> moved;
    auto consider = [&](const std::string& k) {
        const bool in_a = a.count(k), in_b = b.count(k);
        const double va = in_a ? a[k] : 0, vb = in_b ? b[k] : 0;
        if (in_a && in_b && va == vb) return;
        const double rel = !(in_a && in_b) || va == 0 ? INFINITY : (vb - va) / std::fabs(va);
        if (std::fabs(rel) * 100 > threshold_pct) moved.push_back({k, va, vb, rel, in_a, in_b});
    };
    for (auto& [k, v] : a) consider(k);
    for (auto& [k, v] : b)
        if (!a.count(k)) consider(k);
    std::stable_sort(moved.begin(), moved.end(),
                     [](const change& x, const change& y) { return std::fabs(x.rel) > std::fabs(y.rel); });
    if (moved.empty()) {
        std::printf("no metric moved by more than %g%%\n", threshold_pct);
        return 0;
    }
    size_t width = 6;
    for (auto& c : moved) width = std::max(width, c.key.size());
    std::printf("%-*s %16s %16s %16s %10s\n", int(width), "metric", files[0].c_str(), files[1].c_str(), "change",
                "relative");
    for (auto& c : moved) {
        char rel[32];
        if (std::isinf(c.rel)) std::snprintf(rel, sizeof rel, "%s", !c.in_a ? "new" : !c.in_b ? "gone" : "from 0");
        else std::snprintf(rel, sizeof rel, "%+.2f%%", c.rel * 100);
        std::printf("%-*s %16s %16s %16s %10s\n", int(width), c.key.c_str(), c.in_a ? format(c.a).c_str() : "-",
                    c.in_b ? format(c.b).c_str() : "-", c.in_a && c.in_b ? format(c.b - c.a).c_str() : "-", rel);
    }
    std::printf("%zu metrics moved by more than %g%%\n", moved.size(), threshold_pct);
    return 1;
}

}  // namespace fecsim::inspect
