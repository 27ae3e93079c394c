// Receive-side checks of pktgen traffic: the reflector/sink peer, and the analysis the pktgen
// model runs on what it receives. Per frame: FCS, MAC swap relative to what the generator sent,
// pktgen sequence numbers (loss, reordering), latency from the pktgen timestamp.
#pragma once

#include "models/net/eth_port.h"
#include "traffic/generator.h"
#include "traffic/pktgen_commands.h"

#include <nlohmann/json.hpp>
#include <systemc>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

namespace fecsim::traffic {

// Latency histogram with 8 log-linear buckets per power of two of nanoseconds (relative error
// of a bucket edge <= 12.5%), fixed size: recording a sample never allocates.
class latency_histogram {
public:
    static constexpr int sub_buckets = 8;
    static constexpr int buckets = 8 + 38 * sub_buckets;  // up to 2^41 ns (~36 simulated minutes)

    void add(uint64_t ns);
    void clear() { *this = latency_histogram(); }
    uint64_t count() const { return count_; }
    // Upper edge (ns) of the bucket holding quantile q in [0, 1]; 0 when empty.
    uint64_t quantile(double q) const;
    void report(nlohmann::json& j) const;

    static int index_of(uint64_t ns);
    static uint64_t lower_edge(int index);

private:
    std::array<uint64_t, buckets> n_{};
    uint64_t count_ = 0, min_ = UINT64_MAX, max_ = 0;
    long double sum_ = 0;
};

// The generator's view of its own traffic, to check what comes back.
struct sent_macs {
    mac_addr src{}, dst{};
};

struct rx_analysis_stats {
    uint64_t frames = 0, bytes = 0;       // every frame analysed (bytes incl. FCS)
    uint64_t fcs_errors = 0;
    uint64_t non_pktgen = 0;              // not IPv4/UDP with the pktgen magic
    uint64_t macs_swapped = 0;            // dst == generator's src and src == generator's dst
    uint64_t macs_not_swapped = 0;
    uint64_t reordered = 0;               // sequence number below the highest seen
    uint64_t sequence_span = 0;           // packets the generator sent from the first to the last seen
    uint64_t pktgen_frames = 0;
    uint64_t timestamped = 0;             // pktgen frames with a send timestamp (not NO_TIMESTAMP)
};

class rx_analyzer {
public:
    explicit rx_analyzer(std::optional<sent_macs> sent = std::nullopt) : sent_(sent) {}

    void analyse(const net::frame& f, sc_core::sc_time now);
    void reset();
    const rx_analysis_stats& stats() const { return s_; }
    // Frames the generator sent (by sequence number) between the first and the highest one seen
    // that never arrived. pktgen numbers sent packets, so every copy of a burst counts.
    uint64_t lost() const;
    size_t flows() const { return flows_.size(); }
    const latency_histogram& latency() const { return lat_; }
    void report(nlohmann::json& j) const;

private:
    struct flow {
        uint32_t highest = 0;
        uint64_t frames = 0, reordered = 0;
    };
    std::optional<sent_macs> sent_;
    rx_analysis_stats s_;
    bool seen_ = false;
    uint32_t first_seq_ = 0, highest_seq_ = 0;
    uint64_t copies_of_highest_ = 0;
    std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>, flow> flows_;  // grows once per new flow
    latency_histogram lat_;
};

// The reflector/sink peer: analyses every frame; as a reflector it also swaps the MACs and
// sends the frame back (FCS recomputed) on the link end given to reflect_to().
class sink : public net::eth_sink {
public:
    explicit sink(std::optional<sent_macs> sent = std::nullopt) : rx_(sent), pause_(false) {}

    void reflect_to(net::eth_tx& tx) { reflect_ = &tx; }
    void frame_arrived(net::frame_ptr f) override;

    const rx_analyzer& analysis() const { return rx_; }
    uint64_t reflected() const { return reflected_; }
    uint64_t pause_frames_received() const { return pause_.received(); }
    void reset_stats();
    void report(nlohmann::json& j) const;

private:
    rx_analyzer rx_;
    pause_state pause_;
    net::eth_tx* reflect_ = nullptr;
    uint64_t reflected_ = 0;
};

// Swaps destination and source MAC of a frame and recomputes its FCS (what xdp2 does, in place).
void swap_macs(net::frame& f);

}  // namespace fecsim::traffic
