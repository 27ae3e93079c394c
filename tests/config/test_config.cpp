// Configuration loading: layering, --set typing, defaults, and every class of bad input.
#include "config/config.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace fecsim {
namespace {

namespace fs = std::filesystem;
const std::string data = FECSIM_TEST_DATA_DIR;
const std::string configs = FECSIM_SOURCE_CONFIG_DIR;

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < s.size()) {
        size_t nl = s.find('\n', start);
        if (nl == std::string::npos) nl = s.size();
        out.push_back(s.substr(start, nl - start));
        start = nl + 1;
    }
    return out;
}

std::string load_error(const std::string& path, const std::vector<std::string>& sets = {},
                       const std::string& dir = configs) {
    try {
        config::load(path, sets, dir);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

// A scratch configuration tree with the real schema and one custom platform profile.
struct scratch_dir {
    fs::path root = fs::temp_directory_path() / ("fecsim-config-" + std::to_string(::getpid()) + "-" +
                                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    scratch_dir() {
        fs::remove_all(root);
        fs::create_directories(root / "platforms");
        fs::copy(fs::path(configs) / "schema", root / "schema");
        fs::copy(fs::path(configs) / "platforms" / "imx8mp.json", root / "platforms" / "imx8mp.json");
    }
    ~scratch_dir() { fs::remove_all(root); }
    std::string write(const std::string& rel, const std::string& text) {
        std::ofstream(root / rel) << text;
        return (root / rel).string();
    }
};

TEST(config, every_shipped_experiment_and_platform_validates) {
    int experiments = 0;
    for (auto& e : fs::directory_iterator(fs::path(configs) / "experiments")) {
        if (e.path().extension() != ".json") continue;
        ++experiments;
        EXPECT_EQ(load_error(e.path().string()), "") << e.path();
    }
    EXPECT_GT(experiments, 0);
    scratch_dir d;
    for (auto& p : fs::directory_iterator(fs::path(configs) / "platforms")) {
        const std::string exp = d.write("exp.json", "{\"platform\": \"" + p.path().stem().string() + "\"}");
        EXPECT_EQ(load_error(exp, {}, configs), "") << p.path();
    }
}

TEST(config, experiment_overrides_platform_and_schema_fills_defaults) {
    const config c = config::load(data + "/minimal.json", {});
    EXPECT_EQ(c.tree().at("platform"), "imx8mp");
    EXPECT_EQ(c.tree().at("seed"), 1);              // schema default
    EXPECT_EQ(c.tree().at("duration_s"), 1.0);      // schema default
    EXPECT_FALSE(c.tree().contains("// comment"));  // comments never reach the models
    EXPECT_FALSE(c.tree().at("mem").contains("//"));
    EXPECT_EQ(c.view("mem.ddr").integer("burst_bytes"), 64);
    EXPECT_EQ(c.view("mem").section("ddr").number("read_latency_ns"), 90);
    EXPECT_EQ(parse_address(c.tree().at("mem").at("regions").at(1).at("base")), 0x40000000u);
}

TEST(config, set_overrides_are_typed) {
    const config c = config::load(data + "/minimal.json",
                                  {"seed=7", "duration_s=0.25", "description=hello world", "description=\"quoted\"",
                                   "mem.ddr.read_latency_ns=120.5"});
    EXPECT_TRUE(c.tree().at("seed").is_number_integer());
    EXPECT_EQ(c.tree().at("seed"), 7);
    EXPECT_EQ(c.tree().at("duration_s"), 0.25);
    EXPECT_EQ(c.tree().at("description"), "quoted");  // last --set wins
    EXPECT_EQ(c.view("mem.ddr").number("read_latency_ns"), 120.5);
    // An integral float is accepted for an integer key and stored as an integer.
    EXPECT_TRUE(config::load(data + "/minimal.json", {"seed=3.0"}).tree().at("seed").is_number_integer());
    // An integral float far beyond the range is an error, not an overflow.
    EXPECT_EQ(load_error(data + "/minimal.json", {"seed=1e30"}),
              "--set seed=1e30: /seed: expected a value in [0, 4294967295], got 1e+30");
}

TEST(config, set_errors_name_the_override) {
    EXPECT_EQ(load_error(data + "/minimal.json", {"seed=abc"}), "--set seed=abc: /seed: expected an integer, got string \"abc\"");
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem.ddr.read_latncy_ns=3"}),
              "--set mem.ddr.read_latncy_ns=3: /mem/ddr/read_latncy_ns: unknown key (did you mean 'read_latency_ns'?)");
    EXPECT_EQ(load_error(data + "/minimal.json", {"seed"}), "--set seed: expected dotted.key=value");
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem..ddr=1"}), "--set mem..ddr=1: malformed key \"mem..ddr\"");
    EXPECT_EQ(load_error(data + "/minimal.json", {"duration~s=1"}), "--set duration~s=1: malformed key \"duration~s\"");
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem/ddr=1"}), "--set mem/ddr=1: malformed key \"mem/ddr\"");
    // fails before: a newline in a --set split its error over two lines
    EXPECT_EQ(load_error(data + "/minimal.json", {"seed=1\n2"}), "--set seed=1\\n2: /seed: expected an integer, got string \"1\\n2\"");
    EXPECT_EQ(load_error(data + "/minimal.json", {"se\ned=1"}), "--set se\\ned=1: malformed key \"se\\ned\"");
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem.ddr.burst_bytes.x=1"}),
              "--set mem.ddr.burst_bytes.x=1: /mem/ddr/burst_bytes: is not an object");
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem.regions.7.latency_ns=1"}),
              "--set mem.regions.7.latency_ns=1: /mem/regions/7: no such array element (/mem/regions has 4; index 4 appends)");
    // fails before: the value was recorded under /mem/regions/01, so its error blamed the profile
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem.regions.01.base=0xzz"}),
              "--set mem.regions.01.base=0xzz: /mem/regions/1/base: expected an address (integer or \"0x...\" string), "
              "got string \"0xzz\"");
    EXPECT_EQ(load_error(data + "/minimal.json", {"platform=imx93"}),
              "--set platform=imx93: the platform is chosen by the experiment file");
}

