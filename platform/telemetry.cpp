#include "platform/telemetry.h"

#include "models/process.h"
#include "traffic/host_socket.h"

#include <boost/asio.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

namespace fecsim {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
constexpr auto drain_limit = std::chrono::seconds(1);
// The kernel's buffer per client (autotuned, up to 4 MiB on Linux otherwise): a client that
// stalls holds at most about this much beyond its queue, so it drops lines (counted) instead of
// receiving megabytes of stale ones when it resumes.
constexpr int client_send_buffer_bytes = 64 * 1024;

// Counts the report holds since the last reset, read by JSON pointer (0 when absent).
double count_at(const nlohmann::json& report, const char* pointer) {
    const nlohmann::json::json_pointer p(pointer);
    return report.contains(p) && report[p].is_number() ? report[p].get<double>() : 0.0;
}
}  // namespace

bool telemetry_params_from(const config& cfg, telemetry_params& p) {
    const config_view t = cfg.view("telemetry");
    if (t.string("listen").empty()) {  // the server's options alone would be silently ignored
        if (t.boolean("allow_remote"))
            throw cfg.error_at("/telemetry/allow_remote", "--listen-remote serves nothing without --listen ADDR:PORT "
                                                          "(telemetry.listen)");
        if (t.integer("wait_clients") > 0)
            throw cfg.error_at("/telemetry/wait_clients", "no client can connect without --listen ADDR:PORT (telemetry.listen)");
        return false;
    }
    traffic::host_port hp;
    std::string error;
    if (!traffic::parse_host_port(t.string("listen"), hp, error)) throw cfg.error_at("/telemetry/listen", error);
    boost::system::error_code ec;
    if (!asio::ip::make_address(hp.host, ec).is_loopback() && !t.boolean("allow_remote"))
        throw cfg.error_at("/telemetry/listen", hp.host +
                                                    " is not a loopback address: the run's telemetry would be served "
                                                    "to the network; add --listen-remote to mean it");
    p.host = hp.host;
    p.port = hp.port;
    p.interval_s = t.number("interval_s");
    p.queue_lines = size_t(t.integer("queue_lines"));
    p.wait_clients = unsigned(t.integer("wait_clients"));
    return true;
}

struct telemetry_server::io {
    struct client {
        explicit client(tcp::socket s) : socket(std::move(s)) {}
        tcp::socket socket;
        std::deque<std::string> waiting;
        std::string sending;
        bool writing = false;
        std::array<char, 256> discard;  // what a client sends is read and ignored
    };
    using client_ptr = std::shared_ptr<client>;

    asio::io_context ctx;
    asio::executor_work_guard<asio::io_context::executor_type> work{ctx.get_executor()};
    asio::steady_timer drain{ctx};
    tcp::acceptor acceptor{ctx};
    std::list<client_ptr> clients;
    std::thread thread;
    bool closing = false;
    bool drop_logged = false;
    std::mutex accepted_mutex;  // the simulation's thread may wait for clients
    std::condition_variable accepted_changed;
    unsigned accepted = 0;

    void accept() {
        acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
            if (ec) return;  // closed
            boost::system::error_code ignored;  // a socket that keeps the default buffer still works
            s.set_option(asio::socket_base::send_buffer_size(client_send_buffer_bytes), ignored);
            auto c = std::make_shared<client>(std::move(s));
            clients.push_back(c);
            {
                const std::lock_guard lock(accepted_mutex);
                ++accepted;
            }
            accepted_changed.notify_all();
            read(c);
            accept();
        });
    }
    void read(const client_ptr& c) {
        c->socket.async_read_some(asio::buffer(c->discard), [this, c](const boost::system::error_code& ec, size_t) {
            if (ec) return drop(c);  // the client went away
            read(c);
        });
    }
    void write(const client_ptr& c) {
        c->writing = !c->waiting.empty();
        if (!c->writing) {
            if (closing) drop(c);
            return;
        }
        c->sending = std::move(c->waiting.front());
        c->waiting.pop_front();
        asio::async_write(c->socket, asio::buffer(c->sending), [this, c](const boost::system::error_code& ec, size_t) {
            if (ec) return drop(c);
            write(c);
        });
    }
    void drop(const client_ptr& c) {
        boost::system::error_code ignored;
        c->socket.close(ignored);
        clients.remove(c);
        if (closing && clients.empty()) {
            drain.cancel();
            work.reset();
        }
    }
};

