#include "platform/board.h"

#include "firmware/fec/fec.h"
#include "firmware/kernel/dma.h"
#include "firmware/kernel/kernel.h"
#include "traffic/pktgen_commands.h"

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

board::board(const config& cfg, const std::string& prefix, const board_software& sw) : prefix_(prefix) {
    build_memory(cfg);
    build_host(cfg);
    build_device(cfg);
    build_address_map(cfg);
    build_firmware(cfg, sw);
}

board::~board() = default;

void board::build_memory(const config& cfg) {
    const config_view m = cfg.view("mem");
    ddr_ = std::make_unique<mem::ddr>(name("ddr").c_str(), ddr_params_from(m.section("ddr")));
    bus_ = std::make_unique<mem::router>(name("bus").c_str());
    bus_->connect("ddr", ddr_->socket);
}

void board::build_host(const config& cfg) {
    try {
        checker_ = std::make_unique<cpu::coherency_checker>(cpu::coherency_params_from(cfg.view("coherency")));
        cpu::core_params cp = cpu::core_params_from(cfg.view("cpu"));
        cp.seed = cfg.seed();
        // The generic timer's interrupt is a per-core PPI, an input beyond the cpu.irq.lines
        // the SoC's peripherals use.
        cp.irq_lines += 1;
        core_ = std::make_unique<cpu::core>(name("core0").c_str(), 0, cp, *bus_);
        timer_ = std::make_unique<cpu::arch_timer>(name("timer0").c_str(), int(cp.irq_lines - 1), activity_);
        timer_irq_ = std::make_unique<sc_core::sc_signal<bool>>(name("timer0_irq").c_str());
        timer_->irq.bind(*timer_irq_);
        core_->irq[cp.irq_lines - 1].bind(*timer_irq_);
    } catch (const param_error& e) {
        throw cfg.error_at(e);
    } catch (const std::invalid_argument& e) {
        throw cfg.error_at("/cpu", e.what());
    }
    checker_->attach(*core_);
}

void board::build_device(const config& cfg) {
    const config_view f = cfg.view("soc.fec");
    fec::enet_params p;
    try {
        p = fec::enet_params_from(cfg.view("fec"));
    } catch (const std::invalid_argument& e) {
        throw cfg.error_at("/fec", e.what());
    }
    p.num_queues = f.integer("queues");
    p.irq_lines = f.integer("irq_lines");
    fec_ = std::make_unique<fec::enet>(name("fec0").c_str(), p, activity_);
    bus_->connect("fec0", fec_->regs);

    // The FEC's DMA reaches memory through the coherency tap, which shows the checker every
    // device read and write.
    dma_tap_ = std::make_unique<cpu::coherency_tap>(name("fec0_dma_tap").c_str(), *checker_, *bus_);
    fec_->dma.bind(dma_tap_->in);

    const int first = f.integer("first_irq");
    for (unsigned i = 0; i < fec::max_irq_lines; ++i) {
        irq_wires_.push_back(std::make_unique<sc_core::sc_signal<bool>>((name("fec0_irq") + std::to_string(i)).c_str()));
        fec_->irq[i].bind(*irq_wires_.back());
        if (i < p.irq_lines) {
            const size_t lines = core_->irq.size() - 1;  // the last is the timer's
            if (first + i >= lines)
                throw cfg.error_at("/soc/fec/first_irq", "FEC line " + std::to_string(i) + " needs core interrupt input " +
                                                             std::to_string(first + i) + " but the core has " +
                                                             std::to_string(lines) + " (cpu.irq.lines)");
            core_->irq[first + i].bind(*irq_wires_.back());
        }
    }
}

