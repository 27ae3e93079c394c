#include "traffic/pktgen_commands.h"

#include "config/config.h"
#include "traffic/pktgen_script.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

namespace fecsim::traffic {
namespace {

constexpr uint32_t max_pkt_bytes = 9600;   // jumbo limit of the i.MX ENET (MAX_FL), without FCS
constexpr uint32_t min_pkt_bytes = 56;     // pktgen raises smaller sizes to ETH_ZLEN - ETH_FCS_LEN
constexpr uint32_t max_flows = 65536;      // pktgen's MAX_CFLOWS

[[noreturn]] void fail(const std::string& msg) { throw pktgen_command_error(msg); }

// A decimal argument as pktgen's num_arg reads it (digits only), bounded to [lo, hi].
uint64_t number(std::string_view name, std::string_view arg, uint64_t lo, uint64_t hi) {
    if (arg.empty()) fail(std::string(name) + ": missing value");
    uint64_t v = 0;
    for (char c : arg) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
            fail(std::string(name) + ": expected a decimal number, got \"" + std::string(arg) + "\"");
        if (v > (UINT64_MAX - 9) / 10) fail(std::string(name) + ": value too large");
        v = v * 10 + uint64_t(c - '0');
    }
    if (v < lo || v > hi)
        fail(std::string(name) + ": expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) +
             "], got " + std::to_string(v));
    return v;
}

mac_addr mac_arg(std::string_view name, std::string_view arg) {
    auto m = parse_mac(arg);
    if (!m) fail(std::string(name) + ": expected a MAC address aa:bb:cc:dd:ee:ff, got \"" + std::string(arg) + "\"");
    return *m;
}

uint32_t ipv4_arg(std::string_view name, std::string_view arg) {
    auto a = parse_ipv4(arg);
    if (!a) fail(std::string(name) + ": expected a dotted IPv4 address, got \"" + std::string(arg) + "\"");
    return *a;
}

const std::map<std::string, uint32_t, std::less<>>& flag_table() {
    static const std::map<std::string, uint32_t, std::less<>> t = {
        {"IPSRC_RND", F_IPSRC_RND},       {"IPDST_RND", F_IPDST_RND},     {"UDPSRC_RND", F_UDPSRC_RND},
        {"UDPDST_RND", F_UDPDST_RND},     {"TXSIZE_RND", F_TXSIZE_RND},   {"VID_RND", F_VID_RND},
        {"FLOW_SEQ", F_FLOW_SEQ},         {"QUEUE_MAP_RND", F_QUEUE_MAP_RND},
        {"QUEUE_MAP_CPU", F_QUEUE_MAP_CPU}, {"UDPCSUM", F_UDPCSUM},       {"NO_TIMESTAMP", F_NO_TIMESTAMP},
        {"NODE_ALLOC", F_NODE_ALLOC},     {"SHARED", F_SHARED},           {"MACSRC_RND", F_MACSRC_RND},
        {"MACDST_RND", F_MACDST_RND},
    };
    return t;
}

// Flags pktgen knows but the model does not build (no IPv6, MPLS, QinQ or IPsec frames).
bool unsupported_flag(std::string_view f) {
    return f == "IPV6" || f == "MPLS_RND" || f == "SVID_RND" || f == "IPSEC";
}

// pktgen's get_imix_entries + fill_imix_distribution: "SIZE,WEIGHT SIZE,WEIGHT ...", at most 20
// entries, sizes below Ethernet + IPv4 + UDP headers raised to 42.
void set_imix(pktgen_params& p, const std::vector<std::string>& pairs) {
    constexpr size_t max_entries = 20;  // MAX_IMIX_ENTRIES
    constexpr uint32_t precision = 100;  // IMIX_PRECISION
    if (pairs.empty()) fail("imix_weights: expected SIZE,WEIGHT pairs");
    if (pairs.size() > max_entries) fail("imix_weights: at most 20 SIZE,WEIGHT pairs");
    if (p.clone_skb > 0) fail("imix_weights: not with clone_skb > 0 (pktgen refuses it)");
    std::vector<std::pair<uint32_t, uint64_t>> entries;
    uint64_t total = 0;
    for (const std::string& pair : pairs) {
        const size_t comma = pair.find(',');
        if (comma == std::string::npos) fail("imix_weights: expected SIZE,WEIGHT, got \"" + pair + "\"");
        const uint32_t size = uint32_t(std::max<uint64_t>(42, number("imix_weights size", pair.substr(0, comma), 0, max_pkt_bytes)));
        const uint64_t weight = number("imix_weights weight", pair.substr(comma + 1), 0, UINT32_MAX);
        entries.emplace_back(size, weight);
        total += weight;
    }
    if (total == 0) fail("imix_weights: the weights sum to 0");
    uint64_t cumulative = 0;
    std::vector<uint64_t> bound(entries.size(), precision);
    for (size_t i = 0; i + 1 < entries.size(); ++i) bound[i] = cumulative += entries[i].second * precision / total;
    size_t j = 0;
    for (uint32_t i = 0; i < precision; ++i) {
        if (i == bound[j]) ++j;  // one step, as the kernel: an entry after a zero weight takes its share
        p.imix_distribution[i] = uint8_t(j);
    }
    p.imix = std::move(entries);
}

using handler = std::function<void(pktgen_params&, std::string_view name, std::string_view arg)>;

void set_pkt_size(uint32_t& a, uint32_t& b, std::string_view name, std::string_view arg) {
    uint64_t v = number(name, arg, 0, max_pkt_bytes);
    if (v < min_pkt_bytes) v = min_pkt_bytes;  // pktgen: "if (value < ETH_ZLEN-ETH_FCS_LEN)"
    a = uint32_t(v);
    b = uint32_t(v);
}

const std::map<std::string, handler, std::less<>>& command_table() {
    using p_t = pktgen_params;
    using sv = std::string_view;
    static const std::map<std::string, handler, std::less<>> t = {
        {"count", [](p_t& p, sv n, sv a) { p.count = number(n, a, 0, UINT64_MAX / 2); }},
        {"clone_skb", [](p_t& p, sv n, sv a) {
             p.clone_skb = uint32_t(number(n, a, 0, UINT32_MAX));
             if (p.clone_skb > 0 && !p.imix.empty()) fail("clone_skb: not with imix_weights (pktgen refuses it)");
         }},
        {"burst", [](p_t& p, sv n, sv a) {
             // pktgen treats burst 0 as 1.
             p.burst = std::max<uint32_t>(1, uint32_t(number(n, a, 0, 1u << 16)));
         }},
        {"delay", [](p_t& p, sv n, sv a) {
             const uint64_t v = number(n, a, 0, UINT32_MAX);
             p.delay_ns = v == 0x7FFFFFFF ? UINT64_MAX : v;  // pktgen's "never transmit"
         }},
        {"rate", [](p_t& p, sv n, sv a) {
             if (!a.empty() && (a.back() == 'M' || a.back() == 'm')) a.remove_suffix(1);
             const uint64_t mbps = number(n, a, 1, UINT32_MAX);
             p.delay_ns = uint64_t(p.min_pkt_size) * 8 * 1000 / mbps;  // pktgen: min_pkt_size*8*NSEC_PER_USEC/value
         }},
        {"ratep", [](p_t& p, sv n, sv a) { p.delay_ns = 1000000000ull / number(n, a, 1, UINT32_MAX); }},
        {"pkt_size", [](p_t& p, sv n, sv a) { set_pkt_size(p.min_pkt_size, p.max_pkt_size, n, a); }},
        {"min_pkt_size", [](p_t& p, sv n, sv a) {
             uint32_t dummy;
             set_pkt_size(p.min_pkt_size, dummy, n, a);
         }},
        {"max_pkt_size", [](p_t& p, sv n, sv a) {
             uint32_t dummy;
             set_pkt_size(p.max_pkt_size, dummy, n, a);
         }},
        {"dst_mac", [](p_t& p, sv n, sv a) { p.dst_mac = mac_arg(n, a); }},
        {"src_mac", [](p_t& p, sv n, sv a) { p.src_mac = mac_arg(n, a); }},
        {"dst", [](p_t& p, sv n, sv a) { p.daddr_min = ipv4_arg(n, a); }},
        {"dst_min", [](p_t& p, sv n, sv a) { p.daddr_min = ipv4_arg(n, a); }},
        {"dst_max", [](p_t& p, sv n, sv a) { p.daddr_max = ipv4_arg(n, a); }},
        {"src_min", [](p_t& p, sv n, sv a) { p.saddr_min = ipv4_arg(n, a); }},
        {"src_max", [](p_t& p, sv n, sv a) { p.saddr_max = ipv4_arg(n, a); }},
        {"udp_src_min", [](p_t& p, sv n, sv a) { p.udp_src_min = uint16_t(number(n, a, 0, 65535)); }},
        {"udp_src_max", [](p_t& p, sv n, sv a) { p.udp_src_max = uint16_t(number(n, a, 0, 65535)); }},
        {"udp_dst_min", [](p_t& p, sv n, sv a) { p.udp_dst_min = uint16_t(number(n, a, 0, 65535)); }},
        {"udp_dst_max", [](p_t& p, sv n, sv a) { p.udp_dst_max = uint16_t(number(n, a, 0, 65535)); }},
        {"flows", [](p_t& p, sv n, sv a) { p.flows = uint32_t(number(n, a, 0, max_flows)); }},
        {"flowlen", [](p_t& p, sv n, sv a) { p.flowlen = uint32_t(number(n, a, 0, UINT32_MAX)); }},
        {"vlan_id", [](p_t& p, sv n, sv a) {
             // pktgen: ids above 4095 switch the tag off.
             const uint64_t v = number(n, a, 0, 65535);
             p.vlan_id = v <= 4095 ? uint16_t(v) : no_vlan;
         }},
        {"vlan_p", [](p_t& p, sv n, sv a) { p.vlan_p = uint8_t(number(n, a, 0, 7)); }},
        {"vlan_cfi", [](p_t& p, sv n, sv a) { p.vlan_cfi = uint8_t(number(n, a, 0, 1)); }},
        {"tos", [](p_t& p, sv n, sv a) {
             // pktgen reads tos as two hex digits ("tos 10" is 0x10).
             if (a.size() > 2 && a[0] == '0' && (a[1] == 'x' || a[1] == 'X')) a.remove_prefix(2);
             if (a.empty() || a.size() > 2 || !std::isxdigit(static_cast<unsigned char>(a[0])) ||
                 (a.size() == 2 && !std::isxdigit(static_cast<unsigned char>(a[1]))))
                 fail(std::string(n) + ": expected two hex digits, got \"" + std::string(a) + "\"");
             p.tos = uint8_t(std::stoul(std::string(a), nullptr, 16));
         }},
        {"flag", [](p_t& p, sv n, sv a) {
             const bool clear = !a.empty() && a[0] == '!';
             if (clear) a.remove_prefix(1);
             if (unsupported_flag(a)) fail(std::string(n) + ": " + std::string(a) + " is not modelled (IPv4/UDP frames only)");
             const auto& t = flag_table();
             auto it = t.find(a);
             if (it == t.end()) fail(std::string(n) + ": unknown flag \"" + std::string(a) + "\"");
             if (clear) p.flags &= ~it->second;
             else p.flags |= it->second;
         }},
        {"src_mac_count", [](p_t&, sv n, sv a) { number(n, a, 0, 1); }},  // >1 (MAC ranges) not modelled
        {"dst_mac_count", [](p_t&, sv n, sv a) { number(n, a, 0, 1); }},
        {"frags", [](p_t&, sv n, sv a) { number(n, a, 0, 0); }},          // linear skbs only
        {"xmit_mode", [](p_t&, sv n, sv a) {
             if (a != "start_xmit") fail(std::string(n) + ": only start_xmit is modelled, got \"" + std::string(a) + "\"");
         }},
        // Accepted without effect on the model: one queue, one CPU, no debug output.
        {"debug", [](p_t&, sv n, sv a) { number(n, a, 0, UINT32_MAX); }},
        {"node", [](p_t&, sv n, sv a) { number(n, a, 0, UINT32_MAX); }},
        {"skb_priority", [](p_t&, sv n, sv a) { number(n, a, 0, UINT32_MAX); }},
        {"queue_map_min", [](p_t&, sv n, sv a) { number(n, a, 0, 65535); }},
        {"queue_map_max", [](p_t&, sv n, sv a) { number(n, a, 0, 65535); }},
    };
    return t;
}

// Commands pktgen has but the model does not build frames for.
bool unsupported_command(std::string_view c) {
    static const char* const names[] = {"src6", "dst6", "dst6_min", "dst6_max", "mpls", "svlan_id", "svlan_p",
                                        "svlan_cfi", "spi", "traffic_class"};
    for (const char* n : names)
        if (c == n) return true;
    return false;
}

std::vector<std::string> split_words(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!cur.empty()) out.push_back(std::move(cur)), cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

}  // namespace

