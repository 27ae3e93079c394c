// Studies at scale as users run them: fecsim sweep / collect / diff / stats on short runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/shell.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using fecsim::test::outcome;
using nlohmann::json;
const std::string experiment = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx8mp-xdp-tx.json";

// `fecsim ARGS` with `env` ("VAR=value ...") in its environment.
outcome run_fecsim(const std::string& args, const std::string& env = "") {
    return fecsim::test::shell(env + " " + FECSIM_BINARY_DIR + "/fecsim " + args);
}

// A scratch directory of this test, empty; removed when the test program ends.
fs::path scratch() {
    static struct dirs : std::vector<fs::path> {
        ~dirs() {
            for (auto& d : *this) fs::remove_all(d);
        }
    } made;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const fs::path d = fs::temp_directory_path() / ("fecsim-sweep-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(d);
    fs::create_directories(d);
    made.push_back(d);
    return d;
}

std::string write(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
    return path.string();
}

json read_json(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in);
}

std::string read_text(const fs::path& path) {
    std::stringstream ss;
    ss << std::ifstream(path).rdbuf();
    return ss.str();
}

// Two XDP_TX variants x two seeds of very short runs.
json four_points() {
    return {{"experiment", experiment},
            {"set", {{"warmup_s", 0.01}, {"duration_s", 0.005}}},
            {"product", {{"driver.xdp_tx_variant", {"v4", "merged"}}}},
            {"seeds", {1, 2}}};
}

std::vector<std::string> ids(const fs::path& dir) {
    std::vector<std::string> v;
    const json m = read_json(dir / "manifest.json");
    for (auto& p : m["points"]) v.push_back(p["id"]);
    return v;
}

