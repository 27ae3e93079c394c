// pktgen frames: bytes checked field by field by an independent decoder (tshark, on a capture
// written by pcap_writer), and the header ranges / flows cycling as mod_cur_headers does.
#include "models/sim_context.h"
#include "tests/traffic/test_util.h"
#include "traffic/pcap_writer.h"
#include "traffic/pktgen_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

namespace fecsim::traffic {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

const pktgen_device dev{{0x00, 0x04, 0x9f, 0x00, 0x00, 0x02}, 0xc6120001};  // 198.18.0.1

pktgen_params params(std::initializer_list<const char*> lines) {
    pktgen_params p;
    for (const char* l : lines) apply_pktgen_command(p, l);
    return p;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep)) out.push_back(cur);
    return out;
}

const char* const fields[] = {"frame.len",     "eth.dst",      "eth.src",        "eth.type",       "vlan.id",
                              "vlan.priority", "ip.version",   "ip.hdr_len",     "ip.dsfield",     "ip.len",
                              "ip.id",         "ip.flags",     "ip.frag_offset", "ip.ttl",         "ip.proto",
                              "ip.checksum.status", "ip.src",  "ip.dst",         "udp.srcport",    "udp.dstport",
                              "udp.length",    "udp.checksum", "udp.checksum.status", "pktgen.magic", "pktgen.seqnum",
                              "pktgen.tvsec",  "pktgen.tvusec", "frame.time_epoch"};

// One map field -> value per packet, as tshark decodes the capture (checksums verified).
std::vector<std::map<std::string, std::string>> tshark_decode(const std::string& pcap, std::string& warnings) {
    std::string cmd = "tshark -n -r " + pcap +
                      " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields -E separator=';' -E occurrence=f";
    for (const char* f : fields) cmd += std::string(" -e ") + f;
    std::string err;
    const std::string out = test::run(cmd, &err);
    warnings.clear();
    for (const auto& line : split(err, '\n'))
        if (!line.empty() && line.find("Running as user") == std::string::npos) warnings += line + "\n";
    std::vector<std::map<std::string, std::string>> rows;
    for (const auto& line : split(out, '\n')) {
        if (line.empty()) continue;
        auto v = split(line + ";", ';');
        std::map<std::string, std::string> row;
        for (size_t i = 0; i < std::size(fields) && i < v.size(); ++i) row[fields[i]] = v[i];
        rows.push_back(row);
    }
    return rows;
}

uint32_t get32(const net::frame& f, size_t off) {
    return uint32_t(f.bytes[off]) << 24 | uint32_t(f.bytes[off + 1]) << 16 | uint32_t(f.bytes[off + 2]) << 8 | f.bytes[off + 3];
}

struct case_t {
    std::vector<const char*> cmds;
    uint32_t seq;
    sc_time when;
};

