// The fecsim command line as users and scripts see it: exit codes, error lines, determinism.
#include "tests/support/shell.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
const std::string fecsim = std::string(FECSIM_BINARY_DIR) + "/fecsim";
const std::string data = (fs::path(FECSIM_TEST_DATA_DIR).parent_path().parent_path() / "config/data").string();  // the loader's samples
const std::string experiment = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx8mp-xdp-tx.json";

using fecsim::test::outcome;

// Runs fecsim with `args` (shell words) and `env` ("NAME=value " words), capturing stdout and
// stderr separately.
outcome run(const std::string& args, const std::string& env = "") { return fecsim::test::shell(env + fecsim + " " + args); }

size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

TEST(cli, validate_prints_the_resolved_config) {
    const outcome o = run("validate " + experiment + " --set seed=9");
    ASSERT_EQ(o.status, 0) << o.err;
    const auto j = nlohmann::json::parse(o.out);
    EXPECT_EQ(j.at("seed"), 9);
    EXPECT_EQ(j.at("platform"), "imx8mp");
    EXPECT_TRUE(j.at("mem").contains("ddr"));
}

TEST(cli, validate_reports_each_problem_on_one_line_with_exit_2) {
    const outcome o = run("validate " + data + "/three_errors.json");
    EXPECT_EQ(o.status, 2);
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(count_lines(o.err), 3u) << o.err;
    EXPECT_NE(o.err.find(data + "/three_errors.json: /durration_s: unknown key"), std::string::npos);
    EXPECT_NE(o.err.find(data + "/three_errors.json: /seed: expected an integer"), std::string::npos);
    EXPECT_NE(o.err.find(data + "/three_errors.json: /warmup_s: expected a value in"), std::string::npos);
}

TEST(cli, bad_command_lines_exit_2_with_one_line) {
    // fails before: each printed its line followed by the 13 lines of the usage
    for (const char* args : {"frobnicate", "run", "run a.json b.json", "run " FECSIM_SOURCE_CONFIG_DIR "/experiments/imx8mp-xdp-tx.json --bogus",
                             "list extra", "validate x.json --out r.json", "run x.json --set"}) {
        const outcome o = run(args);
        EXPECT_EQ(o.status, 2) << args;
        EXPECT_EQ(o.err.rfind("fecsim: ", 0), 0u) << args << ": " << o.err;
        EXPECT_EQ(count_lines(o.err), 1u) << args << ": " << o.err;
        EXPECT_NE(o.err.find(" (fecsim help shows the usage)\n"), std::string::npos) << args << ": " << o.err;
    }
    const outcome bare = run("");  // no command at all: the usage itself
    EXPECT_EQ(bare.status, 2);
    EXPECT_NE(bare.err.find("usage: fecsim run CONFIG.json"), std::string::npos) << bare.err;
    const outcome missing = run("run /nonexistent/exp.json");
    EXPECT_EQ(missing.status, 2);
    EXPECT_EQ(missing.err, "/nonexistent/exp.json: cannot open file\n");
}

TEST(cli, an_option_missing_its_value_or_given_twice_is_refused) {
    // fails before: "--out --quiet" ran the whole experiment, loudly, into a file named --quiet;
    // a second --out (--pcap, --max-wall-s, ...) silently replaced the first
    const std::string e = "run " + experiment + " --set duration_s=100 ";
    const std::vector<std::pair<std::string, std::string>> rows = {
        {e + "--out --quiet", "fecsim: --out needs a value (fecsim help shows the usage)\n"},
        {e + "--pcap --pcap-warmup", "fecsim: --pcap needs a value (fecsim help shows the usage)\n"},
        {e + "--out a.json --out=b.json", "fecsim: --out given twice (fecsim help shows the usage)\n"},
        {e + "--max-wall-s 5 --max-wall-s 9", "fecsim: --max-wall-s given twice (fecsim help shows the usage)\n"},
        {e + "--tap t0 --tap t1", "fecsim: --tap given twice (fecsim help shows the usage)\n"},
        {e + "--quiet=yes", "fecsim: unknown option '--quiet=yes' for run (fecsim help shows the usage)\n"},
    };
    for (const auto& [args, error] : rows) {
        const outcome o = run(args);
        EXPECT_EQ(o.status, 2) << args;
        EXPECT_EQ(o.err, error) << args;
        EXPECT_EQ(o.out, "") << args;
    }
    EXPECT_FALSE(fs::exists("--quiet"));
    // A switch given twice changes nothing, and --set adds up.
    const outcome twice = run("validate " + experiment + " --set seed=3 --set duration_s=0.5");
    ASSERT_EQ(twice.status, 0) << twice.err;
    EXPECT_EQ(nlohmann::json::parse(twice.out).at("seed"), 3);
    EXPECT_EQ(nlohmann::json::parse(twice.out).at("duration_s"), 0.5);
    EXPECT_EQ(run("run " + experiment + " --quiet --quiet --set duration_s=100 --out /dev/full").status, 2)
        << "refused for the output, not for the repeated --quiet";
}

