// libFuzzer: the configuration loader with --set overrides. The input is an experiment file,
// then NUL-separated --set arguments. Success and config_error are the only allowed outcomes.
#include "config/config.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = "/tmp/fecsim-fuzz-config-" + std::to_string(::getpid()) + ".json";
    const std::string input(reinterpret_cast<const char*>(data), size);
    const size_t nul = input.find('\0');
    std::ofstream(path, std::ios::binary | std::ios::trunc) << input.substr(0, nul);
    std::vector<std::string> sets;
    for (size_t at = nul; at != std::string::npos;) {
        const size_t next = input.find('\0', at + 1);
        sets.push_back(input.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1));
        at = next;
    }
    try {
        fecsim::config::load(path, sets, FECSIM_SOURCE_CONFIG_DIR);
    } catch (const fecsim::config_error&) {
    }
    return 0;
}
