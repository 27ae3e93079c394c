// libFuzzer: the ENET model driven from the core side. The input is a program of register
// writes and reads, memory writes (random descriptor contents in the rings), frames from the
// wire (PAUSE frames among them) and time steps. The model must behave as silicon does (set
// EBERR, stop a ring, hold or drop a frame, pause) and never crash, hang or touch host memory
// outside the simulated DDR.
#include "models/fec/descriptors.h"
#include "models/fec/enet.h"
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/net/frame.h"
#include "models/net/mac_control.h"
#include "models/sim_context.h"
#include "tests/support/tlm_initiator.h"

#include <cstdint>
#include <cstring>
#include <memory>

using namespace fecsim;

namespace {

constexpr uint64_t fec_base = 0x30BE0000, dram_base = 0x40000000, dram_size = 1 << 20;
constexpr uint64_t rx_ring = dram_base + 0x1000, tx_ring = dram_base + 0x2000, buffers = dram_base + 0x10000;
constexpr unsigned ring_size = 8;

// The far end of the wire: takes every frame at line rate.
struct sink_wire : net::eth_tx {
    sc_core::sc_time free_at;
    sc_core::sc_time send(net::frame_ptr f) override {
        free_at = std::max(sc_core::sc_time_stamp(), free_at) + net::wire_time(f->size(), 1000);
        return free_at;
    }
    sc_core::sc_time tx_free_at() const override { return free_at; }
    double speed_mbps() const override { return 1000; }
};

struct rig {
    mem::ddr dram{"dram", [] {
                      mem::ddr_params d;
                      d.size_bytes = dram_size, d.read_latency_ns = 90, d.write_latency_ns = 20;
                      d.bandwidth_mb_per_s = 16000;
                      return d;
                  }()};
    mem::router bus{"bus"};
    fec::enet dut{"dut", [] {
                      fec::enet_params p;
                      p.rx_fifo_bytes = p.tx_fifo_bytes = 4096, p.tx_prefetch_frames = 1;
                      p.desc_fetch_ns = p.data_setup_ns = p.writeback_ns = 15, p.rx_mac_latency_ns = 64;
                      p.system_clock_mhz = p.mdio_clock_mhz = 266;
                      return p;
                  }()};
    test::tlm_initiator cpu{"cpu"};
    sink_wire wire;
    sc_core::sc_signal<bool> irq[fec::max_irq_lines];

    rig() {
        cpu.socket.bind(bus.in);
        dut.dma.bind(bus.in);
        bus.connect("ddr", dram.socket);
        bus.connect("fec", dut.regs);
        bus.add_region({"dram", dram_base, dram_size, mem::mem_attr::normal_cacheable, "ddr", 0, 20});
        bus.add_region({"fec", fec_base, 0x4000, mem::mem_attr::device, "fec", 0, 0});
        for (unsigned i = 0; i < fec::max_irq_lines; ++i) dut.irq[i].bind(irq[i]);
        dut.attach_wire(wire);
    }
    void wr(uint32_t off, uint32_t v) { cpu.write(fec_base + off, &v, 4); }
    // What fec_restart() leaves: rings of empty RX descriptors with buffers, the MAC enabled.
    void restart() {
        for (unsigned i = 0; i < ring_size; ++i) {
            fec::bd d;
            d.sc = uint16_t(fec::BD_ENET_RX_EMPTY | (i + 1 == ring_size ? fec::BD_ENET_RX_WRAP : 0));
            d.bufaddr = uint32_t(buffers + i * 2048), d.esc = fec::BD_ENET_RX_INT;
            d.encode(fec::bd_format::enhanced);
            dram.poke(rx_ring - dram_base + i * fec::bd_bytes(fec::bd_format::enhanced), d.raw, fec::bd_bytes(fec::bd_format::enhanced));
        }
        wr(fec::PALR, 0x02000000), wr(fec::PAUR, 0x00010000);
        wr(fec::RDSR, uint32_t(rx_ring)), wr(fec::TDSR, uint32_t(tx_ring)), wr(fec::MRBR, 1984);
        wr(fec::RCR, 1984u << 16 | 0x4), wr(fec::TCR, fec::TCR_FDEN), wr(fec::FTRL, 1984);
        wr(fec::ECR, fec::ECR_ETHEREN | fec::ECR_DBSWP | fec::ECR_SPEED | fec::ECR_EN1588);
        wr(fec::RDAR, 0);
    }
};

struct reader {
    const uint8_t* p;
    size_t n;
    template <class T> T take() {
        T v{};
        const size_t k = std::min(sizeof v, n);
        std::memcpy(&v, p, k);
        p += k, n -= k;
        return v;
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fresh_simulation();
    // "no activity for sc_start()" is what a program that enables nothing should get.
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
    auto r = std::make_unique<rig>();
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration: the router registers its transport
    r->restart();
    reader in{data, size};
    for (int ops = 0; in.n > 0 && ops < 256; ++ops) {
        switch (in.take<uint8_t>() % 5) {
        case 0: {  // a register write anywhere in the window
            const uint32_t off = in.take<uint16_t>() & 0x3ffc;
            r->wr(off, in.take<uint32_t>());
            break;
        }
        case 1: {  // 16 bytes of memory: descriptors, buffers, anything
            const uint64_t at = (uint64_t(in.take<uint16_t>()) * 16) % dram_size;
            uint8_t b[16];
            for (auto& x : b) x = in.take<uint8_t>();
            r->dram.poke(at, b, sizeof b);
            break;
        }
        case 2: {  // a frame from the wire: to the DUT's address or not, or a PAUSE
            const size_t len = 14 + in.take<uint16_t>() % 2100;
            const uint8_t kind = in.take<uint8_t>();
            net::frame_ptr f = net::frame_pool::instance().get(len);
            if (kind & 2) {
                net::make_pause(*f, 0x020000000002ull, in.take<uint16_t>());
            } else {
                for (size_t i = 0; i < len; ++i) f->bytes[i] = uint8_t(i * 7 + len);
                if (kind & 1) {
                    const uint8_t dst[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
                    std::memcpy(f->data(), dst, 6);
                }
                net::append_fcs(*f);
            }
            r->dut.frame_arrived(std::move(f));
            break;
        }
        case 3:
            sc_core::sc_start(sc_core::sc_time(1 + in.take<uint8_t>() * 50.0, sc_core::SC_NS));
            break;
        default: {
            uint32_t v = 0;
            r->cpu.read(fec_base + (in.take<uint16_t>() & 0x3ffc), &v, 4);
        }
        }
    }
    sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_US));
    return 0;
}
