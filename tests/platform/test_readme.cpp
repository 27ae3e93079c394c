// The README's example commands, run as a user would copy them, so they cannot rot; and the
// README and docs/ stand alone (every page they name exists, nothing points outside the tree).
#include "tests/support/shell.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using fecsim::test::outcome;
using fecsim::test::shell;

const fs::path source_dir = fs::path(FECSIM_SOURCE_CONFIG_DIR).parent_path();

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The lines of the README's fenced code blocks that start with `prefix`, comments removed.
std::vector<std::string> commands(const std::string& prefix) {
    std::vector<std::string> out;
    std::istringstream in(read(source_dir / "README.md"));
    bool fenced = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("```", 0) == 0) fenced = !fenced;
        else if (fenced && line.rfind(prefix, 0) == 0) out.push_back(std::regex_replace(line, std::regex(R"(\s+# .*$)"), ""));
    }
    return out;
}

TEST(readme, every_fecsim_example_runs) {
    const auto examples = commands("build/fecsim");
    ASSERT_GE(examples.size(), 5u);
    const fs::path dir = fs::temp_directory_path() / ("fecsim-readme-" + std::to_string(::getpid()));
    fs::create_directories(dir / "build");
    // A working directory laid out as the repository: configs/ and build/fecsim.
    fs::create_directory_symlink(source_dir / "configs", dir / "configs");
    fs::create_symlink(fs::path(FECSIM_BINARY_DIR) / "fecsim", dir / "build/fecsim");
    for (const std::string& example : examples) {
        // The figures are the table's business: a run is shortened unless it sets its own window.
        const bool shorten = example.find(" run ") != std::string::npos && example.find("duration_s") == std::string::npos;
        const outcome o = shell("cd " + dir.string() + " && " + example + (shorten ? " --quiet --set duration_s=0.005" : ""));
        EXPECT_EQ(o.status, 0) << example << "\n" << o.err;
        EXPECT_EQ(o.err.find("warning"), std::string::npos) << example << "\n" << o.err;
        for (const char* file : {"r.json", "wire.pcapng"}) {
            if (example.find(file) != std::string::npos) {
                EXPECT_TRUE(fs::exists(dir / file)) << example;
            }
        }
    }
    fs::remove_all(dir);
}

TEST(readme, every_make_target_it_names_exists) {
    const auto lines = commands("make ");
    ASSERT_GE(lines.size(), 2u);
    std::vector<std::string> targets;
    for (const auto& l : lines) targets.push_back(l.substr(5, l.find(' ', 5) - 5));
    for (const char* t : {"build", "fecsim", "table", "bench", "install"}) targets.push_back(t);  // named in the text
    for (const auto& t : targets) {
        const outcome o = shell("make -n -C " + source_dir.string() + " " + t + " >/dev/null");
        EXPECT_EQ(o.status, 0) << "make " << t << ": " << o.err;
    }
}

TEST(readme, the_readme_and_docs_stand_alone) {
    std::vector<fs::path> pages = {source_dir / "README.md"};
    for (const auto& e : fs::recursive_directory_iterator(source_dir / "docs"))
        if (e.path().extension() == ".md") pages.push_back(e.path());
    const std::regex doc_ref(R"(docs/[A-Za-z0-9_/.-]+\.md)");
    for (const auto& page : pages) {
        const std::string text = read(page);
        EXPECT_EQ(text.find("../shared"), std::string::npos) << page << " points outside the repository";
        EXPECT_EQ(text.find("/work/"), std::string::npos) << page;
        for (std::sregex_iterator it(text.begin(), text.end(), doc_ref), end; it != end; ++it)
            EXPECT_TRUE(fs::exists(source_dir / it->str())) << page << " names " << it->str();
    }
}

}  // namespace
