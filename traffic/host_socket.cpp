#include "traffic/host_socket.h"

#include <boost/asio.hpp>

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <thread>

namespace fecsim::traffic {

namespace asio = boost::asio;

namespace {
// Enough for any datagram, so an oversize one is seen whole and counted, never truncated.
constexpr size_t rx_buffer_bytes = 65536;
// After a failed read, the next try waits this long (a TAP whose interface went away fails
// every read at once).
constexpr auto read_retry = std::chrono::milliseconds(100);
// close() writes what is queued for at most this long.
constexpr auto drain_limit = std::chrono::seconds(1);
}  // namespace

const char* bridge_loss_name(bridge_loss cause) {
    static const char* const names[] = {"queue_full_to_sim", "queue_full_to_host", "host_overflow",
                                        "malformed",         "oversize",           "bad_fcs",
                                        "peer_unreachable",  "io_error"};
    return names[int(cause)];
}

bool parse_host_port(const std::string& text, host_port& out, std::string& error) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
        error = "expected HOST:PORT, got \"" + text + "\"";
        return false;
    }
    std::string host = text.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host == "localhost") host = "127.0.0.1";
    boost::system::error_code ec;
    asio::ip::make_address(host, ec);
    if (ec) {
        error = "\"" + host + "\" is not a numeric IP address (or localhost)";
        return false;
    }
    const std::string port = text.substr(colon + 1);
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535) {
        error = "port \"" + port + "\" is not a number from 0 to 65535";
        return false;
    }
    out = {host, uint16_t(std::stoul(port))};
    return true;
}

struct host_socket::io {
    asio::io_context ctx;
    asio::executor_work_guard<asio::io_context::executor_type> work{ctx.get_executor()};
    asio::steady_timer timer{ctx};  // read retry, then the drain limit at close
    std::thread thread;
    std::deque<std::vector<uint8_t>> out;  // frames for the host, I/O thread only
    bool writing = false, closing = false;
    bool peer_gone = false;  // UDP: refused since the peer last sent
    asio::posix::stream_descriptor tap{ctx};
    asio::ip::udp::socket udp{ctx};

    void shutdown() {
        boost::system::error_code ec;
        timer.cancel();
        if (tap.is_open()) tap.cancel(ec);
        if (udp.is_open()) udp.cancel(ec);
        work.reset();
    }
};

host_socket::host_socket(std::unique_ptr<io> state, std::string description, size_t queue_frames)
    : io_(std::move(state)), rx_buffer_(rx_buffer_bytes), description_(std::move(description)),
      queue_frames_(queue_frames) {}

host_socket::~host_socket() { close(); }

void host_socket::start(receive_fn on_frame) {
    on_frame_ = std::move(on_frame);
    start_receive();
    io_->thread = std::thread([this] { io_->ctx.run(); });
}

void host_socket::send(std::vector<uint8_t>&& bytes) {
    if (queued_.fetch_add(1) >= queue_frames_) {
        --queued_;
        lost(bridge_loss::queue_full_to_host, std::to_string(queue_frames_) + " frames already queued for the host");
        return;
    }
    asio::post(io_->ctx, [this, b = std::move(bytes)]() mutable {
        io_->out.push_back(std::move(b));
        if (!io_->writing) write_next();
    });
}

void host_socket::write_next() {
    io_->writing = !io_->out.empty();
    if (io_->writing) start_write(io_->out.front());
    else if (io_->closing) io_->shutdown();
}

void host_socket::written(bool ok, bridge_loss cause, const std::string& detail) {
    io_->out.pop_front();
    --queued_;
    if (ok) ++to_host_;
    else lost(cause, detail);
    write_next();
}

void host_socket::uncount_sent(bridge_loss cause, const std::string& detail) {
    if (to_host_.load() == 0) return;
    --to_host_;
    lost(cause, detail);
}

void host_socket::received(size_t n, clock::time_point arrived) {
    if (n < min_host_frame_bytes)
        return lost(bridge_loss::malformed, std::to_string(n) + "-byte frame from the host is shorter than an Ethernet header");
    if (n > max_host_frame_bytes)
        return lost(bridge_loss::oversize, std::to_string(n) + "-byte frame from the host exceeds " +
                                               std::to_string(max_host_frame_bytes) + " bytes");
    ++from_host_;
    on_frame_(std::vector<uint8_t>(rx_buffer_.begin(), rx_buffer_.begin() + n), arrived);
}

