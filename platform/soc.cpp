#include "platform/soc.h"

namespace fecsim {

namespace {

mem::ddr_params ddr_params_from(const config_view& c) {
    mem::ddr_params p;
    p.size_bytes = c.integer("size_bytes");
    p.read_latency_ns = c.number("read_latency_ns");
    p.write_latency_ns = c.number("write_latency_ns");
    p.bandwidth_mb_per_s = c.number("bandwidth_mb_per_s");
    p.burst_bytes = c.integer("burst_bytes");
    return p;
}

}  // namespace

soc::soc(const config& cfg) {
    const config_view m = cfg.view("mem");
    ddr_ = std::make_unique<mem::ddr>("ddr", ddr_params_from(m.section("ddr")));
    bus_ = std::make_unique<mem::router>("bus");
    bus_->connect("ddr", ddr_->socket);

    const auto& regions = m.at("regions");
    for (size_t i = 0; i < regions.size(); ++i) {
        const auto& r = regions[i];
        const std::string where = "/mem/regions/" + std::to_string(i);
        mem::region reg;
        reg.name = r.at("name");
        reg.base = parse_address(r.at("base"));
        reg.size = parse_address(r.at("size_bytes"));
        reg.attr = mem::mem_attr_from_string(r.at("attribute"));
        reg.target = r.at("target");
        reg.offset = parse_address(r.at("offset_bytes"));
        reg.latency_ns = r.at("latency_ns");
        if (reg.target == "ddr" && (reg.offset >= ddr_->params().size_bytes ||
                                    reg.size > ddr_->params().size_bytes - reg.offset))
            throw cfg.error_at(where, "region '" + reg.name + "' extends past the end of DDR (" +
                                          std::to_string(ddr_->params().size_bytes) + " bytes)");
        try {
            bus_->add_region(reg);
        } catch (const std::invalid_argument& e) {
            throw cfg.error_at(where, e.what());
        }
    }
}

void soc::reset_stats() { ddr_base_ = ddr_->stats(); }

nlohmann::json soc::report(double window_s) const {
    const mem::ddr_stats& s = ddr_->stats();
    nlohmann::json j;
    j["mem"]["ddr"] = {
        {"reads", s.reads - ddr_base_.reads},
        {"writes", s.writes - ddr_base_.writes},
        {"bytes_read", s.bytes_read - ddr_base_.bytes_read},
        {"bytes_written", s.bytes_written - ddr_base_.bytes_written},
        {"busy_fraction", window_s > 0 ? (s.busy - ddr_base_.busy).to_seconds() / window_s : 0.0},
        {"mean_queueing_ns",
         (s.reads + s.writes) > (ddr_base_.reads + ddr_base_.writes)
             ? (s.queueing - ddr_base_.queueing).to_seconds() * 1e9 /
                   double(s.reads + s.writes - ddr_base_.reads - ddr_base_.writes)
             : 0.0},
    };
    j["mem"]["bus"]["address_errors"] = bus_->address_errors();
    return j;
}

}  // namespace fecsim
