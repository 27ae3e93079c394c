// Interconnect: decoding, attributes, fabric latency, target offsets, address errors, DMI.
#include "models/mem/ddr.h"
#include "models/mem/router.h"
#include "models/process.h"
#include "models/sim_context.h"
#include "tests/support/tlm_initiator.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <functional>
#include <iterator>
#include <vector>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;

// A register-like target that records the local address it was given.
struct fake_device : sc_core::sc_module {
    tlm_utils::simple_target_socket<fake_device> socket{"socket"};
    uint64_t last_addr = ~0ull;
    explicit fake_device(sc_core::sc_module_name n) : sc_module(n) {
        socket.register_b_transport(this, &fake_device::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        last_addr = gp.get_address();
        d += sc_time(10, SC_NS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

mem::ddr_params small_ddr() {
    mem::ddr_params p;
    p.size_bytes = 64 << 20;
    p.read_latency_ns = 100;
    p.write_latency_ns = 20;
    p.bandwidth_mb_per_s = 16000;
    return p;
}

struct bench : sc_core::sc_module {
    mem::ddr dram{"dram", small_ddr()};
    fake_device dev{"dev"};
    mem::router bus{"bus"};
    test::tlm_initiator cpu{"cpu"};
    std::function<void(test::tlm_initiator&)> body;

    explicit bench(sc_core::sc_module_name n) : sc_module(n) {
        cpu.socket.bind(bus.in);
        bus.connect("ddr", dram.socket);
        bus.connect("dev", dev.socket);
        bus.add_region({"dram", 0x40000000, 48 << 20, mem::mem_attr::normal_cacheable, "ddr", 0, 20});
        bus.add_region({"coherent", 0x43000000, 16 << 20, mem::mem_attr::normal_noncacheable, "ddr", 48 << 20, 20});
        bus.add_region({"regs", 0x30be0000, 0x4000, mem::mem_attr::device, "dev", 0, 150});
        spawn_thread("run", [this] { run(); });
    }
    void run() { if (body) body(cpu); }
};

TEST(router, decodes_ranges_with_their_attributes) {
    fresh_simulation();
    bench t("t");
    ASSERT_NE(t.bus.decode(0x40000000), nullptr);
    EXPECT_EQ(t.bus.decode(0x40000000)->attr, mem::mem_attr::normal_cacheable);
    EXPECT_EQ(t.bus.decode(0x43000040)->attr, mem::mem_attr::normal_noncacheable);
    EXPECT_EQ(t.bus.decode(0x30be0014)->attr, mem::mem_attr::device);
    EXPECT_EQ(t.bus.decode(0x30be0014)->name, "regs");
    EXPECT_EQ(t.bus.decode(0x30be4000), nullptr);
    EXPECT_EQ(t.bus.decode(0x3fffffff), nullptr);
    EXPECT_EQ(t.bus.decode(0x44000000), nullptr);
}

TEST(router, adds_fabric_latency_and_translates_to_target_offsets) {
    fresh_simulation();
    bench t("t");
    t.body = [&](test::tlm_initiator& m) {
        uint32_t v = 0;
        auto r = m.read(0x30be0184, &v, 4);
        EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(r.delay, sc_time(160, SC_NS));  // 150 fabric + 10 device
        EXPECT_EQ(t.dev.last_addr, 0x184u);
        // The coherent window aliases DDR at offset 48 MiB.
        uint32_t w = 0xcafef00d;
        EXPECT_EQ(m.write(0x43000010, &w, 4).status, tlm::TLM_OK_RESPONSE);
        uint32_t back = 0;
        t.dram.peek((48 << 20) + 0x10, &back, 4);
        EXPECT_EQ(back, w);
        sc_core::wait(1, sc_core::SC_US);
        EXPECT_EQ(m.read(0x40000000, &v, 4).delay, sc_time(124, SC_NS));  // 20 + 100 + 4
    };
    sc_core::sc_start();
}

// The core decodes an address for its attribute and then transports along the region it found;
// the coherency tap takes the attribute from the region transport returns. Both must be what the
// decoding transport does: same target address, latency, bytes and DDR booking.
TEST(router, transport_along_a_decoded_region_is_the_decoding_transport) {
    fresh_simulation();
    bench t("t");
    t.body = [&](test::tlm_initiator&) {
        struct access {
            uint64_t addr;
            bool write;
            unsigned len;
        };
        const access accesses[] = {{0x30be0184, false, 4}, {0x43000010, true, 4},  {0x40000000, false, 64},
                                   {0x43000040, false, 32}, {0x40001000, true, 64}, {0x30be0000, true, 4}};
        std::vector<sc_time> delays;  // of the decoding transport
        for (bool decoded : {false, true}) {
            for (size_t k = 0; k < std::size(accesses); ++k) {
                const access& x = accesses[k];
                uint8_t data[64] = {};
                for (unsigned i = 0; i < x.len; ++i) data[i] = static_cast<uint8_t>(x.addr + i + decoded);
                tlm::tlm_generic_payload gp;
                gp.set_command(x.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
                gp.set_address(x.addr);
                gp.set_data_ptr(data);
                gp.set_data_length(x.len);
                gp.set_streaming_width(x.len);
                sc_time delay = sc_time(5, SC_NS);
                const mem::region* r = t.bus.decode(x.addr);
                ASSERT_NE(r, nullptr);
                if (decoded) {
                    t.bus.transport(*r, gp, delay);
                } else {
                    EXPECT_EQ(t.bus.transport(gp, delay), r);
                }
                EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
                EXPECT_EQ(gp.get_address(), x.addr);  // restored after the target's local address
                if (r->target == "dev") {
                    EXPECT_EQ(t.dev.last_addr, x.addr - r->base + r->offset);
                }
                // Each access 1 us after the previous one, every transfer before it ended: the same
                // delay means the same latency, target and DDR booking.
                if (!decoded) {
                    delays.push_back(delay);
                } else {
                    EXPECT_EQ(delay, delays[k]) << std::hex << x.addr;
                }
                if (x.write && r->target == "ddr") {
                    uint8_t back[64] = {};
                    t.dram.peek(x.addr - r->base + r->offset, back, x.len);
                    EXPECT_EQ(std::memcmp(back, data, x.len), 0);
                }
                sc_core::wait(1, sc_core::SC_US);
            }
        }
        tlm::tlm_generic_payload gp;
        uint8_t b[4] = {};
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(0x10000000);
        gp.set_data_ptr(b);
        gp.set_data_length(4);
        sc_time d;
        EXPECT_EQ(t.bus.transport(gp, d), nullptr);
        EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    };
    sc_core::sc_start();
}

TEST(router, unmapped_and_straddling_accesses_are_address_errors) {
    fresh_simulation();
    bench t("t");
    t.body = [&](test::tlm_initiator& m) {
        uint8_t buf[8] = {};
        EXPECT_EQ(m.read(0x10000000, buf, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(m.read(0x30be3ffc, buf, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(m.write(0xffffffff, buf, 1).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    };
    sc_core::sc_start();
    EXPECT_EQ(t.bus.address_errors(), 3u);
}

TEST(router, rejects_overlaps_empty_ranges_and_unknown_targets) {
    fresh_simulation();
    bench t("t");
    EXPECT_THROW(t.bus.add_region({"x", 0x30be2000, 0x4000, mem::mem_attr::device, "dev", 0, 0}), std::invalid_argument);
    EXPECT_THROW(t.bus.add_region({"y", 0x50000000, 0, mem::mem_attr::device, "dev", 0, 0}), std::invalid_argument);
    EXPECT_THROW(t.bus.add_region({"z", 0x50000000, 16, mem::mem_attr::device, "nope", 0, 0}), std::invalid_argument);
    EXPECT_THROW(mem::mem_attr_from_string("cacheable"), std::invalid_argument);
}

TEST(router, dmi_ranges_come_back_in_global_addresses_clipped_to_the_region) {
    fresh_simulation();
    bench t("t");
    t.body = [&](test::tlm_initiator& m) {
        tlm::tlm_generic_payload gp;
        tlm::tlm_dmi dmi;
        gp.set_address(0x43000100);
        ASSERT_TRUE(m.socket->get_direct_mem_ptr(gp, dmi));
        EXPECT_EQ(dmi.get_start_address(), 0x43000000u);
        EXPECT_LE(dmi.get_end_address(), 0x43ffffffu);
        dmi.get_dmi_ptr()[0x100] = 0x5a;
        uint8_t b = 0;
        t.dram.peek((48 << 20) + 0x100, &b, 1);
        EXPECT_EQ(b, 0x5a);
        gp.set_address(0x10000000);
        EXPECT_FALSE(m.socket->get_direct_mem_ptr(gp, dmi));
    };
    sc_core::sc_start();
}

// The page table and the search agree with a scan of the region list, whatever the order of
// lookups: regions not page-aligned (a page shared by two regions, or by a region and a hole),
// smaller than a page, and more of them than the linear scan handles (the binary search).
TEST(router, decode_table_answers_as_a_scan_of_the_regions) {
    for (int n_regions : {3, 12}) {
        fresh_simulation();
        mem::ddr dram{"dram", small_ddr()};
        mem::router bus{"bus"};
        bus.connect("ddr", dram.socket);
        std::vector<mem::region> rs;
        uint64_t base = 0x40000000 - 0x1800;  // starts mid-page
        for (int i = 0; i < n_regions; ++i) {
            const uint64_t size = (i % 3 == 0) ? 0x900 : (i % 3 == 1) ? 0x3000 + 0x40 * i : 0x10000;
            rs.push_back({"r" + std::to_string(i), base, size, mem::mem_attr::normal_cacheable, "ddr",
                          uint64_t(i) << 16, 20});
            base += size + ((i % 2) ? 0 : 0x400);  // adjacent, or a hole shorter than a page
        }
        for (size_t i = rs.size(); i-- > 0;) bus.add_region(rs[i]);  // any insertion order
        const uint64_t lo = rs.front().base - 0x2000, hi = base + 0x2000;
        auto scan = [&](uint64_t a) -> const mem::region* {
            for (auto& r : bus.regions())
                if (a >= r.base && a < r.base + r.size) return &r;
            return nullptr;
        };
        uint64_t x = 88172645463325252ull;  // xorshift64: addresses in a random order, each twice
        for (int k = 0; k < 200000; ++k) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const uint64_t a = lo + x % (hi - lo);
            ASSERT_EQ(bus.decode(a), scan(a)) << std::hex << a;
            ASSERT_EQ(bus.decode(a), scan(a)) << std::hex << a;
        }
        for (auto& r : rs)
            for (uint64_t a : {r.base - 1, r.base, r.base + r.size - 1, r.base + r.size})
                ASSERT_EQ(bus.decode(a), scan(a)) << std::hex << a;
    }
}

}  // namespace
}  // namespace fecsim
