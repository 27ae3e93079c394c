// The wire bridge over UDP and the live telemetry, as a second process sees them: this test is
// the peer of a `fecsim run` it starts (the DUT runs xdp2, which sends every UDP frame back
// with the MACs swapped).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using bytes = std::vector<uint8_t>;
const std::string fecsim = std::string(FECSIM_BINARY_DIR) + "/fecsim";
const std::string experiment = std::string(FECSIM_SOURCE_CONFIG_DIR) + "/experiments/imx8mp-xdp-tx.json";
// E1 with the abstract pktgen model as the generator: these tests pace it (rate, ratep).
const std::string abstract_peer = "generator.kind=pktgen";
const std::string frames_py = FECSIM_BRIDGE_FRAMES_PY;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// fecsim running in the background, stdout and stderr in files of its own directory.
class run {
public:
    explicit run(const std::vector<std::string>& args) {
        dir_ = fs::temp_directory_path() / ("fecsim-bridge-" + std::to_string(::getpid()) + "-" + std::to_string(next_++));
        fs::create_directories(dir_);
        std::vector<std::string> argv_s{fecsim};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : argv_s) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, (dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&fa, 2, (dir_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (posix_spawn(&pid_, fecsim.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&fa);
    }
    ~run() {
        if (pid_ > 0) wait();
        fs::remove_all(dir_);
    }
    std::string err() const { return slurp(dir_ / "err"); }
    std::string out() const { return slurp(dir_ / "out"); }
    fs::path file(const std::string& name) const { return dir_ / name; }
    // Waits (30 s at most) until stderr matches `re`; returns the first group.
    std::string await_err(const std::string& re) const {
        const std::regex r(re);
        for (int i = 0; i < 300; ++i) {
            std::smatch m;
            const std::string e = err();
            if (std::regex_search(e, m, r)) return m.size() > 1 ? m[1].str() : m[0].str();
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return "";
    }
    int wait() {
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

private:
    static inline int next_ = 0;
    pid_t pid_ = -1;
    fs::path dir_;
};

// A UDP peer on 127.0.0.1.
class udp_peer {
public:
    explicit udp_peer(uint16_t port = 0) {
        fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);  // not inherited by fecsim
        // fecsim sends a burst back as fast as it arrives; 100 frames of the sizes frames.py
        // makes fill the default 208 KiB while the reader thread waits for a core. SO_RCVBUF is
        // capped by net.core.rmem_max (a stock 208 KiB cap still grants twice the default);
        // SO_RCVBUFFORCE, where the process may use it, is not.
        const int rcvbuf = 1 << 20;
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        sockaddr_in a = address(port);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ADD_FAILURE() << "bind " << port;
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
    }
    ~udp_peer() { close(); }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    uint16_t port() const { return port_; }
    void send_to(uint16_t port, const bytes& b) {
        const sockaddr_in a = address(port);
        ::sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    }
    // The next datagram within `timeout_ms`, or false.
    bool receive(bytes& b, int timeout_ms) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) <= 0) return false;
        b.resize(65536);
        const ssize_t n = ::recv(fd_, b.data(), b.size(), 0);
        if (n < 0) return false;
        b.resize(size_t(n));
        return true;
    }

private:
    static sockaddr_in address(uint16_t port) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return a;
    }
    int fd_ = -1;
    uint16_t port_ = 0;
};

// The frames of a classic pcap file (what frames.py writes), in order.
std::vector<bytes> read_pcap(const fs::path& p) {
    const std::string d = slurp(p);
    std::vector<bytes> frames;
    for (size_t off = 24; off + 16 <= d.size();) {
        uint32_t caplen;
        std::memcpy(&caplen, d.data() + off + 8, 4);
        frames.emplace_back(d.begin() + off + 16, d.begin() + off + 16 + caplen);
        off += 16 + caplen;
    }
    return frames;
}

std::vector<bytes> make_frames(size_t n) {
    const fs::path p = fs::temp_directory_path() / ("fecsim-bridge-frames-" + std::to_string(::getpid()) + ".pcap");
    EXPECT_EQ(std::system(("python3 " + frames_py + " make " + p.string() + " " + std::to_string(n)).c_str()), 0);
    std::vector<bytes> frames = read_pcap(p);
    fs::remove(p);
    return frames;
}