// The address map, once every target is connected: mem.regions in configuration order (so
// regions_[i] is /mem/regions/i), each checked against the target it decodes to.
void board::build_address_map(const config& cfg) {
    const auto& regions = cfg.view("mem").at("regions");
    const uint64_t ddr_size = ddr_->params().size_bytes;
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
        reg.write_ack_ns = r.at("write_ack_ns");
        if (reg.target == "ddr" && (reg.offset >= ddr_size || reg.size > ddr_size - reg.offset))
            throw cfg.error_at(where, "region '" + reg.name + "' extends past the end of DDR (" +
                                          std::to_string(ddr_size) + " bytes)");
        // Two ranges on the same DDR bytes would be two names for one memory (an offset_bytes left out)
        for (const mem::region& o : regions_)
            if (reg.target == "ddr" && o.target == "ddr" && reg.offset < o.offset + o.size && o.offset < reg.offset + reg.size)
                throw cfg.error_at(where + "/offset_bytes", "region '" + reg.name + "' maps DDR bytes region '" + o.name +
                                                                "' maps already (give it its own offset_bytes)");
        if (reg.target == "fec0" && reg.size < fec::enet_window_bytes)
            throw cfg.error_at(where + "/size_bytes", "the FEC's registers need " +
                                                          std::to_string(fec::enet_window_bytes) +
                                                          " bytes, the region has " + std::to_string(reg.size));
        try {
            bus_->add_region(reg);
        } catch (const std::invalid_argument& e) {
            throw cfg.error_at(where, e.what());
        }
        regions_.push_back(reg);
    }
    place_page_tables(cfg);
}

// The TLB's walks read the kernel's page tables from the region named page_tables: cacheable
// DDR that the kernel reserves at boot (memblock), outside the page allocator's range.
void board::place_page_tables(const config& cfg) {
    if (core_->params().tlb.entries == 0) return;
    size_t i = 0;
    while (i < regions_.size() && regions_[i].name != page_tables_region) ++i;
    if (i == regions_.size())
        throw cfg.error_at("/mem/regions", std::string("no region named '") + page_tables_region +
                                               "' for the TLB's page-table walks (cpu.tlb.entries is not 0)");
    const mem::region& r = regions_[i];
    const std::string where = "/mem/regions/" + std::to_string(i);
    if (r.target != "ddr" || r.attr != mem::mem_attr::normal_cacheable)
        throw cfg.error_at(where, "the page tables must be normal_cacheable DDR (walks read them through the caches)");
    const uint64_t need = core_->place_page_tables(r.base);
    if (need > r.size)
        throw cfg.error_at(where + "/size_bytes", "the page tables of the other regions need " + std::to_string(need) +
                                                      " bytes, the region has " + std::to_string(r.size));
}

