#include "firmware/system.h"

#include <filesystem>
#include <stdexcept>

namespace fecsim::firmware {

namespace {
template <typename E>
E pick(const config_view& v, const char* key, std::initializer_list<std::pair<const char*, E>> values) {
    const std::string& s = v.string(key);
    for (auto& [n, e] : values)
        if (s == n) return e;
    throw config_error("driver: /" + v.prefix() + "/" + key + ": unexpected value \"" + s + "\"");
}
}  // namespace

void system_params::apply_driver_config(const config_view& d, const std::string& config_dir) {
    driver.xdp_mode = pick<xdp_attach_mode>(d, "xdp_mode", {{"native", xdp_attach_mode::native},
                                                            {"generic", xdp_attach_mode::generic}});
    driver.tx_variant = pick<xdp_tx_variant>(d, "xdp_tx_variant", {{"v4", xdp_tx_variant::v4},
                                                                   {"sync_len", xdp_tx_variant::sync_len},
                                                                   {"merged", xdp_tx_variant::merged}});
    driver.rx_buffers = pick<rx_buffer_mode>(d, "rx_buffers", {{"page_pool", rx_buffer_mode::page_pool},
                                                               {"page_pool_no_recycle", rx_buffer_mode::page_pool_no_recycle},
                                                               {"legacy", rx_buffer_mode::legacy}});
    driver.tx_doorbell = pick<tx_doorbell_mode>(d, "tx_doorbell", {{"per_frame", tx_doorbell_mode::per_frame},
                                                                   {"per_poll", tx_doorbell_mode::per_poll}});
    driver.napi_budget = int(d.integer("napi_budget"));
    driver.rx_ring_size = int(d.integer("rx_ring_size"));
    driver.tx_ring_size = int(d.integer("tx_ring_size"));
    driver.rx_copybreak = uint32_t(d.integer("rx_copybreak"));
    driver.err007885_xdp_tdar_check = d.boolean("err007885_xdp_tdar_check");
    driver.skip_rx_sync = d.boolean("fault.skip_rx_sync");
    driver.tx_sync_bytes = int(d.integer("fault.tx_sync_bytes"));
    xdp_prog = d.string("xdp_prog");
    xdp_redirect_ifindex = int(d.integer("xdp_redirect_ifindex"));
    stack.sink = pick<stack_sink>(d, "stack.sink", {{"udp_no_socket", stack_sink::udp_no_socket},
                                                    {"udp_socket", stack_sink::udp_socket}});
    stack.socket_queue_limit = uint32_t(d.integer("stack.socket_queue_limit"));
    stack.tcp.port = uint16_t(d.integer("stack.tcp.port"));
    stack.tcp.rmem_default = uint32_t(d.integer("stack.tcp.rmem_default"));
    stack.tcp.rmem_max = uint32_t(d.integer("stack.tcp.rmem_max"));
    stack.tcp.moderate_rcvbuf = d.boolean("stack.tcp.moderate_rcvbuf");
    stack.tcp.read_bytes = uint32_t(d.integer("stack.tcp.read_bytes"));
    stack.tcp.mtu = uint16_t(d.integer("stack.tcp.mtu"));
    const std::string& c = d.string("costs");
    costs_file = c.find('/') == std::string::npos ? (std::filesystem::path(config_dir) / "costs" / (c + ".json")).string() : c;
}

void apply_fec_config(fec_hw_params& hw, const config_view& fec) {
    if (fec.has("system_clock_mhz")) hw.ahb_clock_hz = fec.number("system_clock_mhz") * 1e6;
    if (fec.has("mdio_clock_mhz") && fec.number("mdio_clock_mhz") > 0) hw.ipg_clock_hz = fec.number("mdio_clock_mhz") * 1e6;
    if (fec.has("descriptor_format")) hw.ptp_clock = fec.string("descriptor_format") == "enhanced";
    if (fec.has("rx_coalesce.frames")) hw.rx_coalesce_frames = uint32_t(fec.integer("rx_coalesce.frames"));
    if (fec.has("rx_coalesce.usecs")) hw.rx_coalesce_usecs = uint32_t(fec.integer("rx_coalesce.usecs"));
    if (fec.has("tx_coalesce.frames")) hw.tx_coalesce_frames = uint32_t(fec.integer("tx_coalesce.frames"));
    if (fec.has("tx_coalesce.usecs")) hw.tx_coalesce_usecs = uint32_t(fec.integer("tx_coalesce.usecs"));
}

linux_system::linux_system(cpu::core_api& core, const system_params& p, cpu::timer_api* timer)
    : core_(core), timer_(timer), p_(p), costs_(cost_table::load(p.costs_file)) {
    auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
    // A check of one configuration key: the platform reports it against that key.
    auto bad_key = [](const char* key, const std::string& m) { throw param_error(key, m); };
    if (p_.fecs.empty()) bad("linux_system: no FEC instance");
    if (p_.mem.dram.empty() || p_.mem.dram.front().size < 16 * PAGE_SIZE)
        throw memory_exhausted(memory_exhausted::pool::dram, "the cacheable DRAM range is too small for the kernel");
    if (p_.mem.coherent_size == 0) throw memory_exhausted(memory_exhausted::pool::coherent, "no coherent DMA pool");
    xdp::check_prog_name(p_.xdp_prog);
    const auto& d = p_.driver;
    if (d.napi_budget < 1) bad_key("driver.napi_budget", "must be >= 1");
    if (d.rx_ring_size != 0 && d.rx_ring_size < 2) bad_key("driver.rx_ring_size", "must be 0 (driver default) or >= 2");
    if (d.tx_ring_size < 2 * (MAX_SKB_FRAGS + 1))
        bad_key("driver.tx_ring_size", "must be >= " + std::to_string(2 * (MAX_SKB_FRAGS + 1)) +
                                           " (2 x (MAX_SKB_FRAGS + 1))");
    if (p_.xdp_prog != "none" && d.xdp_mode == xdp_attach_mode::native && d.rx_buffers == rx_buffer_mode::legacy)
        bad_key("driver.rx_buffers",
                "legacy has no native XDP support: set driver.xdp_prog=none or driver.xdp_mode=generic");
    if (p_.stack.tcp.rmem_max < p_.stack.tcp.rmem_default)
        bad_key("driver.stack.tcp.rmem_max", "below driver.stack.tcp.rmem_default (" +
                                                 std::to_string(p_.stack.tcp.rmem_default) + ")");
    if (p_.xdp_redirect_ifindex < 0 || p_.xdp_redirect_ifindex > int(p_.fecs.size()))
        bad_key("driver.xdp_redirect_ifindex", std::to_string(p_.xdp_redirect_ifindex) +
                                                   " names no interface (there are " + std::to_string(p_.fecs.size()) +
                                                   ")");
    for (auto& f : p_.fecs) {
        if (f.irqs.empty()) bad(f.hw.name + ": no interrupt line");
        for (int l : f.irqs)
            if (l < 0) bad(f.hw.name + ": negative interrupt line");
        if (f.hw.rx_coalesce_frames > 255) bad_key("fec.rx_coalesce.frames", "above 255 (8-bit ICFT)");
        if (f.hw.tx_coalesce_frames > 255) bad_key("fec.tx_coalesce.frames", "above 255 (8-bit ICFT)");
        const double unit = f.hw.ahb_clock_hz / 64000.0;
        // The largest value whose truncated ICTT, us x unit / 1000, still fits in 16 bits.
        const auto ictt_max_us = std::to_string(uint64_t((0xffff * 1000 + 999) / uint64_t(unit)));
        if (uint64_t(f.hw.rx_coalesce_usecs * uint64_t(unit) / 1000) > 0xffff)
            bad_key("fec.rx_coalesce.usecs", "above the 16-bit ICTT range at this AHB clock (at most " + ictt_max_us + ")");
        if (uint64_t(f.hw.tx_coalesce_usecs * uint64_t(unit) / 1000) > 0xffff)
            bad_key("fec.tx_coalesce.usecs", "above the 16-bit ICTT range at this AHB clock (at most " + ictt_max_us + ")");
    }
    kernel_ = std::make_unique<kernel>(core_, costs_, p_.arch, p_.mem);
}

linux_system::~linux_system() = default;

void linux_system::boot() {
    if (booted_) return;
    cpu::scope s(core_, "start_kernel");
    kernel& k = *kernel_;
    devs_ = std::make_unique<netdev_registry>();
    xdp_ = std::make_unique<xdp_core>(k, *devs_);
    skbs_ = std::make_unique<skb_allocator>(k);
    softnet_ = std::make_unique<softnet>(k);
    timers_ = std::make_unique<timer_base>(k, timer_);
    stack_ = std::make_unique<netstack>(k, *skbs_, *xdp_, *timers_, p_.stack);
    prog_ = xdp::make_prog(p_.xdp_prog, k, p_.xdp_redirect_ifindex);
    for (auto& f : p_.fecs) {
        auto dev = std::make_unique<fec_enet_private>(k, *xdp_, *skbs_, *stack_, *softnet_, f.hw, p_.driver, prog_.get());
        devs_->register_netdev(dev.get());
        fecs_.push_back(std::move(dev));
    }
    if (prog_ && p_.driver.xdp_mode == xdp_attach_mode::generic) stack_->set_generic_xdp(fecs_[0].get(), prog_.get());
    stack_->set_output(fecs_[0].get(), p_.fecs[0].hw.mac);
    if (p_.pktgen) pktgen_ = std::make_unique<pktgen_thread>(k, *skbs_, *fecs_[0], *p_.pktgen);
    for (size_t i = 0; i < fecs_.size(); ++i) {
        fecs_[i]->fec_probe();
        fecs_[i]->fec_enet_open();
        for (int line : p_.fecs[i].irqs) {
            if (irq_owner_.size() <= size_t(line)) irq_owner_.resize(line + 1, -1);
            irq_owner_[line] = int(i);
            core_.irq_enable(line, true);
        }
    }
    if (timer_) core_.irq_enable(timer_->irq_line(), true);
    booted_ = true;
}

void linux_system::handle_irq(int line) {
    const bool tick = timer_ && line == timer_->irq_line();
    {
        cpu::scope s(core_, "generic_handle_irq");
        kernel_->exec(path::generic_handle_irq);
        const int owner = line >= 0 && size_t(line) < irq_owner_.size() ? irq_owner_[line] : -1;
        if (tick) {
            cpu::scope s2(core_, "arch_timer_handler_virt");
            kernel_->exec(path::arch_timer_handler);
        } else if (owner >= 0) {
            fecs_[owner]->fec_enet_interrupt();
        } else {
            ++spurious_irqs_;
        }
    }
    core_.irq_return();
    // irq_exit -> __do_softirq: TIMER, then NET_RX. net_rx_action hands over after netdev_budget
    // frames (to ksoftirqd in the kernel), and the reading task gets the core in between.
    if (tick) timers_->run_timers();
    do {
        softnet_->net_rx_action();
        stack_->run_user_tasks();
    } while (softnet_->pending());
}

void linux_system::run() {
    boot();
    for (;;) {
        if (!pktgen_ || !pktgen_->running()) {
            handle_irq(core_.wait_for_irq());
            continue;
        }
        const int line = core_.poll_irq();
        if (line >= 0) handle_irq(line);
        else pktgen_->pktgen_thread_worker();
    }
}

void linux_system::reset_stats() {
    if (!booted_) return;
    for (auto& f : fecs_) f->reset_stats();
    if (pktgen_) pktgen_->reset_stats();
    softnet_->polls = softnet_->budget_exhausted = softnet_->completions = 0;
    stack_->stats = {};
    stack_->tcp_proto().stats = {};
    xdp_->stats = {};
    spurious_irqs_ = 0;
}

uint64_t linux_system::packets() const {
    uint64_t n = 0;
    for (auto& f : fecs_) n += f->driver_stats().rx_frames;
    return n;
}

const std::array<uint64_t, 256>* linux_system::xdp_proto_counts() const {
    auto* c = dynamic_cast<const xdp::counting_prog*>(prog_.get());
    return c ? &c->proto_counts() : nullptr;
}

void linux_system::report(nlohmann::json& out) const {
    using nlohmann::json;
    json& dut = out["dut"];
    if (!booted_) return;
    json xdpj = {{"pass", 0}, {"drop", 0}, {"tx", 0}, {"redirect", 0}, {"aborted", 0}, {"tx_errors", 0}};
    json nd = json::object();
    auto pool_json = [](const page_pool* p) {
        const page_pool_stats st = p ? p->stats() : page_pool_stats{};
        return json{{"alloc_fast", st.alloc_fast}, {"alloc_slow", st.alloc_slow},
                    {"alloc_slow_pages", st.alloc_slow_pages}, {"alloc_refill", st.alloc_refill},
                    {"alloc_empty", st.alloc_empty}, {"recycle_cached", st.recycle_cached},
                    {"recycle_cache_full", st.recycle_cache_full}, {"recycle_ring", st.recycle_ring},
                    {"recycle_ring_full", st.recycle_ring_full}, {"recycle_released_refcnt", st.recycle_released_refcnt},
                    {"released", st.released}, {"hold", p ? p->hold_cnt() : 0}, {"in_cache", p ? p->cached() : 0},
                    {"in_ring", p ? p->in_ring() : 0}, {"inflight", p ? p->inflight() : 0}};
    };
    json pp = pool_json(nullptr);
    json drv = json::object();
    json queues = json::array();  // eth0's per-queue counters, as the driver keeps them
    auto add = [](json& j, const std::string& k, uint64_t v) { j[k] = j.value(k, uint64_t(0)) + v; };
    for (auto& f : fecs_) {
        using namespace fec;
        if (p_.driver.xdp_mode == xdp_attach_mode::native) {
            add(xdpj, "pass", f->xdp_stat(RX_XDP_PASS));
            add(xdpj, "drop", f->xdp_stat(RX_XDP_DROP));
            add(xdpj, "tx", f->xdp_stat(RX_XDP_TX));
            add(xdpj, "redirect", f->xdp_stat(RX_XDP_REDIRECT));
            add(xdpj, "aborted", f->xdp_aborted());
            add(xdpj, "tx_errors", f->xdp_stat(RX_XDP_TX_ERRORS));
        }
        const auto& s = f->stats;
        for (auto [k, v] : std::initializer_list<std::pair<const char*, uint64_t>>{
                 {"rx_packets", s.rx_packets}, {"rx_bytes", s.rx_bytes}, {"rx_errors", s.rx_errors},
                 {"rx_dropped", s.rx_dropped}, {"rx_fifo_errors", s.rx_fifo_errors},
                 {"rx_length_errors", s.rx_length_errors}, {"rx_crc_errors", s.rx_crc_errors},
                 {"rx_frame_errors", s.rx_frame_errors}, {"tx_packets", s.tx_packets}, {"tx_bytes", s.tx_bytes},
                 {"tx_errors", s.tx_errors}, {"tx_dropped", s.tx_dropped}, {"collisions", s.collisions}})
            add(nd, k, v);
        for (page_pool* p : f->pools()) {
            const json one = pool_json(p);
            for (auto& [k, v] : one.items()) add(pp, k, v.get<uint64_t>());
        }
        // rxq->stats[] under fec_xdp_stat_strs[] names (fec_enet_get_xdp_stats sums them).
        static constexpr const char* xdp_names[XDP_STATS_TOTAL] = {
            "rx_xdp_redirect", "rx_xdp_pass", "rx_xdp_drop", "rx_xdp_tx", "rx_xdp_tx_errors", "tx_xdp_xmit",
            "tx_xdp_xmit_errors"};
        for (int q = 0; f == fecs_.front() && q < f->num_rx_queues(); ++q) {
            json x;
            for (int i = 0; i < XDP_STATS_TOTAL; ++i) x[xdp_names[i]] = f->rx_queue(q).stats[i];
            queues.push_back({{"xdp", x}, {"page_pool", pool_json(f->rx_queue(q).pool)}});
        }
        const auto& d = f->driver_stats();
        for (auto [k, v] : std::initializer_list<std::pair<const char*, uint64_t>>{
                 {"irqs", d.irqs}, {"irq_none", d.irq_none}, {"napi_polls", d.napi_polls},
                 {"rx_frames", d.rx_frames}, {"tx_completions", d.tx_completions},
                 {"rdar_writes", d.rdar_writes}, {"tdar_writes", d.tdar_writes}, {"tdar_reads", d.tdar_reads},
                 {"err006358_kicks", d.err006358_kicks}, {"legacy_copybreak", d.legacy_copybreak},
                 {"legacy_map", d.legacy_map}})
            add(drv, k, v);
    }
    if (p_.driver.xdp_mode == xdp_attach_mode::generic) {
        const auto& g = stack_->stats.generic_xdp;
        xdpj = {{"pass", g[XDP_PASS]}, {"drop", g[XDP_DROP] + g[XDP_ABORTED]}, {"tx", g[XDP_TX]},
                {"redirect", g[XDP_REDIRECT]}, {"aborted", g[XDP_ABORTED]}, {"tx_errors", stack_->stats.generic_tx_errors}};
    }
    add(drv, "napi_budget_exhausted", softnet_->budget_exhausted);
    add(drv, "spurious_irqs", spurious_irqs_);
    add(drv, "redirect_errors", xdp_->stats.redirect_errors);
    add(drv, "redirect_flushes", xdp_->stats.redirect_flushes);
    const auto& st = stack_->stats;
    dut["xdp"] = xdpj;
    dut["netdev"] = nd;
    dut["page_pool"] = pp;
    dut["rx_queues"] = queues;
    dut["driver"] = drv;
    dut["stack"] = {{"received", st.received}, {"non_ip", st.non_ip}, {"not_local", st.not_local}, {"udp_no_socket", st.udp_no_socket},
                    {"socket_queued", st.socket_queued}, {"socket_drops", st.socket_drops},
                    {"user_reads", st.user_reads}};
    const tcp_stats& t = stack_->tcp_proto().stats;
    const tcp_sock& sk = stack_->tcp_proto().sock();
    dut["tcp"] = {{"segs_in", t.segs_in}, {"data_segs_in", t.data_segs_in}, {"bytes_received", t.bytes_received},
                  {"bytes_read", t.bytes_read}, {"reads", t.reads}, {"acks_sent", t.acks_sent},
                  {"delayed_acks", t.delayed_acks}, {"quick_acks", t.quick_acks}, {"dup_acks", t.dup_acks},
                  {"window_updates", t.window_updates}, {"ofo_queued", t.ofo_queued},
                  {"ofo_delivered", t.ofo_delivered}, {"duplicates", t.duplicates}, {"rcvq_drops", t.rcvq_drops},
                  {"out_of_window", t.out_of_window}, {"no_socket", t.no_socket}, {"connections", t.connections}, {"early_demux", t.early_demux},
                  {"gro_merged", t.gro_merged}, {"gro_flushes", t.gro_flushes}, {"prunes", t.prunes}, {"fast_path", t.fast_path},
                  {"slow_path", t.slow_path}, {"mem_schedules", t.mem_schedules}, {"mem_reclaims", t.mem_reclaims},
                  {"grow_no_room", t.grow_no_room}, {"grow_advmss", t.grow_advmss}, {"grow_scaled", t.grow_scaled},
                  {"grow_none", t.grow_none}, {"grow_halvings", t.grow_halvings},
                  {"rcvbuf", sk.sk_rcvbuf}, {"rcv_wscale", sk.rcv_wscale}};
    dut["packets"] = packets();
}

}  // namespace fecsim::firmware
