// Runs a shell command line for the tests that drive fecsim (or make, or the README's examples)
// as a user would: exit status, stdout and stderr apart.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fecsim::test {

struct outcome {
    int status;  // exit status; -1 when killed by a signal
    std::string out, err;
};

inline outcome shell(const std::string& cmd) {
    static int calls = 0;
    const std::filesystem::path err_file = std::filesystem::temp_directory_path() /
        ("fecsim-shell-" + std::to_string(::getpid()) + "-" + std::to_string(calls++) + ".err");
    FILE* p = ::popen(("{ " + cmd + "\n} 2>" + err_file.string()).c_str(), "r");
    outcome o{-1, "", ""};
    if (!p) return o;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) o.out.append(buf.data(), n);
    const int raw = ::pclose(p);
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ifstream in(err_file);
    o.err.assign(std::istreambuf_iterator<char>(in), {});
    std::filesystem::remove(err_file);
    return o;
}

}  // namespace fecsim::test