std::optional<mac_addr> parse_mac(std::string_view s) {
    mac_addr m{};
    size_t pos = 0;
    for (int i = 0; i < 6; ++i) {
        if (i > 0) {
            if (pos >= s.size() || s[pos] != ':') return std::nullopt;
            ++pos;
        }
        int digits = 0, v = 0;
        while (pos < s.size() && digits < 2 && std::isxdigit(static_cast<unsigned char>(s[pos]))) {
            const char c = char(std::tolower(static_cast<unsigned char>(s[pos])));
            v = v * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
            ++pos, ++digits;
        }
        if (digits == 0) return std::nullopt;
        m[i] = uint8_t(v);
    }
    if (pos != s.size()) return std::nullopt;
    return m;
}

std::optional<uint32_t> parse_ipv4(std::string_view s) {
    uint32_t a = 0;
    size_t pos = 0;
    for (int i = 0; i < 4; ++i) {
        if (i > 0) {
            if (pos >= s.size() || s[pos] != '.') return std::nullopt;
            ++pos;
        }
        int digits = 0;
        uint32_t v = 0;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) && digits < 3) {
            v = v * 10 + uint32_t(s[pos] - '0');
            ++pos, ++digits;
        }
        if (digits == 0 || v > 255) return std::nullopt;
        a = (a << 8) | v;
    }
    if (pos != s.size()) return std::nullopt;
    return a;
}

