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
    region_target_.insert(region_target_.begin() + i, t);
    region_latency_.insert(region_latency_.begin() + i, sc_core::sc_time(r.latency_ns, sc_core::SC_NS));
    spans_.insert(spans_.begin() + i, span{r.base, r.size});
    last_ = nullptr;
}

const region* router::decode(uint64_t addr) const {
    if (spans_.size() <= linear_scan_max) {
        // addr - base wraps to a huge value below base, so one compare covers both bounds.
        const span* s = spans_.data();
        if (last_span_ < spans_.size() && addr - s[last_span_].base < s[last_span_].size) return &regions_[last_span_];
        for (size_t i = 0; i < spans_.size(); ++i)
            if (addr - s[i].base < s[i].size) return &regions_[last_span_ = i];
        return nullptr;
    }
    if (last_ && last_->contains(addr)) return last_;
    auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                               [](uint64_t a, const region& r) { return a < r.base; });
    if (it == regions_.begin()) return nullptr;
    --it;
    if (!it->contains(addr)) return nullptr;
    return last_ = &*it;
}

void router::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address();
    const region* r = decode(addr);
    if (!r || gp.get_data_length() > r->size - (addr - r->base)) {
        ++address_errors_;
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const size_t i = static_cast<size_t>(r - regions_.data());
    delay += region_latency_[i];
    gp.set_address(addr - r->base + r->offset);
    const int t = region_target_[i];
    if (ddr* d = direct_ddr_[t]) d->b_transport(gp, delay);
    else out[t]->b_transport(gp, delay);
    gp.set_address(addr);
}

unsigned router::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address();
    const region* r = decode(addr);
    if (!r || gp.get_data_length() > r->size - (addr - r->base)) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return 0;
    }
    gp.set_address(addr - r->base + r->offset);
    const unsigned n = out[region_target_[r - regions_.data()]]->transport_dbg(gp);
    gp.set_address(addr);
    return n;
}

bool router::get_direct_mem_ptr(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    const uint64_t addr = gp.get_address();
    const region* r = decode(addr);
    if (!r) return false;
    gp.set_address(addr - r->base + r->offset);
    const bool ok = out[region_target_[r - regions_.data()]]->get_direct_mem_ptr(gp, dmi);
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
        if (region_target_[i] != id || end < r.offset || start >= r.offset + r.size) continue;
        const uint64_t lo = std::max<uint64_t>(start, r.offset), hi = std::min<uint64_t>(end, r.offset + r.size - 1);
        for (unsigned k = 0; k < in.size(); ++k)
            in[k]->invalidate_direct_mem_ptr(lo - r.offset + r.base, hi - r.offset + r.base);
    }
}

}  // namespace fecsim::mem
