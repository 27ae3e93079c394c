#include "traffic/sink.h"

#include "traffic/pktgen_builder.h"

#include <algorithm>
#include <cstring>

namespace fecsim::traffic {
namespace {

uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
uint32_t get32(const uint8_t* p) { return uint32_t(get16(p)) << 16 | get16(p + 2); }

uint64_t to_ns(sc_core::sc_time t) { return uint64_t(t.value() / sc_core::sc_time(1, sc_core::SC_NS).value()); }

}  // namespace

int latency_histogram::index_of(uint64_t ns) {
    if (ns < sub_buckets) return int(ns);
    const int e = 63 - __builtin_clzll(ns);  // ns >= 8, so e >= 3
    const int sub = int((ns >> (e - 3)) & (sub_buckets - 1));
    return std::min(buckets - 1, (e - 2) * sub_buckets + sub);
}

uint64_t latency_histogram::lower_edge(int index) {
    if (index < sub_buckets) return uint64_t(index);
    const int e = index / sub_buckets + 2, sub = index % sub_buckets;
    return (uint64_t(sub_buckets) + uint64_t(sub)) << (e - 3);
}

void latency_histogram::add(uint64_t ns) {
    ++n_[index_of(ns)];
    ++count_;
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
    sum_ += ns;
}

uint64_t latency_histogram::quantile(double q) const {
    if (count_ == 0) return 0;
    const uint64_t want = std::max<uint64_t>(1, uint64_t(q * double(count_) + 0.5));
    uint64_t acc = 0;
    for (int i = 0; i < buckets; ++i) {
        acc += n_[i];
        if (acc >= want) return std::min(max_, i + 1 < buckets ? lower_edge(i + 1) : max_);
    }
    return max_;
}

void latency_histogram::report(nlohmann::json& j) const {
    j["count"] = count_;
    j["min"] = count_ ? min_ : 0;
    j["mean"] = count_ ? double(sum_ / count_) : 0.0;
    j["p50"] = quantile(0.5);
    j["p90"] = quantile(0.9);
    j["p99"] = quantile(0.99);
    j["max"] = max_;
    nlohmann::json h = nlohmann::json::array();
    for (int i = 0; i < buckets; ++i)
        if (n_[i]) h.push_back({lower_edge(i), n_[i]});
    j["histogram"] = std::move(h);  // [bucket lower edge ns, frames]
}

void rx_analyzer::analyse(const net::frame& f, sc_core::sc_time now) {
    ++s_.frames;
    s_.bytes += f.size();
    if (!net::fcs_ok(f)) {
        ++s_.fcs_errors;
        return;
    }
    const uint8_t* d = f.data();
    const size_t n = f.size() - net::fcs_bytes;
    if (n < 14) return void(++s_.non_pktgen);
    if (sent_) {
        const bool swapped = std::memcmp(d, sent_->src.data(), 6) == 0 && std::memcmp(d + 6, sent_->dst.data(), 6) == 0;
        ++(swapped ? s_.macs_swapped : s_.macs_not_swapped);
    }
    size_t l2 = 14;
    uint16_t type = get16(d + 12);
    if (type == 0x8100 && n >= 18) type = get16(d + 16), l2 = 18;
    if (type != 0x0800 || n < l2 + 20) return void(++s_.non_pktgen);
    const uint8_t* ip = d + l2;
    const size_t ihl = size_t(ip[0] & 0x0f) * 4;
    if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != 17 || n < l2 + ihl + 8 + pktgen_hdr_bytes) return void(++s_.non_pktgen);
    const uint8_t* udp = ip + ihl;
    const uint8_t* pgh = udp + 8;
    if (get32(pgh) != pktgen_magic) return void(++s_.non_pktgen);
    ++s_.pktgen_frames;

