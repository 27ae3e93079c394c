// The fecsim command line (docs/design.md §5): run | validate | list.
// Exit status: 0 ok, 1 model or internal error, 2 bad input.
#include "config/config.h"
#include "firmware/xdp/programs.h"
#include "platform/inspect.h"
#include "platform/locations.h"
#include "platform/simulation.h"
#include "platform/sweep.h"
#include "platform/watch.h"

#include <systemc>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr const char* usage =
    "usage: fecsim run CONFIG.json [--set dotted.key=value ...] [--out result.json] [--pcap wire.pcapng]\n"
    "                  [--pcap-warmup] [--trace trace.json] [--quiet] [--tap IFNAME | --udp-bridge HOST:PORT]\n"
    "                  [--listen ADDR:PORT [--listen-remote]] [--max-wall-s SECONDS]\n"
    "       fecsim validate CONFIG.json [--set dotted.key=value ...]\n"
    "       fecsim sweep SPEC.json --out DIR [--jobs N] [--shard I/N] [--force]\n"
    "                    [--slurm [--tasks N] [--submit [--wait]]]\n"
    "       fecsim collect DIR\n"
    "       fecsim stats RESULT.json\n"
    "       fecsim diff A.json B.json [--threshold PCT]\n"
    "       fecsim list\n"
    "       fecsim watch ADDR:PORT\n"
    "       fecsim help | --help | --version\n"
    "CONFIG.json is an experiment file, or the name of one fecsim list shows.\n";

struct bad_usage {
    std::string message;
};

struct options {
    std::string command, config_path, out_path;
    std::vector<std::string> sets;
    fecsim::run_options run;
};

double positive_seconds(const std::string& text) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || !(v > 0) || v > 1e9) throw bad_usage{"--max-wall-s: expected seconds in (0, 1e9], got '" + text + "'"};
    return v;
}

options parse(int argc, char** argv) {
    options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) throw bad_usage{"missing command"};
    o.command = args[0] == "--help" || args[0] == "-h" ? "help" : args[0];
    if (o.command != "run" && o.command != "validate" && o.command != "list" && o.command != "help" &&
        o.command != "--version")
        throw bad_usage{"unknown command '" + o.command + "'"};
    const bool takes_run_options = o.command == "run";
    std::set<std::string> seen;  // an option's value counts once (--set adds): a second would silently win
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& flag) -> std::string {
            std::string v;
            if (a.compare(0, flag.size() + 1, flag + "=") == 0) v = a.substr(flag.size() + 1);
            // The next option is not a value: "--out --quiet" would write a file named --quiet.
            else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) v = args[++i];
            if (v.empty()) throw bad_usage{flag + " needs a value"};
            return v;
        };
        auto is = [&](const std::string& flag, bool takes_value = true) {
            if (a != flag && !(takes_value && a.rfind(flag + "=", 0) == 0)) return false;
            if (takes_value && flag != "--set" && !seen.insert(flag).second) throw bad_usage{flag + " given twice"};
            return true;
        };
        if (a == "--help" || a == "-h") {  // fecsim run --help: the usage, whatever else is there
            o.command = "help";
            return o;
        }
        if (o.command == "list" || o.command == "help" || o.command == "--version")
            throw bad_usage{o.command + " takes no arguments, got '" + a + "'"};
        if (is("--set")) o.sets.push_back(value("--set"));
        else if (takes_run_options && is("--out")) o.out_path = value("--out");
        else if (takes_run_options && is("--pcap-warmup", false)) o.run.pcap_warmup = true;
        else if (takes_run_options && is("--pcap")) o.run.pcap_path = value("--pcap");
        else if (takes_run_options && is("--trace")) o.run.trace_path = value("--trace");
        else if (takes_run_options && is("--max-wall-s")) o.run.max_wall_s = positive_seconds(value("--max-wall-s"));
        else if (takes_run_options && is("--quiet", false)) o.run.quiet = true;
        // The bridge and telemetry flags are short for their configuration keys (docs/bridge.md).
        else if (takes_run_options && is("--tap")) o.sets.push_back("bridge.tap=" + value("--tap"));
        else if (takes_run_options && is("--udp-bridge")) o.sets.push_back("bridge.udp=" + value("--udp-bridge"));
        else if (takes_run_options && is("--listen")) o.sets.push_back("telemetry.listen=" + value("--listen"));
        else if (takes_run_options && is("--listen-remote", false)) o.sets.push_back("telemetry.allow_remote=true");
        else if (a.rfind("-", 0) == 0) throw bad_usage{"unknown option '" + a + "' for " + o.command};
        else if (o.config_path.empty()) o.config_path = a;
        else throw bad_usage{"unexpected argument '" + a + "'"};
    }
    if (o.run.pcap_warmup && o.run.pcap_path.empty()) throw bad_usage{"--pcap-warmup needs --pcap FILE"};
    if ((o.command == "run" || o.command == "validate") && o.config_path.empty())
        throw bad_usage{o.command + " needs a CONFIG.json"};
    return o;
}

