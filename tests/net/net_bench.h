// Bench parts for the net tests: a recording sink, a line-rate frame source and a frame builder.
#pragma once

#include "models/net/eth_port.h"
#include "models/net/frame.h"

#include <systemc>

#include <array>
#include <cstring>
#include <functional>
#include <vector>

namespace fecsim::test {

using mac = std::array<uint8_t, 6>;
inline const mac broadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
inline mac host_mac(uint8_t n) { return {0x02, 0, 0, 0, 0, n}; }

// A frame of `size` bytes incl. a valid FCS; the payload after the EtherType carries `tag`.
inline net::frame_ptr make_frame(const mac& dst, const mac& src, size_t size, uint16_t type = 0x0800, uint32_t tag = 0) {
    auto f = net::frame_pool::instance().get(size - net::fcs_bytes);
    std::memset(f->data(), 0, f->size());
    std::memcpy(f->data(), dst.data(), 6);
    std::memcpy(f->data() + 6, src.data(), 6);
    f->data()[12] = uint8_t(type >> 8), f->data()[13] = uint8_t(type);
    if (f->size() >= 18) std::memcpy(f->data() + 14, &tag, 4);
    net::append_fcs(*f);
    f->created = sc_core::sc_time_stamp();
    return f;
}

// 802.3x PAUSE (or XON for quanta 0), padded to 64 bytes.
inline net::frame_ptr make_pause(const mac& src, uint16_t quanta) {
    auto f = make_frame({0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}, src, 64, 0x8808);
    f->bytes.resize(60);
    f->data()[14] = 0x00, f->data()[15] = 0x01;
    f->data()[16] = uint8_t(quanta >> 8), f->data()[17] = uint8_t(quanta);
    net::append_fcs(*f);
    return f;
}

inline uint16_t ether_type(const net::frame& f) { return uint16_t(f.bytes[12] << 8 | f.bytes[13]); }
inline uint32_t tag_of(const net::frame& f) {
    uint32_t t;
    std::memcpy(&t, f.data() + 14, 4);
    return t;
}

// Records every arrival; keeps per-frame details only when asked (long line-rate runs don't).
struct recorder : net::eth_sink {
    struct arrival {
        sc_core::sc_time at;
        size_t size;
        uint16_t type;
        uint32_t tag;
        uint16_t pause_quanta;
    };
    bool keep = true;
    uint64_t count = 0;
    sc_core::sc_time last;
    std::vector<arrival> log;
    std::function<void(net::frame&)> on_frame;

    void frame_arrived(net::frame_ptr f) override {
        ++count;
        last = sc_core::sc_time_stamp();
        if (on_frame) on_frame(*f);
        if (keep) {
            const uint16_t type = ether_type(*f);
            const uint16_t q = type == 0x8808 ? uint16_t(f->bytes[16] << 8 | f->bytes[17]) : 0;
            log.push_back({last, f->size(), type, tag_of(*f), q});
        }
    }
    size_t count_type(uint16_t type) const {
        size_t n = 0;
        for (auto& a : log) n += a.type == type;
        return n;
    }
};

// Sends `limit` frames back to back through `tx` from `start` on, each as soon as the transmitter
// is free (one method activation per frame), tagging them 0, 1, 2, ...
struct source : sc_core::sc_module {
    net::eth_tx* tx = nullptr;
    mac dst = broadcast, src = host_mac(1);
    size_t frame_size = 64;
    uint64_t limit = ~0ull;
    sc_core::sc_time start;
    uint64_t sent = 0;

    explicit source(sc_core::sc_module_name n) : sc_module(n) {
        sc_core::sc_spawn_options o;
        o.spawn_method();
        o.set_sensitivity(&ev_);
        sc_core::sc_spawn([this] { run(); }, "run", &o);
    }

private:
    void run() {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (sent == 0 && now < start) return ev_.notify(start - now);
        if (sent >= limit || !tx) return;
        const sc_core::sc_time free = tx->send(make_frame(dst, src, frame_size, 0x0800, uint32_t(sent)));
        ++sent;
        ev_.notify(free - now);
    }
    sc_core::sc_event ev_;
};

}  // namespace fecsim::test
