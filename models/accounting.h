// The books of one model boundary over the measurement window (the result's `accounting`):
// every frame that entered it has left, was dropped for a named cause, or is still inside.
// Frames inside at the start of the window count as entering, so the books balance exactly.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fecsim {

struct ledger {
    uint64_t in_flight_start = 0;  // inside when the window began
    uint64_t in = 0, out = 0;
    std::vector<std::pair<std::string, uint64_t>> dropped;  // by cause
    uint64_t in_flight_end = 0;    // inside now

    uint64_t dropped_total() const {
        uint64_t n = 0;
        for (const auto& d : dropped) n += d.second;
        return n;
    }
    bool balanced() const { return in_flight_start + in == out + dropped_total() + in_flight_end; }

    nlohmann::json to_json() const {
        nlohmann::json j = {{"in_flight_start", in_flight_start}, {"in", in}, {"out", out},
                            {"dropped", nlohmann::json::object()}, {"in_flight_end", in_flight_end},
                            {"balanced", balanced()}};
        for (const auto& [cause, n] : dropped) j["dropped"][cause] = n;
        return j;
    }
};

}  // namespace fecsim
