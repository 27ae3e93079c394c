// pcap capture and replay: a capture fecsim wrote replays to the same frames at the same
// timing; fixed-rate and line-rate modes, loops; pcapng input; malformed captures are errors.
#include "models/sim_context.h"
#include "tests/traffic/test_util.h"
#include "tests/traffic/test_wire.h"
#include "traffic/pcap_replay.h"
#include "traffic/pcap_writer.h"
#include "traffic/pktgen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fecsim::traffic {
namespace {

using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;

// Captures 40 pktgen frames (bursts of 4 every 10 us, varying ports) as they leave the generator.
struct captured {
    std::string path;
    std::vector<std::vector<uint8_t>> frames;  // incl. FCS, as sent
    std::vector<sc_time> first_bits;
};

captured capture_pktgen(const std::string& name) {
    captured c{test::scratch_path(name), {}, {}};
    fresh_simulation();
    pktgen_model_params p;
    for (const char* l : {"count 40", "burst 4", "ratep 100000", "flag UDPCSUM", "udp_dst_min 9", "udp_dst_max 19",
                          "pkt_size 200", "dst_mac 90:e2:ba:ff:ff:ff"})
        apply_pktgen_command(p.cmd, l);
    p.dev = {{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001};
    pktgen gen("gen", p);
    test::collector sink;
    test::test_wire wire("wire", 1000, &sink);
    gen.connect(wire);
    pcap_writer w(c.path);
    wire.tap = [&](const net::frame& f, sc_time first_bit) {
        w.write(f, first_bit);
        c.frames.push_back(f.bytes);
        c.first_bits.push_back(first_bit);
    };
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_EQ(w.frames(), 40u);
    return c;
}

struct replay_bench {
    std::unique_ptr<pcap_replay> gen;
    test::collector rx{100000};
    std::unique_ptr<test::test_wire> wire;
    std::vector<sc_time> first_bits;
    std::vector<std::vector<uint8_t>> frames;
    explicit replay_bench(const pcap_replay_params& p) {
        gen = std::make_unique<pcap_replay>("replay", p);
        wire = std::make_unique<test::test_wire>("wire", 1000, &rx);
        wire->tap = [this](const net::frame& f, sc_time t) {
            first_bits.push_back(t);
            frames.push_back(f.bytes);
        };
        gen->connect(*wire);
    }
};

TEST(pcap, round_trip_gives_the_same_frames_at_the_same_times) {
    const captured c = capture_pktgen("roundtrip.pcap");
    fresh_simulation();
    pcap_replay_params p;
    p.path = c.path;
    p.start_delay_ns = 5000;
    replay_bench b(p);
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(b.frames.size(), c.frames.size());
    for (size_t i = 0; i < c.frames.size(); ++i) {
        EXPECT_EQ(b.frames[i], c.frames[i]) << "frame " << i;
        // The capture stores whole nanoseconds: the replayed timing is exact to 1 ns.
        const double want = (c.first_bits[i] - c.first_bits[0]).to_seconds(), got = (b.first_bits[i] - b.first_bits[0]).to_seconds();
        EXPECT_NEAR(got, want, 1e-9) << "frame " << i;
    }
    EXPECT_EQ(b.first_bits[0], sc_time(5, SC_US));
    EXPECT_TRUE(b.gen->finished());
    EXPECT_EQ(b.gen->tx_frames(), 40u);
}

TEST(pcap, fixed_rate_and_loops) {
    const captured c = capture_pktgen("rate.pcap");
    fresh_simulation();
    pcap_replay_params p;
    p.path = c.path;
    p.mode = replay_mode::rate;
    p.rate_pps = 50000;
    p.loops = 3;
    replay_bench b(p);
    sc_core::sc_start(10, sc_core::SC_MS);
    ASSERT_EQ(b.frames.size(), 120u);
    for (size_t i = 1; i < b.first_bits.size(); ++i) EXPECT_EQ(b.first_bits[i] - b.first_bits[i - 1], sc_time(20, SC_US));
    EXPECT_EQ(b.frames[40], c.frames[0]);
    EXPECT_EQ(b.frames[119], c.frames[39]);
}

TEST(pcap, line_rate_sends_back_to_back_and_loops_forever_with_zero) {
    const captured c = capture_pktgen("line.pcap");
    fresh_simulation();
    pcap_replay_params p;
    p.path = c.path;
    p.mode = replay_mode::line;
    p.loops = 0;
    replay_bench b(p);
    sc_core::sc_start(1, sc_core::SC_MS);
    const sc_time each = net::wire_time(204, 1000);  // 200 + FCS
    EXPECT_NEAR(double(b.frames.size()), 1e-3 / each.to_seconds(), 1.0);
    for (size_t i = 1; i < 100; ++i) EXPECT_EQ(b.first_bits[i] - b.first_bits[i - 1], each);
    EXPECT_FALSE(b.gen->finished());
}

TEST(pcap, classic_nanosecond_pcap_is_read_too) {
    fresh_simulation();
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed: no classic pcap file to read";
    const captured c = capture_pktgen("ng-src.pcapng");
    const std::string classic = test::scratch_path("classic.pcap");
    test::run("tshark -r " + c.path + " -F nsecpcap -w " + classic);
    const pcap_trace t = load_pcap(classic);
    ASSERT_EQ(t.size(), 40u);
    for (size_t i = 0; i < t.size(); ++i) {
        ASSERT_EQ(t.length(i), c.frames[i].size() - 4);
        EXPECT_EQ(0, std::memcmp(t.bytes.data() + t.offset[i], c.frames[i].data(), t.length(i)));
        EXPECT_EQ(t.time_ns[i], uint64_t(c.first_bits[i].value() / sc_time(1, SC_NS).value()));
    }
}

// Little-endian pcap pieces for hand-made bad files.
std::string le32(uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; }
std::string le16(uint16_t v) { return std::string{char(v), char(v >> 8)}; }
std::string global_header(uint32_t linktype = 1) {
    return le32(0xa1b2c3d4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(65535) + le32(linktype);
}
std::string record(uint32_t caplen, uint32_t len, size_t bytes, uint32_t usec = 0) {
    return le32(1) + le32(usec) + le32(caplen) + le32(len) + std::string(bytes, '\x11');
}

std::string load_error(const std::string& path) {
    try {
        load_pcap(path);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

TEST(pcap, malformed_captures_are_clear_errors) {
    fresh_simulation();
    const std::string missing = test::scratch_path("missing.pcap");
    EXPECT_EQ(load_error(missing).rfind(missing + ": cannot read capture: ", 0), 0u) << load_error(missing);

    const std::string garbage = test::write_file("garbage.pcap", "this is not a capture at all, just text\n");
    EXPECT_EQ(load_error(garbage).rfind(garbage + ": cannot read capture: ", 0), 0u) << load_error(garbage);

    const std::string truncated = test::write_file("truncated.pcap", global_header() + record(60, 60, 60) + record(60, 60, 20));
    EXPECT_NE(load_error(truncated).find(truncated + ": packet 2: "), std::string::npos) << load_error(truncated);
    EXPECT_NE(load_error(truncated).find("truncated"), std::string::npos) << load_error(truncated);

    const std::string header_cut = test::write_file("cut.pcap", global_header().substr(0, 10));
    EXPECT_NE(load_error(header_cut), "");

    const std::string empty = test::write_file("empty.pcap", global_header());
    EXPECT_EQ(load_error(empty), empty + ": the capture holds no packets");

    const std::string snapped = test::write_file("snap.pcap", global_header() + record(40, 60, 40));
    EXPECT_EQ(load_error(snapped),
              snapped + ": packet 1: only 40 of 60 bytes captured (snaplen); whole frames are needed to replay");

    const std::string runt = test::write_file("runt.pcap", global_header() + record(10, 10, 10));
    EXPECT_EQ(load_error(runt), runt + ": packet 1: 10 bytes is not a frame that can be sent (14 to 9600)");

    const std::string raw = test::write_file("raw.pcap", global_header(101) + record(60, 60, 60));
    EXPECT_EQ(load_error(raw), raw + ": link type RAW (12) is not Ethernet (EN10MB)");
}

TEST(pcap, a_frame_stamped_before_its_predecessor_goes_at_once) {
    // 10 us, then 0 us (earlier than the first frame), then 20 us: each frame waits for its gap
    // to the one before, a negative gap is none. The subtraction from the first frame's time
    // used to wrap around, and frames 2 and 3 were never sent.
    fresh_simulation();
    pcap_replay_params p;
    p.path = test::write_file("backwards.pcap", global_header() + record(60, 60, 60, 10) + record(60, 60, 60, 0) +
                                                    record(60, 60, 60, 20));
    replay_bench b(p);
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(b.first_bits.size(), 3u);
    EXPECT_EQ(b.first_bits[0], sc_time(0, SC_NS));
    EXPECT_EQ(b.first_bits[1], net::wire_time(64, 1000));  // as soon as the wire is free
    EXPECT_EQ(b.first_bits[2], sc_time(20, SC_US));
    EXPECT_TRUE(b.gen->finished());
}

TEST(pcap, directories_and_endless_inputs_are_refused) {
    fresh_simulation();
    const std::string dir = test::scratch_path("a-directory");
    std::filesystem::create_directories(dir);
    EXPECT_EQ(load_error(dir), dir + ": is a directory, not a file");
    EXPECT_EQ(load_error("/dev/zero").rfind("/dev/zero: cannot read capture: ", 0), 0u) << load_error("/dev/zero");
}

TEST(pcap, kind_pcap_from_config) {
    fresh_simulation();
    const captured c = capture_pktgen("cfg.pcap");
    fresh_simulation();
    auto gen = make_generator("gen", test::load_with_generator({{"kind", "pcap"}, {"pcap_file", c.path},
                                                               {"pcap", {{"mode", "line"}, {"loops", 2}}}}),
                              false);
    test::collector rx;
    test::test_wire wire("wire", 1000, &rx);
    gen->connect(wire);
    sc_core::sc_start(1, sc_core::SC_MS);
    EXPECT_EQ(rx.count, 80u);
    nlohmann::json j;
    gen->report(j);
    EXPECT_EQ(j["kind"], "pcap");
    EXPECT_EQ(j["tx_frames"], 80);
    EXPECT_EQ(j["loops_completed"], 2);

    fresh_simulation();
    const config no_file = test::load_with_generator({{"kind", "pcap"}}, "nofile.json");
    EXPECT_THROW(make_generator("gen", no_file, false), config_error);
    // kind set with --set: the --set is to blame, not the experiment file that has no pcap in it
    const config set_kind = config::load(test::write_file("plain.json", R"({"platform": "imx8mp"})"), {"generator.kind=pcap"});
    try {
        make_generator("gen", set_kind, false);
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_EQ(std::string(e.what()), "--set generator.kind=pcap: /generator/kind: generator.kind pcap needs a capture "
                                         "file (generator.pcap_file)");
    }
    // A path that leads to no file names the --set (or the experiment) and the key that gave it.
    const std::string missing = test::scratch_path("missing.pcap"), dir = test::scratch_path("a-directory");
    std::filesystem::create_directories(dir);
    for (const auto& [path, problem] : {std::pair{missing, ": cannot open file"}, std::pair{dir, ": is a directory, not a file"}})
        try {
            make_generator("gen", config::load(test::write_file("plain.json", R"({"platform": "imx8mp"})"),
                                               {"generator.kind=pcap", "generator.pcap_file=" + path}),
                           false);
            ADD_FAILURE() << "no error for " << path;
        } catch (const config_error& e) {
            EXPECT_EQ(std::string(e.what()),
                      "--set generator.pcap_file=" + path + ": /generator/pcap_file: " + path + problem);
        }
    const config bad = test::load_with_generator({{"kind", "pcap"}, {"pcap_file", test::write_file("x.pcap", "junk")}});
    EXPECT_THROW(make_generator("gen", bad, false), config_error);
}

TEST(pcap, writer_reports_unwritable_paths_and_unknown_interfaces) {
    fresh_simulation();
    EXPECT_THROW(pcap_writer("/nonexistent-dir/x.pcapng"), config_error);
    pcap_writer w(test::scratch_path("bad-if.pcapng"));
    auto f = net::frame_pool::instance().get(64);
    EXPECT_THROW(w.write(*f, sc_time(1, SC_NS), 2), std::invalid_argument);
    EXPECT_THROW(w.write(*f, sc_time(1, SC_NS), -1), std::invalid_argument);
    EXPECT_EQ(w.frames(), 0u);
    EXPECT_THROW(w.frames(2), std::invalid_argument);
}

// An independent pcapng reader for the tests (little-endian files only, as fecsim writes them).
struct ng_block {
    uint32_t type = 0;
    std::string body;  // between the length fields
};
struct ng_file {
    std::vector<ng_block> blocks;
    std::string error;
};
uint32_t rd32(const std::string& s, size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | uint8_t(s.at(at + size_t(i)));
    return v;
}
uint16_t rd16(const std::string& s, size_t at) { return uint16_t(uint8_t(s.at(at)) | (uint8_t(s.at(at + 1)) << 8)); }
ng_file read_ng(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string s((std::istreambuf_iterator<char>(in)), {});
    ng_file r;
    size_t at = 0;
    while (at < s.size()) {
        if (s.size() - at < 12) return r.error = "short block at " + std::to_string(at), r;
        const uint32_t len = rd32(s, at + 4);
        if (len % 4 || len < 12 || at + len > s.size()) return r.error = "bad length at " + std::to_string(at), r;
        if (rd32(s, at + len - 4) != len) return r.error = "trailing length differs at " + std::to_string(at), r;
        r.blocks.push_back({rd32(s, at), s.substr(at + 8, len - 12)});
        at += len;
    }
    return r;
}
// Options from `from` in a block body: code -> value.
std::map<uint16_t, std::string> ng_options(const std::string& body, size_t from) {
    std::map<uint16_t, std::string> o;
    while (from + 4 <= body.size()) {
        const uint16_t code = rd16(body, from), len = rd16(body, from + 2);
        if (code == 0) break;
        o[code] = body.substr(from + 4, len);
        from += 4 + ((len + 3u) & ~3u);
    }
    return o;
}

TEST(pcap, pcapng_blocks_field_by_field) {
    fresh_simulation();
    const std::string path = test::scratch_path("fields.pcapng");
    // Frame sizes chosen so the data needs 0, 1, 2 and 3 padding bytes (size without FCS).
    const std::vector<size_t> sizes = {64, 67, 66, 65};
    const std::vector<int> ifs = {pcap_writer::dut_rx, pcap_writer::dut_tx, pcap_writer::dut_tx, pcap_writer::dut_rx};
    const std::vector<sc_time> when = {sc_time(7, SC_NS), sc_time(4294967296.0 + 5, SC_NS), sc_time(1500, SC_US),
                                       sc_time(2, sc_core::SC_SEC) + sc_time(3, SC_NS)};
    std::vector<net::frame_ptr> frames;
    {
        pcap_writer w(path);
        for (size_t i = 0; i < sizes.size(); ++i) {
            auto f = net::frame_pool::instance().get(sizes[i] - 4);
            for (size_t b = 0; b < f->size(); ++b) f->bytes[b] = uint8_t(b * 7 + i);
            net::append_fcs(*f);
            w.write(*f, when[i], ifs[i]);
            frames.push_back(std::move(f));
        }
        EXPECT_EQ(w.frames(), 4u);
        EXPECT_EQ(w.frames(pcap_writer::dut_tx), 2u);
        EXPECT_EQ(w.frames(pcap_writer::dut_rx), 2u);
    }
    const ng_file ng = read_ng(path);
    ASSERT_EQ(ng.error, "");
    ASSERT_EQ(ng.blocks.size(), 1u + 2u + 4u);

    const ng_block& shb = ng.blocks[0];
    EXPECT_EQ(shb.type, 0x0A0D0D0Au);
    EXPECT_EQ(rd32(shb.body, 0), 0x1A2B3C4Du);  // byte-order magic
    EXPECT_EQ(rd16(shb.body, 4), 1u);           // version 1.0
    EXPECT_EQ(rd16(shb.body, 6), 0u);
    EXPECT_EQ(ng_options(shb.body, 16)[4], "fecsim");

    const char* names[] = {"dut-tx", "dut-rx"};
    for (int i = 0; i < 2; ++i) {
        const ng_block& idb = ng.blocks[1 + size_t(i)];
        EXPECT_EQ(idb.type, 1u);
        EXPECT_EQ(rd16(idb.body, 0), 1u);  // LINKTYPE_ETHERNET
        EXPECT_EQ(rd32(idb.body, 4), pcap_writer::snaplen);
        auto o = ng_options(idb.body, 8);
        EXPECT_EQ(o[2], names[i]);
        EXPECT_EQ(o[2], pcap_writer::interface_name(i));
        EXPECT_EQ(o[9], std::string(1, '\x09'));  // if_tsresol: 10^-9 s
        EXPECT_EQ(o[13], std::string(1, '\x00'));  // if_fcslen: no FCS in the data
    }

    for (size_t i = 0; i < sizes.size(); ++i) {
        const ng_block& epb = ng.blocks[3 + i];
        EXPECT_EQ(epb.type, 6u);
        EXPECT_EQ(rd32(epb.body, 0), uint32_t(ifs[i])) << i;
        const uint64_t ns = (uint64_t(rd32(epb.body, 4)) << 32) | rd32(epb.body, 8);
        EXPECT_EQ(ns, uint64_t(when[i].value() / sc_time(1, SC_NS).value())) << i;
        const size_t len = sizes[i] - 4;
        EXPECT_EQ(rd32(epb.body, 12), len) << i;  // captured
        EXPECT_EQ(rd32(epb.body, 16), len) << i;  // original: nothing truncated
        EXPECT_EQ(0, std::memcmp(epb.body.data() + 20, frames[i]->data(), len)) << i;
        const size_t opts = 20 + ((len + 3) & ~size_t(3));
        for (size_t p = 20 + len; p < opts; ++p) EXPECT_EQ(epb.body[p], '\0') << "padding of " << i;
        auto o = ng_options(epb.body, opts);
        ASSERT_EQ(o[2].size(), 4u);
        // epb_flags direction, from the DUT's point of view: 2 = outbound (dut-tx), 1 = inbound.
        EXPECT_EQ(rd32(o[2], 0), ifs[i] == pcap_writer::dut_tx ? 2u : 1u) << i;
    }
}

TEST(pcap, frames_land_on_the_interface_given) {
    fresh_simulation();
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed: capture not decoded";
    const std::string path = test::scratch_path("ifaces.pcapng");
    // 5 frames on dut-tx and 3 on dut-rx, interleaved; frame i has i in its last payload byte.
    const std::vector<int> ifs = {0, 1, 0, 0, 1, 0, 1, 0};
    {
        pcap_writer w(path);
        for (size_t i = 0; i < ifs.size(); ++i) {
            auto f = net::frame_pool::instance().get(60);
            std::fill(f->bytes.begin(), f->bytes.end(), uint8_t(0));
            f->bytes[12] = 0x88;  // local experimental EtherType: tshark shows raw data
            f->bytes[13] = 0xb5;
            f->bytes[59] = uint8_t(0xa0 + i);
            net::append_fcs(*f);
            w.write(*f, sc_time(double(1000 * (i + 1)), SC_NS), ifs[i]);
        }
    }
    std::string err;
    const std::string out = test::run("tshark -n -r " + path +
                                      " -T fields -E separator=, -e frame.interface_id -e frame.interface_name"
                                      " -e frame.packet_flags_direction -e frame.len -e frame.time_epoch",
                                      &err);
    std::istringstream lines(out);
    std::string line;
    size_t i = 0;
    for (; std::getline(lines, line); ++i) {
        ASSERT_LT(i, ifs.size()) << out;
        // epb_flags, printed whole: direction 2 = outbound, 1 = inbound.
        const std::string want = ifs[i] == 0 ? "0,dut-tx,0x00000002,60," : "1,dut-rx,0x00000001,60,";
        EXPECT_EQ(line.substr(0, want.size()), want) << "frame " << i;
        // Nanosecond timestamps: 1000 * (i + 1) ns after the epoch.
        EXPECT_NE(line.find("0.00000" + std::to_string(i + 1) + "000"), std::string::npos) << line;
    }
    EXPECT_EQ(i, ifs.size());
    const std::string tx = test::run("tshark -n -r " + path + " -Y 'frame.interface_name == \"dut-tx\"' -T fields -e data.data");
    EXPECT_EQ(std::count(tx.begin(), tx.end(), '\n'), 5);
    for (const char* last : {"a0\n", "a2\n", "a3\n", "a5\n", "a7\n"}) EXPECT_NE(tx.find(last), std::string::npos) << tx;
    for (const char* last : {"a1\n", "a4\n", "a6\n"}) EXPECT_EQ(tx.find(last), std::string::npos) << tx;
    if (err.rfind("Running as user", 0) == 0) err.erase(0, err.find('\n') + 1);  // tshark's note when run as root
    EXPECT_EQ(err, "") << "tshark warnings";
}

}  // namespace
}  // namespace fecsim::traffic

#include "models/net/link.h"
#include "models/net/mac_control.h"
#include "models/process.h"
#include "models/sim_stats.h"
#include "traffic/pktgen_builder.h"

namespace fecsim::traffic {
namespace {

pcap_replay_params replay_sending_nothing(const std::string& capture) {
    pcap_replay_params p;
    p.path = capture;
    p.start_delay_ns = 1e9;  // no frame sent in this run
    return p;
}

pktgen_params sixty_byte_frames() {
    pktgen_params cmd;
    apply_pktgen_command(cmd, "pkt_size 60");
    return cmd;
}

// The replay (flow control off, sending nothing in this run) on side a of a real link with
// 1 us of propagation: a 64-byte frame sent at t arrives at t + 576 ns + 1 us. Side b sends it
// pktgen frames stamped when built (the analysis' latency is their arrival time less the stamp)
// and PAUSE frames. With `tap`, the link delivers every frame itself (one event per arrival).
// Built after fresh_simulation().
struct replay_behind_a_link {
    pcap_replay gen;
    net::link l;
    test::collector far;
    pktgen_builder builder;

    replay_behind_a_link(const std::string& capture, bool tap)
        : gen("replay", replay_sending_nothing(capture)), l("l", {1000, 1000}),
          builder(sixty_byte_frames(), {{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001}, 1) {
        l.bind(gen, far);
        gen.connect(l.end_a());
        if (tap) l.add_tap([](int, const net::frame&, sc_time, sc_time) {});
    }
    net::frame_ptr stamped_now(uint32_t seq) {
        net::frame_ptr f = net::frame_pool::instance().get(0);
        builder.build(*f, seq, sc_core::sc_time_stamp());
        return f;
    }
    static net::frame_ptr pause() {
        net::frame_ptr f = net::frame_pool::instance().get(0);
        net::make_pause(*f, 0x02000000000bull, 16);
        return f;
    }
};

// A thread sends the replay behind a link pktgen frames and a PAUSE frame, reads its report just
// before and just after their arrivals, and starts its window while a frame is in flight and just
// after one arrived.
struct analysed_run {
    std::vector<nlohmann::json> seen;  // the replay's report at each look
    uint64_t events = 0;
};

analysed_run run_analysed_frames(const std::string& capture, bool tap) {
    fresh_simulation();
    replay_behind_a_link s(capture, tap);
    uint32_t seq = 0;
    analysed_run r;
    auto at = [](double us) { wait(sc_time(us, SC_US) - sc_core::sc_time_stamp()); };
    auto look = [&] {
        nlohmann::json j;
        s.gen.report(j);
        r.seen.push_back(j);
    };
    spawn_thread("peer", [&] {
        at(10), s.l.end_b().send(s.stamped_now(++seq));  // arrives at 11.576 us
        at(11.5), look();
        at(11.6), look();
        at(20), s.l.end_b().send(s.pause());             // arrives at 21.576 us
        s.l.end_b().send(s.stamped_now(++seq));          // after it on the wire: 22.248 us
        at(21.5), look();
        at(21.6), look();
        at(22), s.gen.reset_stats(), look();  // the frame in flight arrives in the window
        at(22.3), look();
        at(30.3), s.l.end_b().send(s.stamped_now(++seq));  // arrives at 31.876 us
        at(31.9), s.gen.reset_stats(), look();             // it arrived before this window
    });
    const uint64_t e0 = sim_stats::kernel_events;
    sc_core::sc_start(40, SC_US);
    r.events = sim_stats::kernel_events - e0;
    return r;
}

TEST(pcap, frames_it_only_analyses_are_taken_when_sent_and_analysed_at_their_arrival) {
    const captured c = capture_pktgen("analysed.pcap");
    const analysed_run taken = run_analysed_frames(c.path, false);
    ASSERT_EQ(taken.seen.size(), 7u);
    std::vector<uint64_t> frames, pauses;
    for (const nlohmann::json& j : taken.seen) frames.push_back(j["rx"]["frames"]), pauses.push_back(j["pause_frames_received"]);
    EXPECT_EQ(frames, (std::vector<uint64_t>{0, 1, 1, 1, 0, 1, 0}));
    EXPECT_EQ(pauses, (std::vector<uint64_t>{0, 0, 0, 1, 0, 0, 0}));
    // Stamped at 10 us (pktgen's microseconds), analysed at its arrival, 11.576 us.
    EXPECT_EQ(taken.seen[1]["rx"]["latency_ns"]["max"], 1576);
    // The frame sent at 20.672 us is stamped 20 us: it arrives at 22.248 us.
    EXPECT_EQ(taken.seen[5]["rx"]["latency_ns"]["max"], 2248);
    EXPECT_EQ(taken.events, 0u) << "no delivery event for a frame only analysed";

    const analysed_run delivered = run_analysed_frames(c.path, true);  // the link's way: one event per arrival
    EXPECT_EQ(delivered.events, 4u);
    EXPECT_EQ(delivered.seen, taken.seen);
}

// Frames arriving exactly where sc_start returns: a pktgen frame at the warm-up's end
// (11.576 us), a PAUSE frame at the run's end (21.576 us). SystemC returns before running the
// events of its end time, so the link delivers the first after the reset, in the window (analysed
// with its arrival time), and the second not at all. The replay's report before and after the
// reset and at the end, and the link's frames into the replay.
std::vector<nlohmann::json> run_frames_at_the_run_boundaries(const std::string& capture, bool tap) {
    fresh_simulation();
    replay_behind_a_link s(capture, tap);
    spawn_thread("peer", [&] {
        wait(sc_time(10, SC_US)), s.l.end_b().send(s.stamped_now(1));
        wait(sc_time(10, SC_US)), s.l.end_b().send(s.pause());
    });
    std::vector<nlohmann::json> seen;
    auto look = [&] {
        nlohmann::json j;
        s.gen.report(j);
        j["link_frames"] = s.l.stats(net::link::b_to_a).frames;
        seen.push_back(j);
    };
    run_for(sc_time(11576, SC_NS));  // the warm-up
    look(), s.gen.reset_stats(), s.l.reset_stats(), look();
    run_for(sc_time(10, SC_US));  // the measured window
    look();
    return seen;
}

TEST(pcap, a_frame_it_takes_early_arriving_at_the_warm_up_or_run_end_is_analysed_as_the_link_delivers_it) {
    const captured c = capture_pktgen("boundaries.pcap");
    const std::vector<nlohmann::json> delivered = run_frames_at_the_run_boundaries(c.path, true);
    ASSERT_EQ(delivered.size(), 3u);
    std::vector<uint64_t> frames, pauses, link_frames;
    for (const nlohmann::json& j : delivered)
        frames.push_back(j["rx"]["frames"]), pauses.push_back(j["pause_frames_received"]), link_frames.push_back(j["link_frames"]);
    EXPECT_EQ(frames, (std::vector<uint64_t>{0, 0, 1})) << "the first frame is analysed in the window";
    EXPECT_EQ(pauses, (std::vector<uint64_t>{0, 0, 0})) << "the PAUSE frame at the end is not received";
    EXPECT_EQ(link_frames, (std::vector<uint64_t>{0, 0, 1}));
    EXPECT_EQ(delivered[2]["rx"]["latency_ns"]["max"], 1576);
    EXPECT_EQ(run_frames_at_the_run_boundaries(c.path, false), delivered);
}

// A PAUSE frame with flow control on holds the transmitter: the link delivers it at its arrival.
TEST(pcap, a_pause_frame_it_acts_on_is_left_to_the_link) {
    const captured c = capture_pktgen("acts.pcap");
    fresh_simulation();
    pcap_replay_params p;
    p.path = c.path;
    p.flow_control = true;
    pcap_replay gen("replay", p);
    net::frame_ptr pause = net::frame_pool::instance().get(0), other = net::frame_pool::instance().get(c.frames[0].size());
    net::make_pause(*pause, 0x02000000000bull, 16);
    other->bytes = c.frames[0];
    EXPECT_FALSE(gen.frame_arriving(pause, sc_time(1, SC_US)));
    EXPECT_TRUE(pause);
    EXPECT_TRUE(gen.frame_arriving(other, sc_time(1, SC_US)));
    EXPECT_FALSE(other);
}

// A switch port may take back a frame it sent ahead before it starts: the replay gives back the
// newest frame it took, which has not arrived, and never analyses it.
TEST(pcap, a_frame_taken_early_and_not_arrived_is_given_back_unanalysed) {
    const captured c = capture_pktgen("given_back.pcap");
    fresh_simulation();
    pcap_replay gen("replay", replay_sending_nothing(c.path));
    for (size_t i = 0; i < 2; ++i) {
        net::frame_ptr f = net::frame_pool::instance().get(c.frames[i].size());
        f->bytes = c.frames[i];
        ASSERT_TRUE(gen.frame_arriving(f, sc_time(double(i + 1), SC_US)));
    }
    net::frame_ptr back = gen.give_back_last(sc_core::SC_ZERO_TIME);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->bytes, c.frames[1]) << "the newest frame comes back";
    sc_core::sc_start(3, SC_US);
    EXPECT_EQ(gen.rx_frames(), 1u);
    EXPECT_FALSE(gen.give_back_last(sc_core::sc_time_stamp())) << "nothing taken is still to arrive";
}

// With the real link model: generator <-> link <-> reflector, both directions captured in one
// file, one pcapng interface each (the tap passes the link direction as the interface id); tshark
// sees UDP both ways, with good checksums, and the MACs swapped on the way back.
TEST(pcap, real_link_capture_shows_both_directions_with_swapped_macs) {
    fresh_simulation();
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed: capture not decoded";
    pktgen_model_params p;
    for (const auto& l : sample03_commands("-n 64 -m 00:04:9f:aa:bb:cc")) apply_pktgen_command(p.cmd, l);
    apply_pktgen_command(p.cmd, "flag UDPCSUM");
    p.dev = {{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001};
    p.rx_enabled = true;
    pktgen gen("gen", p);
    sink reflector(sent_macs{});
    net::link wire("wire", net::link_params{});
    wire.bind(reflector, gen);  // side a: the reflector (DUT stand-in), side b: the generator
    gen.connect(wire.end_b());
    reflector.reflect_to(wire.end_a());
    const std::string path = test::scratch_path("both.pcapng");
    {
        pcap_writer cap(path);
        wire.add_tap([&](int direction, const net::frame& f, sc_time start, sc_time) { cap.write(f, start, direction); });
        sc_core::sc_start(1, sc_core::SC_MS);
        EXPECT_EQ(cap.frames(), 128u);
        EXPECT_EQ(cap.frames(pcap_writer::dut_tx), 64u);
        EXPECT_EQ(cap.frames(pcap_writer::dut_rx), 64u);
    }
    EXPECT_EQ(gen.stats().rx_frames, 64u);
    EXPECT_EQ(gen.rx_analysis().stats().macs_swapped, 64u);
    std::string err;
    const std::string out = test::run("tshark -n -r " + path +
                                      " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -e frame.interface_id"
                                      " -e frame.interface_name -e eth.src -e eth.dst -e ip.proto -e ip.checksum.status"
                                      " -e udp.checksum.status -e pktgen.seqnum | sort | uniq -c",
                                      &err);
    // Two bursts of 32 (sequence numbers 1 and 33) each way; checksum status 1 = good. The
    // reflector (side a, the DUT) transmits on dut-tx with the MACs swapped.
    for (const char* line : {"32 0\tdut-tx\t00:04:9f:aa:bb:cc\t00:04:9f:00:00:02\t17\t1\t1\t1\n",
                             "32 0\tdut-tx\t00:04:9f:aa:bb:cc\t00:04:9f:00:00:02\t17\t1\t1\t33\n",
                             "32 1\tdut-rx\t00:04:9f:00:00:02\t00:04:9f:aa:bb:cc\t17\t1\t1\t1\n",
                             "32 1\tdut-rx\t00:04:9f:00:00:02\t00:04:9f:aa:bb:cc\t17\t1\t1\t33\n"})
        EXPECT_NE(out.find(line), std::string::npos) << line << " missing in\n" << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4) << out;
    if (err.rfind("Running as user", 0) == 0) err.erase(0, err.find('\n') + 1);  // tshark's note when run as root
    EXPECT_EQ(err, "") << "tshark warnings";
}

}  // namespace
}  // namespace fecsim::traffic
