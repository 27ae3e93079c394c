#include "platform/run_warnings.h"

#include "firmware/fec/fec.h"

#include <cctype>
#include <cstdio>

namespace fecsim {

namespace {
std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}
std::string lower(std::string s) {  // MAC addresses compare without case
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
}  // namespace

std::vector<std::string> run_warnings(const nlohmann::json& r) {
    std::vector<std::string> w;
    const nlohmann::json& cfg = r.at("config");
    const nlohmann::json& gen = r.at("generator");
    const double window_s = r.at("sim").at("window_s"), warmup_s = cfg.at("warmup_s");
    const std::string kind = cfg.at("generator").at("kind");
    const std::string dut_mac = cfg.at("soc").at("fec").at("mac_address");

    // A generator that stopped before the end of the window: its rates average over idle time.
    if (gen.contains("ended_s")) {
        const double ended = gen.at("ended_s");
        const bool pcap = kind == "pcap", tcp = kind == "tcp";
        const std::string what = pcap  ? "the capture replay ended"
                                 : tcp ? "the TCP client stopped writing (iperf -t)"
                                       : "pktgen sent its count of packets and stopped";
        const std::string fix = pcap  ? "generator.pcap.loops=0 replays it until the run ends"
                                : tcp ? "generator.tcp.duration_s=0 writes until the run ends"
                                      : "count 0 (sample03 -n 0) sends until the run ends";
        if (ended <= warmup_s)
            w.push_back(what + " at " + fixed(ended, 6) + " s, inside the " + fixed(warmup_s, 3) +
                        " s warm-up, so nothing was sent in the window and every rate is 0: " + fix);
        else if (ended < warmup_s + window_s)
            w.push_back(what + " " + fixed(ended - warmup_s, 6) + " s into the " + fixed(window_s, 3) +
                        " s window; rates average over the idle rest: " + fix);
    }

    // A TCP client whose SYN got no answer measures nothing.
    if (kind == "tcp" && gen.contains("tcp")) {
        const std::string state = gen.at("tcp").at("state");
        const std::string dst_mac = cfg.at("generator").at("tcp").at("dst_mac");  // "" = the DUT's
        const bool to_dut = dst_mac.empty() || lower(dst_mac) == lower(dut_mac);
        if (state == "closed" || state == "syn_sent" || (state == "done" && gen.at("tcp").at("established_s") < 0))
            w.push_back("the TCP connection was never established (no SYN-ACK from " +
                        cfg.at("generator").at("tcp").at("dst_ipv4").get<std::string>() + "): " +
                        (to_dut ? "the DUT must run a TCP receiver, and the SYN must leave after the driver has opened "
                                  "the interface (generator.start_delay_us; a lost SYN is sent again only after 1 s, "
                                  "2 s, ...)"
                                : "generator.tcp.dst_mac " + dst_mac + " is not the DUT's MAC " + dut_mac +
                                      ", whose address filter drops the SYN (\"\" sends to the DUT's)"));
    }

    const nlohmann::json& dut = r.at("dut");
    const double filtered = dut.at("rx_filtered"), accepted = dut.at("rx_frames");
    const bool bridged = gen.contains("frames_from_host");  // the host is the peer (--tap, --udp-bridge)
    const std::string mac_fix =
        bridged ? "address the host's frames to the DUT's MAC " + dut_mac
                : "set the generator's destination MAC to the DUT's " + dut_mac +
                      (kind == "pcap"  ? " (generator.pcap.dst_mac)"
                       : kind == "tcp" ? " (generator.tcp.dst_mac)"
                                       : " (sample03 -m or pktgen dst_mac)");
    if (filtered > 0 && filtered >= accepted)
        w.push_back(fixed(100 * filtered / (filtered + accepted), 0) +
                    "% of the frames reaching the DUT were dropped by its MAC address filter: " + mac_fix);

    // Frames longer than the receive limit the driver sets reach no XDP program and no stack.
    const nlohmann::json& mib = dut.at("mib");
    const double too_long = mib.at("RMON_R_OVERSIZE").get<double>() + mib.at("RMON_R_JAB").get<double>();
    if (too_long > 0) {
        const std::string source = bridged          ? "the host's frames"
                                   : kind == "pcap" ? "the capture's frames"
                                   : kind == "tcp"  ? "the client's segments (generator.tcp.mtu)"
                                                    : "pktgen's frames (sample03 -s, pkt_size)";
        w.push_back(fixed(too_long, 0) + " frames reaching the DUT were longer than its receive limit, " +
                    std::to_string(firmware::fec::PKT_MAXBUF_SIZE) + " bytes with the FCS (RCR MAX_FL; MIB " +
                    "RMON_R_OVERSIZE, RMON_R_JAB), and its driver dropped them as length errors: " + source +
                    " must fit it");
    }

    // XDP_TX into a full TX ring drops the frame after the program ran: xdp2's count (xdp_prog_pps)
    // still includes it, so the rate looks better than what went back on the wire.
    const double xdp_tx = dut.at("xdp").at("tx"), tx_full = dut.at("xdp").at("tx_errors");
    if (tx_full > 0)
        w.push_back(fixed(tx_full, 0) + " of " + fixed(xdp_tx, 0) + " XDP_TX frames (" + fixed(100 * tx_full / xdp_tx, 0) +
                    "%) found the TX ring full and were dropped (dut.xdp.tx_errors): xdp_prog_pps counts them, "
                    "dut_tx_pps does not (driver.tx_ring_size " + std::to_string(cfg.at("driver").at("tx_ring_size").get<int>()) +
                    ")");

    if (dut.at("packets") == 0) {
        std::string cause;
        if (gen.at("tx_frames") == 0)
            cause = std::string(bridged ? "the host" : "the generator") + " sent nothing in the window";
        else if (filtered > 0 && accepted == 0) cause = "every frame was dropped by the DUT's address filter";
        else if (r.contains("link") && r["link"].contains("switch") && r["link"]["switch"].value("filtered", 0) > 0)
            cause = "the switch dropped frames for a MAC it learned on the generator's port (the generator sends "
                    "with the DUT's MAC " + dut_mac + " as source" +
                    (kind == "pcap" ? ": rewrite it with generator.pcap.src_mac)" : ")");
        else cause = "see dut.* in the result (--out) for where the frames went";
        w.push_back("the DUT processed no packets in the measurement window: " + cause);
    }
    return w;
}

}  // namespace fecsim