std::string format_mac(const mac_addr& m) {
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return buf;
}

std::string format_ipv4(uint32_t a) {
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." + std::to_string((a >> 8) & 255) +
           "." + std::to_string(a & 255);
}

void apply_pktgen_command(pktgen_params& p, std::string_view line) {
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    const auto words = split_words(line);
    if (words.empty()) return;
    const std::string& name = words[0];
    if (name == "clear_counters") {
        if (words.size() != 1) fail("clear_counters: takes no value");
        return;  // counters start at zero in the model
    }
    if (unsupported_command(name)) fail(name + ": not modelled (the model builds IPv4/UDP frames only)");
    if (name == "imix_weights") return set_imix(p, {words.begin() + 1, words.end()});
    const auto& t = command_table();
    auto it = t.find(name);
    if (it == t.end()) fail("unknown pktgen command \"" + name + "\"");
    if (words.size() < 2) fail(name + ": missing value");
    if (words.size() > 2) fail(name + ": expected one value, got " + std::to_string(words.size() - 1));
    it->second(p, name, words[1]);
}

void apply_pktgen_file(pktgen_params& p, const std::string& path) {
    std::string text = read_input_file(path);
    if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // a Windows editor's byte order mark: no content
    std::istringstream in(text);
    pktgen_script script(p);
    std::string line, where = path;
    for (size_t n = 1; std::getline(in, line); ++n) {
        where = path + ":" + std::to_string(n);
        try {
            script.line(line, where);
        } catch (const pktgen_command_error& e) {
            throw pktgen_command_error(where + ": " + e.what());
        }
    }
    try {
        script.finish();
    } catch (const pktgen_command_error& e) {
        throw pktgen_command_error(where + ": " + e.what());
    }
}

