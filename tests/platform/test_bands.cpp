// scripts/bands.tsv, the uncertain parameters whose plausible ranges give every prediction its
// band (`make table`): each key is a parameter of its platform's profile, the profile's value lies
// inside the range (else the two corners would not bracket the figure the row publishes), and
// each corner is a configuration fecsim accepts for every experiment of that platform.
#include "config/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using fecsim::config;

const fs::path source_dir = fs::path(FECSIM_SOURCE_CONFIG_DIR).parent_path();

// The tab-separated rows of a scripts/*.tsv table, comments and blank lines skipped.
std::vector<std::vector<std::string>> tsv(const std::string& name) {
    std::ifstream in(source_dir / "scripts" / name);
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> cells;
        std::istringstream fields(line);
        for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
        rows.push_back(cells);
    }
    return rows;
}

struct range {
    std::string key;
    double low, high;
};

std::map<std::string, std::vector<range>> bands() {
    std::map<std::string, std::vector<range>> out;
    for (const auto& row : tsv("bands.tsv")) {
        EXPECT_EQ(row.size(), 4u) << "bands.tsv row of " << row.size() << " columns";
        if (row.size() == 4) out[row[0]].push_back({row[1], std::stod(row[2]), std::stod(row[3])});
    }
    return out;
}

// The value at a --set key ("mem.regions.0.latency_ns": numbers index arrays).
const nlohmann::json* at(const nlohmann::json& tree, const std::string& key) {
    const nlohmann::json* node = &tree;
    std::istringstream parts(key);
    for (std::string part; std::getline(parts, part, '.');) {
        if (node->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
            const size_t i = std::stoul(part);
            if (i >= node->size()) return nullptr;
            node = &(*node)[i];
        } else if (node->is_object() && node->contains(part)) {
            node = &(*node)[part];
        } else {
            return nullptr;
        }
    }
    return node;
}

// The regions bands.tsv names by index, and what each must be in every profile: region 0 the
// FEC's register window (MMIO reads, register write acknowledgements), region 2 the
// non-cacheable descriptor pool (its write acknowledgements). A reordered profile would give
// those ranges to another region.
const std::map<std::string, std::string> banded_regions = {{"0", "device"}, {"2", "normal_noncacheable"}};

std::string platform_of(const std::string& experiment) {
    std::ifstream in(source_dir / experiment);
    return nlohmann::json::parse(in).at("platform").get<std::string>();
}

TEST(bands, every_range_holds_its_profiles_value) {
    const auto all = bands();
    ASSERT_FALSE(all.empty());
    for (const auto& [platform, ranges] : all) {
        const config cfg = config::for_platform(platform, nlohmann::json::object(), "bands.tsv");
        std::set<std::string> keys;
        for (const range& r : ranges) {
            EXPECT_TRUE(keys.insert(r.key).second) << platform << ": " << r.key << " twice";
            EXPECT_LT(r.low, r.high) << platform << ": " << r.key;
            const nlohmann::json* value = at(cfg.tree(), r.key);
            ASSERT_TRUE(value && value->is_number()) << platform << ": " << r.key << " is not a number of the profile";
            EXPECT_GE(value->get<double>(), r.low) << platform << ": " << r.key;
            EXPECT_LE(value->get<double>(), r.high) << platform << ": " << r.key;
            const std::string regions = "mem.regions.";
            if (r.key.rfind(regions, 0) == 0) {
                const std::string index = r.key.substr(regions.size(), r.key.find('.', regions.size()) - regions.size());
                ASSERT_TRUE(banded_regions.count(index)) << platform << ": " << r.key << ": a region this test does not know";
                const nlohmann::json* attribute = at(cfg.tree(), regions + index + ".attribute");
                ASSERT_TRUE(attribute) << platform << ": region " << index;
                EXPECT_EQ(attribute->get<std::string>(), banded_regions.at(index)) << platform << ": " << r.key;
            }
        }
        EXPECT_TRUE(keys.count("cpu.cpi")) << platform << ": the level parameter has no range";
    }
}

TEST(bands, every_prediction_has_a_band_and_both_corners_load) {
    const auto all = bands();
    std::set<std::string> checked;  // experiment files: one load per corner is enough
    for (const auto& row : tsv("published.tsv")) {
        ASSERT_EQ(row.size(), 6u);
        const std::string& experiment = row[1];
        if (row[5] != "predict" || !checked.insert(experiment).second) continue;
        const std::string platform = platform_of(experiment);
        ASSERT_TRUE(all.count(platform)) << experiment << ": platform " << platform << " has no band";
        for (bool high : {false, true}) {
            std::vector<std::string> corner;
            for (const range& r : all.at(platform)) {
                std::ostringstream set;
                set << r.key << '=' << (high ? r.high : r.low);
                corner.push_back(set.str());
            }
            const config cfg = config::load((source_dir / experiment).string(), corner);
            for (const range& r : all.at(platform))
                EXPECT_DOUBLE_EQ(at(cfg.tree(), r.key)->get<double>(), high ? r.high : r.low) << experiment << ": " << r.key;
        }
    }
    EXPECT_FALSE(checked.empty());
}

}  // namespace