TEST(config, a_list_the_experiment_left_out_takes_elements_by_index) {
    const config c = config::load(data + "/minimal.json", {"generator.pktgen.0=pkt_size 124", "generator.pktgen.1=burst 8"});
    EXPECT_EQ(c.tree().at("generator").at("pktgen"), (nlohmann::json{"pkt_size 124", "burst 8"}));
    EXPECT_EQ(load_error(data + "/minimal.json", {"generator.pktgen.1=burst 8"}),
              "--set generator.pktgen.1=burst 8: /generator/pktgen/1: no such array element (/generator/pktgen has 0; "
              "index 0 appends)");
}

TEST(config, a_sample03_set_adds_its_options_to_the_experiments) {
    scratch_dir d;
    const std::string exp = d.write("e.json", R"({"platform": "imx8mp", "generator": {"sample03": "-d 198.18.0.42 -m 00:04:9f:07:9f:01"}})");
    EXPECT_EQ(config::load(exp, {"generator.sample03=-s 1500"}, d.root.string()).tree()["generator"]["sample03"],
              "-d 198.18.0.42 -m 00:04:9f:07:9f:01 -s 1500");
    EXPECT_EQ(config::load(exp, {"generator.sample03=-s 1500", "generator.sample03=-b 8"}, d.root.string())
                  .tree()["generator"]["sample03"],
              "-d 198.18.0.42 -m 00:04:9f:07:9f:01 -s 1500 -b 8");
    EXPECT_EQ(config::load(exp, {"generator.sample03="}, d.root.string()).tree()["generator"]["sample03"], "");
    // Other string keys are replaced, as before.
    EXPECT_EQ(config::load(exp, {"description=x"}, d.root.string()).tree()["description"], "x");
    // Text that reads as JSON is still the string written for a string key (fails before: "expected a
    // string, got -6", where sample03 itself says what -6 is not).
    EXPECT_EQ(config::load(exp, {"generator.sample03=-6"}, d.root.string()).tree()["generator"]["sample03"],
              "-d 198.18.0.42 -m 00:04:9f:07:9f:01 -6");
    EXPECT_EQ(config::load(exp, {"description=2026"}, d.root.string()).tree()["description"], "2026");
    EXPECT_EQ(config::load(exp, {"description=true"}, d.root.string()).tree()["description"], "true");
}

