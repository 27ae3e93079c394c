// pktgen scripts as users have them: pgset with PGDEV, echo > /proc/net/pktgen/..., variables,
// the thread and control files, applied as the kernel would to the one modelled device.
#include "models/sim_context.h"
#include "tests/traffic/test_util.h"
#include "traffic/pktgen_commands.h"
#include "traffic/pktgen_script.h"

#include <gtest/gtest.h>

#include <random>

namespace fecsim::traffic {
namespace {

const std::string data = FECSIM_TEST_DATA_DIR;

pktgen_params run_script(std::initializer_list<const char*> lines, pktgen_params p = {}) {
    pktgen_script s(p);
    int n = 0;
    for (const char* l : lines) s.line(l, "line " + std::to_string(++n));
    s.finish();
    return p;
}

std::string error_of(std::initializer_list<const char*> lines, pktgen_params p = {}) {
    try {
        run_script(lines, p);
    } catch (const pktgen_command_error& e) {
        return e.what();
    }
    return "";
}

TEST(pktgen_script, the_documentations_example_runs_unedited) {
    fresh_simulation();
    pktgen_params p;
    p.min_pkt_size = p.max_pkt_size = 1000;  // what sample03 or earlier lines set: rem_device_all drops it
    apply_pktgen_file(p, data + "/pktgen.conf");
    EXPECT_EQ(p.count, 0u);
    EXPECT_EQ(p.clone_skb, 0u);
    EXPECT_EQ(p.min_pkt_size, 124u);
    EXPECT_EQ(p.max_pkt_size, 124u);
    EXPECT_EQ(p.delay_ns, 0u);
    EXPECT_EQ(p.daddr_min, *parse_ipv4("198.18.0.42"));
    EXPECT_EQ(format_mac(*p.dst_mac), "00:04:9f:07:9f:01");
    EXPECT_EQ(p.burst, 8u);  // echo "burst 8" > /proc/net/pktgen/eth1
    EXPECT_EQ(p.notes, (std::vector<std::string>{data + "/pktgen.conf:56: start: the generator starts with the simulation"}));
}

TEST(pktgen_script, echo_redirects_and_variables) {
    fresh_simulation();
    const pktgen_params p = run_script({
        "DEV=eth0",
        "SIZE='pkt_size 200'",
        "echo \"$SIZE\" > /proc/net/pktgen/$DEV",
        "echo flag UDPCSUM >> /proc/net/pktgen/${DEV}",
        "echo \"count 5\" > /proc/net/pktgen/eth0   # trailing comment",
        "echo 'Configured' > /tmp/log",  // the script's own output: not pktgen's
        "echo -n \"clone_skb 2\" > /proc/net/pktgen/eth0",  // echo's option is not part of the command
        "export PGDEV=/proc/net/pktgen/eth0",
        "pgset \"burst 4\"",
    });
    EXPECT_EQ(p.min_pkt_size, 200u);
    EXPECT_TRUE(p.has(F_UDPCSUM));
    EXPECT_EQ(p.count, 5u);
    EXPECT_EQ(p.burst, 4u);
    EXPECT_EQ(p.clone_skb, 2u);
    // Bare commands still apply to the device, as in plain command files.
    EXPECT_EQ(run_script({"pkt_size 300", "rate 100M"}).min_pkt_size, 300u);
}

TEST(pktgen_script, thread_commands_act_on_the_one_device_as_the_kernel_would) {
    fresh_simulation();
    pktgen_params configured;
    configured.burst = 32;
    // rem_device_all + add_device: a new device with pktgen's defaults
    EXPECT_EQ(run_script({"rem_device_all", "add_device eth0"}, configured).burst, 1u);
    // add_device of the device already there keeps its settings
    EXPECT_EQ(run_script({"add_device eth0@0"}, configured).burst, 32u);
    EXPECT_EQ(error_of({"rem_device_all", "pkt_size 64"}),
              "the device: removed by rem_device_all; add_device it first");
    EXPECT_EQ(error_of({"PGDEV=/proc/net/pktgen/kpktgend_0", "pgset \"rem_device_all\"",
                        "pgset \"add_device eth0\"", "pgset \"add_device eth1\""}),
              "add_device eth1: fecsim models one pktgen device, eth0 is added already");
    EXPECT_EQ(error_of({"echo 'count 1' > /proc/net/pktgen/eth0", "echo 'count 1' > /proc/net/pktgen/eth1"}),
              "eth1: not the pktgen device (eth0); fecsim models one device");
    // DEV@Q (the samples add ${DEV}@${thread}) names the device file as in the kernel; a second
    // queue is a second device.
    EXPECT_EQ(run_script({"rem_device_all", "add_device eth0@0", "echo 'burst 8' > /proc/net/pktgen/eth0@0"}).burst, 8u);
    EXPECT_EQ(error_of({"add_device eth0@0", "echo 'burst 8' > /proc/net/pktgen/eth0"}),
              "eth0: not the pktgen device (eth0@0); fecsim models one device");
    EXPECT_EQ(error_of({"add_device eth0@0", "add_device eth0@1"}),
              "add_device eth0@1: fecsim models one pktgen device, eth0@0 is added already");
    const pktgen_params noted = run_script({"PGDEV=/proc/net/pktgen/kpktgend_0", "pgset \"max_before_softirq 5000\"",
                                            "PGDEV=/proc/net/pktgen/pgctrl", "pgset \"stop\""});
    EXPECT_EQ(noted.notes, (std::vector<std::string>{"line 2: max_before_softirq: ignored (one thread, no softirq model)",
                                                     "line 4: stop: ignored (the run's length is duration_s)"}));
}

// The kernel's samples/pktgen scripts go through the helpers of their functions.sh.
TEST(pktgen_script, the_samples_helpers_pg_ctrl_pg_thread_and_pg_set) {
    fresh_simulation();
    pktgen_params configured;
    configured.burst = 32;
    const pktgen_params p = run_script({
        "source ${basedir}/functions.sh",  // basedir is not set: the line is not expanded, only noted
        "DEV=eth0",
        "DST_MAC=00:04:9f:07:9f:01",
        "pg_thread 0 \"rem_device_all\"",
        "dev=${DEV}@0",
        "pg_thread 0 \"add_device\" $dev",
        "pg_set $dev \"pkt_size 124\"",
        "pg_set $dev \"dst_mac $DST_MAC\"",
        "pg_set $dev flag UDPCSUM",
        "pg_ctrl \"start\"",
    }, configured);
    EXPECT_EQ(p.burst, 1u);  // rem_device_all + add_device: pktgen's defaults
    EXPECT_EQ(p.min_pkt_size, 124u);
    EXPECT_EQ(format_mac(*p.dst_mac), "00:04:9f:07:9f:01");
    EXPECT_TRUE(p.flags & F_UDPCSUM);
    EXPECT_EQ(p.notes, (std::vector<std::string>{
                           "line 1: source ${basedir}/functions.sh: not read (fecsim applies its pg_ctrl, pg_thread and pg_set itself)",
                           "line 10: start: the generator starts with the simulation"}));
    EXPECT_EQ(error_of({"pg_set eth0 \"pkt_size 60\"", "pg_set eth1 \"pkt_size 60\""}),
              "eth1: not the pktgen device (eth0); fecsim models one device");
    EXPECT_EQ(error_of({"pg_thread 0"}), "pg_thread: expected a thread number and a command");
    EXPECT_EQ(error_of({"pg_ctrl \"begin\""}), "pgctrl: unknown command \"begin\" (start, stop, reset)");
}

TEST(pktgen_script, what_it_cannot_read_is_an_error_not_a_guess) {
    fresh_simulation();
    EXPECT_EQ(error_of({"pgset \"count 1\""}), "pgset: PGDEV is not set (PGDEV=/proc/net/pktgen/<file> before it)");
    EXPECT_EQ(error_of({"PGDEV=/proc/net/pktgen/eth0", "pgset \"dst_mac $DST_MAC\""}),
              "$DST_MAC is not set by an assignment earlier in the script (the model reads the script's own variables only)");
    EXPECT_EQ(error_of({"for i in 1 2; do"}), "shell syntax ';' is not interpreted; write one command per line");
    EXPECT_EQ(error_of({"for i in 1 2"}), "for: shell control flow is not interpreted; write the pktgen commands out");
    EXPECT_EQ(error_of({"source parameters.sh"}), "source: shell control flow is not interpreted; write the pktgen commands out");
    EXPECT_EQ(error_of({"echo \"count 1 > /proc/net/pktgen/eth0"}), "unterminated quote");
    EXPECT_EQ(error_of({"pgset() {", "  echo $1 > $PGDEV"}), "a function definition has no closing }");
    EXPECT_EQ(error_of({"echo 'count 1' > /proc/net/pktgen/pgctrl"}), "pgctrl: unknown command \"count\" (start, stop, reset)");
    EXPECT_EQ(error_of({"PGDEV=/proc/net/pktgen/eth0", "pgset \"pkt_sise 60\""}), "unknown pktgen command \"pkt_sise\"");
    EXPECT_EQ(error_of({"frobnicate now"}), "unknown pktgen command \"frobnicate\"");
    // A backslash was taken literally: 'pgset count\ 5' (one word to bash) read as two words,
    // 'echo \"count 5\"' as the command '\"count'.
    for (const char* escaped : {"pgset count\\ 5", "echo \\\"count 5\\\" > /proc/net/pktgen/eth0",
                                "echo \"count 5\" > /proc/net/pktgen/eth0 \\"})
        EXPECT_EQ(error_of({escaped}), "shell syntax '\\' (an escape or a line continuation) is not interpreted; write the line without it")
            << escaped;
}

TEST(pktgen_script, random_script_lines_are_accepted_or_rejected_cleanly) {
    fresh_simulation();
    const std::vector<std::string> tokens = {"pgset", "echo", "PGDEV=/proc/net/pktgen/eth0", "PGDEV=/proc/net/pktgen/pgctrl",
                                             "X=1", "\"", "'", "$X", "${X}", "$Y", "${X", "$", ">", ">>", "/proc/net/pktgen/eth0",
                                             "/proc/net/pktgen/kpktgend_0", "add_device", "eth0", "rem_device_all", "start",
                                             "pkt_size", "60", "count", "{", "}", "()", "function", ";", "#", "for", "\"count 1\""};
    std::mt19937 rng(17);
    int ok = 0, errors = 0;
    for (int i = 0; i < 3000; ++i) {
        pktgen_params p;
        pktgen_script s(p);
        std::string line;
        try {
            for (int l = 0; l < 2; ++l) {
                line.clear();
                for (int n = 1 + int(rng() % 5); n-- > 0;) line += tokens[rng() % tokens.size()] + (rng() % 2 ? " " : "");
                s.line(line, "fuzz");
            }
            s.finish();
            ++ok;
        } catch (const pktgen_command_error& e) {  // any other exception (or a crash) fails the test
            ++errors;
            EXPECT_NE(std::string(e.what()), "") << line;
        }
    }
    EXPECT_GT(ok, 10);
    EXPECT_GT(errors, 300);
}

TEST(pktgen_script, errors_in_a_file_name_the_line) {
    fresh_simulation();
    const std::string path = test::write_file("bad.sh", "PGDEV=/proc/net/pktgen/eth0\npgset \"count x\"\n");
    pktgen_params p;
    try {
        apply_pktgen_file(p, path);
        FAIL() << "no error";
    } catch (const pktgen_command_error& e) {
        EXPECT_EQ(std::string(e.what()), path + ":2: count: expected a decimal number, got \"x\"");
    }
}

// Saved by an editor that starts the file with a UTF-8 byte order mark (and CRLF line ends): the
// mark is not part of the first command (it was: unknown pktgen command "\xEF\xBB\xBFpkt_size").
TEST(pktgen_script, a_byte_order_mark_and_crlf_line_ends_are_not_content) {
    fresh_simulation();
    pktgen_params p;
    apply_pktgen_file(p, test::write_file("bom.txt", "\xEF\xBB\xBFpkt_size 100\r\ncount 7\r\n"));
    EXPECT_EQ(p.min_pkt_size, 100u);
    EXPECT_EQ(p.count, 7u);
}

TEST(pktgen_script, the_experiments_list_takes_script_lines) {
    fresh_simulation();
    const config c = test::load_with_generator(
        {{"pktgen", {"echo \"pkt_size 124\" > /proc/net/pktgen/eth0", "PGDEV=/proc/net/pktgen/eth0", "pgset \"burst 8\""}}});
    const pktgen_params p = pktgen_params_from(c);
    EXPECT_EQ(p.min_pkt_size, 124u);
    EXPECT_EQ(p.burst, 8u);
}

}  // namespace
}  // namespace fecsim::traffic
