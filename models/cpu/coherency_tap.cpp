#include "models/cpu/coherency_tap.h"

#include "models/sim_time.h"

namespace fecsim::cpu {

coherency_tap::coherency_tap(sc_core::sc_module_name name, coherency_checker& checker, mem::router& bus)
    : sc_module(name), in("in"), out("out"), checker_(checker), bus_(bus) {
    in.bind(*this);
    out.register_invalidate_direct_mem_ptr(this, &coherency_tap::invalidate_direct_mem_ptr);
    out.bind(bus.in);  // the router timed accesses call directly: one and the same
}

void coherency_tap::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time at = sim_time() + delay;
    const mem::region* r = bus_.transport(gp, delay);  // = out->b_transport(gp, delay), one call
    if (!r || !gp.is_response_ok() || !(gp.is_read() || gp.is_write())) return;
    ++(gp.is_write() ? writes_ : reads_);
    const bool cacheable = r->attr == mem::mem_attr::normal_cacheable;
    checker_.device_access(gp.is_write(), gp.get_address(), gp.get_data_length(), at, cacheable);
    if (checker_.observes_device()) gp.set_dmi_allowed(false);
}

tlm::tlm_sync_enum coherency_tap::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase&, sc_core::sc_time&) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
}

bool coherency_tap::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    if (checker_.observes_device()) return false;
    return out->get_direct_mem_ptr(gp, dmi);
}

unsigned coherency_tap::transport_dbg(tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }

void coherency_tap::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    in->invalidate_direct_mem_ptr(start, end);
}

}  // namespace fecsim::cpu