bytes macs_swapped(bytes f) {
    std::swap_ranges(f.begin(), f.begin() + 6, f.begin() + 6);
    return f;
}

// `fecsim run` of E1's DUT with the generator's port joined to `peer`, from a free local port.
std::vector<std::string> bridge_args(const udp_peer& peer, const fs::path& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"run", experiment, "--set", abstract_peer, "--udp-bridge", "127.0.0.1:" + std::to_string(peer.port()),
                               "--set", "duration_s=1.5", "--out", out.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

uint16_t await_bridge(const run& r) {
    const std::string port = r.await_err(R"(bridge ready: udp 127\.0\.0\.1:(\d+) <->)");
    EXPECT_FALSE(port.empty()) << r.err();
    return port.empty() ? 0 : uint16_t(std::stoi(port));
}

nlohmann::json result_of(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

void pace() { std::this_thread::sleep_for(std::chrono::microseconds(500)); }

TEST(bridge_udp, a_pcap_replay_crosses_byte_for_byte_and_comes_back_in_order) {
    const std::vector<bytes> frames = make_frames(300);
    udp_peer peer;
    const fs::path out = fs::temp_directory_path() / ("fecsim-bridge-r1-" + std::to_string(::getpid()) + ".json");
    run r(bridge_args(peer, out));
    const uint16_t fecsim_port = await_bridge(r);
    ASSERT_NE(fecsim_port, 0);
    std::vector<bytes> back;
    std::thread receiver([&] {  // reads while the frames go out: the socket's buffer is small
        bytes b;
        while (back.size() < frames.size() && peer.receive(b, 3000)) back.push_back(b);
    });
    for (const bytes& f : frames) {
        peer.send_to(fecsim_port, f);
        pace();
    }
    receiver.join();
    ASSERT_EQ(r.wait(), 0) << r.err();
    ASSERT_EQ(back.size(), frames.size()) << r.err();
    for (size_t i = 0; i < frames.size(); ++i) ASSERT_EQ(back[i], macs_swapped(frames[i])) << "frame " << i;
    const auto g = result_of(out)["generator"];
    fs::remove(out);
    EXPECT_EQ(g["kind"], "udp");
    EXPECT_EQ(g["frames_from_host"], 300);
    EXPECT_EQ(g["frames_to_host"], 300);
    EXPECT_EQ(g["lost_total"], 0) << g.dump();
    EXPECT_EQ(count_of(r.out(), "proto 17:"), 1u) << "xdp2's line for the one measured second: " << r.out();
}

TEST(bridge_udp, malformed_oversize_and_queue_overflow_are_counted_and_logged_once_and_the_run_goes_on) {
    const std::vector<bytes> frames = make_frames(200);
    udp_peer peer;
    const fs::path out = fs::temp_directory_path() / ("fecsim-bridge-r2-" + std::to_string(::getpid()) + ".json");
    // A small queue and long pacing sleeps: a burst overflows the queue into the simulation.
    run r(bridge_args(peer, out, {"--set", "bridge.queue_frames=4", "--set", "bridge.quantum_us=20000"}));
    const uint16_t fecsim_port = await_bridge(r);
    ASSERT_NE(fecsim_port, 0);
    for (int i = 0; i < 3; ++i) {
        peer.send_to(fecsim_port, bytes(10, 0xee));    // shorter than a header
        peer.send_to(fecsim_port, bytes(2000, 0xee));  // longer than any frame the bridge carries
    }
    for (const bytes& f : frames) peer.send_to(fecsim_port, f);  // one burst
    size_t back = 0;
    bytes b;
    while (peer.receive(b, 2000)) ++back;
    ASSERT_EQ(r.wait(), 0) << r.err();
    const auto g = result_of(out)["generator"];
    fs::remove(out);
    EXPECT_EQ(g["lost"]["malformed"], 3);
    EXPECT_EQ(g["lost"]["oversize"], 3);
    EXPECT_GT(g["lost"]["queue_full_to_sim"].get<uint64_t>(), 0u);
    // Nothing silent: every frame is either back or counted lost. On a loaded machine the
    // kernel may drop some of the burst before fecsim reads them (host_overflow), and the I/O
    // thread may fall behind the 4-frame queue of the way back (queue_full_to_host).
    const size_t overflow = g["lost"]["host_overflow"], full = g["lost"]["queue_full_to_sim"],
                 full_back = g["lost"]["queue_full_to_host"];
    EXPECT_EQ(g["frames_from_host"].get<size_t>() + overflow, frames.size()) << g.dump();
    EXPECT_EQ(back + overflow + full + full_back, frames.size()) << g.dump();
    EXPECT_EQ(g["frames_to_host"], back);
    const std::string err = r.err();
    for (const char* cause : {"malformed", "oversize", "queue_full_to_sim"})
        EXPECT_EQ(count_of(err, std::string("frame lost, ") + cause), 1u) << err;
}

TEST(bridge_udp, a_peer_that_disappears_is_counted_and_one_that_comes_back_is_served_again) {
    const std::vector<bytes> frames = make_frames(60);
    auto peer = std::make_unique<udp_peer>();
    const uint16_t peer_port = peer->port();
    const fs::path out = fs::temp_directory_path() / ("fecsim-bridge-r3-" + std::to_string(::getpid()) + ".json");
    run r(bridge_args(*peer, out));
    const uint16_t fecsim_port = await_bridge(r);
    ASSERT_NE(fecsim_port, 0);
    for (size_t i = 0; i < 50; ++i) peer->send_to(fecsim_port, frames[i]);
    peer.reset();  // gone before the frames come back
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    udp_peer again(peer_port);
    size_t back = 0;
    for (size_t i = 50; i < 60; ++i) {
        again.send_to(fecsim_port, frames[i]);
        pace();
    }
    bytes b;
    while (back < 10 && again.receive(b, 3000)) back += b == macs_swapped(frames[50 + back]);
    EXPECT_EQ(back, 10u);
    ASSERT_EQ(r.wait(), 0) << r.err();
    const auto g = result_of(out)["generator"];
    fs::remove(out);
    const uint64_t unreachable = g["lost"]["peer_unreachable"];
    EXPECT_GE(unreachable, 1u) << g.dump();
    EXPECT_EQ(g["frames_to_host"].get<uint64_t>() + unreachable, 60u) << g.dump();
    EXPECT_EQ(count_of(r.err(), "frame lost, peer_unreachable"), 1u) << r.err();
}

TEST(bridge_udp, on_a_switch_port_of_its_own_next_to_the_generator_as_fast_as_possible) {
    const std::vector<bytes> frames = make_frames(100);
    udp_peer peer;
    const fs::path out = fs::temp_directory_path() / ("fecsim-bridge-r4-" + std::to_string(::getpid()) + ".json");
    // Free-running, the 1.5 s run takes ~0.4 s of wall time: on a loaded host the burst could
    // come after its end. 6 s of simulated time leave the sender more than a second.
    run r(bridge_args(peer, out, {"--set", "link.topology=switch", "--set", "bridge.port=switch", "--set",
                                  "bridge.pacing=as_fast_as_possible", "--set", "generator.pktgen=[\"ratep 2000\"]",
                                  "--set", "duration_s=6"}));
    const uint16_t fecsim_port = await_bridge(r);
    ASSERT_NE(fecsim_port, 0);
    std::vector<bytes> back;
    size_t others = 0;  // the generator's frames the switch floods before it has learned the DUT's MAC
    std::thread receiver([&] {
        bytes b;
        while (back.size() < frames.size() && peer.receive(b, 3000)) {
            if (std::equal(b.begin(), b.begin() + 6, frames[0].begin() + 6)) back.push_back(b);
            else ++others;
        }
    });
    for (const bytes& f : frames) peer.send_to(fecsim_port, f);
    receiver.join();
    ASSERT_EQ(r.wait(), 0) << r.err();
    const auto j = result_of(out);
    fs::remove(out);
    ASSERT_EQ(back.size(), frames.size()) << r.err() << j.dump();
    for (size_t i = 0; i < frames.size(); ++i) ASSERT_EQ(back[i], macs_swapped(frames[i])) << "frame " << i;
    EXPECT_EQ(j["bridge"]["port"], "switch");
    EXPECT_EQ(j["bridge"]["frames_from_host"], 100);
    EXPECT_EQ(j["bridge"]["lost_total"], 0);
    EXPECT_EQ(j["bridge"]["frames_to_host"].get<size_t>(), back.size() + others);
    EXPECT_EQ(j["link"]["bridge"]["a_to_b"]["frames"], 100);          // host -> switch
    EXPECT_NEAR(j["rates"]["generator_tx_pps"].get<double>(), 64000, 100);  // the generator ran all along
    EXPECT_NE(r.out().find("bridge udp"), std::string::npos) << r.out();
}

TEST(bridge_udp, bad_bridge_and_listen_settings_are_one_line_and_exit_2) {
    struct row {
        std::vector<std::string> args;
        std::string expected;
    };
    for (const row& c : std::vector<row>{
             {{"--udp-bridge", "nowhere"}, "--set bridge.udp=nowhere: /bridge/udp: expected HOST:PORT"},
             {{"--udp-bridge", "example.org:9"}, "/bridge/udp: \"example.org\" is not a numeric IP address"},
             {{"--udp-bridge", "127.0.0.1:0"}, "/bridge/udp: the peer's port must not be 0"},
             {{"--udp-bridge", "127.0.0.1:9", "--tap", "fsim0"}, "/bridge/udp: the generator's port joins either"},
             {{"--tap", "a-name-far-too-long"}, "/bridge/tap: interface name must have 1 to 15 characters"},
             {{"--udp-bridge", "127.0.0.1:9", "--set", "bridge.port=switch", "--set", "link.topology=direct"},
              "/bridge/port: a switch port for the host needs link.topology switch"},
             {{"--udp-bridge", "127.0.0.1:9", "--set", "bridge.udp_local=192.0.2.1:0"},
              "--set bridge.udp_local=192.0.2.1:0: /bridge/udp_local: cannot bind UDP 192.0.2.1:0: "},
             {{"--udp-bridge", "[::1]:9"},
              "--set bridge.udp=[::1]:9: /bridge/udp: the peer [::1]:9 and the local address 127.0.0.1:0 (bridge.udp_local) "
              "must both be IPv4 or both IPv6"},
             {{"--listen", "192.0.2.1:9"}, "/telemetry/listen: 192.0.2.1 is not a loopback address"},
             {{"--set", "bridge.port=switch"},
              "--set bridge.port=switch: /bridge/port: a switch port for the host needs --tap NAME or --udp-bridge HOST:PORT"},
             {{"--listen-remote"}, "--set telemetry.allow_remote=true: /telemetry/allow_remote: --listen-remote serves "
                                   "nothing without --listen ADDR:PORT (telemetry.listen)"},
             {{"--set", "telemetry.wait_clients=1"}, "/telemetry/wait_clients: no client can connect without --listen"},
             {{"--listen", "127.0.0.1:99999"}, "/telemetry/listen: port \"99999\" is not a number"},
         }) {
        std::vector<std::string> args{"run", experiment, "--set", abstract_peer, "--set", "duration_s=0.001"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        run r(args);
        EXPECT_EQ(r.wait(), 2) << c.expected;
        const std::string err = r.err();
        EXPECT_EQ(count_of(err, "\n"), 1u) << err;
        EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    }
}

// --- live telemetry -------------------------------------------------------------------------

// E1 at a low rate (cheap to simulate) for one measured second, telemetry every 0.1 s.
std::vector<std::string> telemetry_args(const std::string& listen, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"run",   experiment, "--set", abstract_peer, "--set", "duration_s=1", "--set", "warmup_s=0.01",
                               "--set", "generator.pktgen=[\"ratep 2000\"]", "--listen", listen};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

int connect_to(uint16_t port, int rcvbuf = 0) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rcvbuf) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ADD_FAILURE() << "connect " << port;
    return fd;
}

uint16_t await_telemetry(const run& r) {
    const std::string port = r.await_err(R"(telemetry on 127\.0\.0\.1:(\d+))");
    EXPECT_FALSE(port.empty()) << r.err();
    return port.empty() ? 0 : uint16_t(std::stoi(port));
}

// Every JSON object a client connected at `port` receives until the run closes the stream.
std::vector<nlohmann::json> objects_to_the_end(uint16_t port) {
    const int fd = connect_to(port);
    std::string stream;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) stream.append(buf, size_t(n));
    ::close(fd);
    std::vector<nlohmann::json> objects;
    std::istringstream lines(stream);
    for (std::string l; std::getline(lines, l);) objects.push_back(nlohmann::json::parse(l));
    return objects;
}

