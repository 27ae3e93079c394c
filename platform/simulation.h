// One fecsim run: elaborate the SoC, run warm-up and the measurement window, build the result.
#pragma once

#include "platform/config.h"
#include "platform/soc.h"

#include <nlohmann/json.hpp>

namespace fecsim {

struct run_options : soc_options {  // the captures, and:
    bool quiet = false;               // no live output
};

// Runs `cfg` in a fresh SystemC context and returns the result document (docs/results.md).
nlohmann::json run_simulation(const config& cfg, const run_options& opt = {});

// Builds the SoC of `cfg` and runs it until the driver has opened the interface, so every check
// done while assembling and booting it (address map, model, driver and traffic parameters,
// memory for the rings) reports its config_error; nothing is measured.
void check_assembly(const config& cfg);

// Writes `result` as indented JSON with a trailing newline; throws std::runtime_error on I/O errors.
void write_result(const std::string& path, const nlohmann::json& result);

}  // namespace fecsim
