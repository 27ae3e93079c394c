// The host end of the wire bridge: a Linux TAP device or a UDP socket (one Ethernet frame per
// datagram, no FCS), read and written by Boost.Asio on an I/O thread of its own. Frames cross
// between that thread and the caller through callbacks and a bounded send queue; every frame
// lost on the way is counted by cause and the first loss of each cause is logged on stderr.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fecsim::traffic {

// Why a frame did not make it across the boundary.
enum class bridge_loss : int {
    queue_full_to_sim,   // the host sent faster than the simulation picked frames up
    queue_full_to_host,  // the DUT sent faster than the host side could write
    host_overflow,       // the host kernel's queue to fecsim overflowed (UDP receive buffer, TAP queue)
    malformed,           // from the host, shorter than an Ethernet header
    oversize,            // from the host, longer than max_host_frame_bytes
    bad_fcs,             // from the DUT, FCS wrong: a real receiver drops it too
    peer_unreachable,    // UDP peer gone (ICMP port unreachable), TAP interface down
    io_error,            // any other error of the host's read or write
    count_
};
constexpr int bridge_loss_causes = int(bridge_loss::count_);
const char* bridge_loss_name(bridge_loss cause);

// Largest frame the bridge carries, without FCS: 1500 bytes MTU + header + one VLAN tag.
constexpr size_t max_host_frame_bytes = 1518;
constexpr size_t min_host_frame_bytes = 14;

// A host endpoint could not be opened (no /dev/net/tun, no CAP_NET_ADMIN, address in use, ...).
struct host_socket_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The local end of a UDP bridge could not be bound (bridge.udp_local is to blame, not the peer).
struct host_bind_error : host_socket_error {
    using host_socket_error::host_socket_error;
};

// Parses "HOST:PORT" or "[V6]:PORT" (HOST a numeric address or "localhost"); nullopt-like
// empty host on failure, with the reason in `error`.
struct host_port {
    std::string host;
    uint16_t port = 0;
};
bool parse_host_port(const std::string& text, host_port& out, std::string& error);

class host_socket {
public:
    using clock = std::chrono::steady_clock;
    // Called on the I/O thread for each frame the host sent (no FCS), with its arrival time.
    using receive_fn = std::function<void(std::vector<uint8_t>&& bytes, clock::time_point arrived)>;

    // TAP device `ifname` (created if missing, IFF_TAP | IFF_NO_PI, brought up).
    static std::unique_ptr<host_socket> open_tap(const std::string& ifname, size_t queue_frames);
    // UDP socket bound to `local`, exchanging datagrams with `peer` only.
    static std::unique_ptr<host_socket> open_udp(const host_port& peer, const host_port& local, size_t queue_frames);

    virtual ~host_socket();

    // Starts the I/O thread; frames from the host go to `on_frame`.
    void start(receive_fn on_frame);
    // Queues a frame (no FCS) for the host; any thread. A full queue is a counted loss.
    void send(std::vector<uint8_t>&& bytes);
    // Writes what is queued (for at most a second), then stops the I/O thread. Idempotent.
    void close();

    // Counts `n` losses; the first of each cause prints one line on stderr. Any thread.
    void lost(bridge_loss cause, const std::string& detail, uint64_t n = 1);
    uint64_t losses(bridge_loss cause) const { return loss_[int(cause)].load(); }
    uint64_t frames_to_host() const { return to_host_.load(); }
    uint64_t frames_from_host() const { return from_host_.load(); }
    // "tap fsim0" or "udp 127.0.0.1:40001 <-> 127.0.0.1:40000".
    const std::string& description() const { return description_; }

protected:
    struct io;  // Boost.Asio state, kept out of this header
    host_socket(std::unique_ptr<io> state, std::string description, size_t queue_frames);
    virtual void start_receive() = 0;
    virtual void start_write(const std::vector<uint8_t>& bytes) = 0;
    // At close: frames the host kernel dropped that no read has reported yet.
    virtual void count_kernel_drops() {}
    void received(size_t n, clock::time_point arrived);  // on the I/O thread, n bytes in rx_buffer_
    void written(bool ok, bridge_loss cause, const std::string& detail);  // on the I/O thread
    void uncount_sent(bridge_loss cause, const std::string& detail);     // the last frame written was lost after all
    io& state() { return *io_; }

    std::unique_ptr<io> io_;
    std::vector<uint8_t> rx_buffer_;

private:
    void write_next();

    std::string description_;
    size_t queue_frames_;
    receive_fn on_frame_;
    std::atomic<size_t> queued_{0};
    std::atomic<uint64_t> to_host_{0}, from_host_{0};
    std::array<std::atomic<uint64_t>, bridge_loss_causes> loss_{};
    std::array<std::atomic<bool>, bridge_loss_causes> logged_{};
    bool closed_ = false;
};

}  // namespace fecsim::traffic
