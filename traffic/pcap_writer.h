// Capture of simulated wire traffic as a pcapng file (written here, no libpcap): one Section
// Header Block, one Interface Description Block per direction of the DUT's wire ("dut-tx",
// "dut-rx"; link type Ethernet, snaplen 262144, if_tsresol 9 = nanoseconds, if_fcslen 0), then
// one Enhanced Packet Block per frame with its interface id, a 64-bit nanosecond timestamp taken
// from simulated time, captured length = original length, and epb_flags giving the direction as
// the DUT sees it (outbound / inbound). Frames are written without their FCS, as Linux captures
// are, so tshark decodes them without trailer bytes or warnings. libpcap (pcap_open_offline, the
// pcap replay) reads the file too.
#pragma once

#include "models/net/frame.h"

#include <systemc>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fecsim::traffic {

class pcap_writer {
public:
    static constexpr uint32_t snaplen = 262144;  // tcpdump's default: never truncates a frame

    // Interface ids (pcapng interface numbers). They equal net::link's direction numbers when
    // the DUT is side a of the link (a_to_b = DUT transmits), so a tap can pass its direction.
    enum interface_id : int { dut_tx = 0, dut_rx = 1 };
    static constexpr int interfaces = 2;
    static const char* interface_name(int interface);  // "dut-tx", "dut-rx"

    // Creates (truncates) `path` and writes the section header and both interface descriptions;
    // throws config_error when the file cannot be created.
    explicit pcap_writer(const std::string& path);
    ~pcap_writer();
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;

    // Records `f` (its FCS is left out) on `interface` (dut_tx or dut_rx), stamped with
    // `first_bit`, the simulated time its first preamble bit left the transmitter. Records are
    // written in call order (tshark and libpcap accept timestamps that go back across
    // interfaces). Throws std::invalid_argument for an unknown interface id.
    void write(const net::frame& f, sc_core::sc_time first_bit, int interface = dut_tx);
    // Pushes buffered records to the file; throws std::runtime_error if a write failed
    // (e.g. disk full) since the last check.
    void flush();
    uint64_t frames() const { return frames_; }
    uint64_t frames(int interface) const;  // frames written on one interface
    const std::string& path() const { return path_; }

private:
    void put(const void* p, size_t n);

    std::string path_;
    std::FILE* file_ = nullptr;
    uint64_t frames_ = 0;
    uint64_t per_interface_[interfaces] = {};
};

}  // namespace fecsim::traffic