TEST(telemetry, one_json_object_per_interval_with_the_runs_own_lines) {
    run r(telemetry_args("127.0.0.1:0", {"--set", "telemetry.interval_s=0.1", "--set", "telemetry.wait_clients=1"}));
    const uint16_t port = await_telemetry(r);
    ASSERT_NE(port, 0);
    const std::vector<nlohmann::json> objects = objects_to_the_end(port);
    ASSERT_EQ(r.wait(), 0) << r.err();
    ASSERT_GE(objects.size(), 5u);
    // The run waited for this client (telemetry.wait_clients): it saw the first interval.
    EXPECT_DOUBLE_EQ(objects.front()["simulated_s"].get<double>(), 0.1);
    const auto& last = objects.back();
    EXPECT_DOUBLE_EQ(last["simulated_s"].get<double>(), 1.01);
    EXPECT_EQ(last["phase"], "measure");
    std::vector<std::string> streamed_lines;
    for (const auto& o : objects) {
        for (const char* key : {"rates", "xdp", "rings", "ns_per_packet", "drops", "pause", "wall_s", "eta_s"})
            EXPECT_TRUE(o.contains(key)) << key;
        for (const auto& l : o["lines"]) streamed_lines.push_back(l);
        if (o["phase"] == "measure" && o["interval_s"].get<double>() > 0.05) {
            // 2000 bursts of 32 frames per second, every one sent back by xdp2.
            EXPECT_NEAR(o["rates"]["dut_rx_pps"].get<double>(), 64000, 700) << o.dump();
            EXPECT_NEAR(o["rates"]["xdp_prog_pps"].get<double>(), 64000, 700) << o.dump();
            EXPECT_GT(o["ns_per_packet"]["compute"].get<double>(), 0);
        }
    }
    // The lines the run printed on stdout while measuring, the same in the stream.
    std::vector<std::string> printed;
    std::istringstream out(r.out());
    for (std::string l; std::getline(out, l) && l.rfind("proto ", 0) == 0;) printed.push_back(l);
    ASSERT_EQ(printed.size(), 1u) << r.out();
    EXPECT_EQ(streamed_lines, printed);
    EXPECT_GT(last["xdp"]["tx"].get<uint64_t>(), 60000u);
}