TEST(cli, problems_found_while_assembling_or_booting_are_bad_input_too) {
    struct row {
        std::string command, sets, expected_error;
    };
    const std::vector<row> rows = {
        // found while assembling: validate sees them as well as run
        {"validate", "--set generator.pktgen='[\"bogus 1\"]'",
         "--set generator.pktgen=[\"bogus 1\"]: /generator/pktgen/0: unknown pktgen command \"bogus\"\n"},
        {"validate", "--set driver.rx_ring_size=1",
         "--set driver.rx_ring_size=1: /driver/rx_ring_size: must be 0 (driver default) or >= 2\n"},
        // 266 MHz: 4156 units of 64 cycles per ms; 15769 us -> 65535 units is the last that fits
        {"validate", "--set fec.rx_coalesce.usecs=15770",
         "--set fec.rx_coalesce.usecs=15770: /fec/rx_coalesce/usecs: above the 16-bit ICTT range at this AHB clock "
         "(at most 15769)\n"},
        // a combination of values: the one the --set changed is named
        {"validate", "--set cpu.l1d.size_bytes=3072",
         "--set cpu.l1d.size_bytes=3072: /cpu/l1d/size_bytes: 3072 bytes in 4 ways of 64-byte lines is not a "
         "power-of-two number of sets\n"},
        {"validate", "--set cpu.tlb.entries=500",
         "--set cpu.tlb.entries=500: /cpu/tlb/entries: 500 entries in 4 ways is not a power-of-two number of sets\n"},
        {"validate", "--set cpu.tlb.ways=3",
         "--set cpu.tlb.ways=3: /cpu/tlb/ways: 512 entries in 3 ways is not a power-of-two number of sets\n"},
        {"validate", "--set cpu.tlb.levels=1",
         "--set cpu.tlb.levels=1: /cpu/tlb/levels: a walk cache needs two levels or more (a one-level walk reads the "
         "leaf descriptor only); walk_cache_entries must be 0\n"},
        // the rings' memory beyond the FEC's 32-bit DMA mask (the descriptors' addresses would be cut)
        {"validate", "--set mem.ddr.size_bytes=8589934592 --set mem.regions.2.base=0x17c000000",
         "--set mem.regions.2.base=0x17c000000: /mem/regions/2: region 'dma_coherent_pool' (dma_alloc_coherent's "
         "memory) ends above 4 GiB, beyond the FEC's 32-bit DMA mask\n"},
        // a kernel memory range too small for the page allocator names the range, not the driver
        {"validate",
         "--set mem.ddr.size_bytes=2147483648 --set 'mem.regions.4={\"name\":\"dram_small\",\"base\":\"0x80000000\","
         "\"size_bytes\":\"0x2000\",\"target\":\"ddr\",\"offset_bytes\":\"0x40000000\",\"attribute\":"
         "\"normal_cacheable\",\"latency_ns\":20}'",
         "--set mem.regions.4={\"name\":\"dram_small\",\"base\":\"0x80000000\",\"size_bytes\":\"0x2000\","
         "\"target\":\"ddr\",\"offset_bytes\":\"0x4...: /mem/regions/4/size_bytes: a DRAM range of 8192 bytes leaves "
         "the page allocator no page after its struct pages\n"},
        // the TLB's page tables: 8 bytes per 4 KiB page of the other regions, and three upper levels
        {"validate", "--set mem.regions.3.size_bytes=0x1000",
         "--set mem.regions.3.size_bytes=0x1000: /mem/regions/3/size_bytes: the page tables of the other regions "
         "need 2105344 bytes, the region has 4096\n"},
        {"validate", "--set mem.regions.0.size_bytes=0x100",
         "--set mem.regions.0.size_bytes=0x100: /mem/regions/0/size_bytes: the FEC's registers need 2048 bytes, "
         "the region has 256\n"},
        // the TCP client: a write larger than the send buffer, a malformed address
        {"validate", "--set generator.kind=tcp --set generator.tcp.window=1000",
         "--set generator.tcp.window=1000: /generator/tcp/window: a write of 131072 bytes never fits the 1000-byte "
         "send buffer (generator.tcp.window)\n"},
        {"validate", "--set generator.kind=tcp --set generator.tcp.dst_ipv4=198.18.0",
         "--set generator.tcp.dst_ipv4=198.18.0: /generator/tcp/dst_ipv4: expected a dotted IPv4 address, got "
         "\"198.18.0\"\n"},
        // refused by the driver's probe on the simulated core (fails before: an uncaught
        // std::invalid_argument, exit 134)
        {"validate", "--set soc.fec.compatible=fsl,imx6q-fec",
         "--set soc.fec.compatible=fsl,imx6q-fec: /soc/fec: eth0: several queues need FEC_QUIRK_HAS_MULTI_QUEUES\n"},
        // read when a run starts serving telemetry; validate checks it as well (fails before: exit 0)
        {"validate", "--set telemetry.listen=nonsense",
         "--set telemetry.listen=nonsense: /telemetry/listen: expected HOST:PORT, got \"nonsense\"\n"},
        {"validate", "--set telemetry.listen=192.0.2.1:7000",
         "--set telemetry.listen=192.0.2.1:7000: /telemetry/listen: 192.0.2.1 is not a loopback address: the run's "
         "telemetry would be served to the network; add --listen-remote to mean it\n"},
        // found while booting: the region too small for the rings (the abstract peer: a board peer
        // takes the DUT's mem section and may run out first)
        {"run", "--set generator.kind=pktgen --set mem.regions.2.size_bytes=0x1000",
         "--set mem.regions.2.size_bytes=0x1000: /mem/regions/2/size_bytes: dma_alloc_coherent: coherent pool "
         "exhausted (122880 bytes requested, 4096 left) (the region is too small for the driver's rings and buffers)\n"},
        // validate runs as far as the warm-up, as run does (fails before: exit 0)
        {"validate", "--set warmup_s=0.001",
         "--set warmup_s=0.001: /warmup_s: the driver is still opening the interface at the end of the warm-up "
         "(1 ms); use a longer warm-up\n"},
        // a 4096-entry RX ring takes longer than 1 ms to fill with pages at open
        {"run", "--set driver.rx_ring_size=4096 --set warmup_s=0.001",
         "--set warmup_s=0.001: /warmup_s: the driver is still opening the interface at the end of the warm-up "
         "(1 ms); use a longer warm-up\n"},
    };
    for (const row& r : rows) {
        const outcome o = run(r.command + " " + experiment + (r.command == "run" ? " --quiet" : "") +
                              " --set duration_s=0.001 " + r.sets);
        EXPECT_EQ(o.status, 2) << r.sets;
        EXPECT_EQ(o.err, r.expected_error);
        EXPECT_EQ(o.out, "") << "nothing on stdout, not even SystemC's notes: " << r.sets;
    }
}