TEST(pktgen_frames, tshark_decodes_every_field) {
    fresh_simulation();
    if (!test::have_tshark()) GTEST_SKIP() << "tshark is not installed (scripts/install-deps.sh installs it): frame bytes not cross-checked";
    const std::vector<case_t> cases = {
        {{"pkt_size 60", "dst_mac 90:e2:ba:ff:ff:ff", "dst_min 198.18.0.42", "flag NO_TIMESTAMP"}, 1, sc_time(0, SC_NS)},
        {{"pkt_size 60", "dst_mac 90:e2:ba:ff:ff:ff", "dst_min 198.18.0.42", "flag UDPCSUM"}, 33, sc_time(1234567891, SC_NS)},
        {{"pkt_size 124", "src_mac 02:00:00:00:00:07", "dst_mac 00:04:9f:05:06:07", "src_min 10.0.0.9",
          "dst_min 10.0.0.10", "udp_src_min 1234", "udp_src_max 1234", "udp_dst_min 5001", "udp_dst_max 5001",
          "vlan_id 100", "vlan_p 5", "tos b8", "flag UDPCSUM"}, 4000000000u, sc_time(2500000, SC_NS)},
        {{"pkt_size 1514", "dst_mac 90:e2:ba:ff:ff:ff", "dst_min 198.18.0.42", "flag UDPCSUM"}, 7, sc_time(999999, SC_NS)},
    };
    const std::string path = test::scratch_path("frames.pcap");
    std::vector<net::frame_ptr> built;
    {
        pcap_writer w(path);
        for (const auto& c : cases) {
            pktgen_params p;
            for (const char* l : c.cmds) apply_pktgen_command(p, l);
            pktgen_builder b(p, dev, 1);
            auto f = net::frame_pool::instance().get();
            b.build(*f, c.seq, c.when);
            ASSERT_TRUE(net::fcs_ok(*f));
            w.write(*f, c.when);
            built.push_back(std::move(f));
        }
    }
    std::string warnings;
    const auto rows = tshark_decode(path, warnings);
    EXPECT_EQ(warnings, "") << "tshark complained about the capture";
    ASSERT_EQ(rows.size(), cases.size());

    // Case 0: sample03's frame. 60 bytes on the capture (+4 FCS on the wire), no VLAN.
    auto& r0 = rows[0];
    EXPECT_EQ(built[0]->size(), 64u);
    EXPECT_EQ(r0.at("frame.len"), "60");
    EXPECT_EQ(r0.at("eth.dst"), "90:e2:ba:ff:ff:ff");
    EXPECT_EQ(r0.at("eth.src"), "00:04:9f:00:00:02");  // the device's own MAC
    EXPECT_EQ(r0.at("eth.type"), "0x0800");
    EXPECT_EQ(r0.at("vlan.id"), "");
    EXPECT_EQ(r0.at("ip.version"), "4");
    EXPECT_EQ(r0.at("ip.hdr_len"), "20");
    EXPECT_EQ(r0.at("ip.dsfield"), "0x00");
    EXPECT_EQ(r0.at("ip.len"), "46");  // 60 - 14
    EXPECT_EQ(r0.at("ip.id"), "0x0000");
    EXPECT_EQ(r0.at("ip.flags"), "0x00");  // no DF
    EXPECT_EQ(r0.at("ip.frag_offset"), "0");
    EXPECT_EQ(r0.at("ip.ttl"), "32");
    EXPECT_EQ(r0.at("ip.proto"), "17");
    EXPECT_EQ(r0.at("ip.checksum.status"), "1");  // good
    EXPECT_EQ(r0.at("ip.src"), "198.18.0.1");
    EXPECT_EQ(r0.at("ip.dst"), "198.18.0.42");
    EXPECT_EQ(r0.at("udp.srcport"), "9");
    EXPECT_EQ(r0.at("udp.dstport"), "9");
    EXPECT_EQ(r0.at("udp.length"), "26");  // 46 - 20
    EXPECT_EQ(r0.at("udp.checksum"), "0x0000");
    EXPECT_EQ(r0.at("pktgen.magic"), "0xbe9be955");
    EXPECT_EQ(r0.at("pktgen.seqnum"), "1");
    EXPECT_EQ(r0.at("pktgen.tvsec"), "0");  // NO_TIMESTAMP
    EXPECT_EQ(r0.at("pktgen.tvusec"), "0");

    // Case 1: UDPCSUM and the timestamp of the send time (1.234567891 s -> 1 s, 234567 us).
    auto& r1 = rows[1];
    EXPECT_EQ(r1.at("udp.checksum.status"), "1");
    EXPECT_NE(r1.at("udp.checksum"), "0x0000");
    EXPECT_EQ(r1.at("pktgen.seqnum"), "33");
    EXPECT_EQ(r1.at("pktgen.tvsec"), "1");
    EXPECT_EQ(r1.at("pktgen.tvusec"), "234567");
    EXPECT_EQ(r1.at("frame.time_epoch"), "1.234567891");  // nanosecond capture timestamps

    // Case 2: 802.1Q, TOS, explicit addresses and ports, 124 bytes.
    auto& r2 = rows[2];
    EXPECT_EQ(r2.at("frame.len"), "124");
    EXPECT_EQ(r2.at("eth.src"), "02:00:00:00:00:07");
    EXPECT_EQ(r2.at("eth.dst"), "00:04:9f:05:06:07");
    EXPECT_EQ(r2.at("eth.type"), "0x8100");
    EXPECT_EQ(r2.at("vlan.id"), "100");
    EXPECT_EQ(r2.at("vlan.priority"), "5");
    EXPECT_EQ(r2.at("ip.dsfield"), "0xb8");
    EXPECT_EQ(r2.at("ip.len"), "106");  // 124 - 14 - 4
    EXPECT_EQ(r2.at("ip.checksum.status"), "1");
    EXPECT_EQ(r2.at("ip.src"), "10.0.0.9");
    EXPECT_EQ(r2.at("ip.dst"), "10.0.0.10");
    EXPECT_EQ(r2.at("udp.srcport"), "1234");
    EXPECT_EQ(r2.at("udp.dstport"), "5001");
    EXPECT_EQ(r2.at("udp.length"), "86");
    EXPECT_EQ(r2.at("udp.checksum.status"), "1");
    EXPECT_EQ(r2.at("pktgen.seqnum"), "4000000000");
    EXPECT_EQ(r2.at("pktgen.tvusec"), "2500");

    // Case 3: a full-size frame.
    auto& r3 = rows[3];
    EXPECT_EQ(built[3]->size(), 1518u);
    EXPECT_EQ(r3.at("frame.len"), "1514");
    EXPECT_EQ(r3.at("ip.len"), "1500");
    EXPECT_EQ(r3.at("udp.checksum.status"), "1");
    EXPECT_EQ(r3.at("pktgen.tvusec"), "999");
}

