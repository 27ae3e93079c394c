// pktgen device commands: every command, flags, the sample03 shortcut, and errors that name
// the line (command files) or the JSON pointer (experiment files).
#include "config/config.h"
#include "models/sim_context.h"
#include "tests/traffic/test_util.h"
#include "traffic/generator.h"
#include "traffic/pktgen_commands.h"

#include <gtest/gtest.h>

namespace fecsim::traffic {
namespace {

pktgen_params apply(std::initializer_list<const char*> lines) {
    pktgen_params p;
    for (const char* l : lines) apply_pktgen_command(p, l);
    return p;
}

std::string error_of(std::initializer_list<const char*> lines) {
    try {
        apply(lines);
    } catch (const pktgen_command_error& e) {
        return e.what();
    }
    return "";
}

TEST(pktgen_commands, defaults_are_pktgens) {
    fresh_simulation();
    const pktgen_params p;
    EXPECT_EQ(p.min_pkt_size, 60u);
    EXPECT_EQ(p.count, 1000u);
    EXPECT_EQ(p.burst, 1u);
    EXPECT_EQ(p.clone_skb, 0u);
    EXPECT_EQ(p.udp_src_min, 9);
    EXPECT_EQ(p.udp_dst_max, 9);
    EXPECT_EQ(p.vlan_id, no_vlan);
}

TEST(pktgen_commands, every_value_command) {
    fresh_simulation();
    const pktgen_params p = apply({"count 0", "clone_skb 5", "burst 32", "delay 1500", "pkt_size 124",
                                   "dst_mac 90:e2:ba:ff:ff:fe", "src_mac 00:04:9F:01:02:03", "dst_min 198.18.0.42",
                                   "dst_max 198.18.0.50", "src_min 10.0.0.1", "src_max 10.0.0.9", "udp_src_min 1000",
                                   "udp_src_max 1010", "udp_dst_min 9", "udp_dst_max 16", "flows 4", "flowlen 10",
                                   "vlan_id 100", "vlan_p 5", "vlan_cfi 1", "tos 10", "debug 1", "node 0",
                                   "skb_priority 3", "queue_map_min 0", "queue_map_max 0", "frags 0",
                                   "xmit_mode start_xmit", "src_mac_count 1", "dst_mac_count 0", "clear_counters"});
    EXPECT_EQ(p.count, 0u);
    EXPECT_EQ(p.clone_skb, 5u);
    EXPECT_EQ(p.burst, 32u);
    EXPECT_EQ(p.delay_ns, 1500u);
    EXPECT_EQ(p.min_pkt_size, 124u);
    EXPECT_EQ(p.max_pkt_size, 124u);
    EXPECT_EQ(format_mac(*p.dst_mac), "90:e2:ba:ff:ff:fe");
    EXPECT_EQ(format_mac(*p.src_mac), "00:04:9f:01:02:03");
    EXPECT_EQ(format_ipv4(p.daddr_min), "198.18.0.42");
    EXPECT_EQ(format_ipv4(p.daddr_max), "198.18.0.50");
    EXPECT_EQ(format_ipv4(*p.saddr_min), "10.0.0.1");
    EXPECT_EQ(format_ipv4(*p.saddr_max), "10.0.0.9");
    EXPECT_EQ(p.udp_src_min, 1000);
    EXPECT_EQ(p.udp_src_max, 1010);
    EXPECT_EQ(p.udp_dst_min, 9);
    EXPECT_EQ(p.udp_dst_max, 16);
    EXPECT_EQ(p.flows, 4u);
    EXPECT_EQ(p.flowlen, 10u);
    EXPECT_EQ(p.vlan_id, 100);
    EXPECT_EQ(p.vlan_p, 5);
    EXPECT_EQ(p.vlan_cfi, 1);
    EXPECT_EQ(p.tos, 0x10);
}

TEST(pktgen_commands, sizes_rates_and_special_values) {
    fresh_simulation();
    EXPECT_EQ(apply({"min_pkt_size 60", "max_pkt_size 1514"}).max_pkt_size, 1514u);
    EXPECT_EQ(apply({"pkt_size 20"}).min_pkt_size, 56u);  // raised to ETH_ZLEN - ETH_FCS_LEN as pktgen does
    // rate M: min_pkt_size * 8 * 1000 / M ns, with the size in force when the command is given.
    EXPECT_EQ(apply({"pkt_size 60", "rate 300M"}).delay_ns, 60u * 8 * 1000 / 300);
    EXPECT_EQ(apply({"pkt_size 1000", "rate 100"}).delay_ns, 80000u);
    EXPECT_EQ(apply({"rate 100", "pkt_size 1000"}).delay_ns, 4800u);  // order matters, as in pktgen
    EXPECT_EQ(apply({"ratep 1000000"}).delay_ns, 1000u);
    EXPECT_EQ(apply({"ratep 3"}).delay_ns, 333333333u);
    EXPECT_EQ(apply({"delay 2147483647"}).delay_ns, UINT64_MAX);  // 0x7FFFFFFF: never transmit
    EXPECT_EQ(apply({"burst 0"}).burst, 1u);
    EXPECT_EQ(apply({"vlan_id 4096"}).vlan_id, no_vlan);
    EXPECT_EQ(apply({"dst 1.2.3.4"}).daddr_min, 0x01020304u);
    EXPECT_EQ(apply({"tos 0xb8"}).tos, 0xb8);
}

TEST(pktgen_commands, flags_set_and_clear) {
    fresh_simulation();
    const char* names[] = {"IPSRC_RND", "IPDST_RND", "UDPSRC_RND", "UDPDST_RND", "TXSIZE_RND", "VID_RND",
                           "FLOW_SEQ", "QUEUE_MAP_RND", "QUEUE_MAP_CPU", "UDPCSUM", "NO_TIMESTAMP", "NODE_ALLOC",
                           "SHARED", "MACSRC_RND", "MACDST_RND"};
    uint32_t all = 0;
    for (const char* n : names) {
        pktgen_params p;
        apply_pktgen_command(p, std::string("flag ") + n);
        EXPECT_EQ(__builtin_popcount(p.flags), 1) << n;
        EXPECT_EQ(all & p.flags, 0u) << n << " shares a bit";
        all |= p.flags;
        apply_pktgen_command(p, std::string("flag !") + n);
        EXPECT_EQ(p.flags, 0u) << n;
    }
    const pktgen_params p = apply({"flag UDPCSUM", "flag NO_TIMESTAMP", "flag !UDPCSUM"});
    EXPECT_FALSE(p.has(F_UDPCSUM));
    EXPECT_TRUE(p.has(F_NO_TIMESTAMP));
}

TEST(pktgen_commands, comments_and_blank_lines) {
    fresh_simulation();
    const pktgen_params p = apply({"", "   # a comment", "count 7   # trailing comment", "\tburst  4 "});
    EXPECT_EQ(p.count, 7u);
    EXPECT_EQ(p.burst, 4u);
}

TEST(pktgen_commands, imix_weights_build_the_kernels_distribution) {
    fresh_simulation();
    const pktgen_params p = apply({"imix_weights 20,1 100,1 1500,2"});
    ASSERT_EQ(p.imix.size(), 3u);
    EXPECT_EQ(p.imix[0], (std::pair<uint32_t, uint64_t>{42, 1}));  // raised to the headers' 42 bytes
    EXPECT_EQ(p.imix[2], (std::pair<uint32_t, uint64_t>{1500, 2}));
    // cumulative 25, 50, 100: draws 0-24 -> entry 0, 25-49 -> 1, 50-99 -> 2
    EXPECT_EQ(p.imix_distribution[24], 0);
    EXPECT_EQ(p.imix_distribution[25], 1);
    EXPECT_EQ(p.imix_distribution[49], 1);
    EXPECT_EQ(p.imix_distribution[50], 2);
    EXPECT_EQ(p.imix_distribution[99], 2);
}

TEST(pktgen_commands, errors_say_what_is_wrong) {
    fresh_simulation();
    EXPECT_EQ(error_of({"pkt_sise 60"}), "unknown pktgen command \"pkt_sise\"");
    EXPECT_EQ(error_of({"count"}), "count: missing value");
    EXPECT_EQ(error_of({"count 1 2"}), "count: expected one value, got 2");
    EXPECT_EQ(error_of({"count ten"}), "count: expected a decimal number, got \"ten\"");
    EXPECT_EQ(error_of({"count -1"}), "count: expected a decimal number, got \"-1\"");
    EXPECT_EQ(error_of({"vlan_p 8"}), "vlan_p: expected a value in [0, 7], got 8");
    EXPECT_EQ(error_of({"udp_dst_min 70000"}), "udp_dst_min: expected a value in [0, 65535], got 70000");
    EXPECT_EQ(error_of({"pkt_size 20000"}), "pkt_size: expected a value in [0, 9600], got 20000");
    EXPECT_EQ(error_of({"ratep 0"}), "ratep: expected a value in [1, 4294967295], got 0");
    EXPECT_EQ(error_of({"rate 0M"}), "rate: expected a value in [1, 4294967295], got 0");
    EXPECT_EQ(error_of({"dst_mac 90:e2:ba:ff:ff"}), "dst_mac: expected a MAC address aa:bb:cc:dd:ee:ff, got \"90:e2:ba:ff:ff\"");
    EXPECT_EQ(error_of({"dst_min 198.18.0.256"}), "dst_min: expected a dotted IPv4 address, got \"198.18.0.256\"");
    EXPECT_EQ(error_of({"flag UDPCSUMM"}), "flag: unknown flag \"UDPCSUMM\"");
    EXPECT_EQ(error_of({"flag IPV6"}), "flag: IPV6 is not modelled (IPv4/UDP frames only)");
    EXPECT_EQ(error_of({"dst6 fd00::1"}), "dst6: not modelled (the model builds IPv4/UDP frames only)");
    EXPECT_EQ(error_of({"frags 2"}), "frags: expected a value in [0, 0], got 2");
    EXPECT_EQ(error_of({"xmit_mode netif_receive"}), "xmit_mode: only start_xmit is modelled, got \"netif_receive\"");
    EXPECT_EQ(error_of({"tos 1g"}), "tos: expected two hex digits, got \"1g\"");
    EXPECT_EQ(error_of({"clear_counters now"}), "clear_counters: takes no value");
    EXPECT_EQ(error_of({"imix_weights"}), "imix_weights: expected SIZE,WEIGHT pairs");
    EXPECT_EQ(error_of({"imix_weights 64"}), "imix_weights: expected SIZE,WEIGHT, got \"64\"");
    EXPECT_EQ(error_of({"imix_weights 64,0 128,0"}), "imix_weights: the weights sum to 0");
    EXPECT_EQ(error_of({"imix_weights 64,x"}), "imix_weights weight: expected a decimal number, got \"x\"");
    EXPECT_EQ(error_of({"clone_skb 10", "imix_weights 64,1"}), "imix_weights: not with clone_skb > 0 (pktgen refuses it)");
    EXPECT_EQ(error_of({"imix_weights 64,1", "clone_skb 10"}), "clone_skb: not with imix_weights (pktgen refuses it)");
}

TEST(pktgen_commands, file_errors_carry_the_line_number) {
    fresh_simulation();
    const std::string path = test::write_file("cmds.pg", "# sample\npkt_size 60\n\nburst 32\nratep many\ncount 5\n");
    pktgen_params p;
    try {
        apply_pktgen_file(p, path);
        FAIL() << "no error";
    } catch (const pktgen_command_error& e) {
        EXPECT_EQ(std::string(e.what()), path + ":5: ratep: expected a decimal number, got \"many\"");
    }
    EXPECT_EQ(p.burst, 32u);  // lines before the bad one were applied
    EXPECT_THROW(apply_pktgen_file(p, test::scratch_path("missing.pg")), input_file_error);
    // A directory used to be read as an empty file: accepted, nothing applied.
    EXPECT_THROW(apply_pktgen_file(p, test::scratch_path("")), input_file_error);
}

TEST(pktgen_commands, sample03_defaults_match_the_script) {
    fresh_simulation();
    const std::vector<std::string> want = {"flag QUEUE_MAP_CPU", "count 0",          "clone_skb 0",
                                           "pkt_size 60",        "delay 0",          "flag NO_TIMESTAMP",
                                           "dst_mac 90:e2:ba:ff:ff:ff", "dst_min 198.18.0.42", "dst_max 198.18.0.42",
                                           "burst 32"};
    EXPECT_EQ(sample03_commands(""), want);
}

TEST(pktgen_commands, sample03_options) {
    fresh_simulation();
    const auto c = sample03_commands("-i eth0 -s 124 -d 10.1.2.3/30 -m 00:11:22:33:44:55 -p 9-16 -b 0 -n 100 -w 500 -c 3 -t 1");
    pktgen_params p;
    for (auto& l : c) apply_pktgen_command(p, l);
    EXPECT_EQ(p.min_pkt_size, 124u);
    EXPECT_EQ(format_ipv4(p.daddr_min), "10.1.2.0");
    EXPECT_EQ(format_ipv4(p.daddr_max), "10.1.2.3");
    EXPECT_EQ(format_mac(*p.dst_mac), "00:11:22:33:44:55");
    EXPECT_TRUE(p.has(F_UDPDST_RND));
    EXPECT_EQ(p.udp_dst_min, 9);
    EXPECT_EQ(p.udp_dst_max, 16);
    EXPECT_EQ(p.burst, 1u);  // -b 0: the script writes no burst command
    EXPECT_EQ(p.count, 100u);
    EXPECT_EQ(p.delay_ns, 500u);
    EXPECT_EQ(p.clone_skb, 3u);
    EXPECT_TRUE(p.has(F_NO_TIMESTAMP));
    EXPECT_TRUE(p.has(F_QUEUE_MAP_CPU));
    EXPECT_FALSE(p.has(F_UDPCSUM));
    // -k (UDP_CSUM): flag UDPCSUM, written after the ports and before the burst, as the script does
    const auto k = sample03_commands("-p 9 -k");
    EXPECT_EQ(std::vector<std::string>(k.end() - 5, k.end()),
              (std::vector<std::string>{"flag UDPDST_RND", "udp_dst_min 9", "udp_dst_max 9", "flag UDPCSUM", "burst 32"}));
    EXPECT_THROW(sample03_commands("-q 1"), pktgen_command_error);
    EXPECT_THROW(sample03_commands("-s"), pktgen_command_error);
    EXPECT_THROW(sample03_commands("-t 4"), pktgen_command_error);
    EXPECT_THROW(sample03_commands("-6"), pktgen_command_error);
    EXPECT_THROW(sample03_commands("-d 10.0.0.1/33"), pktgen_command_error);
}

TEST(pktgen_commands, from_config_in_order_sample03_file_list) {
    fresh_simulation();
    const std::string file = test::write_file("order.pg", "burst 8\ncount 50\n");
    const config c = test::load_with_generator(
        {{"sample03", "-s 124 -m 00:11:22:33:44:55"}, {"pktgen_file", file}, {"pktgen", {"count 70", "flag UDPCSUM"}}});
    const pktgen_params p = pktgen_params_from(c);
    EXPECT_EQ(p.min_pkt_size, 124u);  // sample03
    EXPECT_EQ(p.burst, 8u);           // file overrides sample03's 32
    EXPECT_EQ(p.count, 70u);          // list overrides the file
    EXPECT_TRUE(p.has(F_UDPCSUM));
}

TEST(pktgen_commands, config_errors_name_file_and_pointer) {
    fresh_simulation();
    auto message = [](const config& c) {
        try {
            pktgen_params_from(c);
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    const config list = test::load_with_generator({{"pktgen", {"pkt_size 60", "burst 4", "burts 8"}}}, "list.json");
    EXPECT_EQ(message(list), test::scratch_path("list.json") + ": /generator/pktgen/2: unknown pktgen command \"burts\"");
    const config s03 = test::load_with_generator({{"sample03", "-s 60 -z"}}, "s03.json");
    EXPECT_EQ(message(s03), test::scratch_path("s03.json") + ": /generator/sample03: sample03: unknown option \"-z\"");
    const std::string bad = test::write_file("bad.pg", "pkt_size 60\n# ok\nflag NOPE\n");
    const config file = test::load_with_generator({{"pktgen_file", bad}}, "file.json");
    EXPECT_EQ(message(file), bad + ":3: flag: unknown flag \"NOPE\"");
    const config missing = test::load_with_generator({{"pktgen_file", "no/such/file.pg"}}, "missing.json");
    EXPECT_NE(message(missing).find("/generator/pktgen_file: no/such/file.pg: cannot open file"), std::string::npos)
        << message(missing);
}

TEST(pktgen_commands, schema_rejects_bad_generator_settings) {
    fresh_simulation();
    EXPECT_THROW(test::load_with_generator({{"kind", "iperf"}}), config_error);
    EXPECT_THROW(test::load_with_generator({{"pktgen", "pkt_size 60"}}), config_error);  // must be a list
    EXPECT_THROW(test::load_with_generator({{"rx_enable", true}}), config_error);
    EXPECT_THROW(test::load_with_generator({{"cpu", {{"per_packet_ns", -1}}}}), config_error);
}

TEST(pktgen_commands, bad_device_addresses_are_config_errors) {
    fresh_simulation();
    EXPECT_THROW(make_generator("gen", test::load_with_generator({{"device_mac", "00:04:9f"}}), false), config_error);
    EXPECT_THROW(make_generator("gen", test::load_with_generator({{"device_ipv4", "1.2.3"}}), false), config_error);
}

}  // namespace
}  // namespace fecsim::traffic