std::vector<std::string> sample03_commands(std::string_view options) {
    // Defaults of the script and of parameters.sh (reference/test-tools.md T.1).
    std::string pkt_size = "60", dest = "198.18.0.42", dst_mac = "90:e2:ba:ff:ff:ff", burst = "32";
    std::string clone = "0", count = "0", delay = "0", ports;
    bool udp_csum = false;
    const auto words = split_words(options);
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string& o = words[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= words.size()) fail("sample03: option " + o + " needs a value");
            return words[++i];
        };
        if (o == "-s") pkt_size = value();
        else if (o == "-d") dest = value();
        else if (o == "-m") dst_mac = value();
        else if (o == "-p") ports = value();
        else if (o == "-b") burst = value();
        else if (o == "-n") count = value();
        else if (o == "-w") delay = value();
        else if (o == "-c") clone = value();
        else if (o == "-i") (void)value();  // the device name: the generator has one
        else if (o == "-t") {
            if (value() != "1") fail("sample03: -t: only one pktgen thread is modelled");
        } else if (o == "-f") (void)value();  // first CPU: no effect with one thread
        else if (o == "-k") udp_csum = true;  // UDP_CSUM: the UDP checksum is filled in
        else if (o == "-6") fail("sample03: -6: IPv6 is not modelled");
        else if (o == "-v" || o == "-x" || o == "-a") {}  // verbose, debug, append: no effect
        else fail("sample03: unknown option \"" + o + "\"");
    }
    // -d may be a CIDR: parameters.sh turns it into the first and last address of the prefix.
    std::string dst_min = dest, dst_max = dest;
    if (auto slash = dest.find('/'); slash != std::string::npos) {
        const auto base = parse_ipv4(dest.substr(0, slash));
        const std::string bits = dest.substr(slash + 1);
        if (!base || bits.empty() || bits.size() > 2 || !std::isdigit(static_cast<unsigned char>(bits[0])) ||
            (bits.size() == 2 && !std::isdigit(static_cast<unsigned char>(bits[1]))) || std::stoi(bits) > 32)
            fail("sample03: -d: expected an IPv4 address or CIDR, got \"" + dest + "\"");
        const int n = std::stoi(bits);
        const uint32_t mask = n == 0 ? 0 : ~uint32_t(0) << (32 - n);
        dst_min = format_ipv4(*base & mask);
        dst_max = format_ipv4((*base & mask) | ~mask);
    }
    std::vector<std::string> c = {"flag QUEUE_MAP_CPU", "count " + count, "clone_skb " + clone,
                                  "pkt_size " + pkt_size, "delay " + delay, "flag NO_TIMESTAMP",
                                  "dst_mac " + dst_mac, "dst_min " + dst_min, "dst_max " + dst_max};
    if (!ports.empty()) {
        // "-p PORT" or "-p MIN-MAX"; the script always sets UDPDST_RND for it.
        const auto dash = ports.find('-');
        const std::string lo = ports.substr(0, dash), hi = dash == std::string::npos ? lo : ports.substr(dash + 1);
        c.push_back("flag UDPDST_RND");
        c.push_back("udp_dst_min " + lo);
        c.push_back("udp_dst_max " + hi);
    }
    if (udp_csum) c.push_back("flag UDPCSUM");
    if (burst != "0") c.push_back("burst " + burst);
    return c;
}

