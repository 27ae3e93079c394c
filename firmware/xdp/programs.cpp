#include "firmware/xdp/programs.h"

#include <stdexcept>

namespace fecsim::firmware::xdp {

namespace {
constexpr uint16_t ETH_P_IP = 0x0800, ETH_P_IPV6 = 0x86dd, ETH_P_8021Q = 0x8100, ETH_P_8021AD = 0x88a8;

uint16_t be16(kernel& k, addr_t a) {
    const uint16_t v = k.core.read16(a);
    return static_cast<uint16_t>(v >> 8 | v << 8);
}

class pass_prog : public bpf_prog {
public:
    const char* name() const override { return "xdp_pass"; }
    xdp_action run(kernel& k, xdp_core&, xdp_buff&) override {
        k.exec(path::xdp_prog_pass);
        return XDP_PASS;
    }
};

class drop_prog : public bpf_prog {
public:
    const char* name() const override { return "xdp_drop"; }
    xdp_action run(kernel& k, xdp_core&, xdp_buff&) override {
        k.exec(path::xdp_prog_drop);
        return XDP_DROP;
    }
};

class tx_prog : public bpf_prog {
public:
    const char* name() const override { return "xdp_tx"; }
    xdp_action run(kernel& k, xdp_core&, xdp_buff& x) override {
        k.exec(path::xdp_prog_tx);
        if (x.data + ETH_HLEN_ > x.data_end) return XDP_ABORTED;
        swap_src_dst_mac(k, x.data);
        return XDP_TX;
    }
    static constexpr uint32_t ETH_HLEN_ = 14;
};

class redirect_prog : public bpf_prog {
public:
    explicit redirect_prog(int ifindex) : ifindex_(ifindex) {}
    const char* name() const override { return "xdp_redirect"; }
    xdp_action run(kernel& k, xdp_core& xc, xdp_buff& x) override {
        k.exec(path::xdp_prog_redirect);
        if (x.data + 14 > x.data_end) return XDP_DROP;
        swap_src_dst_mac(k, x.data);
        const int target = ifindex_ ? ifindex_ : (x.rxq && x.rxq->dev ? x.rxq->dev->ifindex : 0);
        return xc.bpf_redirect(target, 0);
    }

private:
    int ifindex_;
};

// samples/bpf xdp1_kern.c / xdp2_kern.c (section "xdp1"): parse, count, then DROP (xdp1) or,
// for UDP only, swap MACs and XDP_TX (xdp2).
class xdp12_prog : public counting_prog {
public:
    xdp12_prog(kernel& k, bool tx_udp) : counting_prog(k), tx_udp_(tx_udp) {}
    const char* name() const override { return tx_udp_ ? "xdp2" : "xdp1"; }
    xdp_action run(kernel& k, xdp_core&, xdp_buff& x) override {
        const int index = parse(k, x);
        if (index < 0) return XDP_DROP;
        count(k, index);
        if (tx_udp_ && index == 17) {
            swap_src_dst_mac(k, x.data);
            return XDP_TX;
        }
        return XDP_DROP;
    }

private:
    bool tx_udp_;
};
}  // namespace

const std::vector<prog_info>& registry() {
    static const std::vector<prog_info> r = {
        {"none", "no XDP program (the normal stack path)"},
        {"pass", "XDP_PASS every frame (xdp-bench pass, no-touch)"},
        {"drop", "XDP_DROP every frame (xdp-bench drop, no-touch)"},
        {"tx", "swap MACs and XDP_TX every frame (xdp-bench tx, swap-macs)"},
        {"xdp1", "samples/bpf xdp1: parse, count per IP protocol, XDP_DROP"},
        {"xdp2", "samples/bpf xdp2: parse, count per IP protocol; UDP: swap MACs + XDP_TX, else XDP_DROP"},
        {"redirect", "samples/bpf xdp_redirect: swap MACs, XDP_REDIRECT to driver.xdp_redirect_ifindex (0: same port)"},
    };
    return r;
}

void swap_src_dst_mac(kernel& k, addr_t data) {
    k.exec(path::xdp_prog_swap_macs);
    uint8_t m[12], s[12];
    k.core.read(data, m, sizeof m);
    for (int i = 0; i < 6; ++i) {
        s[i] = m[6 + i];
        s[6 + i] = m[i];
    }
    k.core.write(data, s, sizeof s);
}

int counting_prog::parse(kernel& k, const xdp_buff& x) {
    k.exec(path::xdp_prog_parse);
    uint64_t nh_off = 14;
    if (x.data + nh_off > x.data_end) return -1;
    uint16_t h_proto = be16(k, x.data + 12);
    for (int tag = 0; tag < 2; ++tag) {
        if (h_proto != ETH_P_8021Q && h_proto != ETH_P_8021AD) break;
        const addr_t vhdr = x.data + nh_off;
        nh_off += 4;
        if (x.data + nh_off > x.data_end) return -1;
        h_proto = be16(k, vhdr + 2);
    }
    if (h_proto == ETH_P_IP) {
        if (x.data + nh_off + 20 > x.data_end) return 0;
        return k.core.read8(x.data + nh_off + 9);
    }
    if (h_proto == ETH_P_IPV6) {
        if (x.data + nh_off + 40 > x.data_end) return 0;
        return k.core.read8(x.data + nh_off + 6);
    }
    return 0;
}

void counting_prog::count(kernel& k, int index) {
    k.exec(path::xdp_prog_count);
    const addr_t v = map_ + addr_t(index) * 8;
    k.core.write64(v, k.core.read64(v) + 1);
    ++counts_[index];
}

void check_prog_name(const std::string& name) {
    for (auto& p : registry())
        if (name == p.name) return;
    std::string known;
    for (auto& p : registry()) known += (known.empty() ? "" : ", ") + std::string(p.name);
    throw std::invalid_argument("unknown XDP program \"" + name + "\" (known: " + known + ")");
}

std::unique_ptr<bpf_prog> make_prog(const std::string& name, kernel& k, int redirect_ifindex) {
    check_prog_name(name);
    if (name == "none") return nullptr;
    if (name == "pass") return std::make_unique<pass_prog>();
    if (name == "drop") return std::make_unique<drop_prog>();
    if (name == "tx") return std::make_unique<tx_prog>();
    if (name == "xdp1") return std::make_unique<xdp12_prog>(k, false);
    if (name == "xdp2") return std::make_unique<xdp12_prog>(k, true);
    return std::make_unique<redirect_prog>(redirect_ifindex);
}

}  // namespace fecsim::firmware::xdp
