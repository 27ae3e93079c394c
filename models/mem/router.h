// Interconnect: decodes addresses to targets, adds the fabric latency of the region, and tells
// initiators the memory attribute of every range (how the CPU maps it). Unmapped addresses get
// TLM_ADDRESS_ERROR_RESPONSE, which initiators report as a fault.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fecsim::mem {

class ddr;

// Memory type of a range as the CPU maps it (device DMA ignores it).
enum class mem_attr {
    normal_cacheable,     // kernel linear map: pages, skbs, page_pool buffers
    normal_noncacheable,  // dma_alloc_coherent on a non-coherent SoC: descriptor rings
    device,               // MMIO registers (nGnRE)
};
const char* to_string(mem_attr a);
mem_attr mem_attr_from_string(const std::string& s);  // throws std::invalid_argument

struct region {
    std::string name;
    uint64_t base = 0, size = 0;
    mem_attr attr = mem_attr::normal_cacheable;
    std::string target;       // name of the target port it decodes to
    uint64_t offset = 0;      // target-local address of `base`
    double latency_ns = 0;    // fabric latency added to every access of this range
    // When a posted write to this range is acknowledged to the CPU (Normal-NC and Device-nGnRE
    // writes are early-acknowledged by the interconnect, before they reach the target): what
    // a barrier waiting for the write sees. The write itself still arrives after latency_ns.
    double write_ack_ns = 0;
    // Its position in the router's regions() (set by router::add_region): what the router and
    // the core index their per-region tables by, without a division per access.
    size_t index = 0;
    bool contains(uint64_t a) const { return a >= base && a - base < size; }
};

class router : public sc_core::sc_module {
public:
    // A platform may have no initiator (or no target) yet; both sides accept zero bindings.
    tlm_utils::multi_passthrough_target_socket<router, 32, tlm::tlm_base_protocol_types, 0,
                                               sc_core::SC_ZERO_OR_MORE_BOUND> in;
    tlm_utils::multi_passthrough_initiator_socket<router, 32, tlm::tlm_base_protocol_types, 0,
                                                  sc_core::SC_ZERO_OR_MORE_BOUND> out;

    explicit router(sc_core::sc_module_name name);

    // Binds a target under `name`; regions refer to it by that name.
    void connect(const std::string& name, tlm::tlm_target_socket<>& target);
    // Adds a range. Throws std::invalid_argument on overlap, empty size or unknown target.
    void add_region(const region& r);

    const region* decode(uint64_t addr) const {  // nullptr when unmapped
        const ptrdiff_t i = find(addr);
        return i < 0 ? nullptr : &regions_[static_cast<size_t>(i)];
    }
    const std::vector<region>& regions() const { return regions_; }

    // What b_transport on `in` does, as a direct call: for an initiator whose socket is bound
    // to this router's `in` (the core, through its map), one call instead of the socket's two
    // indirections; the same decode, latency and target. Returns the region the access went to
    // (nullptr: address error), so that an initiator needing its attribute decodes once.
    const region* transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // The same for an access the initiator decoded already (r from decode(), the access wholly
    // inside it: the core reads the region's attribute to choose its path first).
    void transport(const region& r, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    uint64_t address_errors() const { return address_errors_; }

private:
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    unsigned transport_dbg(int id, tlm::tlm_generic_payload& gp);
    void invalidate_direct_mem_ptr(int id, sc_dt::uint64 start, sc_dt::uint64 end);
    int target_index(const std::string& name) const;
    // Index of the region holding addr in regions_ (and routes_), -1 when unmapped: from the
    // page table when it knows the page, else by search.
    ptrdiff_t find(uint64_t addr) const {
        const page_hint& h = pages_[slot(addr >> page_shift)];
        return h.page == addr >> page_shift ? h.index : search(addr);
    }
    ptrdiff_t search(uint64_t addr) const;
    struct route;
    // The route of `len` bytes at addr; null when unmapped or crossing the region's end.
    const route* route_for(uint64_t addr, uint64_t len) const;
    // The access to its target along route r (in range): latency, target address, target.
    void forward(const route& r, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    std::vector<std::string> targets_;
    // Per target: the DDR model when the target socket is a ddr's own. Its b_transport is then
    // called directly, which is what its simple_target_socket would do (one indirection less
    // on every memory access); debug transport and DMI still go through the socket.
    std::vector<ddr*> direct_ddr_;
    std::vector<region> regions_;  // sorted by base
    // The dispatch table, in regions_ order: what forwarding an access to each region needs,
    // compact (a platform has a handful of regions: a scan of these beats chasing region
    // objects with their strings on every access).
    struct route {
        uint64_t base, size, offset;
        sc_core::sc_time latency;  // latency_ns, built once
        ddr* dram;                 // the target's DDR model (called directly), or null
        int port;                  // out[] index of the target
    };
    std::vector<route> routes_;
    static constexpr size_t linear_scan_max = 8;
    // Decoded 4 KB pages, direct-mapped by page number: a page lying wholly inside one region,
    // with that region's index (a region boundary inside a page leaves the page to search).
    static constexpr unsigned page_shift = 12;
    struct page_hint {
        uint64_t page = ~0ull;  // no page number has all bits set: empty
        ptrdiff_t index = -1;
    };
    mutable std::array<page_hint, 512> pages_{};
    // Higher page bits folded in: regions whose bases differ only above bit 21 (DDR and its
    // non-cacheable alias) do not share slots page for page.
    static size_t slot(uint64_t page) { return (page ^ (page >> 9)) & 511; }
    uint64_t address_errors_ = 0;
};

inline const router::route* router::route_for(uint64_t addr, uint64_t len) const {
    const ptrdiff_t i = find(addr);
    if (i < 0) return nullptr;
    const route& r = routes_[static_cast<size_t>(i)];
    return len > r.size - (addr - r.base) ? nullptr : &r;
}

}  // namespace fecsim::mem
