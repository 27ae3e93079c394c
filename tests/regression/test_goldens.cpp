// Regression goldens for CI: every published study (scripts/published.tsv) run for a short
// window, its headline rates and per-packet CPU time compared with tests/regression/goldens.json.
// The goldens are the model's own earlier output, not the published measurements: they catch a
// model or driver change that moves a figure. To accept a deliberate move:
//   scripts/update-goldens.sh    (FECSIM_UPDATE_GOLDENS=1 rewrites the file), then commit it.
#include "config/config.h"
#include "platform/simulation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace fecsim {
namespace {

using nlohmann::json;

struct study {
    std::string name, experiment;
    std::vector<std::string> sets;
};

// One study per distinct (experiment, overrides) of scripts/published.tsv, named after its
// first row.
std::vector<study> published_studies() {
    std::ifstream in(FECSIM_PUBLISHED_TSV);
    EXPECT_TRUE(in) << FECSIM_PUBLISHED_TSV;
    std::vector<study> out;
    std::set<std::string> seen;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> col;
        std::istringstream fields(line);
        for (std::string f; std::getline(fields, f, '\t');) col.push_back(f);
        if (col.size() < 3 || !seen.insert(col[1] + "\t" + col[2]).second) continue;
        study s{col[0], col[1], {}};
        std::istringstream sets(col[2]);
        for (std::string set; sets >> set;)
            if (set != "-") s.sets.push_back(set);
        out.push_back(s);
    }
    return out;
}

// The figures a golden pins.
json headline(const json& r) {
    double ns = 0;
    for (auto& [category, v] : r["cpu"]["core0"]["ns_per_packet"].items())
        if (category != "idle") ns += v.get<double>();
    return {{"xdp_prog_pps", r["rates"]["xdp_prog_pps"]},
            {"dut_tx_pps", r["rates"]["dut_tx_pps"]},
            {"generator_tx_pps", r["rates"]["generator_tx_pps"]},
            {"busy_ns_per_packet", ns},
            {"violations", r["coherency"]["violations"]}};
}

json run_study(const study& s) {
    std::vector<std::string> sets = s.sets;
    sets.push_back("warmup_s=0.02");
    sets.push_back("duration_s=0.02");
    run_options quiet;
    quiet.quiet = true;
    const json r = run_simulation(config::load(std::string(FECSIM_SOURCE_DIR) + "/" + s.experiment, sets), quiet);
    for (const std::string& line : unbalanced_books(r)) ADD_FAILURE() << s.name << ": " << line;
    return headline(r);
}

TEST(goldens, published_studies_keep_their_figures) {
    if (std::getenv("FECSIM_UPDATE_GOLDENS")) {
        json all = json::object();
        for (const study& s : published_studies()) all[s.name] = run_study(s);
        std::ofstream(FECSIM_GOLDENS_FILE) << all.dump(2) << '\n';
        GTEST_SKIP() << "goldens rewritten: " << FECSIM_GOLDENS_FILE;
    }
    std::ifstream in(FECSIM_GOLDENS_FILE);
    ASSERT_TRUE(in) << FECSIM_GOLDENS_FILE << " is missing: run scripts/update-goldens.sh";
    const json goldens = json::parse(in);
    const std::vector<study> studies = published_studies();
    EXPECT_GE(studies.size(), 10u);
    for (const study& s : studies) {
        SCOPED_TRACE(s.name);
        ASSERT_TRUE(goldens.contains(s.name)) << "no golden for " << s.name << ": run scripts/update-goldens.sh";
        const json got = run_study(s), want = goldens[s.name];
        for (auto& [key, w] : want.items()) {
            // The runs are deterministic: any move beyond floating-point rounding is a change.
            EXPECT_NEAR(got[key].get<double>(), w.get<double>(), std::abs(w.get<double>()) * 1e-9) << key;
        }
    }
}

}  // namespace
}  // namespace fecsim