// The iperf client prints iperf's lines; here the DUT runs xdp2, which drops TCP, so the SYN is
// never answered and the run says so.
TEST(cli, a_tcp_client_prints_iperf_lines_and_warns_when_nobody_answers) {
    const std::string result = (fs::temp_directory_path() / ("fecsim-cli-tcp-" + std::to_string(::getpid()) + ".json")).string();
    const outcome o = run("run " + experiment + " --set generator.kind=tcp --set generator.start_delay_us=20000 --set duration_s=2 --out " + result);
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("[  1] 0.0000-1.0000 sec  0.00 Bytes  0.00 bits/sec\n"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("[  1] 1.0000-2.0000 sec  0.00 Bytes  0.00 bits/sec\n"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("[  1] 0.0000-2.0000 sec  0.00 Bytes  0.00 bits/sec\n"), std::string::npos) << "the total";
    EXPECT_NE(o.err.find("fecsim: warning: the TCP connection was never established (no SYN-ACK from 198.18.0.42)"),
              std::string::npos) << o.err;
    std::ifstream in(result);
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("rates").at("tcp_goodput_mbps"), 0.0);
    EXPECT_EQ(j.at("generator").at("tcp").at("state"), "syn_sent");
    EXPECT_EQ(j.at("generator").at("tcp").at("timeouts"), 1) << "the SYN again 1 s after the first";
    fs::remove(result);
}

