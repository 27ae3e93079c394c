#include "models/mem/router.h"

#include "models/mem/ddr.h"

#include <algorithm>
#include <stdexcept>

namespace fecsim::mem {

const char* to_string(mem_attr a) {
    switch (a) {
    case mem_attr::normal_cacheable: return "normal_cacheable";
    case mem_attr::normal_noncacheable: return "normal_noncacheable";
    case mem_attr::device: return "device";
    }
    return "?";
}

mem_attr mem_attr_from_string(const std::string& s) {
    for (auto a : {mem_attr::normal_cacheable, mem_attr::normal_noncacheable, mem_attr::device})
        if (s == to_string(a)) return a;
    throw std::invalid_argument("unknown memory attribute '" + s + "'");
}

router::router(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &router::b_transport);
    in.register_get_direct_mem_ptr(this, &router::get_direct_mem_ptr);
    in.register_transport_dbg(this, &router::transport_dbg);
    out.register_invalidate_direct_mem_ptr(this, &router::invalidate_direct_mem_ptr);
}

void router::connect(const std::string& name, tlm::tlm_target_socket<>& target) {
    if (target_index(name) >= 0) throw std::invalid_argument("router: target '" + name + "' connected twice");
    targets_.push_back(name);
    direct_ddr_.push_back(dynamic_cast<ddr*>(target.get_parent_object()));
    out.bind(target);
}

int router::target_index(const std::string& name) const {
    auto it = std::find(targets_.begin(), targets_.end(), name);
    return it == targets_.end() ? -1 : static_cast<int>(it - targets_.begin());
}

void router::add_region(const region& r) {
    if (r.size == 0) throw std::invalid_argument("region '" + r.name + "' has size 0");
    if (r.base + r.size < r.base) throw std::invalid_argument("region '" + r.name + "' wraps the address space");
    const int t = target_index(r.target);
    if (t < 0) throw std::invalid_argument("region '" + r.name + "' names unknown target '" + r.target + "'");
    for (auto& o : regions_)
        if (r.base < o.base + o.size && o.base < r.base + r.size)
            throw std::invalid_argument("region '" + r.name + "' overlaps region '" + o.name + "'");
    auto pos = std::lower_bound(regions_.begin(), regions_.end(), r.base,
                                [](const region& a, uint64_t b) { return a.base < b; });
    const auto i = pos - regions_.begin();
    regions_.insert(pos, r);
    for (size_t k = 0; k < regions_.size(); ++k) regions_[k].index = k;
    routes_.insert(routes_.begin() + i, route{r.base, r.size, r.offset, sc_core::sc_time(r.latency_ns, sc_core::SC_NS),
                                              direct_ddr_[static_cast<size_t>(t)], t});
    pages_.fill(page_hint{});  // indices moved
}

ptrdiff_t router::search(uint64_t addr) const {
    const route* s = routes_.data();
    const size_t n = routes_.size();
    ptrdiff_t i = -1;
    // addr - base wraps to a huge value below base, so one compare covers both bounds.
    if (n <= linear_scan_max) {
        for (size_t k = 0; k < n && i < 0; ++k)
            if (addr - s[k].base < s[k].size) i = static_cast<ptrdiff_t>(k);
    } else {
        const route* it = std::upper_bound(s, s + n, addr, [](uint64_t a, const route& r) { return a < r.base; });
        if (it != s && addr - (it - 1)->base < (it - 1)->size) i = it - 1 - s;
    }
    if (i >= 0) {
        const route& r = s[i];
        const uint64_t page = addr >> page_shift, first = page << page_shift, page_bytes = uint64_t{1} << page_shift;
        if (first >= r.base && r.size >= page_bytes && first - r.base <= r.size - page_bytes)
            pages_[slot(page)] = {page, i};
    }
    return i;
}

void router::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) { transport(gp, delay); }

// Inline in both transports (the DDR's transport and booking with it): one call per access.
__attribute__((always_inline)) inline void router::forward(const route& r, tlm::tlm_generic_payload& gp,
                                                           sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address();
    delay += r.latency;
    gp.set_address(addr - r.base + r.offset);
    if (r.dram) r.dram->b_transport(gp, delay);
    else out[r.port]->b_transport(gp, delay);
    gp.set_address(addr);
}

const region* router::transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const route* r = route_for(gp.get_address(), gp.get_data_length());
    if (!r) {
        ++address_errors_;
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return nullptr;
    }
    forward(*r, gp, delay);
    return &regions_[static_cast<size_t>(r - routes_.data())];
}

void router::transport(const region& r, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    forward(routes_[r.index], gp, delay);
}

unsigned router::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address();
    const route* r = route_for(addr, gp.get_data_length());
    if (!r) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return 0;
    }
    gp.set_address(addr - r->base + r->offset);
    const unsigned n = out[r->port]->transport_dbg(gp);
    gp.set_address(addr);
    return n;
}

bool router::get_direct_mem_ptr(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    const uint64_t addr = gp.get_address();
    const route* r = route_for(addr, 0);
    if (!r) return false;
    gp.set_address(addr - r->base + r->offset);
    const bool ok = out[r->port]->get_direct_mem_ptr(gp, dmi);
    gp.set_address(addr);
    if (!ok) return false;
    // Translate back to global addresses and clip to the region.
    const uint64_t lo = std::max<uint64_t>(dmi.get_start_address(), r->offset);
    const uint64_t hi = std::min<uint64_t>(dmi.get_end_address(), r->offset + r->size - 1);
    dmi.set_dmi_ptr(dmi.get_dmi_ptr() + (lo - dmi.get_start_address()));
    dmi.set_start_address(lo - r->offset + r->base);
    dmi.set_end_address(hi - r->offset + r->base);
    return true;
}

void router::invalidate_direct_mem_ptr(int id, sc_dt::uint64 start, sc_dt::uint64 end) {
    for (size_t i = 0; i < regions_.size(); ++i) {
        const region& r = regions_[i];
        if (routes_[i].port != id || end < r.offset || start >= r.offset + r.size) continue;
        const uint64_t lo = std::max<uint64_t>(start, r.offset), hi = std::min<uint64_t>(end, r.offset + r.size - 1);
        for (unsigned k = 0; k < in.size(); ++k)
            in[k]->invalidate_direct_mem_ptr(lo - r.offset + r.base, hi - r.offset + r.base);
    }
}

}  // namespace fecsim::mem
