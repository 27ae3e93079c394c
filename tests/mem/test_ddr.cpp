// DDR model: functional storage, latency and bus occupancy under concurrent requesters.
#include "models/mem/ddr.h"
#include "models/process.h"
#include "models/sim_context.h"
#include "tests/support/tlm_initiator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

namespace fecsim {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using test::tlm_initiator;

// 16000 MB/s with 64-byte bursts: one burst occupies the bus for 4 ns.
mem::ddr_params params() {
    mem::ddr_params p;
    p.size_bytes = 1ull << 30;
    p.read_latency_ns = 100;
    p.write_latency_ns = 20;
    p.bandwidth_mb_per_s = 16000;
    p.burst_bytes = 64;
    return p;
}

// Two masters bound to one DDR through a tiny arbiter-free fan-in: each runs its own thread.
struct bench : sc_core::sc_module {
    mem::ddr dram{"dram", params()};
    tlm_initiator a{"a"}, b{"b"};
    std::function<void(tlm_initiator&)> run_a, run_b;

    struct fan_in : sc_core::sc_module {
        tlm_utils::simple_target_socket<fan_in> ta{"ta"}, tb{"tb"};
        tlm_utils::simple_initiator_socket<fan_in> out{"out"};
        explicit fan_in(sc_core::sc_module_name n) : sc_module(n) {
            ta.register_b_transport(this, &fan_in::fwd);
            tb.register_b_transport(this, &fan_in::fwd);
            ta.register_get_direct_mem_ptr(this, &fan_in::dmi);
        }
        bool dmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& d) { return out->get_direct_mem_ptr(gp, d); }
        void fwd(tlm::tlm_generic_payload& gp, sc_time& d) { out->b_transport(gp, d); }
    } mux{"mux"};

    explicit bench(sc_core::sc_module_name n) : sc_module(n) {
        a.socket.bind(mux.ta);
        b.socket.bind(mux.tb);
        mux.out.bind(dram.socket);
        spawn_thread("thread_a", [this] { thread_a(); });
        spawn_thread("thread_b", [this] { thread_b(); });
    }
    void thread_a() { if (run_a) run_a(a); }
    void thread_b() { if (run_b) run_b(b); }
};

TEST(ddr, stores_bytes_across_chunks_and_reads_back) {
    fresh_simulation();
    bench t("t");
    std::vector<uint8_t> in(200000), out(200000);
    for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 7 + 3);
    t.run_a = [&](tlm_initiator& m) {
        ASSERT_EQ(m.write(12345, in.data(), in.size()).status, tlm::TLM_OK_RESPONSE);
        ASSERT_EQ(m.read(12345, out.data(), out.size()).status, tlm::TLM_OK_RESPONSE);
    };
    sc_core::sc_start();
    EXPECT_EQ(in, out);
}

// Accesses of up to 64 bytes are copied inline, by size class: every size from 1 to 130 bytes, at
// every alignment of an 8-byte word and across a chunk boundary, moves exactly its bytes (the
// bytes around it keep theirs) and reads back what was written.
TEST(ddr, small_accesses_of_every_size_and_alignment_move_exactly_their_bytes) {
    fresh_simulation();
    bench t("t");
    t.run_a = [&](tlm_initiator& m) {
        constexpr size_t span = 160;
        std::vector<uint8_t> background(span), in(span), out(span), expected(span);
        uint8_t seed = 1;
        for (const uint64_t base : {uint64_t{0x1000}, uint64_t{65536 - 80}}) {  // the second crosses a chunk
            for (size_t n = 1; n <= 130; ++n) {
                for (size_t align = 0; align < 8; ++align) {
                    for (size_t i = 0; i < span; ++i) background[i] = uint8_t(0xA5 ^ i), in[i] = uint8_t(seed + 3 * i);
                    ++seed;
                    ASSERT_EQ(m.write(base, background.data(), span).status, tlm::TLM_OK_RESPONSE);
                    const size_t at = 8 + align;
                    ASSERT_EQ(m.write(base + at, in.data(), n).status, tlm::TLM_OK_RESPONSE);
                    expected = background;
                    std::copy(in.begin(), in.begin() + long(n), expected.begin() + long(at));
                    ASSERT_EQ(m.read(base, out.data(), span).status, tlm::TLM_OK_RESPONSE);
                    ASSERT_EQ(out, expected) << "write of " << n << " bytes at " << base + at;
                    std::fill(out.begin(), out.end(), 0x5A);
                    ASSERT_EQ(m.read(base + at, out.data(), n).status, tlm::TLM_OK_RESPONSE);
                    ASSERT_TRUE(std::equal(out.begin(), out.begin() + long(n), in.begin()))
                        << "read of " << n << " bytes at " << base + at;
                    ASSERT_TRUE(std::all_of(out.begin() + long(n), out.end(), [](uint8_t b) { return b == 0x5A; }))
                        << "read of " << n << " bytes wrote past them";
                }
            }
        }
    };
    sc_core::sc_start();
}