// `fecsim list`: the platform profiles and ready-to-run experiments shipped in configs/, and
// the XDP programs `driver.xdp_prog` can load.
int list_configs() {
    namespace fs = std::filesystem;
    const std::string dir = fecsim::config::default_config_dir();
    std::vector<std::string> platforms, experiments;
    try {
        platforms = fecsim::config::json_files(dir, "platforms");
        experiments = fecsim::config::json_files(dir, "experiments");
    } catch (const fecsim::config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    }
    for (const auto& [kind, files] : {std::pair{"platforms", platforms}, {"experiments", experiments}}) {
        std::cout << kind << " (" << (fs::path(dir) / kind).string() << "):\n";
        for (const fs::path f : files) {
            std::string what;
            try {
                const auto j = fecsim::parse_json_file(fecsim::read_input_file(f), f);
                if (j.contains("description")) what = j["description"];
                else if (j.contains("//")) what = j["//"];
            } catch (const std::exception&) {
                what = "(unreadable JSON)";
            }
            std::cout << "  " << f.stem().string() << (what.empty() ? "" : "  " + what) << '\n';
        }
    }
    std::cout << "xdp programs (driver.xdp_prog):\n";
    for (const auto& p : fecsim::firmware::xdp::registry()) std::cout << "  " << p.name << "  " << p.description << '\n';
    return 0;
}

// Studies over many runs, readers of result files and the live view of a run have their own
// command lines.
int study_command(const std::string& command, const std::vector<std::string>& args) {
    namespace fs = std::filesystem;
    if (command == "watch") return fecsim::watch_main(args);
    if (command == "sweep") return fecsim::sweep::sweep_main(args, fs::read_symlink("/proc/self/exe").string());
    if (command == "collect") return fecsim::sweep::collect_main(args);
    if (command == "stats") return fecsim::inspect::stats_main(args);
    if (command == "diff") return fecsim::inspect::diff_main(args);
    return -1;
}

int command(int argc, char** argv) {
    if (argc > 1) {
        const int rc = study_command(argv[1], std::vector<std::string>(argv + 2, argv + argc));
        if (rc >= 0) return rc;
    }
    options o;
    try {
        o = parse(argc, argv);
    } catch (const bad_usage& e) {
        // One line for a mistake; the whole usage only when there is no command at all.
        if (argc < 2) std::cerr << "fecsim: " << e.message << '\n' << usage;
        else std::cerr << "fecsim: " << e.message << " (fecsim help shows the usage)\n";
        return 2;
    }
    if (o.command == "help") {
        const std::string docs = fecsim::doc_dir();
        std::cout << usage << "Configuration: " << docs << "/configuration.md; result file: " << docs
                  << "/results.md.\n";
        return 0;
    }
    if (o.command == "--version") {
        std::cout << "fecsim " FECSIM_VERSION " (SystemC " << sc_core::sc_release() << ")\n";
        return 0;
    }
    if (o.command == "list") return list_configs();

    std::optional<fecsim::config> cfg;
    try {
        const std::string experiment = fecsim::experiment_path(o.config_path);
        std::error_code ec;
        if (o.config_path.find('/') == std::string::npos && !std::filesystem::exists(experiment, ec))
            throw fecsim::config_error(o.config_path + ": no such file, nor an experiment of that name in " +
                                       fecsim::config::default_config_dir() + "/experiments (fecsim list shows them)");
        cfg = fecsim::config::load(experiment, o.sets);
        if (o.command == "validate") fecsim::check_assembly(*cfg);
        // Every output is checked before simulating, not found unwritable after the run.
        fecsim::probe_outputs(*cfg, experiment, {{"--out", o.out_path}, {"--pcap", o.run.pcap_path}, {"--trace", o.run.trace_path}});
    } catch (const fecsim::config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    }
    if (o.command == "validate") {
        std::cout << cfg->tree().dump(2) << '\n';
        return 0;
    }

    try {
        const nlohmann::json result = fecsim::run_simulation(*cfg, o.run);
        if (result["sim"]["incomplete"])
            std::cerr << "fecsim: --max-wall-s reached: " << result["sim"]["window_s"].get<double>()
                      << " s of the window measured; the result is marked incomplete\n";
        if (!o.out_path.empty()) fecsim::write_result(o.out_path, result);
        for (const auto& n : result["generator"].value("notes", nlohmann::json::array()))
            std::cerr << "fecsim: note: " << n.get<std::string>() << '\n';
        for (const auto& w : result["warnings"]) std::cerr << "fecsim: warning: " << w.get<std::string>() << '\n';
        // A model lost or invented frames: the figures cannot be trusted.
        const std::vector<std::string> books = fecsim::unbalanced_books(result);
        for (const std::string& line : books) std::cerr << "fecsim: " << line << '\n';
        if (!books.empty()) return 1;
        if (!o.run.quiet) {
            for (const char* peer : {"generator", "bridge"}) {  // the bridge has its own on a switch port
                const std::string summary = result.value(peer, nlohmann::json::object()).value("final_summary", "");
                if (!summary.empty()) std::printf("%s\n", summary.c_str());
            }
            const auto& sim = result["sim"];
            std::printf("simulated %.3f s in %.2f s wall (speed %.3f)%s%s\n", sim["simulated_s"].get<double>(),
                        sim["wall_s"].get<double>(), sim["speed"].get<double>(),
                        o.out_path.empty() ? "" : ", result in ", o.out_path.c_str());
        }
    } catch (const fecsim::config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    } catch (const sc_core::sc_report& e) {  // SystemC's wrapping of a model's exception: its message only
        std::string msg = e.get_msg();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        std::cerr << "fecsim: simulation error: " << msg << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "fecsim: simulation error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const int status = command(argc, argv);
    // What a command prints is its product (validate > resolved.json, diff > report.txt): a full
    // disk behind the standard output is an output that cannot be written, not a success.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "fecsim: standard output: cannot write%s%s\n", errno ? ": " : "", errno ? std::strerror(errno) : "");
        return 2;
    }
    return status;
}
