// pktgen's device commands (the lines written to /proc/net/pktgen/<dev>, Documentation/
// networking/pktgen.rst) parsed into the settings the pktgen model runs with, plus the
// shortcut that expands pktgen_sample03_burst_single_flow.sh's options into those commands.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fecsim {
class config;
}

namespace fecsim::traffic {

using mac_addr = std::array<uint8_t, 6>;

// pktgen's F_* flags (net/core/pktgen.c); only those the model implements or may ignore safely.
enum pktgen_flag : uint32_t {
    F_IPSRC_RND = 1u << 0,
    F_IPDST_RND = 1u << 1,
    F_UDPSRC_RND = 1u << 2,
    F_UDPDST_RND = 1u << 3,
    F_TXSIZE_RND = 1u << 4,
    F_VID_RND = 1u << 5,
    F_FLOW_SEQ = 1u << 6,
    F_QUEUE_MAP_RND = 1u << 7,   // accepted, no effect: the generator NIC has one TX queue
    F_QUEUE_MAP_CPU = 1u << 8,   // accepted, no effect: one pktgen thread on one CPU
    F_UDPCSUM = 1u << 9,
    F_NO_TIMESTAMP = 1u << 10,
    F_NODE_ALLOC = 1u << 11,     // accepted, no effect (memory placement)
    F_SHARED = 1u << 12,         // accepted, no effect (skbs are shared by construction)
    F_MACSRC_RND = 1u << 13,     // accepted; without src_mac_count > 1 it changes nothing
    F_MACDST_RND = 1u << 14,
};

constexpr uint16_t no_vlan = 0xffff;  // pktgen's "vlan_id 0xffff": no 802.1Q tag

// Device settings; defaults are pktgen's (pktgen_add_device) unless a comment says otherwise.
struct pktgen_params {
    uint32_t min_pkt_size = 60;       // bytes without FCS (pkt_size sets min and max)
    uint32_t max_pkt_size = 60;
    uint64_t count = 1000;            // packets to send; 0 = until the simulation ends
    uint32_t clone_skb = 0;
    uint32_t burst = 1;
    uint64_t delay_ns = 0;            // per xmit call (rate/ratep set it)
    std::optional<mac_addr> dst_mac;  // unset: 00:00:00:00:00:00 as pktgen
    std::optional<mac_addr> src_mac;  // unset: the generator device's own MAC
    std::optional<uint32_t> saddr_min, saddr_max;  // host order; unset: device IPv4 address
    uint32_t daddr_min = 0, daddr_max = 0;
    uint16_t udp_src_min = 9, udp_src_max = 9, udp_dst_min = 9, udp_dst_max = 9;
    uint32_t flows = 0, flowlen = 0;
    uint16_t vlan_id = no_vlan;
    uint8_t vlan_p = 0, vlan_cfi = 0;
    uint8_t tos = 0;
    uint32_t flags = 0;
    // imix_weights: (size, weight) pairs; each packet's size is drawn by weight (overrides pkt_size).
    std::vector<std::pair<uint32_t, uint64_t>> imix;
    // The kernel's lookup table: imix entry for each of 100 equally likely draws.
    std::array<uint8_t, 100> imix_distribution{};
    // Script lines that have no meaning for the model (start, ...), each "WHERE: note".
    std::vector<std::string> notes;

    bool has(pktgen_flag f) const { return (flags & f) != 0; }
};

// A malformed or unsupported command; what() is the message without location.
struct pktgen_command_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Applies one device command line (e.g. "pkt_size 60", "flag !UDPCSUM"). Blank lines and
// '#' comments are ignored. Throws pktgen_command_error.
void apply_pktgen_command(pktgen_params& p, std::string_view line);

// Applies every line of a command file, plain commands or a pktgen script (pktgen_script.h);
// errors read "FILE:LINE: message" (input_file_error when the file cannot be read at all).
void apply_pktgen_file(pktgen_params& p, const std::string& path);

// The commands pktgen_sample03_burst_single_flow.sh writes for `options` (-s -d -m -p -b -n -w
// -c -t -i as parameters.sh parses them), with the script's defaults for the rest.
std::vector<std::string> sample03_commands(std::string_view options);

// The pktgen settings of a resolved configuration: generator.sample03 first, then the lines of
// generator.pktgen_file, then generator.pktgen (so later commands override earlier ones).
// Errors are fecsim::config_error naming the file and line or the JSON pointer.
pktgen_params pktgen_params_from(const config& cfg);

// "aa:bb:cc:dd:ee:ff" and dotted IPv4 parsing shared with the other peers; nullopt when malformed.
std::optional<mac_addr> parse_mac(std::string_view s);
std::optional<uint32_t> parse_ipv4(std::string_view s);
std::string format_mac(const mac_addr& m);
std::string format_ipv4(uint32_t a);

// Resolves the file named by the string at `pointer` of a configuration: as given when it exists
// (absolute or relative to the working directory), else relative to the experiment file that
// named it (so an experiment and its capture or script can live together anywhere), else
// relative to the configuration directory.
std::string resolve_config_path(const config& cfg, const std::string& pointer);

}  // namespace fecsim::traffic
