// Helpers shared by the traffic tests: scratch files and configurations loaded through the real
// schema (configs/schema) and the imx8mp platform profile.
#pragma once

#include "config/config.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fecsim::test {

inline std::string scratch_path(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("fecsim-traffic-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

inline std::string write_file(const std::string& name, const std::string& text) {
    const std::string p = scratch_path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

// An experiment on imx8mp with `generator` as its generator section.
inline config load_with_generator(const nlohmann::json& generator, const std::string& file = "exp.json") {
    nlohmann::json e = {{"platform", "imx8mp"}, {"generator", generator}};
    return config::load(write_file(file, e.dump(2)), {});
}

// Runs a shell command, returns its stdout; stderr goes to `err` when given.
inline std::string run(const std::string& cmd, std::string* err = nullptr) {
    const std::string errfile = scratch_path("stderr.txt");
    FILE* p = ::popen((cmd + " 2>" + errfile).c_str(), "r");
    std::string out;
    if (!p) return out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
    if (err) {
        std::ifstream in(errfile);
        err->assign(std::istreambuf_iterator<char>(in), {});
    }
    return out;
}

inline bool have_tshark() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

}  // namespace fecsim::test
