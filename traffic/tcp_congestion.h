// TCP congestion control of the sender, as Linux's tcp_cong.c (Reno: tcp_reno_cong_avoid,
// tcp_reno_ssthresh) and tcp_cubic.c (bictcp_cong_avoid, bictcp_recalc_ssthresh with fast
// convergence and TCP friendliness; HyStart is not modelled). The window is counted in
// segments, as snd_cwnd is.
#pragma once

#include <cstdint>
#include <string>

namespace fecsim::traffic {

enum class congestion_algorithm { reno, cubic };

class tcp_congestion {
public:
    static constexpr uint32_t initial_window = 10;  // TCP_INIT_CWND (RFC 6928)

    explicit tcp_congestion(congestion_algorithm a) : algo_(a) {}

    // ACK of `acked` segments at `now_us` while the flow used its window (tcp_cong_avoid).
    // `min_rtt_us`: the lowest RTT seen (CUBIC's delay_min).
    void cong_avoid(uint32_t acked, double now_us, double min_rtt_us);
    // Loss detected: the new ssthresh (tcp_ca_ops.ssthresh); the caller reduces cwnd to it.
    uint32_t ssthresh_on_loss();
    // The retransmission timer fired (tcp_enter_loss: cwnd 1, CUBIC's epoch restarts).
    void on_timeout();

    uint32_t cwnd = initial_window;
    uint32_t ssthresh = 0x7fffffff;  // TCP_INFINITE_SSTHRESH
    bool in_slow_start() const { return cwnd < ssthresh; }
    congestion_algorithm algorithm() const { return algo_; }

private:
    uint32_t slow_start(uint32_t acked);
    void cong_avoid_ai(uint32_t w, uint32_t acked);
    uint32_t cubic_cnt(double now_us, double min_rtt_us, uint32_t acked);

    congestion_algorithm algo_;
    uint32_t cwnd_cnt_ = 0;  // snd_cwnd_cnt: ACKed segments towards the next increase
    // CUBIC state (struct bictcp)
    double last_max_cwnd_ = 0, origin_ = 0, k_s_ = 0, epoch_start_us_ = -1;
    uint32_t ack_cnt_ = 0;
    double tcp_cwnd_ = 0;    // the Reno-friendly estimate
};

}  // namespace fecsim::traffic