TEST(sweep, bad_specs_exit_2_naming_the_spec_key) {
    const fs::path d = scratch();
    struct bad {
        json spec;
        std::string expected;
    };
    json zip = four_points();
    zip["zip"] = {{"driver.rx_ring_size", {64, 128}}, {"driver.tx_ring_size", {64}}};
    json value = four_points();
    value["product"]["driver.rx_ring_size"] = {64, 99999};
    json key = four_points();
    key["product"]["driver.rx_ring_sise"] = {64};
    json twice = four_points();
    twice["set"]["driver.xdp_tx_variant"] = "v4";
    const std::vector<bad> cases{
        {{{"experiment", experiment}, {"grid", {}}}, "/grid: unknown key"},
        {{{"product", {{"seed", {1}}}}}, "/experiment: missing"},
        {{{"experiment", "nowhere.json"}, {"seeds", {1}}}, "/experiment: no such file"},
        {{{"experiment", experiment}}, "/: the grid is empty"},
        {{{"experiment", experiment}, {"product", {{"driver.rx_ring_size", json(400, 64)}, {"driver.tx_ring_size", json(400, 64)}}}},
         "/: the grid has more than 100000 points"},
        {{{"experiment", experiment}, {"product", {{"driver.rx_ring_size", 64}}}},
         "/product/driver.rx_ring_size: expected a non-empty array"},
        {{{"experiment", experiment}, {"seeds", {1, -2}}}, "/seeds/1: a seed is a non-negative integer"},
        {zip, "/zip/driver.tx_ring_size: 1 values, the other zip lists have 2"},
        {value, "/product/driver.rx_ring_size/1: driver.rx_ring_size=99999: /driver/rx_ring_size:"},
        {key, "/product/driver.rx_ring_sise/0: driver.rx_ring_sise=64: /driver/rx_ring_sise: unknown key"},
        {twice, "/product/driver.xdp_tx_variant: key already given at /set/driver.xdp_tx_variant"},
    };
    for (auto& c : cases) {
        const std::string spec = write(d / "spec.json", c.spec.dump());
        const outcome o = run_fecsim("sweep " + spec + " --out " + (d / "out").string());
        EXPECT_EQ(o.status, 2) << c.spec;
        EXPECT_EQ(o.err.find(spec + ": "), 0u) << o.err;
        EXPECT_NE(o.err.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in: " << o.err;
        EXPECT_EQ(o.out, "");
        EXPECT_FALSE(fs::exists(d / "out")) << "nothing is written for a bad spec";
    }
    // A directory as the spec aborted (an uncaught std::ios_base::failure, exit 134).
    const outcome dir = run_fecsim("sweep " + d.string() + " --out " + (d / "out").string());
    EXPECT_EQ(dir.status, 2);
    EXPECT_EQ(dir.err, d.string() + ": is a directory, not a file\n");
    const outcome syntax = run_fecsim("sweep " + write(d / "broken.json", "{\"seeds\": [1,") + " --out x");
    EXPECT_EQ(syntax.status, 2);
    EXPECT_NE(syntax.err.find("broken.json: invalid JSON"), std::string::npos) << syntax.err;
}

TEST(sweep, bad_command_lines_exit_2) {
    const fs::path d = scratch();
    const std::string spec = write(d / "spec.json", four_points().dump());
    for (const std::string& args : std::vector<std::string>{"sweep " + spec, "sweep --out x", "sweep " + spec + " --out x --jobs 0",
                                   "sweep " + spec + " --out x --shard 2/2", "sweep " + spec + " --out x --shard 1",
                                   "sweep " + spec + " --out x --submit", "sweep " + spec + " --out x --tasks 2", "collect", "stats", "diff a.json"}) {
        const outcome o = run_fecsim(args);
        EXPECT_EQ(o.status, 2) << args;
        EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << ": " << o.err;
    }
    const outcome env = run_fecsim("sweep " + spec + " --out x", "SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=4");
    EXPECT_EQ(env.status, 2);
    EXPECT_NE(env.err.find("SLURM_ARRAY_TASK_ID: expected an integer"), std::string::npos) << env.err;
}

// The grid runs in parallel, resumes, and its shards (given or from Slurm's array variables)
// produce the same results point by point; collect gathers them.
TEST(sweep, runs_resumes_shards_and_collects) {
    const fs::path d = scratch();
    const std::string spec = write(d / "spec.json", four_points().dump());
    const fs::path all = d / "all", sharded = d / "sharded";
    const outcome o = run_fecsim("sweep " + spec + " --out " + all.string() + " --jobs 2");
    ASSERT_EQ(o.status, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("4 points, 4 in shard 0/1, 0 already done, 4 to run"), std::string::npos) << o.out;

    const json m = read_json(all / "manifest.json");
    EXPECT_EQ(m["keys"], json({"driver.xdp_tx_variant", "seed"}));
    ASSERT_EQ(m["points"].size(), 4u);
    std::set<std::string> distinct;
    for (auto& p : m["points"]) {
        const std::string id = p["id"];
        distinct.insert(id);
        EXPECT_EQ(id.size(), 16u);
        const json r = read_json(all / "points" / id / "result.json");
        EXPECT_EQ(r["config"]["driver"]["xdp_tx_variant"], p["values"]["driver.xdp_tx_variant"]);
        EXPECT_EQ(r["config"]["seed"], p["values"]["seed"]);
        EXPECT_EQ(r["config"]["duration_s"], 0.005);
        EXPECT_EQ(read_json(all / "points" / id / "status.json")["exit"], 0);
        EXPECT_TRUE(fs::exists(all / "points" / id / "log"));
    }
    EXPECT_EQ(distinct.size(), 4u);

    // Resume: nothing left to do, nothing rewritten.
    const auto first = ids(all).front();
    const auto stamp = fs::last_write_time(all / "points" / first / "result.json");
    const outcome again = run_fecsim("sweep " + spec + " --out " + all.string());
    EXPECT_EQ(again.status, 0);
    EXPECT_NE(again.out.find("4 already done, 0 to run"), std::string::npos) << again.out;
    EXPECT_EQ(fs::last_write_time(all / "points" / first / "result.json"), stamp);

    // Shards: the same ids, points 0 and 2 in shard 0/2; Slurm's variables pick shard 1/2.
    ASSERT_EQ(run_fecsim("sweep " + spec + " --out " + sharded.string() + " --shard 0/2").status, 0);
    EXPECT_EQ(ids(sharded), ids(all));
    for (size_t i = 0; i < 4; ++i)
        EXPECT_EQ(fs::exists(sharded / "points" / ids(all)[i] / "result.json"), i % 2 == 0) << i;
    const outcome task = run_fecsim("sweep " + spec + " --out " + sharded.string(),
                                    "SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=2");
    ASSERT_EQ(task.status, 0) << task.err;
    EXPECT_NE(task.out.find("2 in shard 1/2, 0 already done, 2 to run"), std::string::npos) << task.out;
    for (auto& id : ids(all)) {
        const outcome diff = run_fecsim("diff " + (all / "points" / id / "result.json").string() + " " +
                                        (sharded / "points" / id / "result.json").string());
        EXPECT_EQ(diff.status, 0) << diff.out;
    }

    // --force reruns the points of its shard.
    const outcome forced = run_fecsim("sweep " + spec + " --out " + sharded.string() + " --force --shard 3/4");
    EXPECT_NE(forced.out.find("1 in shard 3/4, 0 already done, 1 to run"), std::string::npos) << forced.out;

    // Collect: a row per point, the swept keys then every scalar metric; merged beats v4.
    const outcome c = run_fecsim("collect " + all.string());
    ASSERT_EQ(c.status, 0) << c.err;
    const json rows = read_json(all / "results.json");
    ASSERT_EQ(rows.size(), 4u);
    std::map<std::pair<std::string, int>, double> pps;
    for (auto& row : rows) {
        EXPECT_EQ(row["status"], "ok");
        pps[{row["driver.xdp_tx_variant"], row["seed"]}] = row["rates.xdp_prog_pps"];
        EXPECT_FALSE(row.contains("config.seed")) << "the configuration is not a metric";
    }
    for (int seed : {1, 2}) EXPECT_GT(pps[std::make_pair("merged", seed)], pps[std::make_pair("v4", seed)] * 1.1) << seed;
    const std::string csv = read_text(all / "results.csv");
    EXPECT_EQ(csv.rfind("id,status,driver.xdp_tx_variant,seed,", 0), 0u) << csv.substr(0, 200);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
    EXPECT_NE(csv.find(",rates.xdp_prog_pps,"), std::string::npos);

    // The plot of it, and the plot of a `make table` print-out.
    const std::string plot = (fs::path(FECSIM_SOURCE_CONFIG_DIR).parent_path() / "scripts/plot.py").string();
    const outcome p = fecsim::test::shell(plot + " sweep " + all.string() + " --x driver.xdp_tx_variant --out " + (d / "v").string());
    EXPECT_EQ(p.status, 0) << p.err;
    for (const char* f : {"v.png", "v.svg"}) EXPECT_GT(fs::file_size(d / f), 10000u) << f;
    const outcome bad = fecsim::test::shell(plot + " sweep " + all.string() + " --x driver.rx_ring_size");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("not a swept key of " + all.string() + " (swept: driver.xdp_tx_variant, seed)"), std::string::npos)
        << bad.err;
    const outcome nowhere = fecsim::test::shell(plot + " sweep " + all.string() + " --x driver.xdp_tx_variant --out /nonexistent/v");
    EXPECT_EQ(nowhere.status, 2);
    EXPECT_EQ(nowhere.err, "plot.py: /nonexistent/v.png: cannot write: No such file or directory\n");
    write(d / "table.txt", "row  metric  simulated  band  measured  error  kind\n"
                           "E1-v4  rates.xdp_prog_pps  367,954  326,539  +12.7%  calibration\n"
                           "E1-merged  rates.xdp_prog_pps  419,356  [419,356 - 642,204]  held out    predict\n"
                           "E6-page_pool  rates.tcp_goodput_mbps  941  933  +0.9%  calibration\n");  // its own panel
    const outcome t = fecsim::test::shell(plot + " table " + (d / "table.txt").string() + " --out " + (d / "t").string());
    EXPECT_EQ(t.status, 0) << t.err;
    EXPECT_TRUE(fs::exists(d / "t.png") && fs::exists(d / "t.svg"));
}