std::string resolve_config_path(const config& cfg, const std::string& pointer) {
    namespace fs = std::filesystem;
    const std::string path = cfg.tree().at(nlohmann::json::json_pointer(pointer)).get<std::string>();
    std::error_code ec;
    if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, ec)) return path;
    const std::string origin = cfg.origin_of(pointer);  // an experiment file, or "--set ..." (the working directory)
    for (const fs::path& base : {origin.rfind("--set ", 0) == 0 ? fs::path() : fs::path(origin).parent_path(),
                                 fs::path(config::default_config_dir())})
        if (!base.empty() && fs::exists(base / path, ec)) return (base / path).string();
    return path;
}

pktgen_params pktgen_params_from(const config& cfg) {
    pktgen_params p;
    const config_view g = cfg.view("generator");
    const std::string& s03 = g.string("sample03");
    if (!s03.empty()) {
        std::vector<std::string> lines;
        try {
            lines = sample03_commands(s03);
            for (const auto& l : lines) apply_pktgen_command(p, l);
        } catch (const pktgen_command_error& e) {
            throw cfg.error_at("/generator/sample03", e.what());
        }
    }
    const std::string& file = g.string("pktgen_file");
    if (!file.empty()) {
        try {
            apply_pktgen_file(p, resolve_config_path(cfg, "/generator/pktgen_file"));
        } catch (const input_file_error& e) {  // no line to name: point at the key that named the file
            throw cfg.error_at("/generator/pktgen_file", e.what());
        } catch (const pktgen_command_error& e) {
            throw config_error(e.what());
        }
    }
    const nlohmann::json& list = g.at("pktgen");
    pktgen_script script(p);  // the list takes script lines too: pgset "...", echo "..." > /proc/...
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string where = "/generator/pktgen/" + std::to_string(i);
        try {
            script.line(list[i].get<std::string>(), "generator.pktgen." + std::to_string(i));
            if (i + 1 == list.size()) script.finish();
        } catch (const pktgen_command_error& e) {
            throw cfg.error_at(where, e.what());
        }
    }
    return p;
}

}  // namespace fecsim::traffic
