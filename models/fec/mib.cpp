#include "models/fec/mib.h"

namespace fecsim::fec {

namespace {
struct named { uint32_t off; const char* name; };
constexpr named names[] = {
    {RMON_T_DROP, "RMON_T_DROP"}, {RMON_T_PACKETS, "RMON_T_PACKETS"}, {RMON_T_BC_PKT, "RMON_T_BC_PKT"},
    {RMON_T_MC_PKT, "RMON_T_MC_PKT"}, {RMON_T_CRC_ALIGN, "RMON_T_CRC_ALIGN"}, {RMON_T_UNDERSIZE, "RMON_T_UNDERSIZE"},
    {RMON_T_OVERSIZE, "RMON_T_OVERSIZE"}, {RMON_T_FRAG, "RMON_T_FRAG"}, {RMON_T_JAB, "RMON_T_JAB"},
    {RMON_T_COL, "RMON_T_COL"}, {RMON_T_P64, "RMON_T_P64"}, {RMON_T_P65TO127, "RMON_T_P65TO127"},
    {RMON_T_P128TO255, "RMON_T_P128TO255"}, {RMON_T_P256TO511, "RMON_T_P256TO511"},
    {RMON_T_P512TO1023, "RMON_T_P512TO1023"}, {RMON_T_P1024TO2047, "RMON_T_P1024TO2047"},
    {RMON_T_P_GTE2048, "RMON_T_P_GTE2048"}, {RMON_T_OCTETS, "RMON_T_OCTETS"},
    {IEEE_T_DROP, "IEEE_T_DROP"}, {IEEE_T_FRAME_OK, "IEEE_T_FRAME_OK"}, {IEEE_T_1COL, "IEEE_T_1COL"},
    {IEEE_T_MCOL, "IEEE_T_MCOL"}, {IEEE_T_DEF, "IEEE_T_DEF"}, {IEEE_T_LCOL, "IEEE_T_LCOL"},
    {IEEE_T_EXCOL, "IEEE_T_EXCOL"}, {IEEE_T_MACERR, "IEEE_T_MACERR"}, {IEEE_T_CSERR, "IEEE_T_CSERR"},
    {IEEE_T_SQE, "IEEE_T_SQE"}, {IEEE_T_FDXFC, "IEEE_T_FDXFC"}, {IEEE_T_OCTETS_OK, "IEEE_T_OCTETS_OK"},
    {RMON_R_PACKETS, "RMON_R_PACKETS"}, {RMON_R_BC_PKT, "RMON_R_BC_PKT"}, {RMON_R_MC_PKT, "RMON_R_MC_PKT"},
    {RMON_R_CRC_ALIGN, "RMON_R_CRC_ALIGN"}, {RMON_R_UNDERSIZE, "RMON_R_UNDERSIZE"},
    {RMON_R_OVERSIZE, "RMON_R_OVERSIZE"}, {RMON_R_FRAG, "RMON_R_FRAG"}, {RMON_R_JAB, "RMON_R_JAB"},
    {RMON_R_RESVD_O, "RMON_R_RESVD_O"}, {RMON_R_P64, "RMON_R_P64"}, {RMON_R_P65TO127, "RMON_R_P65TO127"},
    {RMON_R_P128TO255, "RMON_R_P128TO255"}, {RMON_R_P256TO511, "RMON_R_P256TO511"},
    {RMON_R_P512TO1023, "RMON_R_P512TO1023"}, {RMON_R_P1024TO2047, "RMON_R_P1024TO2047"},
    {RMON_R_P_GTE2048, "RMON_R_P_GTE2048"}, {RMON_R_OCTETS, "RMON_R_OCTETS"},
    {IEEE_R_DROP, "IEEE_R_DROP"}, {IEEE_R_FRAME_OK, "IEEE_R_FRAME_OK"}, {IEEE_R_CRC, "IEEE_R_CRC"},
    {IEEE_R_ALIGN, "IEEE_R_ALIGN"}, {IEEE_R_MACERR, "IEEE_R_MACERR"}, {IEEE_R_FDXFC, "IEEE_R_FDXFC"},
    {IEEE_R_OCTETS_OK, "IEEE_R_OCTETS_OK"},
};
}  // namespace

const char* mib::name(uint32_t off) {
    for (auto& n : names)
        if (n.off == off) return n.name;
    return nullptr;
}

bool mib::is_counter(uint32_t off) { return name(off) != nullptr; }

void mib::control(uint32_t v) {
    // MIB_IDLE is read-only and reports an idle block whenever it is not counting.
    mibc_ = (v & (MIBC_DIS | MIBC_CLEAR)) | ((v & MIBC_DIS) ? MIBC_IDLE : 0);
    if (mibc_ & MIBC_CLEAR) c_.fill(0);
}

void mib::count_size(uint32_t p64, size_t bytes) {
    // Buckets 64, 65-127, 128-255, 256-511, 512-1023, 1024-2047, >= 2048 are consecutive.
    unsigned b = bytes <= 64 ? 0 : bytes < 128 ? 1 : bytes < 256 ? 2 : bytes < 512 ? 3 : bytes < 1024 ? 4 : bytes < 2048 ? 5 : 6;
    inc(p64 + 4 * b);
}

void mib::count_tx(const mib_frame& f, size_t max_fl) {
    inc(RMON_T_PACKETS);
    if (f.broadcast) inc(RMON_T_BC_PKT);
    else if (f.multicast) inc(RMON_T_MC_PKT);
    if (!f.fcs_ok) inc(RMON_T_CRC_ALIGN);
    if (f.bytes < 64) inc(f.fcs_ok ? RMON_T_UNDERSIZE : RMON_T_FRAG);
    if (f.bytes > max_fl) inc(f.fcs_ok ? RMON_T_OVERSIZE : RMON_T_JAB);
    if (f.bytes >= 64) count_size(RMON_T_P64, f.bytes);
    inc(RMON_T_OCTETS, uint32_t(f.bytes));
    if (f.fcs_ok) {
        inc(IEEE_T_FRAME_OK);
        inc(IEEE_T_OCTETS_OK, uint32_t(f.bytes));
    }
    if (f.pause) inc(IEEE_T_FDXFC);
}

void mib::count_rx(const mib_frame& f, size_t max_fl) {
    inc(RMON_R_PACKETS);
    if (f.broadcast) inc(RMON_R_BC_PKT);
    else if (f.multicast) inc(RMON_R_MC_PKT);
    if (!f.fcs_ok) inc(RMON_R_CRC_ALIGN);
    if (f.bytes < 64) inc(f.fcs_ok ? RMON_R_UNDERSIZE : RMON_R_FRAG);
    if (f.bytes > max_fl) inc(f.fcs_ok ? RMON_R_OVERSIZE : RMON_R_JAB);
    if (f.bytes >= 64) count_size(RMON_R_P64, f.bytes);
    inc(RMON_R_OCTETS, uint32_t(f.bytes));
    if (!f.fcs_ok && f.bytes >= 64) inc(IEEE_R_CRC);
}

void mib::count_rx_ok(const mib_frame& f) {
    inc(IEEE_R_FRAME_OK);
    inc(IEEE_R_OCTETS_OK, uint32_t(f.bytes));
    if (f.pause) inc(IEEE_R_FDXFC);
}

void mib::report(nlohmann::json& j, const values& base) const {
    for (auto& n : names)
        if (n.off != RMON_R_RESVD_O) j[n.name] = uint32_t(read(n.off) - base[(n.off - MIB_FIRST) / 4]);
}

}  // namespace fecsim::fec