void host_socket::close() {
    if (closed_) return;
    closed_ = true;
    count_kernel_drops();
    if (!io_->thread.joinable()) return;
    asio::post(io_->ctx, [this] {
        io_->closing = true;
        io_->timer.expires_after(drain_limit);
        io_->timer.async_wait([this](const boost::system::error_code& ec) {
            if (!ec) io_->ctx.stop();  // the host side stopped taking frames: give up on the rest
        });
        if (!io_->writing) io_->shutdown();
    });
    io_->thread.join();
}

void host_socket::lost(bridge_loss cause, const std::string& detail, uint64_t n) {
    loss_[int(cause)] += n;
    if (!logged_[int(cause)].exchange(true))
        std::fprintf(stderr, "fecsim: bridge (%s): frame lost, %s: %s; further losses are counted (generator.lost.%s)\n",
                     description_.c_str(), bridge_loss_name(cause), detail.c_str(), bridge_loss_name(cause));
}

namespace {

// The TAP device's queue towards fecsim drops what fecsim does not read in time and counts it
// as the interface's tx_dropped.
uint64_t tap_tx_dropped(const std::string& ifname) {
    std::FILE* f = std::fopen(("/sys/class/net/" + ifname + "/statistics/tx_dropped").c_str(), "r");
    unsigned long long n = 0;
    if (f) {
        if (std::fscanf(f, "%llu", &n) != 1) n = 0;
        std::fclose(f);
    }
    return n;
}

class tap_socket : public host_socket {
public:
    tap_socket(std::unique_ptr<io> s, const std::string& ifname, size_t queue_frames)
        : host_socket(std::move(s), "tap " + ifname, queue_frames), ifname_(ifname), dropped_at_open_(tap_tx_dropped(ifname)) {}
    ~tap_socket() override { close(); }  // the drain calls start_write

    void count_kernel_drops() override {
        const uint64_t now = tap_tx_dropped(ifname_);
        if (now > dropped_at_open_)
            lost(bridge_loss::host_overflow, "the TAP device's queue overflowed (tx_dropped of " + ifname_ + ")",
                 now - dropped_at_open_);
    }

    void start_receive() override {
        state().tap.async_read_some(asio::buffer(rx_buffer_), [this](const boost::system::error_code& ec, size_t n) {
            if (ec == asio::error::operation_aborted) return;
            if (!ec) {
                received(n, clock::now());
                return start_receive();
            }
            lost(bridge_loss::io_error, "reading the TAP device: " + ec.message());
            state().timer.expires_after(read_retry);
            state().timer.async_wait([this](const boost::system::error_code& e) {
                if (!e && !state().closing) start_receive();
            });
        });
    }

    void start_write(const std::vector<uint8_t>& bytes) override {
        // One write() of a whole frame is one frame on a TAP device.
        state().tap.async_write_some(asio::buffer(bytes), [this](const boost::system::error_code& ec, size_t) {
            // The kernel refuses frames while the interface is down (EIO).
            written(!ec, ec.value() == EIO ? bridge_loss::peer_unreachable : bridge_loss::io_error,
                    ec ? "writing the TAP device: " + ec.message() : "");
        });
    }

private:
    std::string ifname_;
    uint64_t dropped_at_open_;
};

class udp_socket : public host_socket {
public:
    udp_socket(std::unique_ptr<io> s, std::string description, size_t queue_frames)
        : host_socket(std::move(s), std::move(description), queue_frames) {}
    ~udp_socket() override { close(); }

    // A connected UDP socket reports the peer's ICMP port unreachable as ECONNREFUSED on the
    // next receive or send: from then until the peer sends again, frames sent are counted lost.
    // Datagrams are read with recvmsg() for SO_RXQ_OVFL, the kernel's count of those dropped
    // because the socket's buffer was full.
    void start_receive() override {
        state().udp.async_wait(asio::socket_base::wait_read, [this](const boost::system::error_code& ec) {
            if (ec == asio::error::operation_aborted) return;
            if (ec) lost(bridge_loss::io_error, "waiting for the UDP peer: " + ec.message());
            else read_all();
            if (!state().closing) start_receive();
        });
    }

