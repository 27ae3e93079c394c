// generator.kind=board: the traffic peer is a second board (platform/board.h) assembled from the
// generator.platform profile, its FEC on the other end of the wire. Its core runs the pktgen
// kthread (firmware/kernel/pktgen.h) with the device commands the abstract pktgen model takes
// (generator.sample03 / pktgen_file / pktgen), sending through its own driver port, and its own
// RX path handles what comes back (E2, E3), on the same core.
#pragma once

#include "platform/board.h"
#include "traffic/generator.h"
#include "traffic/pktgen_builder.h"

#include <memory>
#include <optional>

namespace fecsim {

class board_peer : public traffic::generator {
public:
    // `cfg` is the experiment's configuration; the peer's own is built from generator.platform.
    explicit board_peer(const config& cfg);
    ~board_peer() override;

    void connect(net::eth_tx& tx) override;
    void frame_arrived(net::frame_ptr f) override;
    bool frame_arriving(net::frame_ptr& f, const sc_core::sc_time& at) override;  // the FEC's
    net::frame_ptr give_back_last(const sc_core::sc_time& now) override;         // the FEC's
    void reset_stats() override;
    // kind, platform, pktgen.*, the FEC's and driver's statistics, cpu (with ns per packet
    // sent), mem and the drops by cause of the peer board.
    void report(nlohmann::json& j) const override;
    uint64_t tx_frames() const override;  // frames the peer's FEC put on the wire
    uint64_t rx_frames() const override;  // frames its driver took off the RX ring
    std::string final_summary() const override;

    // The peer FEC's books (accounting generator.fec.rx / generator.fec.tx).
    void add_books(nlohmann::json& books) const;
    board& hardware() { return *board_; }
    const board& hardware() const { return *board_; }

private:
    config cfg_;  // the peer board's own configuration (outlives the board, which keeps a pointer)
    std::unique_ptr<traffic::pktgen_builder> builder_;
    std::unique_ptr<board> board_;
    sc_core::sc_time window_start_;
    std::vector<std::string> notes_;  // script lines without meaning in the model (generator.notes)
};

}  // namespace fecsim