TEST(sweep, a_failing_point_is_recorded_and_the_others_go_on) {
    const fs::path d = scratch();
    json spec = four_points();
    spec.erase("seeds");
    spec["product"]["driver.xdp_tx_variant"] = {"v4"};
    // The schema takes any pktgen command; the generator refuses this one when the SoC is built.
    spec["product"]["generator.pktgen"] = {{"pkt_size 60"}, {"pkt_size banana"}};
    const std::string path = write(d / "spec.json", spec.dump());
    const outcome o = run_fecsim("sweep " + path + " --out " + (d / "out").string());
    EXPECT_EQ(o.status, 1);
    EXPECT_NE(o.out.find(": ok ("), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("failed, exit 2: "), std::string::npos) << o.out;
    const auto v = ids(d / "out");
    EXPECT_TRUE(fs::exists(d / "out" / "points" / v[0] / "result.json"));
    EXPECT_FALSE(fs::exists(d / "out" / "points" / v[1] / "result.json"));
    const json status = read_json(d / "out" / "points" / v[1] / "status.json");
    EXPECT_EQ(status["exit"], 2);
    EXPECT_NE(status["message"].get<std::string>().find("banana"), std::string::npos) << status;

    const outcome c = run_fecsim("collect " + (d / "out").string());
    EXPECT_EQ(c.status, 1);
    EXPECT_NE(c.err.find("failed " + v[1] + " driver.xdp_tx_variant=v4 generator.pktgen=[\"pkt_size banana\"]: exit 2"),
              std::string::npos) << c.err;
    const json rows = read_json(d / "out" / "results.json");
    EXPECT_EQ(rows[1]["status"], "failed");
    EXPECT_FALSE(rows[1].contains("rates.xdp_prog_pps"));
}