TEST(ddr, whole_gibibyte_is_addressable_and_beyond_is_an_address_error) {
    fresh_simulation();
    bench t("t");
    t.run_a = [&](tlm_initiator& m) {
        uint32_t v = 0xdeadbeef, r = 0;
        EXPECT_EQ(m.write((1ull << 30) - 4, &v, 4).status, tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(m.read((1ull << 30) - 4, &r, 4).status, tlm::TLM_OK_RESPONSE);
        EXPECT_EQ(r, v);
        EXPECT_EQ(m.read((1ull << 30) - 2, &r, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(m.read(1ull << 31, &r, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    };
    sc_core::sc_start();
}

TEST(ddr, latency_is_fixed_part_plus_whole_bursts) {
    fresh_simulation();
    bench t("t");
    t.run_a = [&](tlm_initiator& m) {
        uint8_t buf[256];
        EXPECT_EQ(m.read(0, buf, 64).delay, sc_time(104, SC_NS));   // 100 + 1 burst
        sc_core::wait(1, sc_core::SC_US);
        EXPECT_EQ(m.read(0, buf, 4).delay, sc_time(104, SC_NS));    // a word still costs a burst
        sc_core::wait(1, sc_core::SC_US);
        EXPECT_EQ(m.read(0, buf, 256).delay, sc_time(116, SC_NS));  // 100 + 4 bursts
        sc_core::wait(1, sc_core::SC_US);
        EXPECT_EQ(m.write(0, buf, 128).delay, sc_time(28, SC_NS));  // 20 + 2 bursts
    };
    sc_core::sc_start();
    EXPECT_EQ(t.dram.stats().reads, 3u);
    EXPECT_EQ(t.dram.stats().writes, 1u);
    EXPECT_EQ(t.dram.stats().busy, sc_time(32, SC_NS));  // 1 + 1 + 4 + 2 bursts
}

TEST(ddr, concurrent_requesters_queue_behind_each_other) {
    fresh_simulation();
    bench t("t");
    sc_time da, db;
    // Both ask for 1 KiB (16 bursts = 64 ns of bus) at t = 0; the second waits for the first.
    t.run_a = [&](tlm_initiator& m) { uint8_t buf[1024]; da = m.read(0, buf, 1024).delay; };
    t.run_b = [&](tlm_initiator& m) { uint8_t buf[1024]; db = m.read(4096, buf, 1024).delay; };
    sc_core::sc_start();
    const sc_time first = std::min(da, db), second = std::max(da, db);
    EXPECT_EQ(first, sc_time(164, SC_NS));   // 100 + 64
    EXPECT_EQ(second, sc_time(228, SC_NS));  // 64 queueing + 100 + 64
    EXPECT_EQ(t.dram.stats().queueing, sc_time(64, SC_NS));
}

TEST(ddr, requester_arriving_after_the_bus_frees_does_not_queue) {
    fresh_simulation();
    bench t("t");
    sc_time db;
    t.run_a = [&](tlm_initiator& m) { uint8_t buf[1024]; m.read(0, buf, 1024); };
    t.run_b = [&](tlm_initiator& m) {
        uint8_t buf[64];
        sc_core::wait(64, SC_NS);  // the first transfer occupies [0, 64) ns
        db = m.read(0, buf, 64).delay;
    };
    sc_core::sc_start();
    EXPECT_EQ(db, sc_time(104, SC_NS));
}

// Temporal decoupling: initiators call with annotated local times, not in timestamp order.
// A request waits only for transfers occupying the bus at its own timestamp.
TEST(ddr, arbitration_follows_timestamps_not_call_order) {
    fresh_simulation();
    bench t("t");
    sc_time early, inside, after;
    t.run_a = [&](tlm_initiator& m) {
        uint8_t buf[1024];
        // Called first, at local time 100 ns: occupies the bus for [100, 164) ns.
        EXPECT_EQ(m.transport(tlm::TLM_READ_COMMAND, 0, buf, 1024, sc_time(100, SC_NS)).delay, sc_time(264, SC_NS));
    };
    t.run_b = [&](tlm_initiator& m) {
        uint8_t buf[64];
        sc_core::wait(sc_core::SC_ZERO_TIME);  // b's calls come after a's
        // Earlier in simulated time than a's transfer: never delayed by it.
        early = m.transport(tlm::TLM_READ_COMMAND, 4096, buf, 64, sc_time(10, SC_NS)).delay;
        // Arrives while a's transfer holds the bus: waits until 164 ns.
        inside = m.transport(tlm::TLM_READ_COMMAND, 4096, buf, 64, sc_time(120, SC_NS)).delay;
        // After both: free bus.
        after = m.transport(tlm::TLM_READ_COMMAND, 4096, buf, 64, sc_time(300, SC_NS)).delay;
    };
    sc_core::sc_start();
    EXPECT_EQ(early, sc_time(10 + 104, SC_NS));
    EXPECT_EQ(inside, sc_time(120 + 44 + 104, SC_NS));
    EXPECT_EQ(after, sc_time(300 + 104, SC_NS));
    EXPECT_EQ(t.dram.stats().queueing, sc_time(44, SC_NS));
}

// A chain: a request arriving in one transfer waits for it and for the one right behind it.
TEST(ddr, a_wait_chains_through_back_to_back_transfers) {
    fresh_simulation();
    bench t("t");
    sc_time d;
    t.run_a = [&](tlm_initiator& m) {
        uint8_t buf[256];
        m.transport(tlm::TLM_READ_COMMAND, 0, buf, 256, sc_time(100, SC_NS));  // [100, 116)
        m.transport(tlm::TLM_READ_COMMAND, 0, buf, 256, sc_time(116, SC_NS));  // [116, 132)
        m.transport(tlm::TLM_READ_COMMAND, 0, buf, 256, sc_time(200, SC_NS));  // [200, 216)
        uint8_t one[64];
        d = m.transport(tlm::TLM_READ_COMMAND, 0, one, 64, sc_time(105, SC_NS)).delay;
    };
    sc_core::sc_start();
    EXPECT_EQ(d, sc_time(105 + 27 + 104, SC_NS));  // waits until 132, not 216
}

// The booking list keeps only what can still delay a request and answers most requests without
// searching it: its answers checked against a scan of every transfer ever booked (requests
// ahead of SystemC time by up to 2 us, in order and out of it, while time advances).
TEST(ddr, bus_booking_answers_as_a_scan_of_every_transfer) {
    fresh_simulation();
    bench t("t");
    t.run_a = [&](tlm_initiator&) {
        struct span {
            sc_time start, end;
        };
        std::vector<span> all;
        std::mt19937_64 rng(7);
        sc_time queueing, arrival;
        for (int i = 0; i < 20000; ++i) {
            if (rng() % 8 == 0) sc_core::wait(sc_time(double(rng() % (rng() % 16 == 0 ? 4000 : 200)), SC_NS));
            // In order just after the previous request (a core's stream), and in every other
            // block of requests half of them anywhere.
            const sc_time now = sc_core::sc_time_stamp();
            arrival = (i / 500) % 2 == 0 || rng() % 2 ? std::max(now, arrival + sc_time(double(rng() % 64), SC_NS))
                                                      : now + sc_time(double(rng() % 2000), SC_NS);
            const size_t bytes = rng() % 4 ? 64 : 1 + rng() % 1024;  // mostly lines
            const bool write = rng() % 2;
            const sc_time transfer(4.0 * double((bytes + 63) / 64), SC_NS);
            sc_time start = arrival;
            for (bool moved = true; moved;) {  // until no transfer occupies the bus at start
                moved = false;
                for (const span& s : all)
                    if (s.start <= start && s.end > start) start = s.end, moved = true;
            }
            all.push_back({start, start + transfer});
            queueing += start - arrival;
            const sc_time latency(write ? 20 : 100, SC_NS);
            ASSERT_EQ(t.dram.access(arrival, bytes, write), start - arrival + latency + transfer) << "request " << i;
        }
        EXPECT_EQ(t.dram.stats().queueing, queueing);
        EXPECT_GT(queueing, sc_time(100, sc_core::SC_US));  // the requests did contend
    };
    sc_core::sc_start();
}

TEST(ddr, dmi_pointer_aliases_the_storage) {
    fresh_simulation();
    bench t("t");
    t.run_a = [&](tlm_initiator& m) {
        tlm::tlm_generic_payload gp;
        gp.set_address(0x123458);
        tlm::tlm_dmi dmi;
        ASSERT_TRUE(m.socket->get_direct_mem_ptr(gp, dmi));
        ASSERT_LE(dmi.get_start_address(), 0x123458);
        ASSERT_GE(dmi.get_end_address(), 0x123458 + 3);
        uint32_t v = 0x01020304;
        std::memcpy(dmi.get_dmi_ptr() + (0x123458 - dmi.get_start_address()), &v, 4);
        uint32_t r = 0;
        m.read(0x123458, &r, 4);
        EXPECT_EQ(r, v);
    };
    sc_core::sc_start();
}

}  // namespace
}  // namespace fecsim
