// The --trace writer: spans nest as the firmware's calls did, whatever was open when recording
// started, and the event limit is said, not silent.
#include "platform/trace.h"

#include "models/sim_context.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using sc_core::SC_NS;
using sc_core::sc_time;

struct trace_file {
    std::string path = fs::temp_directory_path().string() + "/fecsim-trace-unit-" + std::to_string(::getpid()) + ".json";
    ~trace_file() { fs::remove(path); }
    nlohmann::json read() const {
        std::ifstream in(path);
        return nlohmann::json::parse(in);
    }
};

// The core-0 span events as "B name" / "E" in file order.
std::vector<std::string> spans(const nlohmann::json& trace) {
    std::vector<std::string> out;
    for (const auto& e : trace.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (ph == "B") out.push_back("B " + e.at("name").get<std::string>());
        if (ph == "E") out.push_back("E");
    }
    return out;
}

TEST(trace, spans_open_at_the_start_of_the_window_do_not_swallow_their_siblings) {
    fecsim::fresh_simulation();
    trace_file f;
    {
        fecsim::trace_writer w(f.path);
        w.begin("fec_enet_rx_napi", sc_time(1, SC_NS));     // open across the start of the window
        w.begin("fec_enet_rx_queue", sc_time(2, SC_NS));
        w.start();
        w.end(sc_time(3, SC_NS));                            // rx_queue: began before, not written
        w.begin("fec_enet_tx_queue", sc_time(4, SC_NS));     // a sibling inside the window
        w.begin("page_pool_put_page", sc_time(5, SC_NS));
        w.end(sc_time(6, SC_NS));
        w.end(sc_time(7, SC_NS));
        w.begin("fec_enet_update_cbd", sc_time(8, SC_NS));
        w.end(sc_time(9, SC_NS));
        w.end(sc_time(10, SC_NS));                           // napi: began before, not written
        w.begin("fec_enet_interrupt", sc_time(11, SC_NS));   // open at the end of the run
        w.close_open_spans(sc_time(12, SC_NS));
    }
    const auto trace = f.read();
    const std::vector<std::string> expected = {"B fec_enet_tx_queue", "B page_pool_put_page", "E", "E",
                                               "B fec_enet_update_cbd", "E",  "B fec_enet_interrupt", "E"};
    EXPECT_EQ(spans(trace), expected);
    EXPECT_EQ(trace.at("otherData").at("truncated"), false);
}

TEST(trace, the_event_limit_is_said_on_stderr_and_in_the_file_and_spans_still_close) {
    fecsim::fresh_simulation();
    trace_file f;
    testing::internal::CaptureStderr();
    {
        fecsim::trace_writer w(f.path, 3);
        w.start();
        w.begin("a", sc_time(1, SC_NS));
        w.begin("b", sc_time(2, SC_NS));
        w.end(sc_time(3, SC_NS));
        w.begin("c", sc_time(4, SC_NS));  // past the limit: left out, and so is its end
        w.end(sc_time(5, SC_NS));
        w.end(sc_time(6, SC_NS));         // a's end is still written
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(f.path + ": trace stopped at 3 events"), std::string::npos) << err;
    const auto trace = f.read();
    EXPECT_EQ(spans(trace), (std::vector<std::string>{"B a", "B b", "E", "E"}));
    EXPECT_EQ(trace.at("otherData").at("truncated"), true);
    bool marker = false;
    for (const auto& e : trace.at("traceEvents")) marker |= e.at("ph") == "i";
    EXPECT_TRUE(marker) << "an instant event marks where the trace stops";
}

}  // namespace
