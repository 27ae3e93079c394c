// libFuzzer: the pktgen command parser and frame builder. The input's lines are pktgen device
// commands, or with a leading '-' the options of pktgen_sample03_burst_single_flow.sh. Each
// line is accepted or a pktgen_command_error; what is accepted must build frames.
#include "traffic/pktgen_builder.h"
#include "traffic/pktgen_commands.h"

#include <cstdint>
#include <sstream>
#include <string>

using namespace fecsim::traffic;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    pktgen_params p;
    try {
        if (!input.empty() && input[0] == '-') {
            for (const std::string& line : sample03_commands(input)) apply_pktgen_command(p, line);
        } else {
            std::istringstream in(input);
            for (std::string line; std::getline(in, line);) {
                try {
                    apply_pktgen_command(p, line);
                } catch (const pktgen_command_error&) {
                }
            }
        }
    } catch (const pktgen_command_error&) {
        return 0;
    }
    pktgen_builder b(p, {{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001}, size);
    fecsim::net::frame f;
    for (uint32_t seq = 1; seq <= 8; ++seq) b.build(f, seq, sc_core::sc_time(seq, sc_core::SC_US));
    return 0;
}