// A directory with another tool's manifest.json, or a hand-edited sweep directory, used to
// abort collect (an uncaught nlohmann::json type_error, or an assertion: exit 134).
TEST(sweep, collect_refuses_a_manifest_or_status_it_did_not_write_with_one_line) {
    const fs::path d = scratch();
    const std::string manifest = (d / "manifest.json").string();
    for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
             {"[]", ": /: expected an object"},
             {R"({"name": "web app", "icons": []})", ": /keys: expected an array of swept keys"},
             {R"({"keys": [1], "points": []})", ": /keys/0: expected a key"},
             {R"({"keys": [], "points": "x"})", ": /points: expected an array of points"},
             {R"({"keys": [], "points": [{}]})", ": /points/0/id: expected a point id (16 hex digits)"},
             {R"({"keys": [], "points": [{"id": "../../etc", "values": {}}]})", ": /points/0/id: expected a point id"},
             {R"({"keys": [], "points": [{"id": "0123456789abcdef"}]})", ": /points/0/values: expected an object"},
         }) {
        write(manifest, text);
        const outcome c = run_fecsim("collect " + d.string());
        EXPECT_EQ(c.status, 2) << text << "\n" << c.err;
        EXPECT_EQ(c.err.rfind(manifest + expected, 0), 0u) << text << "\n" << c.err;
        EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
    }
    fs::remove(manifest);
    fs::create_directories(manifest);  // a directory of that name aborted collect (exit 134)
    const outcome dir = run_fecsim("collect " + d.string());
    EXPECT_EQ(dir.status, 2);
    EXPECT_EQ(dir.err, manifest + ": is a directory, not a file (not a sweep directory?)\n");
    fs::remove(manifest);
    // A status.json without the run's exit status: that point is unreadable, the others are listed.
    write(manifest, R"({"keys": [], "points": [{"id": "0123456789abcdef", "values": {}}]})");
    fs::create_directories(d / "points" / "0123456789abcdef");
    write(d / "points" / "0123456789abcdef" / "status.json", "{}");
    const outcome c = run_fecsim("collect " + d.string());
    EXPECT_EQ(c.status, 1) << c.err;
    EXPECT_NE(c.err.find("collect: unreadable " + (d / "points" / "0123456789abcdef" / "status.json").string() +
                         ": /exit: expected the run's exit status"),
              std::string::npos)
        << c.err;
}

