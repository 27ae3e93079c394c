// SoC assembly: builds the models a platform profile describes and wires them together.
#pragma once

#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "platform/config.h"

#include <nlohmann/json.hpp>

#include <memory>

namespace fecsim {

class soc {
public:
    // Elaborates the models of `cfg` in the current SystemC context. Assembly problems that
    // the schema cannot see (overlapping regions, ...) are reported as config_error.
    explicit soc(const config& cfg);

    // Zeroes every statistic, so reports cover only the time after this call.
    void reset_stats();
    // Model statistics for a measurement window of `window_s` simulated seconds.
    nlohmann::json report(double window_s) const;

    mem::ddr& ddr() { return *ddr_; }
    mem::router& bus() { return *bus_; }

private:
    std::unique_ptr<mem::ddr> ddr_;
    std::unique_ptr<mem::router> bus_;
    mem::ddr_stats ddr_base_;
};

}  // namespace fecsim
