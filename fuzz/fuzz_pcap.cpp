// libFuzzer: the pcap/pcapng reader. The input is a capture file; it loads or is a config_error.
#include "config/config.h"
#include "traffic/pcap_replay.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = "/tmp/fecsim-fuzz-pcap-" + std::to_string(::getpid()) + ".pcap";
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
    try {
        fecsim::traffic::load_pcap(path);
    } catch (const fecsim::config_error&) {
    }
    return 0;
}