TEST(config, an_object_set_merges_key_by_key_as_the_layers_do) {
    // fails before: the --set replaced the whole object, so the experiment's sample03 (-d, -m) and
    // rx_enabled silently fell back to the schema's defaults, and mem.ddr lost the profile's keys
    scratch_dir d;
    const std::string exp = d.write("e.json", R"({"platform": "imx8mp", "generator": {"sample03": "-m 00:04:9f:07:9f:01", "rx_enabled": false}})");
    const config c = config::load(exp, {R"(generator={"kind": "pktgen"})", R"(mem.ddr={"read_latency_ns": 50})"},
                                  d.root.string());
    EXPECT_EQ(c.tree()["generator"]["kind"], "pktgen");
    EXPECT_EQ(c.tree()["generator"]["sample03"], "-m 00:04:9f:07:9f:01");
    EXPECT_EQ(c.tree()["generator"]["rx_enabled"], false);
    EXPECT_EQ(c.tree()["mem"]["ddr"]["read_latency_ns"], 50);
    const config profile = config::load(exp, {}, d.root.string());
    EXPECT_EQ(c.tree()["mem"]["ddr"]["size_bytes"], profile.tree()["mem"]["ddr"]["size_bytes"]);
    // An element of a list of objects merges too; a value the object's key does not take is still named.
    EXPECT_EQ(config::load(exp, {R"(mem.regions.1={"latency_ns": 7})"}, d.root.string()).tree()["mem"]["regions"][1]["base"],
              profile.tree()["mem"]["regions"][1]["base"]);
    EXPECT_EQ(load_error(exp, {R"(mem.ddr={"burst_bytes": 48})"}, d.root.string()),
              R"(--set mem.ddr={"burst_bytes": 48}: /mem/ddr/burst_bytes: expected one of 16, 32, 64, 128, got 48)");
}

TEST(config, a_result_file_given_as_the_experiment_is_named_as_such) {
    scratch_dir d;
    const std::string result = d.write("r.json", R"({"rates": {}, "config": {"platform": "imx8mp"}, "sim": {}})");
    EXPECT_EQ(load_error(result, {}, d.root.string()),
              result + ": /platform: missing required key; this looks like a result file of fecsim run, not an "
                       "experiment (its configuration is under /config)");
}

TEST(config, typo_wrong_type_and_out_of_range_give_one_line_each) {
    const std::string path = data + "/three_errors.json";
    const auto got = lines(load_error(path));
    ASSERT_EQ(got.size(), 3u) << load_error(path);
    EXPECT_EQ(got[0], path + ": /durration_s: unknown key (did you mean 'duration_s'?)");
    EXPECT_EQ(got[1], path + ": /seed: expected an integer, got string \"one\"");
    EXPECT_EQ(got[2], path + ": /warmup_s: expected a value in [0.001, 3600], got -1");
}

TEST(config, enum_errors_list_the_allowed_values) {
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem.ddr.burst_bytes=48"}),
              "--set mem.ddr.burst_bytes=48: /mem/ddr/burst_bytes: expected one of 16, 32, 64, 128, got 48");
    EXPECT_EQ(load_error(data + "/minimal.json", {"mem.regions.1.attribute=cached"}),
              "--set mem.regions.1.attribute=cached: /mem/regions/1/attribute: expected one of normal_cacheable, "
              "normal_noncacheable, device, got \"cached\"");
    // Array elements are addressed by index.
    const config c = config::load(data + "/minimal.json", {"mem.regions.1.latency_ns=35"});
    EXPECT_EQ(c.tree().at("mem").at("regions").at(1).at("latency_ns"), 35);
}

TEST(config, errors_in_the_platform_profile_name_the_profile) {
    scratch_dir d;
    // The shipped imx8mp profile with two bad values.
    nlohmann::json broken = nlohmann::json::parse(std::ifstream(fs::path(configs) / "platforms" / "imx8mp.json"));
    broken["mem"]["ddr"]["bandwidth_mb_per_s"] = 0;
    broken["mem"]["regions"][0]["base"] = "0xZZ";
    const std::string profile = d.write("platforms/broken.json", broken.dump());
    const std::string exp = d.write("exp.json", R"({"platform": "broken"})");
    const auto got = lines(load_error(exp, {}, d.root.string()));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], profile + ": /mem/ddr/bandwidth_mb_per_s: expected a value in [1, 1000000], got 0");
    EXPECT_EQ(got[1], profile + ": /mem/regions/0/base: expected an address (integer or \"0x...\" string), got string \"0xZZ\"");
}

TEST(config, missing_required_keys_are_reported) {
    scratch_dir d;
    d.write("platforms/empty.json", "{}");
    const std::string exp = d.write("exp.json", R"({"platform": "empty"})");
    const std::string err = load_error(exp, {}, d.root.string());
    EXPECT_NE(err.find((d.root / "platforms" / "empty.json").string() + ": /mem: missing required key"), std::string::npos)
        << err;
    nlohmann::json partial_profile = nlohmann::json::parse(std::ifstream(fs::path(configs) / "platforms" / "imx8mp.json"));
    partial_profile["mem"] = {{"ddr", {{"size_bytes", 1073741824}}}};
    d.write("platforms/partial.json", partial_profile.dump());
    const std::string partial = load_error(d.write("p.json", R"({"platform": "partial"})"), {}, d.root.string());
    EXPECT_NE(partial.find(": /mem/ddr/read_latency_ns: missing required key"), std::string::npos) << partial;
    EXPECT_NE(partial.find(": /mem/regions: missing required key"), std::string::npos) << partial;
}

