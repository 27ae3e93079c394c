// Reading result files (docs/results.md) the way a driver engineer does: `fecsim stats` prints
// the DUT's counters as `ethtool -S eth0` would, `fecsim diff` lists the metrics that moved.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace fecsim::inspect {

// Parses a result file; throws config_error "FILE: message".
nlohmann::json read_result(const std::string& path);

// Every scalar metric (number or boolean) of a result as (dotted key, value), in key order;
// the resolved configuration ("config") and arrays are left out.
std::vector<std::pair<std::string, nlohmann::ordered_json>> metrics(const nlohmann::json& result);

// `fecsim stats RESULT.json` and `fecsim diff A.json B.json [--threshold PCT]`.
int stats_main(const std::vector<std::string>& args);
int diff_main(const std::vector<std::string>& args);

}  // namespace fecsim::inspect
