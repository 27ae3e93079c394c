#include "platform/trace.h"

#include "config/config.h"

#include <cinttypes>
#include <stdexcept>

namespace fecsim {

namespace {
// Trace-event timestamps are microseconds; keep nanosecond resolution as decimals.
double us(sc_core::sc_time t) { return t.to_seconds() * 1e6; }
enum tid : int { core0 = 0, wire_tx = 1, wire_rx = 2 };
}  // namespace

trace_writer::trace_writer(const std::string& path, uint64_t limit)
    : out_(std::fopen(path.c_str(), "w")), path_(path), limit_(limit) {
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
    if (out_) (void)end_file();
}

bool trace_writer::end_file() {
    recording_ = false;
    open_.clear();
    std::fprintf(out_, "\n],\"otherData\":{\"events\":%" PRIu64 ",\"truncated\":%s}}\n", events_,
                 truncated_ ? "true" : "false");
    const bool ok = !std::ferror(out_);
    const bool closed = std::fclose(out_) == 0;  // the last buffer is written here
    out_ = nullptr;
    return ok && closed;
}

void trace_writer::close() {
    if (out_ && !end_file()) throw std::runtime_error(path_ + ": writing the trace failed");
}

bool trace_writer::admit(sc_core::sc_time t) {
    if (!recording_) return false;
    if (events_ < limit_) {
        ++events_;
        return true;
    }
    if (!truncated_) {
        truncated_ = true;
        std::fprintf(stderr, "fecsim: %s: trace stopped at %" PRIu64 " events, %.6f s into the run; "
                             "the rest of the window is not in the file (use a shorter duration_s)\n",
                     path_.c_str(), limit_, t.to_seconds());
        std::fprintf(out_, ",\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"trace stopped: %" PRIu64
                           "-event limit\",\"pid\":1,\"tid\":%d,\"ts\":%.3f}",
                     limit_, core0, us(t));
    }
    return false;
}

void trace_writer::begin(const char* name, sc_core::sc_time t) {
    open_.push_back(admit(t));
    if (open_.back()) std::fprintf(out_, ",\n{\"ph\":\"B\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f}", name, core0, us(t));
}

void trace_writer::end(sc_core::sc_time t) {
    if (open_.empty()) return;
    const bool written = open_.back();
    open_.pop_back();
    if (!written) return;
    ++events_;  // an end past the limit still closes its span: at most one per open span
    std::fprintf(out_, ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":%d,\"ts\":%.3f}", core0, us(t));
}

void trace_writer::close_open_spans(sc_core::sc_time t) {
    while (!open_.empty()) end(t);
}

void trace_writer::frame(int direction, const net::frame& f, sc_core::sc_time start, sc_core::sc_time end) {
    if (!admit(start)) return;
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
