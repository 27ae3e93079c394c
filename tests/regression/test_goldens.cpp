// Regression goldens for CI: each published study (scripts/published.tsv) run for a short
// window, its headline rates and per-packet CPU time compared with tests/regression/goldens.json.
// The goldens are the model's own earlier output, not the published measurements: they catch a
// model or driver change that moves a figure. To accept a deliberate move:
//   scripts/update-goldens.sh    (FECSIM_UPDATE_GOLDENS=1 rewrites the file), then commit it.
#include "platform/config.h"
#include "platform/simulation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace fecsim {
namespace {

using nlohmann::json;

struct study {
    const char* name;
    const char* experiment;
    std::vector<std::string> sets;
};

const std::vector<study> studies = {
    {"E1-v4", "imx8mp-xdp-tx.json", {"driver.xdp_tx_variant=v4"}},
    {"E1-sync_len", "imx8mp-xdp-tx.json", {"driver.xdp_tx_variant=sync_len"}},
    {"E1-merged", "imx8mp-xdp-tx.json", {"driver.xdp_tx_variant=merged"}},
    {"E2-sync_len", "imx8mp-xdp-tx-gen-rx.json", {"driver.xdp_tx_variant=sync_len"}},
    {"E3b-v4", "imx8mp-xdp-tx-flow-control.json", {"driver.xdp_tx_variant=v4", "link.topology=direct"}},
    {"E4", "imx8mp-xdp-redirect.json", {}},
    {"E5", "imx8mp-xdp2-generic.json", {}},
    {"E9-tx-per_frame", "imx93-xdp-bench.json", {"driver.tx_doorbell=per_frame"}},
    {"E9-tx-per_poll", "imx93-xdp-bench.json", {"driver.tx_doorbell=per_poll"}},
    {"E9-pass", "imx93-xdp-bench.json", {"driver.xdp_prog=pass"}},
    {"E9-redirect", "imx93-xdp-bench.json", {"driver.xdp_prog=redirect"}},
};

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
    return headline(run_simulation(config::load(std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/" + s.experiment, sets), quiet));
}

TEST(goldens, published_studies_keep_their_figures) {
    if (std::getenv("FECSIM_UPDATE_GOLDENS")) {
        json all = json::object();
        for (const study& s : studies) all[s.name] = run_study(s);
        std::ofstream(FECSIM_GOLDENS_FILE) << all.dump(2) << '\n';
        GTEST_SKIP() << "goldens rewritten: " << FECSIM_GOLDENS_FILE;
    }
    std::ifstream in(FECSIM_GOLDENS_FILE);
    ASSERT_TRUE(in) << FECSIM_GOLDENS_FILE << " is missing: run scripts/update-goldens.sh";
    const json goldens = json::parse(in);
    for (const study& s : studies) {
        SCOPED_TRACE(s.name);
        ASSERT_TRUE(goldens.contains(s.name)) << "no golden for " << s.name << ": run scripts/update-goldens.sh";
        const json got = run_study(s), want = goldens[s.name];
        for (auto& [key, w] : want.items()) {
            // The runs are deterministic; 0.1% leaves room for floating-point reassociation only.
            EXPECT_NEAR(got[key].get<double>(), w.get<double>(), std::abs(w.get<double>()) * 1e-3) << key;
        }
    }
}

}  // namespace
}  // namespace fecsim
