#include "models/cpu/coherency_tap.h"

#include "models/sim_time.h"

namespace fecsim::cpu {

coherency_tap::coherency_tap(sc_core::sc_module_name name, coherency_checker& checker)
    : sc_module(name), in("in"), out("out"), checker_(checker) {
    in.register_b_transport(this, &coherency_tap::b_transport);
    in.register_get_direct_mem_ptr(this, &coherency_tap::get_direct_mem_ptr);
    in.register_transport_dbg(this, &coherency_tap::transport_dbg);
    out.register_invalidate_direct_mem_ptr(this, &coherency_tap::invalidate_direct_mem_ptr);
}

void coherency_tap::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time at = sim_time() + delay;
    out->b_transport(gp, delay);
    if (!gp.is_response_ok() || !(gp.is_read() || gp.is_write())) return;
    ++(gp.is_write() ? writes_ : reads_);
    checker_.device_access(gp.is_write(), gp.get_address(), gp.get_data_length(), at);
    if (checker_.observes_device()) gp.set_dmi_allowed(false);
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
