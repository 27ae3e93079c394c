// Capture of simulated wire traffic as a libpcap file: nanosecond timestamps (magic 0xa1b23c4d)
// taken from simulated time, link type Ethernet, full snaplen. Frames are written without their
// FCS, as Linux captures are, so tshark decodes them without trailer bytes or warnings.
// One writer is one file; the platform feeds it from the link's tap(s): with one writer for both
// directions the file holds the DUT's RX and TX interleaved (the MACs tell the direction).
#pragma once

#include "models/net/frame.h"

#include <systemc>

#include <cstdint>
#include <string>

namespace fecsim::traffic {

class pcap_writer {
public:
    static constexpr int snaplen = 262144;  // tcpdump's default: never truncates a frame

    // Opens (truncates) `path`; throws config_error when the file cannot be created.
    explicit pcap_writer(const std::string& path);
    ~pcap_writer();
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;

    // Records `f` (its FCS is left out) stamped with `first_bit`, the simulated time its first
    // preamble bit left the transmitter.
    void write(const net::frame& f, sc_core::sc_time first_bit);
    void flush();
    uint64_t frames() const { return frames_; }
    const std::string& path() const { return path_; }

    // "wire.pcap" + "rx" -> "wire-rx.pcap", for platforms that write one file per direction.
    static std::string direction_path(const std::string& path, const std::string& direction);

private:
    std::string path_;
    void* pcap_ = nullptr;    // pcap_t*
    void* dumper_ = nullptr;  // pcap_dumper_t*
    uint64_t frames_ = 0;
};

}  // namespace fecsim::traffic
