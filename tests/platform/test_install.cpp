// fecsim outside the tree it was built in: a copy, the copy moved, an installation, and a copied
// source tree whose build directory was configured for the original. Each must read its own
// configuration tree, never the one compiled in.
#include "tests/support/shell.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using fecsim::test::outcome;
using fecsim::test::shell;

const fs::path build_dir = FECSIM_BINARY_DIR;
const fs::path source_dir = fs::path(FECSIM_SOURCE_CONFIG_DIR).parent_path();

struct scratch {
    fs::path dir = fs::temp_directory_path() / ("fecsim-install-" + std::to_string(::getpid()));
    scratch() { fs::create_directories(dir); }
    ~scratch() { fs::remove_all(dir); }
};

// Marks a configuration tree so `fecsim list` shows which one a binary reads.
void mark(const fs::path& configs, const std::string& tag) {
    const fs::path exp = configs / "experiments" / "imx8mp-xdp-tx.json";
    auto j = nlohmann::json::parse(std::ifstream(exp));
    j["description"] = tag;
    std::ofstream(exp) << j.dump(2);
}

// A tree as a user gets it from copying the repository and its build: TREE/build/fecsim, TREE/configs.
fs::path copy_tree(const fs::path& to, const std::string& tag) {
    fs::create_directories(to / "build");
    fs::copy_file(build_dir / "fecsim", to / "build" / "fecsim");
    fs::copy(source_dir / "configs", to / "configs", fs::copy_options::recursive);
    mark(to / "configs", tag);
    return to;
}

TEST(install, a_copied_tree_reads_its_own_configs_and_so_does_the_copy_moved) {
    scratch s;
    const fs::path copy = copy_tree(s.dir / "copy", "the copy's E1");
    const outcome listed = shell((copy / "build/fecsim").string() + " list");
    ASSERT_EQ(listed.status, 0) << listed.err;
    EXPECT_NE(listed.out.find("platforms (" + (copy / "configs/platforms").string() + "):"), std::string::npos)
        << listed.out;
    EXPECT_NE(listed.out.find("  imx8mp-xdp-tx  the copy's E1\n"), std::string::npos) << listed.out;

    const fs::path moved = s.dir / "moved";
    fs::rename(copy, moved);
    const outcome run = shell("cd / && " + (moved / "build/fecsim").string() +
                              " run imx8mp-xdp-tx --quiet --set warmup_s=0.002 --set duration_s=0.001 --out " +
                              (s.dir / "r.json").string());
    ASSERT_EQ(run.status, 0) << run.err;
    const auto r = nlohmann::json::parse(std::ifstream(s.dir / "r.json"));
    EXPECT_EQ(r["config"]["description"], "the copy's E1") << "the moved tree's configs, not the original's";
}

TEST(install, make_install_gives_a_tool_that_finds_its_configs_and_runs_experiments_from_anywhere) {
    scratch s;
    const fs::path prefix = s.dir / "prefix";
    const outcome installed = shell("cmake --install " + build_dir.string() + " --prefix " + prefix.string());
    ASSERT_EQ(installed.status, 0) << installed.err;
    const std::string fecsim = (prefix / "bin/fecsim").string();
    EXPECT_TRUE(fs::exists(prefix / "share/doc/fecsim/README.md"));
    EXPECT_TRUE(fs::exists(prefix / "share/doc/fecsim/configuration.md"));

    const outcome listed = shell(fecsim + " list");
    ASSERT_EQ(listed.status, 0) << listed.err;
    EXPECT_NE(listed.out.find("experiments (" + (prefix / "share/fecsim/configs/experiments").string() + "):"),
              std::string::npos) << listed.out;
    EXPECT_NE(shell(fecsim + " --help").out.find("Configuration: " + (prefix / "share/doc/fecsim").string() +
                                                "/configuration.md"), std::string::npos);

    // An experiment of the user's own, elsewhere, naming its platform by name.
    const fs::path mine = s.dir / "work";
    fs::create_directories(mine);
    std::ofstream(mine / "small-frames.json") << R"({"platform": "imx8mp", "description": "mine",
        "warmup_s": 0.002, "duration_s": 0.001, "generator": {"sample03": "-m 00:04:9f:07:9f:01",
        "pktgen_file": "size.pg"}})";
    std::ofstream(mine / "size.pg") << "PGDEV=/proc/net/pktgen/eth0\npgset \"pkt_size 124\"\n";
    // From another directory: the script is found next to the experiment that names it.
    const outcome run = shell("cd " + s.dir.string() + " && " + fecsim + " run work/small-frames.json --quiet --out r.json");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto r = nlohmann::json::parse(std::ifstream(s.dir / "r.json"));
    EXPECT_GT(r["rates"]["xdp_prog_pps"].get<double>(), 0);
    EXPECT_EQ(r["generator"]["tx_bytes"].get<double>() / r["generator"]["tx_frames"].get<double>(), 128.0);

    // FECSIM_CONFIG_DIR points it at another tree.
    const fs::path other = s.dir / "other";
    fs::copy(source_dir / "configs", other, fs::copy_options::recursive);
    mark(other, "from FECSIM_CONFIG_DIR");
    const outcome env = shell("FECSIM_CONFIG_DIR=" + other.string() + " " + fecsim + " list");
    EXPECT_NE(env.out.find("  imx8mp-xdp-tx  from FECSIM_CONFIG_DIR\n"), std::string::npos) << env.out;
}

TEST(install, make_build_builds_the_tool_alone) {
    for (const char* target : {"build", "fecsim"}) {
        const outcome o = shell("make -n -C " + source_dir.string() + " " + target);
        ASSERT_EQ(o.status, 0) << o.err;
        EXPECT_NE(o.out.find("--target fecsim"), std::string::npos) << o.out;
        EXPECT_EQ(o.out.find("ctest"), std::string::npos) << o.out;
    }
    // make test builds everything (no --target) before running ctest
    const outcome t = shell("make -n -C " + source_dir.string() + " test");
    EXPECT_EQ(t.out.find("--target"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("ctest"), std::string::npos) << t.out;
}

TEST(install, make_in_a_copied_source_tree_starts_the_stale_build_directory_afresh) {
    scratch s;
    const fs::path tree = s.dir / "tree";
    fs::create_directories(tree / "build");
    for (const char* part : {"Makefile", "CMakeLists.txt", "scripts", "configs", "config", "models", "firmware", "traffic",
                             "platform", "tests", "bench", "README.md", "docs"})
        fs::copy(source_dir / part, tree / part, fs::copy_options::recursive);
    // The build directory came along from the original tree.
    std::ofstream(tree / "build/CMakeCache.txt") << "CMAKE_HOME_DIRECTORY:INTERNAL=" << source_dir.string() << "\n";
    const outcome o = shell("make -C " + tree.string() + " configure");
    ASSERT_EQ(o.status, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("fecsim: build was configured for another source tree; building it afresh"), std::string::npos)
        << o.out;
    std::ifstream cache(tree / "build/CMakeCache.txt");
    const std::string text((std::istreambuf_iterator<char>(cache)), {});
    EXPECT_NE(text.find("CMAKE_HOME_DIRECTORY:INTERNAL=" + fs::canonical(tree).string() + "\n"), std::string::npos);
}

}  // namespace
