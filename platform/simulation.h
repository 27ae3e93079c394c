// One fecsim run: elaborate the SoC, run warm-up and the measurement window, build the result.
#pragma once

#include "config/config.h"
#include "platform/soc.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace fecsim {

struct run_options : soc_options {  // the captures, and:
    bool quiet = false;               // no live output
    double max_wall_s = 0;            // > 0: stop the measurement window after this much host time
};

// Runs `cfg` in a fresh SystemC context and returns the result document (docs/results.md).
// A run stopped by max_wall_s has sim.incomplete true and sim.window_s the part measured; a stop
// during the warm-up is a std::runtime_error (nothing was measured).
nlohmann::json run_simulation(const config& cfg, const run_options& opt = {});

// Builds the SoC of `cfg` and runs it until the driver has opened the interface, so every check
// done while assembling and booting it (address map, model, driver and traffic parameters,
// memory for the rings, a warm-up that ends before the open, the telemetry address) reports its
// config_error; nothing is measured.
void check_assembly(const config& cfg);

// Before a run: config_error "FLAG PATH: reason" unless `path` can take the output of FLAG
// (--out, --pcap, --trace). Refuses a directory, a file that cannot be created or opened for
// writing (/proc/x), a full file system and a device that refuses a write (/dev/full).
// Creates nothing: a file made to probe is removed again.
void probe_output(const std::string& flag, const std::string& path);

// Before a run: probe_output for each (FLAG, PATH) of `outputs` (an empty PATH: none), and a
// config_error "FLAG PATH: the same file as ..." for one naming the file of an input of the run
// (the experiment, generator.pcap_file, generator.pktgen_file: it would be destroyed) or of an
// output before it (only the last written would remain). A device (/dev/null) takes anything.
void probe_outputs(const config& cfg, const std::string& experiment,
                   const std::vector<std::pair<std::string, std::string>>& outputs);

// One line per boundary of `result`'s accounting whose books do not balance
// ("accounting: dut.fec.rx: ..."); empty when every frame is accounted for.
std::vector<std::string> unbalanced_books(const nlohmann::json& result);

// Writes `result` as indented JSON with a trailing newline; throws std::runtime_error on I/O errors.
void write_result(const std::string& path, const nlohmann::json& result);

}  // namespace fecsim
