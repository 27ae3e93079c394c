// Test-side TLM initiator: issues blocking transactions and records the annotated delay and
// response, for benches that play a CPU or a DMA master by hand.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace fecsim::test {

struct tlm_initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<tlm_initiator> socket;

    explicit tlm_initiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}

    struct result {
        tlm::tlm_response_status status;
        sc_core::sc_time delay;
    };

    result transport(tlm::tlm_command cmd, uint64_t addr, void* data, size_t len,
                     sc_core::sc_time delay = sc_core::SC_ZERO_TIME) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(static_cast<unsigned char*>(data));
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        socket->b_transport(gp, delay);
        return {gp.get_response_status(), delay};
    }
    result read(uint64_t addr, void* data, size_t len) { return transport(tlm::TLM_READ_COMMAND, addr, data, len); }
    result write(uint64_t addr, const void* data, size_t len) {
        return transport(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(data), len);
    }
};

}  // namespace fecsim::test
