// Robustness of the input paths: many randomly damaged experiment files and pktgen command
// lines must each end in a clear error (config_error / pktgen_command_error) or be accepted,
// never in another exception, a crash or undefined behaviour (run this under the sanitizers to
// make the last part strict). Deterministic: fixed seeds.
#include "config/config.h"
#include "traffic/pktgen_commands.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fecsim {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(bad_input, damaged_experiment_files_give_config_errors) {
    const std::string original = read_file(FECSIM_SOURCE_CONFIG_DIR "/experiments/imx8mp-xdp-tx.json");
    const fs::path path = fs::temp_directory_path() / ("fecsim-damaged-" + std::to_string(::getpid()) + ".json");
    std::mt19937 rng(7);
    const std::string alphabet = "{}[]\":,0123456789.-eE truefalsnul\\/x#";
    int accepted = 0, rejected = 0;
    for (int i = 0; i < 400; ++i) {
        std::string text = original;
        for (int edits = 1 + int(rng() % 4); edits-- > 0 && !text.empty();) {
            const size_t at = rng() % text.size();
            switch (rng() % 3) {
            case 0: text.erase(at, 1 + rng() % 8); break;
            case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
            default: text[at] = alphabet[rng() % alphabet.size()];
            }
        }
        std::ofstream(path, std::ios::trunc) << text;
        try {
            config::load(path.string(), {});
            ++accepted;
        } catch (const config_error& e) {
            ++rejected;
            EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":", 0), 0u) << e.what();
        }
    }
    fs::remove(path);
    // Both outcomes occur (damage inside a description or comment is harmless), so the loop
    // exercises the loader's error paths and its success path alike.
    EXPECT_GT(rejected, 100);
    EXPECT_GT(accepted, 10);
}

TEST(bad_input, random_pktgen_commands_are_accepted_or_rejected_cleanly) {
    const std::vector<std::string> words = {
        "pkt_size", "min_pkt_size", "max_pkt_size", "count", "burst", "clone_skb", "delay", "rate", "ratep",
        "dst_mac", "src_mac", "dst_min", "dst_max", "src_min", "src_max", "udp_src_min", "udp_src_max",
        "udp_dst_min", "udp_dst_max", "flows", "flowlen", "flag", "vlan_id", "vlan_p", "frobnicate"};
    const std::vector<std::string> args = {
        "0", "1", "60", "65535", "-1", "99999999999999999999", "1.5", "300M", "2G", "x", "",
        "00:11:22:33:44:55", "00:11:22:33:44", "zz:zz:zz:zz:zz:zz", "10.0.0.1", "10.0.0.256", "1.2.3",
        "UDPCSUM", "!UDPCSUM", "IPV6", "TXSIZE_RND", "NOPE", "4095", "4096", "7", "8"};
    std::mt19937 rng(11);
    int ok = 0, errors = 0;
    for (int i = 0; i < 5000; ++i) {
        traffic::pktgen_params p;
        std::string line = words[rng() % words.size()];
        for (int n = int(rng() % 3); n-- > 0;) line += " " + args[rng() % args.size()];
        try {
            traffic::apply_pktgen_command(p, line);
            ++ok;
        } catch (const traffic::pktgen_command_error& e) {
            ++errors;
            EXPECT_NE(std::string(e.what()), "") << line;
        }
    }
    EXPECT_GT(ok, 100);
    EXPECT_GT(errors, 100);
}

TEST(bad_input, random_sample03_options_are_accepted_or_rejected_cleanly) {
    const std::vector<std::string> tokens = {"-s", "-d", "-m", "-p", "-b", "-n", "-w", "-c", "-t", "-i", "-6", "-z",
                                             "60", "0", "-1", "198.18.0.42", "198.18.0.0/24", "10.0.0.0/33",
                                             "00:04:9f:07:9f:01", "9-16", "16-9", "abc", "eth0"};
    std::mt19937 rng(13);
    for (int i = 0; i < 3000; ++i) {
        std::string options;
        for (int n = int(rng() % 6); n-- > 0;) options += tokens[rng() % tokens.size()] + " ";
        // Any other exception type (or a crash) fails the test.
        try {
            traffic::pktgen_params p;
            for (const std::string& c : traffic::sample03_commands(options)) traffic::apply_pktgen_command(p, c);
        } catch (const traffic::pktgen_command_error& e) {
            EXPECT_NE(std::string(e.what()), "") << options;
        }
    }
}

}  // namespace
}  // namespace fecsim
