// Pass-through TLM module between a DMA master (the FEC's dma socket) and the router: forwards
// b_transport, DMI and debug transport unchanged and tells the coherency checker which memory
// the device read and wrote. While the checker observes device traffic it refuses DMI, so every
// device access stays visible (a device must then use b_transport, as it must for timing).
#pragma once

#include "models/cpu/coherency.h"
#include "models/mem/router.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

namespace fecsim::cpu {

// The tap is its own target interface: the master's calls reach it in one virtual call (a
// callback socket adds a second hop to every DMA burst). Blocking transport only, as the
// master's b_transport; a non-blocking call is refused with TLM_GENERIC_ERROR_RESPONSE.
class coherency_tap : public sc_core::sc_module, private tlm::tlm_fw_transport_if<> {
public:
    tlm::tlm_target_socket<> in;                            // bind the DMA master here
    tlm_utils::simple_initiator_socket<coherency_tap> out;  // bound to bus.in by the constructor

    // Timed accesses call `bus` directly (router::transport, what `out` would do); the
    // constructor binds `out` to bus.in, which carries debug transport and DMI.
    coherency_tap(sc_core::sc_module_name name, coherency_checker& checker, mem::router& bus);

    uint64_t reads() const { return reads_; }
    uint64_t writes() const { return writes_; }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override;
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) override;
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) override;
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

    coherency_checker& checker_;
    mem::router& bus_;
    uint64_t reads_ = 0, writes_ = 0;
};

}  // namespace fecsim::cpu
