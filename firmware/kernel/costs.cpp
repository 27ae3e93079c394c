#include "firmware/kernel/costs.h"

#include "config/config.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <set>

namespace fecsim::firmware {

namespace {
constexpr const char* path_names[] = {
#define FECSIM_COST_NAME(n) #n,
    FECSIM_COST_PATHS(FECSIM_COST_NAME)
#undef FECSIM_COST_NAME
};
static_assert(sizeof(path_names) / sizeof(path_names[0]) == path_count);
}  // namespace

const char* to_string(path p) { return path_names[static_cast<size_t>(p)]; }

namespace {
// The measured tables (scripts/kernel-costs.py) say where each count came from: "method", the
// kernel "functions" it was counted in, and the "estimate_was" it replaced. Checked, not used.
void check_provenance(const nlohmann::json& v, const std::string& ptr,
                      const std::function<void(const std::string&, const std::string&)>& error) {
    if (v.contains("method") && (!v["method"].is_string() || v["method"].get<std::string>().empty()))
        error(ptr + "/method", "expected a non-empty string");
    if (v.contains("estimate_was") && (!v["estimate_was"].is_number_integer() || v["estimate_was"].get<int64_t>() < 0))
        error(ptr + "/estimate_was", "expected a non-negative integer");
    if (!v.contains("functions")) return;
    if (!v["functions"].is_array() || v["functions"].empty()) {
        error(ptr + "/functions", "expected a non-empty array");
        return;
    }
    for (size_t i = 0; i < v["functions"].size(); ++i) {
        const auto& f = v["functions"][i];
        const std::string fp = ptr + "/functions/" + std::to_string(i);
        if (!f.is_object()) {
            error(fp, "expected {\"name\", \"object\", \"start\", \"end\", \"count\"}");
            continue;
        }
        for (auto& [k, fv] : f.items()) {
            if (k == "count") {
                if (!fv.is_number_integer() || fv.get<int64_t>() < 0) error(fp + "/count", "expected a non-negative integer");
            } else if (k == "name" || k == "object" || k == "start" || k == "end") {
                if (!fv.is_string() || fv.get<std::string>().empty()) error(fp + "/" + k, "expected a non-empty string");
            } else {
                error(fp + "/" + k, "unknown key");
            }
        }
        for (const char* k : {"name", "object", "start", "end", "count"})
            if (!f.contains(k)) error(fp + "/" + k, "missing");
    }
}
}  // namespace

cost_table cost_table::uniform(uint64_t instructions) {
    cost_table t;
    t.instr_.fill(instructions);
    t.source_ = "<uniform>";
    return t;
}

cost_table cost_table::load(const std::string& file) {
    const nlohmann::json j = parse_json_file(read_input_file(file), file);
    if (!j.is_object() || !j.contains("paths") || !j["paths"].is_object())
        throw config_error(file + ": /paths: missing required object of code paths");
    std::string errors;
    auto error = [&](const std::string& ptr, const std::string& msg) {
        errors += (errors.empty() ? "" : "\n") + file + ": " + ptr + ": " + msg;
    };
    for (auto& [k, v] : j.items())
        if (k != "paths" && k.rfind("//", 0) != 0) error("/" + k, "unknown key (expected \"paths\")");
    cost_table t;
    t.source_ = file;
    std::set<std::string> seen;
    for (auto& [k, v] : j["paths"].items()) {
        if (k.rfind("//", 0) == 0) continue;
        const std::string ptr = "/paths/" + k;
        size_t idx = path_count;
        for (size_t i = 0; i < path_count; ++i)
            if (k == path_names[i]) idx = i;
        if (idx == path_count) {
            error(ptr, "unknown code path");
            continue;
        }
        seen.insert(k);
        if (!v.is_object() || !v.contains("instructions") || !v.contains("why")) {
            error(ptr, "expected {\"instructions\": N, \"why\": \"...\"}");
            continue;
        }
        for (auto& [f, fv] : v.items())
            if (f != "instructions" && f != "why" && f != "method" && f != "functions" && f != "estimate_was")
                error(ptr + "/" + f, "unknown key");
        check_provenance(v, ptr, error);
        const auto& n = v["instructions"];
        if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 1000000)
            error(ptr + "/instructions", "expected an integer in [0, 1000000], got " + n.dump());
        else
            t.instr_[idx] = n.get<uint64_t>();
        if (!v["why"].is_string() || v["why"].get<std::string>().empty())
            error(ptr + "/why", "expected a one-line justification");
    }
    for (size_t i = 0; i < path_count; ++i)
        if (!seen.count(path_names[i])) error(std::string("/paths/") + path_names[i], "missing code path");
    if (!errors.empty()) throw config_error(errors);
    return t;
}

}  // namespace fecsim::firmware
