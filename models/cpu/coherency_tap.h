// Pass-through TLM module between a DMA master (the FEC's dma socket) and the router: forwards
// b_transport, DMI and debug transport unchanged and tells the coherency checker which memory
// the device read and wrote. While the checker observes device traffic it refuses DMI, so every
// device access stays visible (a device must then use b_transport, as it must for timing).
#pragma once

#include "models/cpu/coherency.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace fecsim::cpu {

class coherency_tap : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<coherency_tap> in;      // bind the DMA master here
    tlm_utils::simple_initiator_socket<coherency_tap> out;  // bind to the router's `in`

    coherency_tap(sc_core::sc_module_name name, coherency_checker& checker);

    uint64_t reads() const { return reads_; }
    uint64_t writes() const { return writes_; }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

    coherency_checker& checker_;
    uint64_t reads_ = 0, writes_ = 0;
};

}  // namespace fecsim::cpu