TEST(cli, help_prints_the_usage) {
    const outcome o = run("help");
    EXPECT_EQ(o.status, 0);
    EXPECT_EQ(o.out.rfind("usage: fecsim run CONFIG.json", 0), 0u) << o.out;
    EXPECT_EQ(run("help me").status, 2);
}

TEST(cli, list_shows_platforms_and_experiments) {
    const outcome o = run("list");
    ASSERT_EQ(o.status, 0);
    EXPECT_NE(o.out.find("platforms (" FECSIM_SOURCE_CONFIG_DIR "/platforms):\n"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("  imx8mp  NXP i.MX8M Plus"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("\n  imx8mp-xdp-tx  E1: "), std::string::npos);
}

TEST(cli, a_shipped_experiment_runs_by_name) {
    const outcome o = run("validate imx8mp-xdp-tx --set seed=4");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(nlohmann::json::parse(o.out).at("seed"), 4);
    // fails before: "no-such-experiment: cannot open file", which named neither the tree nor fecsim list
    EXPECT_EQ(run("validate no-such-experiment").err,
              "no-such-experiment: no such file, nor an experiment of that name in " FECSIM_SOURCE_CONFIG_DIR
              "/experiments (fecsim list shows them)\n");
    EXPECT_EQ(run("validate imx8mp-xdp-tx", "FECSIM_CONFIG_DIR=/nonexistent ").err,
              "imx8mp-xdp-tx: no such file, nor an experiment of that name in /nonexistent/experiments (fecsim list "
              "shows them)\n");
}

TEST(cli, help_and_version_flags) {
    // fails before for the last three: "unknown option '--help' for run", exit 2
    for (const char* args : {"--help", "-h", "help", "run --help", "validate x.json -h", "list --help"}) {
        const outcome o = run(args);
        EXPECT_EQ(o.status, 0) << args;
        EXPECT_EQ(o.out.rfind("usage: fecsim run CONFIG.json", 0), 0u) << args << ": " << o.out;
    }
    const outcome v = run("--version");
    EXPECT_EQ(v.status, 0);
    EXPECT_EQ(v.out.rfind("fecsim 0.", 0), 0u) << v.out;
    EXPECT_NE(v.out.find("(SystemC 2."), std::string::npos) << v.out;
    EXPECT_EQ(run("--version x").status, 2);
}

nlohmann::json without_wall_clock(const std::string& path) {
    std::ifstream in(path);
    auto j = nlohmann::json::parse(in);
    j["sim"].erase("wall_s");
    j["sim"].erase("speed");
    return j;
}

TEST(cli, same_config_and_seed_give_the_same_result_bytes) {
    const std::string dir = fs::temp_directory_path().string() + "/fecsim-det-" + std::to_string(::getpid());
    fs::create_directories(dir);
    const std::string common = "run " + experiment + " --quiet --set duration_s=0.02 --set warmup_s=0.01 --out ";
    ASSERT_EQ(run(common + dir + "/a.json").status, 0);
    // The live output is on for the second run: it must not change the result.
    ASSERT_EQ(run("run " + experiment + " --set duration_s=0.02 --set warmup_s=0.01 --out " + dir + "/b.json").status, 0);
    auto a = without_wall_clock(dir + "/a.json"), b = without_wall_clock(dir + "/b.json");
    // sim.kernel_events and sim.syncs count the cores' syncs, and a core syncs before a register
    // access or at a quantum only when another process is due by its time: the live output's
    // ticks are such processes. Host-side figures, like wall_s; every modelled figure must match
    // to the byte.
    EXPECT_NEAR(a["sim"]["kernel_events"].get<double>(), b["sim"]["kernel_events"].get<double>(),
                1e-3 * a["sim"]["kernel_events"].get<double>());
    a["sim"].erase("kernel_events");
    b["sim"].erase("kernel_events");
    for (const char* kind : {"quantum", "register"}) {
        const double sa = a["sim"]["syncs"][kind].get<double>(), sb = b["sim"]["syncs"][kind].get<double>();
        EXPECT_NEAR(sa, sb, 1e-3 * sa) << kind;
    }
    a["sim"].erase("syncs");
    b["sim"].erase("syncs");
    EXPECT_EQ(a.dump(), b.dump());
    EXPECT_NEAR(a["sim"]["simulated_s"].get<double>(), 0.03, 1e-12);
    EXPECT_GT(a["rates"]["xdp_prog_pps"].get<double>(), 0);
    EXPECT_TRUE(a.contains("sim") && a["sim"].contains("simulated_s"));

    // The same command line again: the same bytes, but for the host's wall time and speed
    // (docs/results.md).
    ASSERT_EQ(run(common + dir + "/c.json").status, 0);
    const auto text_without_wall_clock = [](const std::string& path) {
        std::ifstream in(path);
        std::string text, line;
        while (std::getline(in, line))
            if (line.find("\"wall_s\": ") == std::string::npos && line.find("\"speed\": ") == std::string::npos)
                text += line + "\n";
        return text;
    };
    EXPECT_EQ(text_without_wall_clock(dir + "/a.json"), text_without_wall_clock(dir + "/c.json"));
    fs::remove_all(dir);
}

// True when `word` stands in `text` as a whole name (not part of a longer one).
bool names(const std::string& text, const std::string& word) {
    const auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1))
        if ((at == 0 || !part_of_name(text[at - 1])) &&
            (at + word.size() == text.size() || !part_of_name(text[at + word.size()])))
            return true;
    return false;
}

