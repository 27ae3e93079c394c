// Studies at scale: `fecsim sweep` expands a sweep spec (an experiment and a grid of --set
// values) into points with stable ids and runs them as `fecsim run` processes, on one machine
// or as the tasks of a Slurm array job. See docs/sweeps.md.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fecsim::sweep {

// One point of the grid: its id (a hash of the resolved configuration) and the --set values
// that make it, swept keys first (in spec order), then the spec's fixed "set" keys.
struct point {
    std::string id;
    nlohmann::ordered_json values;  // swept key -> value
    std::vector<std::string> sets;  // "key=value" for `fecsim run`
};

struct plan {
    std::string name, spec_path, experiment;  // paths absolute
    std::vector<std::string> keys;            // swept keys, in spec order ("seed" last)
    std::vector<point> points;
};

// Reads SPEC and expands its grid; every point's configuration is loaded and validated.
// Throws config_error with one "SPEC: /json/pointer: message" line per problem.
plan expand(const std::string& spec_path);

nlohmann::ordered_json manifest(const plan& p);

// `fecsim sweep ...` and `fecsim collect ...`; `args` excludes the command word.
int sweep_main(const std::vector<std::string>& args, const std::string& self);
int collect_main(const std::vector<std::string>& args);

}  // namespace fecsim::sweep