// --quiet silences the modelled tools, not where to reach the run: with port 0 (any free port)
// these lines are the only way a client learns the port.
TEST(telemetry, quiet_runs_still_say_where_the_telemetry_and_the_bridge_listen) {
    udp_peer peer;
    const fs::path out = fs::temp_directory_path() / ("fecsim-quiet-" + std::to_string(::getpid()) + ".json");
    run r(bridge_args(peer, out, {"--set", "duration_s=0.01", "--set", "bridge.pacing=as_fast_as_possible",
                                  "--listen", "127.0.0.1:0", "--quiet"}));
    ASSERT_EQ(r.wait(), 0) << r.err();
    fs::remove(out);
    const std::string err = r.err();
    EXPECT_TRUE(std::regex_search(err, std::regex(R"(fecsim: telemetry on 127\.0\.0\.1:[1-9]\d*)"))) << err;
    EXPECT_TRUE(std::regex_search(err, std::regex(R"(fecsim: bridge ready: udp 127\.0\.0\.1:[1-9]\d* <->)"))) << err;
    EXPECT_EQ(r.out(), "");  // the rest stays quiet
}

// 0.05 + 0.3 s: the last object's simulated time rounds a hair past total_s, which gave an
// estimate of -1.7e-17 s (shown by watch as "ETA -0 s").
TEST(telemetry, the_time_left_is_never_negative_and_zero_at_the_end) {
    run r(telemetry_args("127.0.0.1:0", {"--set", "warmup_s=0.05", "--set", "duration_s=0.3", "--set",
                                         "telemetry.wait_clients=1"}));
    const uint16_t port = await_telemetry(r);
    ASSERT_NE(port, 0);
    const std::vector<nlohmann::json> objects = objects_to_the_end(port);
    ASSERT_EQ(r.wait(), 0) << r.err();
    ASSERT_FALSE(objects.empty());
    for (const auto& o : objects) EXPECT_GE(o["eta_s"].get<double>(), 0.0) << o.dump();
    EXPECT_EQ(objects.back()["eta_s"].get<double>(), 0.0) << objects.back().dump();
}