TEST(cli, every_key_of_a_result_is_described_in_results_md) {
    // fails before: dut.driver.irq_none, spurious_irqs and redirect_errors, the links' speed_mbps
    // and propagation_ns, the coherency checker's mode and dma_coherent were in no line of
    // docs/results.md
    const std::string path = fs::temp_directory_path().string() + "/fecsim-keys-" + std::to_string(::getpid()) + ".json";
    ASSERT_EQ(run("run " + experiment + " --quiet --set warmup_s=0.01 --set duration_s=0.002 --out " + path).status, 0);
    std::ifstream in(path);
    const auto result = nlohmann::json::parse(in);
    fs::remove(path);
    std::ifstream doc_in(fs::path(FECSIM_SOURCE_CONFIG_DIR).parent_path() / "docs/results.md"),
        fec_in(fs::path(FECSIM_SOURCE_CONFIG_DIR).parent_path() / "docs/models/fec.md");
    const std::string doc((std::istreambuf_iterator<char>(doc_in)), {}), fec((std::istreambuf_iterator<char>(fec_in)), {});
    ASSERT_FALSE(doc.empty());
    // The sections whose rows name every key; the others describe theirs as a family (the
    // kernel's netdev and page_pool names, the core's counters, per-function and MIB names),
    // and the FEC model's own statistics the `dut.*` row sends to docs/models/fec.md.
    std::vector<std::string> keys;
    for (const char* section : {"/sim", "/rates", "/dut", "/dut/driver", "/dut/tcp", "/dut/xdp", "/cpu/core0/time_ns",
                                "/cpu/core0/ns_per_packet", "/coherency", "/link/dut", "/link/generator", "/mem/ddr", "/mem/bus"}) {
        const nlohmann::json& node = result.at(nlohmann::json::json_pointer(section));
        for (auto& [k, v] : node.items())
            if (!v.is_object() && !v.is_array()) keys.push_back(section + std::string("/") + k);
    }
    ASSERT_GT(keys.size(), 100u);
    for (const std::string& key : keys) {
        const std::string name = key.substr(key.rfind('/') + 1);
        const bool fec_statistic = key.rfind('/') == 4 && key.rfind("/dut/", 0) == 0;
        EXPECT_TRUE(names(doc, name) || (fec_statistic && names(fec, name))) << key << " is not described";
    }
}

