#include "traffic/tcp_congestion.h"

#include <algorithm>
#include <cmath>

namespace fecsim::traffic {
namespace {
// tcp_cubic.c defaults: beta 717/1024, bic_scale 41 (C = 41 * 10 / 1024 = 0.4 segments/s^3).
constexpr double cubic_beta = 717.0 / 1024.0;
constexpr double cubic_c = 41.0 * 10.0 / 1024.0;
// 3 * (1 - beta) / (1 + beta) of the Reno-friendly window (beta_scale / 8 in the kernel).
constexpr double cubic_friendly_delta = 8.0 * (1024 + 717) / 3 / (1024 - 717) / 8.0;
}  // namespace

// tcp_slow_start: grow by the ACKed segments up to ssthresh; returns what is left for CA.
uint32_t tcp_congestion::slow_start(uint32_t acked) {
    const uint32_t grown = std::min(cwnd + acked, ssthresh);
    acked -= grown - cwnd;
    cwnd = grown;
    return acked;
}

// tcp_cong_avoid_ai: one segment more per w segments ACKed.
void tcp_congestion::cong_avoid_ai(uint32_t w, uint32_t acked) {
    if (cwnd_cnt_ >= w) {
        cwnd_cnt_ = 0;
        ++cwnd;
    }
    cwnd_cnt_ += acked;
    if (cwnd_cnt_ >= w) {
        const uint32_t delta = cwnd_cnt_ / w;
        cwnd_cnt_ -= delta * w;
        cwnd += delta;
    }
}

// bictcp_update: segments to ACK per window increase, from the cubic curve and the Reno estimate.
uint32_t tcp_congestion::cubic_cnt(double now_us, double min_rtt_us, uint32_t acked) {
    ack_cnt_ += acked;
    if (epoch_start_us_ < 0) {
        epoch_start_us_ = now_us;
        ack_cnt_ = acked;
        tcp_cwnd_ = cwnd;
        if (last_max_cwnd_ <= cwnd) {
            k_s_ = 0;
            origin_ = cwnd;
        } else {
            k_s_ = std::cbrt((last_max_cwnd_ - cwnd) / cubic_c);
            origin_ = last_max_cwnd_;
        }
    }
    // The window one RTT ahead, as the kernel (t includes delay_min).
    const double t = (now_us - epoch_start_us_ + min_rtt_us) * 1e-6;
    const double target = origin_ + cubic_c * std::pow(t - k_s_, 3);
    double cnt = target > cwnd ? cwnd / (target - cwnd) : 100.0 * cwnd;
    if (last_max_cwnd_ == 0 && cnt > 20) cnt = 20;  // before the first loss: at least 5% per RTT
    // TCP friendliness: never slower than Reno with CUBIC's beta would be.
    const double delta = cwnd * cubic_friendly_delta;
    while (ack_cnt_ > delta) {
        ack_cnt_ -= uint32_t(delta);
        tcp_cwnd_ += 1;
    }
    if (tcp_cwnd_ > cwnd) cnt = std::min(cnt, cwnd / (tcp_cwnd_ - cwnd));
    return std::max<uint32_t>(2, uint32_t(cnt));
}

void tcp_congestion::cong_avoid(uint32_t acked, double now_us, double min_rtt_us) {
    if (in_slow_start()) {
        acked = slow_start(acked);
        if (!acked) return;
    }
    if (algo_ == congestion_algorithm::reno) cong_avoid_ai(cwnd, acked);
    else cong_avoid_ai(cubic_cnt(now_us, min_rtt_us, acked), acked);
}

uint32_t tcp_congestion::ssthresh_on_loss() {
    if (algo_ == congestion_algorithm::reno) return ssthresh = std::max<uint32_t>(cwnd / 2, 2);
    epoch_start_us_ = -1;
    // Fast convergence: give up more room when the window shrinks between losses.
    last_max_cwnd_ = cwnd < last_max_cwnd_ ? cwnd * (1.0 + cubic_beta) / 2.0 : double(cwnd);
    return ssthresh = std::max<uint32_t>(uint32_t(cwnd * cubic_beta), 2);
}

void tcp_congestion::on_timeout() {
    cwnd = 1;
    cwnd_cnt_ = 0;
    epoch_start_us_ = -1;  // bictcp_state(TCP_CA_Loss): bictcp_reset
    if (algo_ == congestion_algorithm::cubic) {
        last_max_cwnd_ = 0, ack_cnt_ = 0, tcp_cwnd_ = 0;
    }
}

}  // namespace fecsim::traffic
