#include "platform/trace.h"

#include "platform/config.h"

#include <cinttypes>

namespace fecsim {

namespace {
// Trace-event timestamps are microseconds; keep nanosecond resolution as decimals.
double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }
enum tid : int { core0 = 0, wire_tx = 1, wire_rx = 2 };
}  // namespace

trace_writer::trace_writer(const std::string& path) : out_(std::fopen(path.c_str(), "w")), path_(path) {
    if (!out_) throw config_error(path + ": cannot write trace file");
    std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
    // Thread names, so the viewer labels the rows.
    std::fprintf(out_,
                 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"core0 firmware\"}},\n"
                 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"wire: DUT transmits\"}},\n"
                 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"wire: DUT receives\"}}",
                 core0, wire_tx, wire_rx);
}

trace_writer::~trace_writer() {
    std::fputs("\n]}\n", out_);
    std::fclose(out_);
}

void trace_writer::begin(const char* name, sc_core::sc_time t) {
    ++depth_;
    if (!recording()) return;
    ++events_;
    std::fprintf(out_, ",\n{\"ph\":\"B\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f}", name, core0, us(t));
}

void trace_writer::end(sc_core::sc_time t) {
    if (depth_ > 0) --depth_;
    if (unmatched_ends_ > 0 && recording_) {
        --unmatched_ends_;
        return;
    }
    if (!recording()) return;
    ++events_;
    std::fprintf(out_, ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":%d,\"ts\":%.3f}", core0, us(t));
}

void trace_writer::frame(int direction, const net::frame& f, sc_core::sc_time start, sc_core::sc_time end) {
    if (!recording()) return;
    ++events_;
    std::fprintf(out_,
                 ",\n{\"ph\":\"X\",\"name\":\"frame %" PRIu64 "\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                 "\"args\":{\"bytes\":%zu}}",
                 f.id, direction == 0 ? wire_tx : wire_rx, us(start), us(end - start), f.size());
}

void tracing_core::enter(const char* function) {
    c_.enter(function);
    t_.begin(function, c_.now());
}

void tracing_core::leave() {
    t_.end(c_.now());
    c_.leave();
}

}  // namespace fecsim
