// Runs that finish "successfully" but measured nothing useful: most frames dropped by the DUT's
// address filter, a DUT that processed nothing, a capture replay that ended before or inside the
// window. Each warning is one line naming the likely cause and the key that fixes it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fecsim {

// The warnings for a result document (docs/results.md), which carries its configuration.
std::vector<std::string> run_warnings(const nlohmann::json& result);

}  // namespace fecsim