TEST(cli, trace_is_a_chrome_trace_of_firmware_spans_and_wire_frames) {
    const std::string path = fs::temp_directory_path().string() + "/fecsim-trace-" + std::to_string(::getpid()) + ".json";
    ASSERT_EQ(run("run " + experiment + " --quiet --set warmup_s=0.002 --set duration_s=0.0005 --trace " + path).status, 0);
    std::ifstream in(path);
    const auto trace = nlohmann::json::parse(in);
    fs::remove(path);
    int rx_queue = 0, frames_tx = 0, frames_rx = 0;
    double first_span = 1e30;
    std::vector<double> open;  // begin times of the open spans, innermost last
    for (const auto& e : trace.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (ph == "B") {
            rx_queue += e.at("name") == "fec_enet_rx_queue";
            first_span = std::min(first_span, e.at("ts").get<double>());
            ASSERT_TRUE(open.empty() || open.back() <= e.at("ts").get<double>());
            open.push_back(e.at("ts"));
        }
        if (ph == "E") {
            ASSERT_FALSE(open.empty()) << "an end without its begin";
            ASSERT_LE(open.back(), e.at("ts").get<double>());
            open.pop_back();
        }
        if (ph == "X") ++(e.at("tid") == 1 ? frames_tx : frames_rx);
    }
    EXPECT_GT(rx_queue, 0);
    EXPECT_TRUE(open.empty()) << "every span is closed by the end of the run";
    EXPECT_GE(first_span, 2000.0);           // recording starts after the 2 ms warm-up
    EXPECT_GT(frames_tx, 100);
    EXPECT_GT(frames_rx, 100);
}