TEST(sweep, slurm_writes_an_array_script_for_the_grid) {
    const fs::path d = scratch();
    json by_name = four_points();
    by_name["experiment"] = "imx8mp-xdp-tx";  // as fecsim list shows it
    const std::string spec = write(d / "spec.json", by_name.dump());
    const outcome o = run_fecsim("sweep " + spec + " --out " + (d / "out").string() + " --slurm");
    ASSERT_EQ(o.status, 0) << o.err;
    const std::string script = read_text(d / "out" / "sweep.sbatch");
    EXPECT_NE(script.find("#SBATCH --array=0-3\n"), std::string::npos) << script;
    EXPECT_NE(script.find("/fecsim' sweep '" + spec + "' --out '" + (d / "out").string() + "'\n"), std::string::npos)
        << script;
    EXPECT_NE(script.find("#SBATCH --cpus-per-task=1\n"), std::string::npos) << script;
    EXPECT_TRUE(fs::is_empty(d / "out" / "points")) << "--slurm runs nothing itself";
    // The configuration tree is named too: a task run from another shell reads the same one.
    const std::string tree_line = "export FECSIM_CONFIG_DIR='";
    const size_t at = script.find(tree_line);
    ASSERT_NE(at, std::string::npos) << script;
    const std::string tree = script.substr(at + tree_line.size(), script.find('\'', at + tree_line.size()) - at - tree_line.size());
    EXPECT_TRUE(fs::is_directory(fs::path(tree) / "schema")) << tree;
    const std::string other = (d / "other-tree").string();
    fs::create_directories(other);
    fs::copy(FECSIM_SOURCE_CONFIG_DIR, other, fs::copy_options::recursive);
    ASSERT_EQ(run_fecsim("sweep " + spec + " --out " + (d / "other").string() + " --slurm", "FECSIM_CONFIG_DIR=" + other).status, 0);
    EXPECT_NE(read_text(d / "other" / "sweep.sbatch").find(tree_line + other + "'\n"), std::string::npos)
        << read_text(d / "other" / "sweep.sbatch");
    // Fewer tasks, each running its slice two points at a time.
    ASSERT_EQ(run_fecsim("sweep " + spec + " --out " + (d / "two").string() + " --slurm --tasks 2 --jobs 2").status, 0);
    const std::string two = read_text(d / "two" / "sweep.sbatch");
    EXPECT_NE(two.find("#SBATCH --array=0-1\n"), std::string::npos) << two;
    EXPECT_NE(two.find("#SBATCH --cpus-per-task=2\n"), std::string::npos) << two;
    EXPECT_NE(two.find("' --jobs 2\n"), std::string::npos) << two;
    EXPECT_EQ(read_json(d / "out" / "manifest.json")["experiment"], fs::path(experiment).lexically_normal().string());
}

// One short E1 run of `variant` in `dir`.
std::string e1_result(const fs::path& dir, const std::string& variant) {
    const fs::path out = dir / (variant + ".json");
    const outcome o = run_fecsim("run " + experiment + " --set warmup_s=0.01 --set duration_s=0.005 --quiet --set "
                                 "driver.xdp_tx_variant=" + variant + " --out " + out.string());
    EXPECT_EQ(o.status, 0) << o.err;
    return out.string();
}

TEST(diff, lists_what_moved_by_relative_change_and_exits_1) {
    const fs::path d = scratch();
    const std::string v4 = e1_result(d, "v4"), merged = e1_result(d, "merged");
    const outcome same = run_fecsim("diff " + v4 + " " + v4);
    EXPECT_EQ(same.status, 0);
    EXPECT_EQ(same.out, "no metric moved by more than 0%\n");

    const outcome o = run_fecsim("diff " + v4 + " " + merged);
    EXPECT_EQ(o.status, 1);
    EXPECT_EQ(o.out.find("metric "), 0u) << o.out;
    EXPECT_NE(o.out.find("\nrates.xdp_prog_pps "), std::string::npos);
    EXPECT_EQ(o.out.find("sim.wall_s"), std::string::npos) << "host timing is not a metric that moves";
    // Sorted by |relative change|, largest first.
    double last = INFINITY;
    std::istringstream lines(o.out);
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line) && line.back() == '%') {
        const double rel = std::fabs(std::stod(line.substr(line.rfind(' ') + 1)));
        EXPECT_LE(rel, last) << line;
        last = rel;
    }
    const json a = read_json(v4), b = read_json(merged);
    const double rel = (b["rates"]["xdp_prog_pps"].get<double>() / a["rates"]["xdp_prog_pps"].get<double>() - 1) * 100;
    char expected[32];
    std::snprintf(expected, sizeof expected, "%+.2f%%\n", rel);
    EXPECT_NE(o.out.find(expected), std::string::npos) << expected << " in " << o.out;

    // Above the threshold only.
    const outcome big = run_fecsim("diff " + v4 + " " + merged + " --threshold " + std::to_string(rel * 1.01));
    EXPECT_EQ(big.status, 1);
    EXPECT_EQ(big.out.find("\nrates.xdp_prog_pps "), std::string::npos) << big.out;
    EXPECT_EQ(run_fecsim("diff " + v4 + " " + v4 + " --threshold=-1").status, 2);
    // fails before: the second threshold silently replaced the first (exit 0)
    const outcome twice = run_fecsim("diff " + v4 + " " + v4 + " --threshold 1 --threshold 2");
    EXPECT_EQ(twice.status, 2);
    EXPECT_EQ(twice.err, "fecsim: --threshold given twice\n");
    EXPECT_EQ(run_fecsim("diff " + v4 + " " + std::string(FECSIM_SOURCE_CONFIG_DIR) + "/platforms/imx8mp.json").status, 2);
}