void board::build_firmware(const config& cfg, const board_software& sw) {
    firmware::system_params p;
    // The kernel's linear map is every cacheable DDR range but the page tables (the first is the
    // one to enlarge when memory runs out), a zone each; dma_alloc_coherent uses the first
    // non-cacheable one; the driver's registers are the fec0 window.
    firmware::fec_instance eth0;
    const bool armv7 = cfg.view("cpu").boolean("outer_cache.enabled");
    for (size_t i = 0; i < regions_.size(); ++i) {
        const mem::region& r = regions_[i];
        const std::string where = "/mem/regions/" + std::to_string(i), size_pointer = where + "/size_bytes";
        const std::string size_key = "mem.regions." + std::to_string(i) + ".size_bytes";
        const bool kernel_memory =
            r.target == "ddr" && r.attr == mem::mem_attr::normal_cacheable && r.name != page_tables_region;
        if (kernel_memory && armv7 && r.base + r.size > firmware::kernel::DMA_ZONE_LIMIT)
            throw cfg.error_at(where, "region '" + r.name + "' ends above 4 GiB, which an ARMv7 kernel without LPAE cannot map");
        if (kernel_memory) {
            if (p.mem.dram.empty()) dram_region_ = size_pointer;
            p.mem.dram.push_back({r.base, r.size, size_key});
        }
        if (r.target == "ddr" && r.attr == mem::mem_attr::normal_noncacheable && !p.mem.coherent_size) {
            // The rings live there and their registers take 32-bit addresses: dma_alloc_coherent
            // allocates within the FEC's coherent DMA mask, so the pool cannot lie above it.
            if (r.base + r.size > firmware::dma_device::DMA_MASK + 1)
                throw cfg.error_at(where, "region '" + r.name +
                                              "' (dma_alloc_coherent's memory) ends above 4 GiB, beyond the FEC's "
                                              "32-bit DMA mask");
            p.mem.coherent_base = r.base, p.mem.coherent_size = r.size, coherent_region_ = size_pointer;
        }
        if (r.target == "fec0") eth0.hw.regs = r.base;
    }
    if (p.mem.dram.empty()) throw cfg.error_at("/mem/regions", "no normal_cacheable DDR range for the kernel's memory");
    if (!p.mem.coherent_size)
        throw cfg.error_at("/mem/regions", "no normal_noncacheable DDR range for dma_alloc_coherent");
    if (!eth0.hw.regs) throw cfg.error_at("/mem/regions", "no range maps the FEC registers (target fec0)");
    p.arch = armv7 ? firmware::arch_flavour::armv7_pl310 : firmware::arch_flavour::arm64;
    p.mem.possible_cpus = unsigned(cfg.view("cpu").integer("cores"));

    const config_view f = cfg.view("soc.fec");
    if (!firmware::fec::fec_quirks_for(f.string("compatible").c_str(), &eth0.hw.quirks))
        throw cfg.error_at("/soc/fec/compatible", "the driver has no entry for " + f.string("compatible"));
    eth0.hw.num_rx_queues = eth0.hw.num_tx_queues = f.integer("queues");
    const auto mac = traffic::parse_mac(f.string("mac_address"));
    if (!mac) throw cfg.error_at("/soc/fec/mac_address", "expected aa:bb:cc:dd:ee:ff, got " + f.string("mac_address"));
    // The kernel's is_valid_ether_addr(): a station address is neither multicast nor zero.
    if (((*mac)[0] & 1) || *mac == traffic::mac_addr{})
        throw cfg.error_at("/soc/fec/mac_address", f.string("mac_address") + " is a " +
                                                       ((*mac)[0] & 1 ? "multicast or broadcast" : "zero") +
                                                       " address, not a station address");
    std::copy(mac->begin(), mac->end(), eth0.hw.mac);
    eth0.hw.speed_mbps = cfg.view("link").integer("speed_mbps");
    eth0.hw.pause = cfg.view("link").boolean("flow_control");
    eth0.hw.dma_coherent = cfg.view("coherency").boolean("dma_coherent");
    for (int i = 0; i < f.integer("irq_lines"); ++i) eth0.irqs.push_back(f.integer("first_irq") + i);
    firmware::apply_fec_config(eth0.hw, cfg.view("fec"));
    p.fecs.push_back(eth0);
    p.apply_driver_config(cfg.view("driver"));
    p.pktgen = sw.pktgen;
    p.stack.local_ipv4 = sw.local_ipv4;

    cpu::core_api* host = core_.get();
    if (sw.trace) host = (traced_core_ = std::make_unique<tracing_core>(*core_, *sw.trace)).get();
    cfg_ = &cfg;
    try {
        system_ = std::make_unique<firmware::linux_system>(*host, p, timer_.get());
    } catch (const firmware::memory_exhausted& e) {
        throw memory_error(e);
    } catch (const param_error& e) {
        throw cfg.error_at(e);
    } catch (const std::invalid_argument& e) {
        throw cfg.error_at("/driver", e.what());
    }
    // A failure inside the firmware stops the simulation and is rethrown by check(), with its
    // own type (SystemC would wrap it into an sc_report).
    core_->set_firmware([this](cpu::core_api&) {
        try {
            system_->run();
        } catch (const sc_core::sc_unwind_exception&) {
            throw;  // SystemC killing or resetting the thread: not ours to keep
        } catch (...) {
            firmware_failure_ = std::current_exception();
            sc_core::sc_stop();
        }
    });
}