TEST(config, unusable_files_are_clear_errors) {
    const std::string syntax = load_error(data + "/syntax_error.json");
    EXPECT_EQ(syntax.rfind(data + "/syntax_error.json: line 3, column 13: invalid JSON", 0), 0u) << syntax;
    EXPECT_EQ(load_error(data + "/nope.json"), data + "/nope.json: cannot open file");
    scratch_dir d;
    const std::string no_platform = d.write("a.json", R"({"seed": 1})");
    EXPECT_EQ(load_error(no_platform, {}, d.root.string()),
              no_platform + ": /platform: missing required key (the platform profile's name)");
    // fails before: "/platform: missing required key" for a platform that is there, as a number
    const std::string number = d.write("n.json", R"({"platform": 5})");
    EXPECT_EQ(load_error(number, {}, d.root.string()),
              number + ": /platform: expected a string (the platform profile's name), got 5");
    const std::string unknown = d.write("b.json", R"({"platform": "imx99"})");
    EXPECT_EQ(load_error(unknown, {}, d.root.string()), unknown + ": /platform: unknown platform \"imx99\" (known: imx8mp)");
    const std::string array = d.write("c.json", "[1, 2]");
    EXPECT_EQ(load_error(array, {}, d.root.string()), array + ": expected a JSON object at the top level");
}

// Hostile input found by fuzzing: each ended in a crash (stack overflow, uncaught nlohmann
// exception, filesystem_error) or ran out of memory before it became a config_error.
TEST(config, nesting_and_key_length_are_bounded) {
    scratch_dir d;
    const std::string deep = d.write("deep.json", "{\"platform\": \"imx8mp\", \"x\": " + std::string(100000, '[') + "}");
    EXPECT_EQ(load_error(deep, {}, d.root.string()), deep + ": objects and arrays nested deeper than 32 levels");
    std::string key = "a";
    for (int i = 0; i < 10000; ++i) key += ".a";
    const std::string err = load_error(data + "/minimal.json", {key + "=1"});
    EXPECT_EQ(err.substr(err.find(": ")), ": key longer than 256 bytes") << err;
    EXPECT_LT(err.size(), 200u);  // the label is cut, not the whole key
    EXPECT_EQ(load_error(data + "/minimal.json", {"description=" + std::string(40, '[')}),
              "--set description=" + std::string(40, '[') + ": objects and arrays nested deeper than 32 levels");
}

TEST(config, numbers_beyond_a_double_are_errors) {
    scratch_dir d;
    const std::string f = d.write("big.json", "{\"platform\": \"imx8mp\",\n \"duration_s\": 1e400}");
    EXPECT_EQ(load_error(f, {}, d.root.string()), f + ": line 2, column 16: number 1e400 is out of the range of a double");
    EXPECT_EQ(load_error(data + "/minimal.json", {"duration_s=1e400"}),
              "--set duration_s=1e400: /duration_s: number 1e400 is out of the range of a double");
}

TEST(config, invalid_utf8_in_a_set_is_an_error) {
    EXPECT_EQ(load_error(data + "/minimal.json", {"description=\xff"}), "--set description=\xef\xbf\xbd: not valid UTF-8");
    EXPECT_EQ(load_error(data + "/minimal.json", {"desc\xc3ription=1"}),
              "--set desc\xef\xbf\xbdription=1: not valid UTF-8");
}

TEST(config, an_unusable_configuration_directory_is_named) {
    EXPECT_EQ(load_error(data + "/minimal.json", {}, "/nonexistent"),
              "/nonexistent/platforms: not a usable configuration directory: No such file or directory");
    scratch_dir d;
    fs::remove_all(d.root / "schema");
    EXPECT_EQ(load_error(d.write("e.json", R"({"platform": "imx8mp"})"), {}, d.root.string()),
              (d.root / "schema").string() + ": not a usable configuration directory: No such file or directory");
    EXPECT_THROW(config::json_files(d.root.string(), "experiments"), config_error);
}

