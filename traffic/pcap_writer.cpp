#include "traffic/pcap_writer.h"

#include "models/net/link.h"
#include "config/config.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fecsim::traffic {

static_assert(int(pcap_writer::dut_tx) == int(net::link::a_to_b) && int(pcap_writer::dut_rx) == int(net::link::b_to_a),
              "interface ids follow the link's directions with the DUT on side a");

namespace {

// pcapng block types and option codes (IETF draft-ietf-opsawg-pcapng).
constexpr uint32_t section_header_block = 0x0A0D0D0A;
constexpr uint32_t interface_description_block = 0x00000001;
constexpr uint32_t enhanced_packet_block = 0x00000006;
constexpr uint32_t byte_order_magic = 0x1A2B3C4D;
constexpr uint16_t opt_endofopt = 0;
constexpr uint16_t shb_userappl = 4;
constexpr uint16_t if_name = 2;
constexpr uint16_t if_description = 3;
constexpr uint16_t if_tsresol = 9;
constexpr uint16_t if_fcslen = 13;
constexpr uint16_t epb_flags = 2;
constexpr uint16_t linktype_ethernet = 1;
constexpr uint8_t tsresol_ns = 9;       // 10^-9 s per timestamp unit
constexpr uint32_t epb_inbound = 1;     // epb_flags bits 0-1: direction
constexpr uint32_t epb_outbound = 2;

constexpr size_t pad4(size_t n) { return (n + 3) & ~size_t(3); }

// A block assembled in memory, little-endian (the byte-order magic tells readers which).
class block {
public:
    explicit block(uint32_t type) { u32(type).u32(0); }
    block& u8(uint8_t v) { b_.push_back(char(v)); return *this; }
    block& u16(uint16_t v) { return u8(uint8_t(v)).u8(uint8_t(v >> 8)); }
    block& u32(uint32_t v) { return u16(uint16_t(v)).u16(uint16_t(v >> 16)); }
    block& u64(uint64_t v) { return u32(uint32_t(v)).u32(uint32_t(v >> 32)); }
    block& option(uint16_t code, const void* value, size_t len) {
        u16(code).u16(uint16_t(len));
        b_.append(static_cast<const char*>(value), len);
        b_.append(pad4(len) - len, '\0');
        return *this;
    }
    block& option(uint16_t code, const std::string& s) { return option(code, s.data(), s.size()); }
    block& option(uint16_t code, uint8_t v) { return option(code, &v, 1); }
    // Ends the options and closes the block: total length at both ends.
    const std::string& finish() {
        u16(opt_endofopt).u16(0);
        const uint32_t total = uint32_t(b_.size() + 4);
        u32(total);
        for (int i = 0; i < 4; ++i) b_[4 + i] = char(total >> (8 * i));
        return b_;
    }

private:
    std::string b_;
};

struct interface_desc {
    const char* name;
    const char* description;
    uint32_t direction;  // epb_flags of its packets
};
constexpr interface_desc interface_table[pcap_writer::interfaces] = {
    {"dut-tx", "frames the DUT transmits (simulated wire, FCS stripped)", epb_outbound},
    {"dut-rx", "frames the DUT receives (simulated wire, FCS stripped)", epb_inbound},
};

void put_le32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

// Simulated time in whole nanoseconds, whatever the kernel's time resolution.
uint64_t to_ns(sc_core::sc_time t) {
    const uint64_t ticks_per_ns = sc_core::sc_time(1, sc_core::SC_NS).value();
    if (ticks_per_ns > 0) return t.value() / ticks_per_ns;
    return t.value() * uint64_t(sc_core::sc_get_time_resolution().to_seconds() * 1e9 + 0.5);
}

}  // namespace

const char* pcap_writer::interface_name(int interface) {
    if (interface < 0 || interface >= interfaces) return "?";
    return interface_table[interface].name;
}

pcap_writer::pcap_writer(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw config_error(path + ": cannot write capture: " + std::strerror(errno));
    // Full buffering: records reach the disk in large writes, not one system call per frame.
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);

    block shb(section_header_block);
    shb.u32(byte_order_magic).u16(1).u16(0).u64(~uint64_t(0));  // version 1.0, section length unknown
    shb.option(shb_userappl, std::string("fecsim"));
    const std::string& s = shb.finish();
    put(s.data(), s.size());
    for (const interface_desc& d : interface_table) {
        block idb(interface_description_block);
        idb.u16(linktype_ethernet).u16(0).u32(snaplen);
        idb.option(if_name, std::string(d.name)).option(if_description, std::string(d.description));
        idb.option(if_tsresol, tsresol_ns).option(if_fcslen, uint8_t(0));
        const std::string& i = idb.finish();
        put(i.data(), i.size());
    }
    if (std::fflush(file_) != 0) {
        const std::string err = std::strerror(errno);
        std::fclose(file_);
        file_ = nullptr;
        throw config_error(path + ": cannot write capture: " + err);
    }
}

pcap_writer::~pcap_writer() {
    if (file_) std::fclose(file_);
}

void pcap_writer::put(const void* p, size_t n) { std::fwrite(p, 1, n, file_); }

void pcap_writer::write(const net::frame& f, sc_core::sc_time first_bit, int interface) {
    if (interface < 0 || interface >= interfaces)
        throw std::invalid_argument(path_ + ": no capture interface " + std::to_string(interface) +
                                    " (0 = dut-tx, 1 = dut-rx)");
    const size_t len = f.size() >= net::fcs_bytes ? f.size() - net::fcs_bytes : f.size();
    const uint64_t ns = to_ns(first_bit);

    // Fixed part: type, length, interface, timestamp (high, low), captured, original length.
    constexpr size_t head_bytes = 28;
    // Tail: data padding, epb_flags option (4 + 4), end of options (4), total length (4).
    constexpr size_t tail_bytes = 3 + 16;
    const size_t padding = pad4(len) - len;
    const uint32_t total = uint32_t(head_bytes + pad4(len) + 16);
    uint8_t head[head_bytes];
    put_le32(head + 0, enhanced_packet_block);
    put_le32(head + 4, total);
    put_le32(head + 8, uint32_t(interface));
    put_le32(head + 12, uint32_t(ns >> 32));
    put_le32(head + 16, uint32_t(ns));
    put_le32(head + 20, uint32_t(len));
    put_le32(head + 24, uint32_t(len));
    uint8_t tail[tail_bytes] = {};  // padding bytes are zero
    uint8_t* t = tail + padding;
    put_le32(t + 0, uint32_t(epb_flags) | (4u << 16));
    put_le32(t + 4, interface_table[interface].direction);
    put_le32(t + 8, opt_endofopt);
    put_le32(t + 12, total);

    put(head, head_bytes);
    put(f.data(), len);
    put(tail, padding + 16);
    ++frames_;
    ++per_interface_[interface];
}

uint64_t pcap_writer::frames(int interface) const {
    if (interface < 0 || interface >= interfaces)
        throw std::invalid_argument(path_ + ": no capture interface " + std::to_string(interface));
    return per_interface_[interface];
}

void pcap_writer::flush() {
    if (std::fflush(file_) != 0 || std::ferror(file_))
        throw std::runtime_error(path_ + ": writing the capture failed: " + std::strerror(errno));
}

}  // namespace fecsim::traffic