// A UDP port range is half-open and steps once per built frame; the first frame carries min + 1
// because mod_cur_headers runs before the first fill, as in pktgen.
TEST(pktgen_frames, udp_range_is_half_open_and_cycles) {
    fresh_simulation();
    pktgen_builder b(params({"udp_dst_min 9", "udp_dst_max 16", "udp_src_min 100", "udp_src_max 102"}), dev, 1);
    auto f = net::frame_pool::instance().get();
    std::vector<int> dst, src;
    for (int i = 0; i < 16; ++i) {
        b.build(*f, 1, sc_time(0, SC_NS));
        dst.push_back(f->bytes[36] << 8 | f->bytes[37]);
        src.push_back(f->bytes[34] << 8 | f->bytes[35]);
    }
    EXPECT_EQ(dst, (std::vector<int>{10, 11, 12, 13, 14, 15, 9, 10, 11, 12, 13, 14, 15, 9, 10, 11}));
    EXPECT_EQ(src, (std::vector<int>{101, 100, 101, 100, 101, 100, 101, 100, 101, 100, 101, 100, 101, 100, 101, 100}));
}

// IPv4 ranges include their max.
TEST(pktgen_frames, ipv4_range_includes_max) {
    fresh_simulation();
    pktgen_builder b(params({"dst_min 10.0.0.1", "dst_max 10.0.0.3", "src_min 10.1.0.254", "src_max 10.1.1.0"}), dev, 1);
    auto f = net::frame_pool::instance().get();
    std::vector<uint32_t> d, s;
    for (int i = 0; i < 7; ++i) {
        b.build(*f, 1, sc_time(0, SC_NS));
        s.push_back(get32(*f, 26) & 0xffff);
        d.push_back(get32(*f, 30) & 0xff);
    }
    EXPECT_EQ(d, (std::vector<uint32_t>{2, 3, 1, 2, 3, 1, 2}));
    EXPECT_EQ(s, (std::vector<uint32_t>{0x00ff, 0x0100, 0x00fe, 0x00ff, 0x0100, 0x00fe, 0x00ff}));
}