TEST(cli, unwritable_outputs_are_refused_before_simulating) {
    // Each used to fail after the run (exit 1), write nothing with exit 0, or lose the trace.
    const std::string tmp = fs::temp_directory_path().string();
    const std::string capture_in = tmp + "/fecsim-in-" + std::to_string(::getpid()) + ".pcap";
    const std::string own_experiment = tmp + "/fecsim-in-" + std::to_string(::getpid()) + ".json";  // E1, to lose
    fs::copy_file(experiment, own_experiment, fs::copy_options::overwrite_existing);
    {
        // A capture to replay: one 60-byte frame to the DUT's MAC (pcap, microseconds, Ethernet).
        const uint32_t header[] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1}, record[] = {0, 0, 60, 60};
        unsigned char frame[60] = {0x00, 0x04, 0x9f, 0x07, 0x9f, 0x01, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
        std::ofstream capture(capture_in, std::ios::binary);
        capture.write(reinterpret_cast<const char*>(header), sizeof header);
        capture.write(reinterpret_cast<const char*>(record), sizeof record);
        capture.write(reinterpret_cast<const char*>(frame), sizeof frame);
    }
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"--out /nonexistent/dir/r.json", "--out /nonexistent/dir/r.json: cannot write: No such file or directory\n"},
        {"--out " + tmp, "--out " + tmp + ": is a directory\n"},
        {"--out /dev/full", "--out /dev/full: cannot write: No space left on device\n"},
        {"--trace /dev/full", "--trace /dev/full: cannot write: No space left on device\n"},
        {"--pcap /proc/wire.pcapng", "--pcap /proc/wire.pcapng: cannot write: No such file or directory\n"},
        // two outputs into one file: only the last written survived (fails before: exit 0, the trace lost)
        {"--out " + tmp + "/r.json --trace " + tmp + "/./r.json",
         "--trace " + tmp + "/./r.json: the same file as --out " + tmp + "/r.json\n"},
        // an output into an input of the run destroyed it (fails before: exit 0, the experiment
        // replaced by its result, the capture by the new one)
        {"--out " + own_experiment, "--out " + own_experiment + ": the same file as the experiment\n"},
        {"--set generator.kind=pcap --set generator.pcap_file=" + capture_in + " --pcap " + capture_in,
         "--pcap " + capture_in + ": the same file as generator.pcap_file\n"},
    };
    for (const auto& [args, error] : rows) {
        // A 100-second run: refused at once or the test times out.
        const outcome o = run("run " + own_experiment + " --quiet --set duration_s=100 " + args);
        EXPECT_EQ(o.status, 2) << args;
        EXPECT_EQ(o.out, "") << args;
        EXPECT_EQ(o.err, error) << args;
    }
    EXPECT_EQ(run("run " + experiment + " --quiet --set duration_s=0.001 --set warmup_s=0.01 --out /dev/null --trace /dev/null").status, 0)
        << "a device takes every output";
    // The standard output is an output too: fails before, exit 0 with nothing written
    for (const std::string& args : {"validate " + experiment, std::string("list"), "run " + experiment + " --set duration_s=0.001"}) {
        const outcome full = run(args + " >/dev/full");
        EXPECT_EQ(full.status, 2) << args;
        EXPECT_EQ(full.err.rfind("fecsim: standard output: cannot write", 0), 0u) << args << ": " << full.err;
        EXPECT_EQ(count_lines(full.err), 1u) << args << ": " << full.err;
    }
    const outcome empty = run("run " + experiment + " --out ''");
    EXPECT_EQ(empty.status, 2);
    EXPECT_EQ(empty.err, "fecsim: --out needs a value (fecsim help shows the usage)\n");
    EXPECT_EQ(fs::file_size(capture_in), 24u + 16 + 60) << "the capture is left as it was";
    EXPECT_EQ(fs::file_size(own_experiment), fs::file_size(experiment)) << "the experiment is left as it was";
    fs::remove(capture_in);
    fs::remove(own_experiment);
    // The probe leaves nothing behind.
    const std::string fresh = tmp + "/fecsim-probe-" + std::to_string(::getpid()) + ".json";
    EXPECT_EQ(run("run " + experiment + " --quiet --set duration_s=100 --out " + fresh + " --trace /dev/full").status, 2);
    EXPECT_FALSE(fs::exists(fresh));
}

TEST(cli, max_wall_s_stops_a_long_run_with_a_result_marked_incomplete) {
    const std::string path = fs::temp_directory_path().string() + "/fecsim-wall-" + std::to_string(::getpid()) + ".json";
    // 1000 simulated seconds would take hours; the guard stops the window after ~3 s of host time (room for a slow sanitizer build).
    const outcome o = run("run " + experiment + " --quiet --set warmup_s=0.01 --set duration_s=1000 --max-wall-s 3 --out " + path);
    EXPECT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.err.find("fecsim: --max-wall-s reached: "), std::string::npos) << o.err;
    std::ifstream in(path);
    const auto r = nlohmann::json::parse(in);
    fs::remove(path);
    EXPECT_TRUE(r["sim"]["incomplete"].get<bool>());
    const double window = r["sim"]["window_s"];
    EXPECT_GT(window, 0.0);
    EXPECT_LT(window, 1000.0);
    EXPECT_NEAR(r["sim"]["simulated_s"].get<double>(), 0.01 + window, 1e-9);
    EXPECT_NEAR(r["rates"]["dut_rx_pps"].get<double>(), r["dut"]["rx_frames"].get<double>() / window, 1e-6);
    EXPECT_EQ(run("run " + experiment + " --max-wall-s 0").status, 2);
    EXPECT_EQ(run("run " + experiment + " --max-wall-s soon").status, 2);
    // fails before: "expected seconds > 0, got '1e10'", for a value above 0
    EXPECT_EQ(run("run " + experiment + " --max-wall-s 1e10").err,
              "fecsim: --max-wall-s: expected seconds in (0, 1e9], got '1e10' (fecsim help shows the usage)\n");
}