nlohmann::json board::ring_occupancy() const {
    nlohmann::json j = {{"rx", nlohmann::json::array()}, {"tx", nlohmann::json::array()}};
    if (!system_->booted()) return j;  // no rings before the driver's open
    auto& eth0 = system_->fec(0);
    // Descriptors from `from` up to (not including) `to`, on a ring.
    auto span = [](const firmware::bufdesc_prop& bd, uint64_t from, uint64_t to) {
        const int64_t n = (int64_t(to) - int64_t(from)) >> bd.dsize_log2;
        return n < 0 ? n + bd.ring_size : n;
    };
    for (unsigned q = 0; q < fec_->params().num_queues; ++q) {
        const auto& bd = eth0.rx_queue(q).bd;
        const uint64_t device = fec_->rx_next_descriptor(q);
        j["rx"].push_back(device == bd.cur && fec_->rx_starved(q) ? int64_t(bd.ring_size) : span(bd, bd.cur, device));
        j["rx_size"] = bd.ring_size;
    }
    for (unsigned q = 0; q < fec_->params().num_queues; ++q) {
        const auto& txq = eth0.tx_queue(q);
        // dirty_tx is the last descriptor cleaned, cur the next the driver fills.
        j["tx"].push_back(txq.bd.base ? span(txq.bd, txq.dirty_tx, txq.bd.cur) - 1 : 0);
        j["tx_size"] = txq.bd.ring_size;
    }
    return j;
}

void board::check() const {
    checker_->rethrow_if_stopped();
    if (!firmware_failure_) return;
    try {
        std::rethrow_exception(firmware_failure_);
    } catch (const firmware::memory_exhausted& e) {
        throw memory_error(e);
    } catch (const param_error& e) {
        if (system_->booted()) throw;
        throw cfg_->error_at(e);
    } catch (const std::invalid_argument& e) {
        // The driver's probe refusing what the configuration asks of it (several queues on a FEC
        // without FEC_QUIRK_HAS_MULTI_QUEUES) is bad input, as when the firmware is built: blamed
        // on the section a --set or the experiment changed.
        if (system_->booted()) throw;
        throw cfg_->error_at(param_error(std::vector<std::string>{"soc.fec", "fec", "driver"}, e.what()));
    }
}

config_error board::memory_error(const firmware::memory_exhausted& e) const {
    const bool dram = e.where == firmware::memory_exhausted::pool::dram;
    return cfg_->error_at(dram ? dram_region_ : coherent_region_,
                          std::string(e.what()) + " (the region is too small for the driver's rings and buffers)");
}

void board::reset_stats() {
    ddr_base_ = ddr_->stats();
    checker_->reset_stats();
    core_->reset_stats();
    fec_->reset_stats();
    system_->reset_stats();
}

void board::report(nlohmann::json& j, double window_s) const {
    const mem::ddr_stats& s = ddr_->stats();
    const uint64_t requests = s.reads + s.writes - ddr_base_.reads - ddr_base_.writes;
    j["mem"]["ddr"] = {
        {"reads", s.reads - ddr_base_.reads},
        {"writes", s.writes - ddr_base_.writes},
        {"bytes_read", s.bytes_read - ddr_base_.bytes_read},
        {"bytes_written", s.bytes_written - ddr_base_.bytes_written},
        {"busy_fraction", (s.busy - ddr_base_.busy).to_seconds() / window_s},
        {"mean_queueing_ns", requests ? (s.queueing - ddr_base_.queueing).to_seconds() * 1e9 / double(requests) : 0.0},
    };
    j["mem"]["bus"]["address_errors"] = bus_->address_errors();

    core_->report(j);
    checker_->report(j);
    fec_->report(j["dut"]);
    system_->report(j);
    const uint64_t packets = system_->packets();
    j["dut"]["packets"] = packets;
    for (auto& [category, ns] : j["cpu"]["core0"]["time_ns"].items())
        j["cpu"]["core0"]["ns_per_packet"][category] = packets ? ns.get<double>() / packets : 0.0;
}

}  // namespace fecsim
