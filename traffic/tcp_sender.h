// The iperf2 client on a fast x86 host (`iperf -c DUT -w W -l L -t T -i 1`): an application
// writing L-byte buffers into a TCP socket as fast as the send buffer takes them, and a
// Linux-like TCP sender behind it (net/ipv4/tcp_output.c, tcp_input.c, tcp_timer.c): MSS
// from the MTU less the timestamp option, initial window 10, slow start and congestion
// avoidance (CUBIC or Reno, tcp_congestion), SACK scoreboard with fast retransmit and PRR
// recovery, the retransmission timer of RFC 6298 with Linux's 200 ms minimum, the peer's
// scaled receive window, Nagle (Minshall's variant) and autocork for small writes, and TCP
// small queues between the socket and the host NIC. Frames are real bytes (tcp_segment).
// The host's own CPU costs (per write, per segment, per ACK) are small and configurable.
// Kernel events: about one per segment (the NIC hands it to the wire) plus the timers.
#pragma once

#include "models/activity.h"
#include "traffic/generator.h"
#include "traffic/tcp_congestion.h"
#include "traffic/tcp_segment.h"

#include <systemc>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace fecsim {
class config;
}

namespace fecsim::traffic {

struct tcp_cpu_params {
    double per_write_ns = 1000;    // write() syscall + tcp_sendmsg, per call
    double per_segment_ns = 150;   // tcp_transmit_skb + driver xmit, per MSS segment (TSO host)
    double per_ack_ns = 200;       // tcp_ack + the driver's RX of the ACK
};

struct tcp_sender_params {
    mac_addr src_mac{}, dst_mac{};
    uint32_t src_ip = 0, dst_ip = 0;
    uint16_t src_port = 41000, dst_port = 5001;
    uint32_t mtu = 1500;
    uint64_t sndbuf = 4194304;     // bytes written but not yet ACKed (SO_SNDBUF as granted)
    uint32_t write_bytes = 131072; // iperf -l
    double duration_s = 0;         // iperf -t after the connection is up; 0: until the run ends
    congestion_algorithm cc = congestion_algorithm::cubic;
    tcp_cpu_params cpu;
    bool flow_control = false;     // honour PAUSE frames
    double start_delay_ns = 0;     // the SYN goes out then
    uint64_t seed = 1;
};

// generator.* and generator.tcp.* of a resolved configuration; config_error on bad values.
tcp_sender_params tcp_sender_params_from(const config& cfg, bool flow_control);

struct tcp_sender_stats {
    uint64_t tx_frames = 0, tx_bytes = 0;     // handed to the wire (bytes incl. FCS)
    uint64_t rx_frames = 0;                   // frames of this connection received
    uint64_t rx_ignored = 0;                  // not this connection's (or not TCP)
    uint64_t rx_bad_checksum = 0;             // of this connection, dropped for a bad checksum
    uint64_t data_segments = 0;               // first transmissions
    uint64_t retransmissions = 0;             // segments sent again (fast and timeout)
    uint64_t fast_recoveries = 0;             // entries into recovery (SACK or three duplicate ACKs)
    uint64_t timeouts = 0;                    // retransmission timer expiries (SYN ones included)
    uint64_t dup_acks = 0;
    uint64_t sack_blocks = 0;                 // SACK blocks received
    uint64_t bytes_written = 0;               // by the application (what iperf -c reports)
    uint64_t bytes_acked = 0;                 // payload acknowledged by the peer (goodput)
};

class tcp_sender : public sc_core::sc_module, public generator {
public:
    tcp_sender(sc_core::sc_module_name name, const tcp_sender_params& p);

    void connect(net::eth_tx& tx) override { tx_ = &tx; }
    void frame_arrived(net::frame_ptr f) override;
    void reset_stats() override;
    void report(nlohmann::json& j) const override;
    void report_rates(nlohmann::json& rates, double window_s) const override;
    uint64_t tx_frames() const override { return s_.tx_frames; }
    uint64_t rx_frames() const override { return s_.rx_frames; }
    std::string final_summary() const override;
    std::vector<std::string> live_lines(double interval_s) override;
    std::optional<ledger> nic_books() const override;

    enum class state { closed, syn_sent, established, fin_wait, done };
    enum class ca_state { open, recovery, loss };  // TCP_CA_Open (Disorder folded in), Recovery, Loss

    const tcp_sender_stats& stats() const { return s_; }   // window statistics
    const tcp_sender_stats& totals() const { return t_; }  // since the start
    state connection() const { return state_; }
    ca_state congestion_state() const { return ca_; }
    uint32_t mss() const { return mss_; }
    uint32_t cwnd() const { return cc_.cwnd; }
    uint64_t rwnd() const { return rwnd_; }
    double srtt_us() const { return srtt_us_; }
    double rto_ms() const { return rto_us_ * 1e-3; }
    sc_core::sc_time established_at() const { return established_at_; }
    uint32_t isn() const { return isn_; }
    const tcp_sender_params& params() const { return p_; }

private:
    // One segment of the retransmission queue (a Linux skb of one MSS: no TSO on the wire).
    struct seg {
        seg(uint64_t s, uint32_t l, bool f, sc_core::sc_time t) : start(s), len(l), fin(f), sent(t) {}
        uint64_t start;        // stream offset of the first payload byte
        uint32_t len;          // payload bytes
        bool fin;
        bool psh = false;      // the last segment of an skb a write ended in
        bool sacked = false, lost = false, retrans = false;  // TCPCB_SACKED_ACKED, TCPCB_LOST, TCPCB_SACKED_RETRANS
        bool ever_retrans = false;                          // Karn: no RTT sample from it
        sc_core::sc_time sent;
        uint64_t end() const { return start + len + (fin ? 1 : 0); }
    };
    struct nic_slot {
        net::frame_ptr f;
        sc_core::sc_time ready;  // when the host CPU has handed it to the NIC
        uint32_t bytes;          // payload, for TCP small queues
    };