telemetry_server::telemetry_server(const config& cfg, const telemetry_params& p)
    : io_(std::make_unique<io>()), queue_lines_(p.queue_lines) {
    const tcp::endpoint ep(asio::ip::make_address(p.host), p.port);
    boost::system::error_code ec;
    io_->acceptor.open(ep.protocol(), ec);
    if (!ec) io_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) io_->acceptor.bind(ep, ec);
    if (!ec) io_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw cfg.error_at("/telemetry/listen", "cannot listen on " + p.host + ":" + std::to_string(p.port) + ": " +
                                                        ec.message());
    const tcp::endpoint bound = io_->acceptor.local_endpoint();
    address_ = (bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) + ":" +
               std::to_string(bound.port());
    io_->accept();
    io_->thread = std::thread([this] { io_->ctx.run(); });
}

telemetry_server::~telemetry_server() { close(); }

void telemetry_server::wait_for_clients(unsigned n) {
    std::unique_lock lock(io_->accepted_mutex);
    io_->accepted_changed.wait(lock, [&] { return io_->accepted >= n; });
}

void telemetry_server::publish(std::string line) {
    line += '\n';
    asio::post(io_->ctx, [this, line = std::move(line)] {
        for (const io::client_ptr& c : io_->clients) {
            if (c->waiting.size() >= queue_lines_) {  // a slow client loses its oldest line
                c->waiting.pop_front();
                ++dropped_;
                if (!io_->drop_logged) {
                    io_->drop_logged = true;
                    std::fprintf(stderr, "fecsim: telemetry %s: a client reads slower than the run publishes; its "
                                         "oldest lines are dropped (counted: telemetry.dropped_lines)\n",
                                 address_.c_str());
                }
            }
            c->waiting.push_back(line);
            if (!c->writing) io_->write(c);
        }
    });
}

void telemetry_server::close() {
    if (closed_) return;
    closed_ = true;
    asio::post(io_->ctx, [this] {
        io_->closing = true;
        boost::system::error_code ignored;
        io_->acceptor.close(ignored);
        io_->drain.expires_after(drain_limit);
        io_->drain.async_wait([this](const boost::system::error_code& ec) {
            if (!ec) io_->ctx.stop();  // stuck clients get no more
        });
        const auto clients = io_->clients;  // drop() edits the list
        for (const io::client_ptr& c : clients)
            if (!c->writing) io_->drop(c);
        if (io_->clients.empty()) {
            io_->drain.cancel();
            io_->work.reset();
        }
    });
    io_->thread.join();
}

telemetry_sampler::telemetry_sampler(sc_core::sc_module_name name, soc& chip, telemetry_server& server,
                                     double interval_s, double warmup_s, double total_s)
    : sc_module(name), chip_(chip), server_(server), interval_s_(interval_s), warmup_s_(warmup_s), total_s_(total_s),
      wall_start_(std::chrono::steady_clock::now()) {
    spawn_method("sample", tick_, [this] {
        sample();
        tick_.notify(sc_core::sc_time(interval_s_, sc_core::SC_SEC));
    });
    tick_.notify(sc_core::sc_time(interval_s_, sc_core::SC_SEC));
}

void telemetry_sampler::window_started() {
    previous_ = nlohmann::json();
    previous_gen_tx_ = previous_gen_rx_ = 0;
    previous_s_ = phase_start_s_ = sc_core::sc_time_stamp().to_seconds();
}

void telemetry_sampler::add_lines(const std::vector<std::string>& lines) {
    lines_.insert(lines_.end(), lines.begin(), lines.end());
}

void telemetry_sampler::finish() {
    if (sc_core::sc_time_stamp().to_seconds() > previous_s_) sample();
}