    void read_all() {
        for (;;) {
            iovec iov{rx_buffer_.data(), rx_buffer_.size()};
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint32_t))];
            msghdr m{};
            m.msg_iov = &iov;
            m.msg_iovlen = 1;
            m.msg_control = control;
            m.msg_controllen = sizeof control;
            const ssize_t n = ::recvmsg(state().udp.native_handle(), &m, MSG_DONTWAIT);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == ECONNREFUSED) {
                refused();
                continue;
            }
            if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                    lost(bridge_loss::io_error, std::string("receiving from the UDP peer: ") + std::strerror(errno));
                return;
            }
            for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
                uint32_t dropped;
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL) continue;
                std::memcpy(&dropped, CMSG_DATA(c), sizeof dropped);
                if (dropped != kernel_dropped_)
                    lost(bridge_loss::host_overflow, "the UDP socket's receive buffer overflowed",
                         uint32_t(dropped - kernel_dropped_));
                kernel_dropped_ = dropped;
            }
            state().peer_gone = false;
            received(size_t(n), clock::now());
        }
    }

    // The refusal is about a datagram already counted as sent: the last one.
    void refused() {
        if (state().peer_gone) return;
        state().peer_gone = true;
        uncount_sent(bridge_loss::peer_unreachable, "the UDP peer does not listen (ICMP port unreachable)");
    }

    void start_write(const std::vector<uint8_t>& bytes) override {
        state().udp.async_send(asio::buffer(bytes), [this](const boost::system::error_code& ec, size_t) {
            if (ec == asio::error::connection_refused) refused();
            const std::string why = state().peer_gone ? "the UDP peer does not listen (ICMP port unreachable)"
                                                      : ec ? "sending to the UDP peer: " + ec.message() : "";
            written(!ec && !state().peer_gone,
                    state().peer_gone ? bridge_loss::peer_unreachable : bridge_loss::io_error, why);
        });
    }

private:
    uint32_t kernel_dropped_ = 0;  // SO_RXQ_OVFL's count at the last read
};

std::string endpoint_text(const asio::ip::udp::endpoint& e) {
    const std::string a = e.address().to_string();
    return (e.address().is_v6() ? "[" + a + "]" : a) + ":" + std::to_string(e.port());
}

}  // namespace

std::unique_ptr<host_socket> host_socket::open_tap(const std::string& ifname, size_t queue_frames) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ)
        throw host_socket_error("interface name must have 1 to " + std::to_string(IFNAMSIZ - 1) + " characters");
    const int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        throw host_socket_error(std::string("cannot open /dev/net/tun: ") + std::strerror(errno));
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
        const int err = errno;
        ::close(fd);
        throw host_socket_error("cannot attach TAP device " + ifname + ": " + std::strerror(err) +
                                (err == EPERM ? " (needs CAP_NET_ADMIN, or a device made beforehand with "
                                                "`ip tuntap add " + ifname + " mode tap user $USER`)"
                                              : ""));
    }
    // Bring the interface up, as a NIC whose cable is plugged in; a pre-made device that this
    // user may not change is left to `ip link set NAME up`.
    const int ctl = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (ctl >= 0 && ::ioctl(ctl, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
        ifr.ifr_flags |= IFF_UP;
        if (::ioctl(ctl, SIOCSIFFLAGS, &ifr) < 0)
            std::fprintf(stderr, "fecsim: bridge (tap %s): cannot bring the interface up (%s); run `ip link set %s up`\n",
                         ifname.c_str(), std::strerror(errno), ifname.c_str());
    }
    if (ctl >= 0) ::close(ctl);
    auto s = std::make_unique<io>();
    s->tap.assign(fd);
    return std::make_unique<tap_socket>(std::move(s), ifname, queue_frames);
}

std::unique_ptr<host_socket> host_socket::open_udp(const host_port& peer, const host_port& local, size_t queue_frames) {
    auto s = std::make_unique<io>();
    const asio::ip::udp::endpoint peer_ep(asio::ip::make_address(peer.host), peer.port);
    const asio::ip::udp::endpoint local_ep(asio::ip::make_address(local.host), local.port);
    boost::system::error_code ec;
    s->udp.open(local_ep.protocol(), ec);
    if (!ec) s->udp.bind(local_ep, ec);
    if (ec) throw host_bind_error("cannot bind UDP " + endpoint_text(local_ep) + ": " + ec.message());
    // A larger receive buffer takes bursts; SO_RXQ_OVFL counts what still overflows it.
    s->udp.set_option(asio::socket_base::receive_buffer_size(1 << 20), ec);
    const int one = 1;
    ::setsockopt(s->udp.native_handle(), SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
    s->udp.connect(peer_ep, ec);
    if (ec) throw host_socket_error("cannot reach UDP peer " + endpoint_text(peer_ep) + ": " + ec.message());
    const std::string description = "udp " + endpoint_text(s->udp.local_endpoint()) + " <-> " + endpoint_text(peer_ep);
    return std::make_unique<udp_socket>(std::move(s), description, queue_frames);
}

}  // namespace fecsim::traffic