TEST(config, a_broken_schema_in_the_configuration_tree_is_named) {
    // fails before: each ended in an uncaught std::logic_error or nlohmann type_error (exit 134)
    scratch_dir d;
    const std::string e = d.write("e.json", R"({"platform": "imx8mp"})");
    fs::copy_file(d.root / "schema/link.json", d.root / "schema/link2.json");
    EXPECT_EQ(load_error(e, {}, d.root.string()), (d.root / "schema/link2.json").string() + ": /link: schema section defined twice");
    fs::remove(d.root / "schema/link2.json");
    const std::string link = (d.root / "schema/link.json").string();
    nlohmann::json schema = nlohmann::json::parse(std::ifstream(link));
    const nlohmann::json good = schema;
    schema["link"]["speed_mbps"]["type"] = "float";
    d.write("schema/link.json", schema.dump());
    EXPECT_EQ(load_error(e, {}, d.root.string()),
              link + ": /link/speed_mbps/type: unknown type \"float\" (number, integer, boolean, string, enum, address or array)");
    schema = good;
    schema["link"]["propagation_ns"]["min"] = "0";
    d.write("schema/link.json", schema.dump());
    EXPECT_EQ(load_error(e, {}, d.root.string()), link + ": /link/propagation_ns/min: expected a number, got string \"0\"");
}

TEST(config, input_files_are_capped_and_must_be_files) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(load_error("/dev/zero"), "/dev/zero: more than 64 MiB, the limit for an input file");
    // Refused after reading at most the limit: well under the minute it took to run out of memory.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    scratch_dir d;
    EXPECT_EQ(load_error(d.root.string()), d.root.string() + ": is a directory, not a file");
    const std::string big = (d.root / "big.json").string();
    fs::resize_file(d.write("big.json", "{}"), max_input_bytes + 1);  // sparse: no disk used
    EXPECT_EQ(load_error(big), big + ": more than 64 MiB, the limit for an input file");
}

TEST(config, a_key_given_twice_names_both_lines) {
    scratch_dir d;
    const std::string f = d.write("dup.json", "{\"platform\": \"imx8mp\",\n \"//\": \"a\",\n \"//\": \"comments may repeat\",\n"
                                              " \"link\": {\"speed_mbps\": 100,\n   \"speed_mbps\": 1000}}");
    EXPECT_EQ(load_error(f, {}, d.root.string()), f + ": /link/speed_mbps: key given twice (lines 4 and 5)");
    const std::string arrays = d.write("arr.json", "{\"platform\": \"imx8mp\", \"generator\": {\"pktgen\": [\"a\", \"b\"],"
                                                   " \"x\": [{\"k\": 1}, {\"k\": 2, \"k\": 3}]}}");
    EXPECT_EQ(load_error(arrays, {}, d.root.string()), arrays + ": /generator/x/1/k: key given twice (lines 1 and 1)");
    // fails before: a --set's object kept its last flow_control silently
    EXPECT_EQ(load_error(data + "/minimal.json", {R"(link={"flow_control": true, "flow_control": false})"}),
              R"(--set link={"flow_control": true, "flow_control": false}: /link/flow_control: key given twice (lines 1 and 1))");
}

TEST(config, an_error_about_an_object_blames_the_set_that_changed_it) {
    const config c = config::load(data + "/minimal.json", {"mem.regions.1.base=0x1000"});
    EXPECT_EQ(std::string(c.error_at("/mem/regions/1", "overlaps").what()),
              "--set mem.regions.1.base=0x1000: /mem/regions/1: overlaps");
    EXPECT_EQ(std::string(c.error_at("/mem/regions/0", "overlaps").what()).rfind(configs + "/platforms/", 0), 0u);
}

TEST(config, addresses_accept_integers_and_hex_strings_only) {
    EXPECT_EQ(parse_address(nlohmann::json(4096)), 4096u);
    EXPECT_EQ(parse_address(nlohmann::json("0x30BE0000")), 0x30be0000u);
    EXPECT_THROW(parse_address(nlohmann::json(-1)), std::invalid_argument);
    EXPECT_THROW(parse_address(nlohmann::json("30be0000")), std::invalid_argument);
    EXPECT_THROW(parse_address(nlohmann::json("0x")), std::invalid_argument);
    EXPECT_THROW(parse_address(nlohmann::json(1.5)), std::invalid_argument);
}

TEST(config, view_of_a_missing_key_is_a_programming_error) {
    const config c = config::load(data + "/minimal.json", {});
    EXPECT_THROW(c.view("mem.ddr").number("nope"), std::logic_error);
}

}  // namespace
}  // namespace fecsim
