// net/ipv4/tcp.c as the reading task uses it: tcp_recvmsg (skb_copy_datagram_iter, the copy to
// user memory), tcp_cleanup_rbuf (the ACK a read makes due) and tcp_rcv_space_adjust (receive
// buffer autotuning, net.ipv4.tcp_moderate_rcvbuf).
#include "firmware/kernel/tcp.h"

#include <algorithm>

namespace fecsim::firmware {

namespace {
constexpr uint32_t MAX_TCP_HEADER = 320;
uint32_t tcp_win_from_space(uint64_t space) { return uint32_t(space - (space >> 1)); }
}  // namespace

// The reader (iperf -s) on the same core: scheduled in after the softirq, it reads until the
// queue is empty (each read() returns what is there, up to its buffer), then sleeps again.
bool tcp::run_reader() {
    if (!reader_woken_) return false;
    {
        cpu::scope s(k_.core, "__schedule");
        k_.exec(path::context_switch);  // switch to the reader
    }
    while (!sk_.receive_queue.empty()) tcp_recvmsg();
    if (sk_.state == tcp_sock::CLOSE_WAIT) {  // read() returned 0: iperf closes the socket
        __tcp_send_ack(TCPHDR_FIN | TCPHDR_ACK);
        sk_.state = tcp_sock::LAST_ACK;
    }
    reader_woken_ = false;
    cpu::scope s(k_.core, "__schedule");
    k_.exec(path::context_switch);  // sk_wait_data: sleep, back to the idle task
    return true;
}

void tcp::tcp_recvmsg() {
    cpu::scope s(k_.core, "tcp_recvmsg");
    k_.exec(path::tcp_recvmsg);
    k_.core.touch(sk_.sim, 64, true);         // lock_sock
    k_.core.touch(sk_.sim + 320, 64, false);  // sk_receive_queue, copied_seq
    uint32_t copied = 0;
    while (copied < p_.read_bytes && !sk_.receive_queue.empty()) {
        k_.exec(path::tcp_recvmsg_skb);  // one pass of tcp_recvmsg_locked's loop
        sk_buff* skb = sk_.receive_queue.front();
        const uint32_t offset = sk_.copied_seq - skb->seq;
        const uint32_t used = std::min(skb->len - std::min(offset, skb->len), p_.read_bytes - copied);
        if (used) {
            // skb_copy_datagram_iter: the head, then each fragment, copied into the user pages
            cpu::scope s2(k_.core, "skb_copy_datagram_iter");
            k_.exec(path::skb_copy_datagram_iter);
            uint32_t pos = offset, left = used, dst = copied;
            auto copy_out = [&](addr_t src, uint32_t len) {
                k_.exec(path::copy_to_user);
                k_.exec(path::copy_to_user_line, (len + 63) / 64);
                while (len) {
                    const uint32_t in_page = std::min(len, PAGE_SIZE - dst % PAGE_SIZE);
                    const addr_t to = user_buf_[dst / PAGE_SIZE] + dst % PAGE_SIZE;
                    k_.core.copy(to, src, in_page);
                    if (on_read) on_read(to, in_page);
                    src += in_page, dst += in_page, len -= in_page;
                }
            };
            const uint32_t head = skb->headlen();
            if (pos < head) {
                const uint32_t n = std::min(head - pos, left);
                copy_out(skb->data + pos, n);
                left -= n, pos += n;
            }
            uint32_t start = head;
            for (int i = 0; i < skb->nr_frags && left; ++i) {
                const uint32_t end = start + skb->frags[i].len;
                if (pos < end) {
                    const uint32_t n = std::min(end - pos, left);
                    copy_out(skb->frags[i].addr + (pos - start), n);
                    left -= n, pos += n;
                }
                start = end;
            }
        }
        sk_.copied_seq += used;
        copied += used;
        if (sk_.copied_seq == skb->seq + skb->len) tcp_eat_recv_skb(skb);
        else break;  // the buffer is full
    }
    k_.core.touch(sk_.sim + 320, 64, true);
    ++stats.reads;
    stats.bytes_read += copied;
    tcp_rcv_space_adjust();
    tcp_cleanup_rbuf(copied);
}

// tcp_eat_recv_skb: unlinked, uncharged (sock_rfree) and freed on this CPU (skb_attempt_defer_free).
void tcp::tcp_eat_recv_skb(sk_buff* skb) {
    sk_.receive_queue.pop_front();
    sock_rfree(skb);
    skbs_.consume_skb(skb);
}

// tcp_cleanup_rbuf: an ACK when tcp_input deferred one to the read, or when the read opened
// the window "significantly" (at least doubled it).
void tcp::tcp_cleanup_rbuf(uint32_t copied) {
    cpu::scope s(k_.core, "tcp_cleanup_rbuf");
    k_.exec(path::tcp_cleanup_rbuf);
    bool time_to_ack = false;
    if (sk_.ack_pending & ICSK_ACK_SCHED) {
        if (sk_.rcv_nxt - sk_.rcv_wup > sk_.rcv_mss ||
            (copied > 0 && (sk_.ack_pending & ICSK_ACK_PUSHED) && sk_.sk_rmem_alloc == 0))
            time_to_ack = true;
    }
    if (copied > 0 && !time_to_ack && sk_.state == tcp_sock::ESTABLISHED) {
        const uint32_t rcv_window_now = tcp_receive_window();
        if (2 * rcv_window_now <= sk_.window_clamp) {
            const uint32_t new_window = __tcp_select_window();
            if (new_window && new_window >= 2 * rcv_window_now) {
                time_to_ack = true;
                ++stats.window_updates;
            }
        }
    }
    if (time_to_ack) tcp_send_ack();
}

// tcp_rcv_space_adjust: once per receiver RTT, a buffer for twice what the reader consumed
// (plus growth), up to tcp_rmem[2]; the window clamp follows.
void tcp::tcp_rcv_space_adjust() {
    const sc_core::sc_time now = k_.core.now();
    if (sk_.rtt_est == sc_core::SC_ZERO_TIME || now - sk_.space_time < sk_.rtt_est) return;
    const uint32_t copied = sk_.copied_seq - sk_.space_seq;
    if (copied > sk_.space) {
        if (p_.moderate_rcvbuf) {
            uint64_t rcvwin = (uint64_t(copied) << 1) + 16 * sk_.advmss;
            const uint64_t grow = rcvwin * (copied - sk_.space) / std::max<uint32_t>(sk_.space, 1);
            rcvwin += grow << 1;
            uint32_t rcvmem = SKB_TRUESIZE(sk_.advmss + MAX_TCP_HEADER);
            while (tcp_win_from_space(rcvmem) < sk_.advmss) rcvmem += 128;
            rcvwin /= sk_.advmss;
            const int64_t rcvbuf = int64_t(std::min<uint64_t>(rcvwin * rcvmem, p_.rmem_max));
            if (rcvbuf > sk_.sk_rcvbuf) {
                sk_.sk_rcvbuf = rcvbuf;
                sk_.window_clamp = tcp_win_from_space(uint64_t(rcvbuf));
            }
        }
        sk_.space = copied;
    }
    sk_.space_seq = sk_.copied_seq;
    sk_.space_time = now;
}

}  // namespace fecsim::firmware