// Random draws stay in [min, max), are deterministic for a seed and differ between seeds.
TEST(pktgen_frames, random_ranges_follow_the_seed) {
    fresh_simulation();
    const auto p = params({"udp_dst_min 1000", "udp_dst_max 1010", "flag UDPDST_RND", "dst_min 10.0.0.0",
                           "dst_max 10.0.0.255", "flag IPDST_RND"});
    auto draw = [&](uint64_t seed) {
        pktgen_builder b(p, dev, seed);
        auto f = net::frame_pool::instance().get();
        std::vector<uint32_t> v;
        for (int i = 0; i < 2000; ++i) {
            b.build(*f, 1, sc_time(0, SC_NS));
            const uint32_t port = f->bytes[36] << 8 | f->bytes[37];
            const uint32_t daddr = get32(*f, 30);
            EXPECT_GE(port, 1000u);
            EXPECT_LT(port, 1010u);
            EXPECT_GE(daddr, 0x0a000000u);
            EXPECT_LT(daddr, 0x0a0000ffu);
            v.push_back(port << 8 | (daddr & 0xff));
        }
        return v;
    };
    const auto a = draw(7), b = draw(7), c = draw(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    std::set<uint32_t> ports;
    for (uint32_t x : a) ports.insert(x >> 8);
    EXPECT_EQ(ports.size(), 10u);  // every port of the range is drawn
}

// flows/flowlen with FLOW_SEQ: each flow keeps its destination for flowlen frames, then the
// next flow starts and takes the next address of the range.
TEST(pktgen_frames, flows_keep_their_destination_for_flowlen_frames) {
    fresh_simulation();
    pktgen_builder b(params({"dst_min 10.0.0.1", "dst_max 10.0.0.10", "flows 2", "flowlen 3", "flag FLOW_SEQ"}), dev, 1);
    auto f = net::frame_pool::instance().get();
    std::vector<uint32_t> d, flow;
    for (int i = 0; i < 12; ++i) {
        b.build(*f, 1, sc_time(0, SC_NS));
        d.push_back(get32(*f, 30) & 0xff);
        flow.push_back(b.current().flow);
    }
    EXPECT_EQ(d, (std::vector<uint32_t>{2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5}));
    EXPECT_EQ(flow, (std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}));
}

TEST(pktgen_frames, size_range_steps_inclusive_and_ip_id_counts_built_frames) {
    fresh_simulation();
    pktgen_builder b(params({"min_pkt_size 60", "max_pkt_size 63"}), dev, 1);
    auto f = net::frame_pool::instance().get();
    std::vector<size_t> sizes;
    for (int i = 0; i < 6; ++i) {
        b.build(*f, 1, sc_time(0, SC_NS));
        sizes.push_back(f->size());
        EXPECT_EQ((f->bytes[18] << 8 | f->bytes[19]), i);  // IPv4 identification
    }
    EXPECT_EQ(sizes, (std::vector<size_t>{65, 66, 67, 64, 65, 66}));
}

TEST(pktgen_frames, imix_sizes_follow_the_weights) {
    fresh_simulation();
    // The simple IMIX: 7 x 64, 4 x 594, 1 x 1518 bytes on the wire (60, 590, 1514 without FCS).
    pktgen_builder b(params({"imix_weights 60,7 590,4 1514,1"}), dev, 1);
    auto f = net::frame_pool::instance().get();
    std::map<size_t, int> count;
    const int n = 12000;
    for (int i = 0; i < n; ++i) {
        b.build(*f, uint32_t(i), sc_time(0, SC_NS));
        ++count[f->size()];
        if (f->size() > 64) {
            ASSERT_EQ((f->bytes[16] << 8 | f->bytes[17]) + 14 + 4, f->size()) << "IPv4 total length";
        }
    }
    ASSERT_EQ(count.size(), 3u);
    // The kernel's table of 100 draws: 58 (7/12), 33 (4/12) and 9 for the last entry.
    EXPECT_NEAR(count[64], n * 0.58, n * 0.02);
    EXPECT_NEAR(count[594], n * 0.33, n * 0.02);
    EXPECT_NEAR(count[1518], n * 0.09, n * 0.02);
}

}  // namespace
}  // namespace fecsim::traffic
