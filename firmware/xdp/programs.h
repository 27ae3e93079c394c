// XDP programs the firmware can attach (samples/bpf xdp1/xdp2, xdp-bench-style pass/drop/tx,
// xdp_redirect). Each reads and writes the packet in simulated memory through the core and
// charges its JITed body from the cost table.
#pragma once

#include "firmware/kernel/xdp.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace fecsim::firmware::xdp {

struct prog_info {
    const char* name;
    const char* description;
};
// Every program name `driver.xdp_prog` accepts (for `fecsim list`), "none" first.
const std::vector<prog_info>& registry();

// A program with per-protocol counters (xdp1/xdp2 rxcnt: BPF_MAP_TYPE_PERCPU_ARRAY[256]).
class counting_prog : public bpf_prog {
public:
    // Host mirror of this CPU's map values (the live `proto N: X pkt/s` lines).
    const std::array<uint64_t, 256>& proto_counts() const { return counts_; }

protected:
    explicit counting_prog(kernel& k) : map_(k.kmalloc(256 * 8)) {}
    // Parses Ethernet (+ up to two VLAN tags) and IPv4/IPv6; returns the protocol index or -1
    // for a runt Ethernet header (the program returns before counting).
    int parse(kernel& k, const xdp_buff& x);
    void count(kernel& k, int index);

private:
    addr_t map_;
    std::array<uint64_t, 256> counts_{};
};

// swap_src_dst_mac(data): 12 bytes read, 12 written.
void swap_src_dst_mac(kernel& k, addr_t data);

// Throws std::invalid_argument naming the known programs if `name` is not one of them.
void check_prog_name(const std::string& name);

// Builds the program called `name`; nullptr for "none". `redirect_ifindex` is the target of
// the redirect program (0: the receiving device). Throws std::invalid_argument for unknown names.
std::unique_ptr<bpf_prog> make_prog(const std::string& name, kernel& k, int redirect_ifindex = 0);

}  // namespace fecsim::firmware::xdp
