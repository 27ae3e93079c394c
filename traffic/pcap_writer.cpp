#include "traffic/pcap_writer.h"

#include "platform/config.h"

#include <pcap/pcap.h>

#include <filesystem>

namespace fecsim::traffic {

pcap_writer::pcap_writer(const std::string& path) : path_(path) {
    pcap_t* p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, snaplen, PCAP_TSTAMP_PRECISION_NANO);
    if (!p) throw config_error(path + ": cannot create a pcap handle");
    pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
    if (!d) {
        const std::string err = pcap_geterr(p);
        pcap_close(p);
        throw config_error(path + ": cannot write capture: " + err);
    }
    pcap_ = p;
    dumper_ = d;
}

pcap_writer::~pcap_writer() {
    if (dumper_) pcap_dump_close(static_cast<pcap_dumper_t*>(dumper_));
    if (pcap_) pcap_close(static_cast<pcap_t*>(pcap_));
}

void pcap_writer::write(const net::frame& f, sc_core::sc_time first_bit) {
    const size_t len = f.size() >= net::fcs_bytes ? f.size() - net::fcs_bytes : f.size();
    const uint64_t ns = uint64_t(first_bit.value() / sc_core::sc_time(1, sc_core::SC_NS).value());
    pcap_pkthdr h{};
    h.ts.tv_sec = time_t(ns / 1000000000ull);
    h.ts.tv_usec = suseconds_t(ns % 1000000000ull);  // nanoseconds: the file is in nano precision
    h.caplen = bpf_u_int32(len);
    h.len = bpf_u_int32(len);
    pcap_dump(static_cast<u_char*>(dumper_), &h, f.data());
    ++frames_;
}

void pcap_writer::flush() { pcap_dump_flush(static_cast<pcap_dumper_t*>(dumper_)); }

std::string pcap_writer::direction_path(const std::string& path, const std::string& direction) {
    std::filesystem::path p(path);
    const std::string ext = p.has_extension() ? p.extension().string() : ".pcap";
    return (p.parent_path() / (p.stem().string() + "-" + direction + ext)).string();
}

}  // namespace fecsim::traffic