    void on_nic();             // SC_METHOD: hands the next frame to the wire, retires sent ones
    void on_timer();           // SC_METHOD: connect, retransmission and persist timer
    void on_app();             // SC_METHOD: the application's writes reach a point worth a push
    void send_syn();
    void handle_synack(const tcp_segment& s);
    void tcp_ack(const tcp_segment& s);
    uint32_t tcp_sacktag(const tcp_segment& s);  // returns the segments newly SACKed
    void mark_lost(bool partial_ack);
    void enter_recovery();
    void cwnd_reduction(uint32_t newly_acked_sacked, bool una_advanced);
    void tcp_enter_loss();
    void tcp_write_xmit(bool from_app);
    void retransmit(seg& g);
    void transmit(const seg& g);
    void queue_frame(uint8_t flags, uint32_t seq, uint64_t start, uint32_t len);
    void advance_app(sc_core::sc_time now);
    void schedule_app(sc_core::sc_time now);
    void arm_rto(sc_core::sc_time now);
    void rtt_sample(double rtt_us);
    void charge(double ns);
    void count(uint64_t tcp_sender_stats::*field, uint64_t n);
    bool nagle_hold() const;
    bool autocork() const;
    uint64_t size_goal() const;
    bool ends_skb(uint64_t end);
    bool cwnd_limited() const;
    // tcp_packets_in_flight: sent, not SACKed (or, without SACK, duplicate-ACKed), not lost,
    // plus retransmissions in flight.
    uint32_t packets_in_flight() const {
        return packets_out_ - std::min(packets_out_, sacked_out_ + lost_out_ + reno_sacked_) + retrans_out_;
    }
    uint32_t wire_seq(uint64_t offset) const { return isn_ + 1 + uint32_t(offset); }
    uint32_t tsval(sc_core::sc_time t) const { return ts_offset_ + uint32_t(t.to_seconds() * 1e3); }
    uint64_t unsent() const { return written_ - std::min(nxt_, written_); }

    tcp_sender_params p_;
    net::eth_tx* tx_ = nullptr;
    pause_state pause_;
    tcp_congestion cc_;
    tcp_sender_stats s_, t_;

    // connection
    state state_ = state::closed;
    ca_state ca_ = ca_state::open;
    uint32_t isn_, ts_offset_, irs_ = 0, rcv_nxt_ = 0, ts_recent_ = 0;
    uint16_t ip_id_;
    uint32_t mss_ = 0;
    bool sack_ok_ = false, ts_ok_ = false, wscale_ok_ = false;
    int snd_wscale_ = 0;            // the peer's shift, applied to the windows it announces
    uint64_t rwnd_ = 0, max_rwnd_ = 0;  // the peer's window in bytes, and its largest
    sc_core::sc_time syn_sent_at_, established_at_;

    // stream offsets: [una_, nxt_) in flight, [nxt_, written_) written but not sent
    uint64_t una_ = 0, nxt_ = 0, written_ = 0;
    uint64_t sml_ = 0;              // snd_sml: end of the last small segment sent (Minshall)
    uint64_t skb_start_ = 0;        // where the first unsent skb of the write queue starts
    bool fin_queued_ = false;
    std::deque<seg> rtx_;           // the retransmission queue, [una_, nxt_)
    uint32_t packets_out_ = 0, sacked_out_ = 0, lost_out_ = 0, retrans_out_ = 0;
    uint32_t max_packets_out_ = 0;  // in the current window (tcp_cwnd_validate)
    uint64_t max_packets_seq_ = 0;
    bool is_cwnd_limited_ = false;
    uint32_t reno_sacked_ = 0;      // without SACK: duplicate ACKs stand in for SACKed segments
    uint64_t high_seq_ = 0;         // recovery / loss ends when una_ reaches it
    uint32_t prior_cwnd_ = 0, prr_delivered_ = 0, prr_out_ = 0;

    // RTT and the retransmission timer (tcp_rtt_estimator, tcp_set_rto)
    double srtt_us_ = 0, rttvar_us_ = 0, min_rtt_us_ = 0, rto_us_ = 1e6;
    unsigned backoff_ = 0;
    sc_core::sc_time rto_at_;
    bool rto_armed_ = false;
    unsigned syn_retries_ = 0;

    // the application
    sc_core::sc_time app_at_;       // when its current write completes
    bool app_blocked_ = false, app_done_ = false;
    sc_core::sc_time app_stop_at_, stopped_at_;

    // the host: its CPU (softirq and process context share it) and NIC queue
    sc_core::sc_time cpu_free_;
    std::deque<nic_slot> nic_;      // queued for the wire
    std::deque<std::pair<sc_core::sc_time, uint32_t>> on_wire_;  // sent, not yet completed: (done, bytes)
    uint64_t nic_bytes_ = 0;        // payload bytes queued or on the wire (TCP small queues)
    uint64_t nic_in_ = 0, nic_out_ = 0, nic_at_window_ = 0;
    bool tsq_throttled_ = false;
    std::vector<uint8_t> payload_;  // scratch for one segment's bytes

    // reporting
    sc_core::sc_time window_start_;
    uint64_t interval_written_ = 0; // bytes_written at the last live line
    double interval_end_s_ = 0;     // of the last live line, since the window start

    timed_event nic_ev_, timer_ev_, app_ev_;
};

}  // namespace fecsim::traffic