TEST(cli, hostile_inputs_exit_2_with_one_line) {
    const std::string tmp = fs::temp_directory_path().string();
    struct row {
        std::string args, env, error_start;
    };
    const std::vector<row> rows = {
        {"validate " + experiment + " --set 'description=\xff'", "", "--set description=\xef\xbf\xbd: not valid UTF-8"},
        {"run " + experiment + " --quiet --set 'description=\xff'", "", "--set description=\xef\xbf\xbd: not valid UTF-8"},
        {"validate " + experiment + " --set duration_s=1e400", "",
         "--set duration_s=1e400: /duration_s: number 1e400 is out of the range of a double"},
        {"validate /dev/zero", "", "/dev/zero: more than 64 MiB, the limit for an input file"},
        {"validate " + experiment + " --set generator.pktgen_file=/dev/zero", "",
         "--set generator.pktgen_file=/dev/zero: /generator/pktgen_file: /dev/zero: more than 64 MiB"},
        {"validate " + experiment + " --set generator.pktgen_file=" + tmp, "",
         "--set generator.pktgen_file=" + tmp + ": /generator/pktgen_file: " + tmp + ": is a directory, not a file"},
        {"validate " + experiment, "FECSIM_CONFIG_DIR=/nonexistent ",
         "/nonexistent/platforms: not a usable configuration directory: No such file or directory (the configuration "
         "directory comes from FECSIM_CONFIG_DIR)"},
        {"list", "FECSIM_CONFIG_DIR=" + std::string(FECSIM_SOURCE_CONFIG_DIR) + "/schema ",
         FECSIM_SOURCE_CONFIG_DIR "/schema/platforms: not a usable configuration directory"},
        {"validate " + experiment + " --set soc.fec.mac_address=ff:ff:ff:ff:ff:ff", "",
         "--set soc.fec.mac_address=ff:ff:ff:ff:ff:ff: /soc/fec/mac_address: ff:ff:ff:ff:ff:ff is a multicast or "
         "broadcast address, not a station address"},
        {"validate " + experiment + " --set soc.fec.mac_address=01:00:5e:00:00:01", "",
         "--set soc.fec.mac_address=01:00:5e:00:00:01: /soc/fec/mac_address: 01:00:5e:00:00:01 is a multicast"},
        // a newline in a value, kept in the message of the model that refuses it, is escaped
        // (fails before: two lines)
        {"validate " + experiment + " --set 'soc.fec.mac_address=a\nb'", "",
         "--set soc.fec.mac_address=a\\nb: /soc/fec/mac_address: expected aa:bb:cc:dd:ee:ff, got a\\nb"},
        {"validate " + experiment + " --set 'generator.kind=tcp' --set 'generator.tcp.dst_ipv4=1\n2'", "",
         "--set generator.tcp.dst_ipv4=1\\n2: /generator/tcp/dst_ipv4: expected a dotted IPv4 address, got \"1\\n2\""},
        // the memory map made invalid by a --set names the --set, not the platform file
        {"validate " + experiment + " --set mem.regions.1.base=0x30be0000", "", "--set mem.regions.1.base=0x30be0000: /mem/regions/1: "},
    };
    for (const row& r : rows) {
        const outcome o = run(r.args, r.env);
        EXPECT_EQ(o.status, 2) << r.args << ": " << o.err;
        EXPECT_EQ(o.err.rfind(r.error_start, 0), 0u) << r.args << ": " << o.err;
        EXPECT_EQ(count_lines(o.err), 1u) << r.args << ": " << o.err;
    }
}

}  // namespace