void telemetry_sampler::sample() {
    const double now_s = sc_core::sc_time_stamp().to_seconds();
    const double interval = now_s - previous_s_;
    if (interval <= 0) return;
    const nlohmann::json report = chip_.report(now_s - phase_start_s_);
    auto delta = [&](const char* pointer) { return count_at(report, pointer) - count_at(previous_, pointer); };
    auto rate = [&](const char* pointer) { return delta(pointer) / interval; };

    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    nlohmann::json j;
    j["simulated_s"] = now_s;
    j["total_s"] = total_s_;
    j["phase"] = now_s <= warmup_s_ ? "warmup" : "measure";
    j["interval_s"] = interval;
    j["wall_s"] = wall_s;
    // The end's time can round a hair past total_s: never a negative estimate.
    j["eta_s"] = now_s > 0 ? std::max(0.0, wall_s * (total_s_ - now_s) / now_s) : 0.0;
    j["rates"] = {
        {"generator_tx_pps", double(chip_.generator().tx_frames() - previous_gen_tx_) / interval},
        {"generator_rx_pps", double(chip_.generator().rx_frames() - previous_gen_rx_) / interval},
        {"dut_rx_pps", rate("/dut/rx_frames")},
        {"dut_tx_pps", rate("/dut/tx_frames")},
        {"xdp_prog_pps", (delta("/dut/xdp/pass") + delta("/dut/xdp/drop") + delta("/dut/xdp/tx") +
                          delta("/dut/xdp/redirect")) / interval},
    };
    j["xdp"] = report["dut"].value("xdp", nlohmann::json::object());
    const double packets = delta("/dut/packets");
    for (auto& [category, ns] : report["cpu"]["core0"]["time_ns"].items()) {
        const std::string p = "/cpu/core0/time_ns/" + category;
        j["ns_per_packet"][category] = packets > 0 ? delta(p.c_str()) / packets : 0.0;
    }
    j["rings"] = chip_.ring_occupancy();
    // Drops by cause, counted since the phase (warm-up, window) started.
    for (auto [name, pointer] : std::initializer_list<std::pair<const char*, const char*>>{
             {"rx_fifo_overflow", "/dut/rx_fifo_overflow_drops"},
             {"rx_disabled", "/dut/rx_disabled_drops"},
             {"rx_filtered", "/dut/rx_filtered"},
             {"netdev_rx_dropped", "/dut/netdev/rx_dropped"},
             {"netdev_rx_length_errors", "/dut/netdev/rx_length_errors"},  // frames above MAX_FL
             {"netdev_tx_dropped", "/dut/netdev/tx_dropped"},
             {"xdp_drop", "/dut/xdp/drop"},
             {"xdp_tx_errors", "/dut/xdp/tx_errors"},
             {"socket_drops", "/dut/stack/socket_drops"},
             {"switch_tail_drops", "/link/switch/tail_drops"}})
        j["drops"][name] = uint64_t(count_at(report, pointer));
    // 802.3x PAUSE frames since the phase started: what the DUT's MAC sent and each MAC received.
    for (auto [name, pointer] : std::initializer_list<std::pair<const char*, const char*>>{
             {"dut_sent", "/dut/pause_frames_sent"},
             {"dut_received", "/dut/pause_frames_received"},
             {"generator_received", "/generator/pause_frames_received"}})
        j["pause"][name] = uint64_t(count_at(report, pointer));
    for (const char* where : {"generator", "bridge"})  // the wire bridge's losses, since the run started
        if (report.contains(where) && report[where].contains("lost"))
            for (auto& [cause, n] : report[where]["lost"].items()) j["drops"]["bridge_" + cause] = n;
    j["lines"] = std::move(lines_);
    lines_.clear();
    server_.publish(j.dump());

    previous_ = report;
    previous_gen_tx_ = chip_.generator().tx_frames();
    previous_gen_rx_ = chip_.generator().rx_frames();
    previous_s_ = now_s;
}

}  // namespace fecsim