    const uint32_t seq = get32(pgh + 4);
    if (!seen_) {
        seen_ = true;
        first_seq_ = highest_seq_ = seq;
        copies_of_highest_ = 1;
    } else if (seq > highest_seq_) {
        highest_seq_ = seq;
        copies_of_highest_ = 1;
    } else if (seq == highest_seq_) {
        ++copies_of_highest_;  // clone_skb / burst copies carry the same number
    } else {
        ++s_.reordered;
    }
    flow& fl = flows_[{get32(ip + 12), get32(ip + 16), get16(udp), get16(udp + 2)}];
    if (fl.frames && seq < fl.highest) ++fl.reordered;
    fl.highest = std::max(fl.highest, seq);
    ++fl.frames;

    const uint32_t tv_sec = get32(pgh + 8), tv_usec = get32(pgh + 12);
    s_.timestamped += (tv_sec || tv_usec);
    const uint64_t sent_ns = (tv_sec || tv_usec) ? uint64_t(tv_sec) * 1000000000ull + uint64_t(tv_usec) * 1000ull
                                                 : to_ns(f.created);
    const uint64_t now_ns = to_ns(now);
    lat_.add(now_ns > sent_ns ? now_ns - sent_ns : 0);
}

uint64_t rx_analyzer::lost() const {
    if (!seen_) return 0;
    // Sequence numbers count sent packets: the highest frame's copies end the span.
    const uint64_t span = uint64_t(highest_seq_ - first_seq_) + copies_of_highest_;
    return span > s_.pktgen_frames ? span - s_.pktgen_frames : 0;
}

void rx_analyzer::reset() {
    s_ = {};
    seen_ = false;
    first_seq_ = highest_seq_ = 0;
    copies_of_highest_ = 0;
    flows_.clear();
    lat_.clear();
}

void rx_analyzer::report(nlohmann::json& j) const {
    j["frames"] = s_.frames;
    j["bytes"] = s_.bytes;
    j["fcs_errors"] = s_.fcs_errors;
    j["non_pktgen"] = s_.non_pktgen;
    j["pktgen_frames"] = s_.pktgen_frames;
    if (sent_) {
        j["macs_swapped"] = s_.macs_swapped;
        j["macs_not_swapped"] = s_.macs_not_swapped;
    }
    j["lost"] = lost();
    j["reordered"] = s_.reordered;
    j["flows"] = flows_.size();
    uint64_t flow_reorders = 0;
    for (auto& [k, fl] : flows_) flow_reorders += fl.reordered;
    j["reordered_within_flows"] = flow_reorders;
    lat_.report(j["latency_ns"]);
    // Without pktgen's timestamp (NO_TIMESTAMP, as sample03 sends) the clock starts when the
    // frame object was made: by the DUT's transmit for a frame it sends back, so the histogram
    // then holds the wire and the switch, not the DUT.
    j["latency_ns"]["measures"] = s_.timestamped == 0 ? "dut_tx_to_receive"
                                  : s_.timestamped == s_.pktgen_frames ? "generator_tx_to_receive"
                                                                       : "mixed";
}

void swap_macs(net::frame& f) {
    if (f.size() < 12 + net::fcs_bytes) return;
    uint8_t tmp[6];
    std::memcpy(tmp, f.data(), 6);
    std::memmove(f.data(), f.data() + 6, 6);
    std::memcpy(f.data() + 6, tmp, 6);
    f.bytes.resize(f.size() - net::fcs_bytes);
    net::append_fcs(f);
}

void sink::frame_arrived(net::frame_ptr f) {
    if (pause_.handle(*f, reflect_ ? reflect_->speed_mbps() : 1000.0)) return;
    rx_.analyse(*f, sc_core::sc_time_stamp());
    if (reflect_) {
        swap_macs(*f);
        reflect_->send(std::move(f));  // the link queues it behind frames already on the wire
        ++reflected_;
    }
}

void sink::reset_stats() {
    rx_.reset();
    pause_.reset_window();
    reflected_ = 0;
}

void sink::report(nlohmann::json& j) const {
    rx_.report(j);
    j["reflected"] = reflected_;
    pause_.report(j);
}

}  // namespace fecsim::traffic