// 9000-byte frames: the DUT's driver drops every one as a length error; the drops say so.
TEST(telemetry, frames_too_long_for_the_dut_are_counted_among_the_drops) {
    run r(telemetry_args("127.0.0.1:0", {"--set", "duration_s=0.1", "--set", "generator.pktgen=[\"ratep 2000\", \"pkt_size 9000\"]",
                                         "--set", "telemetry.wait_clients=1"}));
    const uint16_t port = await_telemetry(r);
    ASSERT_NE(port, 0);
    const std::vector<nlohmann::json> objects = objects_to_the_end(port);
    ASSERT_EQ(r.wait(), 0) << r.err();
    ASSERT_FALSE(objects.empty());
    const auto& last = objects.back();
    EXPECT_EQ(last["rates"]["xdp_prog_pps"], 0) << last.dump();
    EXPECT_GT(last["drops"]["netdev_rx_length_errors"].get<uint64_t>(), 100u) << last.dump();
}

TEST(telemetry, a_stuck_client_loses_its_oldest_lines_counted_and_the_run_finishes) {
    const fs::path out = fs::temp_directory_path() / ("fecsim-telemetry-" + std::to_string(::getpid()) + ".json");
    run r(telemetry_args("127.0.0.1:0", {"--set", "duration_s=0.2", "--set", "telemetry.interval_s=0.0001", "--set",
                                         "telemetry.queue_lines=4", "--set", "telemetry.wait_clients=1", "--out",
                                         out.string()}));
    const uint16_t port = await_telemetry(r);
    ASSERT_NE(port, 0);
    const int stuck = connect_to(port, 4096);  // never reads
    ASSERT_EQ(r.wait(), 0) << r.err();
    ::close(stuck);
    const auto j = result_of(out);
    fs::remove(out);
    EXPECT_GT(j["telemetry"]["dropped_lines"].get<uint64_t>(), 0u);
    EXPECT_EQ(count_of(r.err(), "oldest lines are dropped"), 1u) << r.err();
}

TEST(telemetry, watch_prints_the_lines_a_table_and_a_progress_bar) {
    run r(telemetry_args("127.0.0.1:0", {"--set", "telemetry.interval_s=0.25"}));
    const uint16_t port = await_telemetry(r);
    ASSERT_NE(port, 0);
    run w({"watch", "127.0.0.1:" + std::to_string(port)});
    EXPECT_EQ(w.wait(), 0) << w.err();
    ASSERT_EQ(r.wait(), 0) << r.err();
    const std::string shown = w.out();
    EXPECT_NE(shown.find("gen_tx_pps"), std::string::npos) << shown;
    EXPECT_EQ(count_of(shown, "proto 17:"), 1u) << shown;
    EXPECT_NE(shown.find("[####################] 100% ETA 0 s"), std::string::npos) << shown;
    EXPECT_GE(count_of(shown, "% ETA"), 4u) << shown;

    run nobody({"watch", "127.0.0.1:notaport"});
    EXPECT_EQ(nobody.wait(), 2);
}

}  // namespace