TEST(stats, prints_the_driver_counters_in_ethtool_order_for_the_window) {
    const fs::path path = e1_result(scratch(), "v4");
    const outcome o = run_fecsim("stats " + path.string());
    ASSERT_EQ(o.status, 0) << o.err;
    std::map<std::string, uint64_t> v;
    std::vector<std::string> order;
    std::istringstream lines(o.out);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "NIC statistics:");
    while (std::getline(lines, line) && line.rfind("     ", 0) == 0) {
        const size_t colon = line.find(": ");
        order.push_back(line.substr(5, colon - 5));
        v[order.back()] = std::stoull(line.substr(colon + 2));
    }
    ASSERT_EQ(order.size(), 53u + 7 + 11);
    EXPECT_EQ(order[0], "tx_dropped");
    EXPECT_EQ(order[17], "tx_octets");
    EXPECT_EQ(order[18], "IEEE_tx_drop");
    EXPECT_EQ(order[30], "rx_packets");
    EXPECT_EQ(order[52], "IEEE_rx_octets_ok");
    EXPECT_EQ(order[53], "rx_xdp_redirect");
    EXPECT_EQ(order[59], "tx_xdp_xmit_errors");
    EXPECT_EQ(order[60], "rx_pp_alloc_fast");
    EXPECT_EQ(order[70], "rx_pp_recycle_released_ref");

    const json r = read_json(path);
    // The MIB covers the window: what the MAC sent and received after the warm-up.
    EXPECT_EQ(v["tx_packets"], r["dut"]["tx_frames"]);
    EXPECT_EQ(v["rx_packets"], v["IEEE_rx_frame_ok"]);
    EXPECT_EQ(v["IEEE_rx_macerr"], r["dut"]["rx_fifo_overflow_drops"]);
    EXPECT_GT(v["IEEE_rx_macerr"], 1000u) << "E1 offers more than v4 reflects";
    EXPECT_EQ(v["tx_64byte"], v["tx_packets"]);
    EXPECT_GT(v["tx_packets"], 1000u);
    // The driver's XDP and page-pool counters, summed over its RX queues.
    EXPECT_EQ(v["rx_xdp_tx"], r["dut"]["xdp"]["tx"]);
    EXPECT_GT(v["rx_xdp_tx"], 1000u);
    EXPECT_EQ(v["rx_xdp_pass"], 0u);
    EXPECT_EQ(v["rx_pp_recycle_cached"], r["dut"]["page_pool"]["recycle_cached"]);
    EXPECT_EQ(v["rx_pp_alloc_fast"], r["dut"]["page_pool"]["alloc_fast"]);
    EXPECT_GT(r["dut"]["rx_queues"].size(), 0u);

    EXPECT_EQ(run_fecsim("stats " + std::string(FECSIM_SOURCE_CONFIG_DIR) + "/platforms/imx8mp.json").status, 2);
}

TEST(stats, unreadable_result_files_exit_2_with_one_line) {
    // fails before: a directory ended both commands in an uncaught std::ios_failure (exit 134)
    const fs::path d = scratch();
    const std::string dir = d.string(), truncated = write(d / "cut.json", "{\"sim\": {\"wall_s\": 1,");
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"stats " + dir, dir + ": is a directory, not a file\n"},
        {"diff " + dir + " " + dir, dir + ": is a directory, not a file\n"},
        {"stats " + truncated, truncated + ": line 1, column 22: invalid JSON: syntax error while parsing object key - "
                               "unexpected end of input; expected string literal\n"},
    };
    for (const auto& [args, error] : rows) {
        const outcome o = run_fecsim(args);
        EXPECT_EQ(o.status, 2) << args;
        EXPECT_EQ(o.err, error) << args;
        EXPECT_EQ(o.out, "") << args;
    }
}

}  // namespace
