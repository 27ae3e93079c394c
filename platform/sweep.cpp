#include "platform/sweep.h"

#include "config/config.h"
#include "platform/inspect.h"
#include "platform/locations.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

extern char** environ;

namespace fecsim::sweep {
namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

struct bad_usage {
    std::string message;
};

std::string pointer_token(const std::string& key) {  // RFC 6901 escaping
    std::string t;
    for (char c : key) t += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return t;
}

std::string hash_id(const std::string& text) {  // FNV-1a 64: stable across hosts and builds
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

ordered_json read_ordered(const std::string& path) {
    const std::string text = read_input_file(path);  // a directory or an endless device: one line
    try {
        return ordered_json::parse(text);
    } catch (const ordered_json::parse_error& e) {
        throw config_error(path + ": invalid JSON: " + e.what());
    }
}

void write_atomically(const fs::path& path, const std::string& text) {
    const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out) throw std::runtime_error(tmp.string() + ": cannot write");
    }
    fs::rename(tmp, path);
}

// One axis of the grid: a product key, the zip group (its keys step together) or the seeds.
struct axis {
    std::vector<std::string> keys, pointers;  // pointers: the spec's arrays
    std::vector<const ordered_json*> lists;
    size_t size() const { return lists.front()->size(); }
};

// Every point is loaded and checked before anything runs (a few ms each).
constexpr size_t max_points = 100000;

}  // namespace

plan expand(const std::string& spec_path) {
    const ordered_json spec = read_ordered(spec_path);
    auto fail = [&](const std::string& pointer, const std::string& msg) {
        return config_error(spec_path + ": " + (pointer.empty() ? "/" : pointer) + ": " + msg);
    };
    if (!spec.is_object()) throw fail("", "a sweep spec is an object (experiment, set, product, zip, seeds)");
    static const std::set<std::string> known{"name", "description", "experiment", "set", "product", "zip", "seeds"};
    for (auto& [k, v] : spec.items())
        if (!known.count(k) && k.rfind("//", 0) != 0)
            throw fail("/" + pointer_token(k), "unknown key (expected name, description, experiment, set, product, zip, seeds)");

    plan p;
    p.spec_path = fs::absolute(spec_path).lexically_normal().string();
    if (!spec.contains("experiment") || !spec["experiment"].is_string())
        throw fail("/experiment", "missing: the experiment the grid varies (a file relative to the spec's directory, or a name fecsim list shows)");
    const std::string named = spec["experiment"];
    fs::path exp = named;
    if (exp.is_relative()) exp = fs::path(p.spec_path).parent_path() / exp;
    if (!fs::exists(exp) && named.find('/') == std::string::npos)  // a name `fecsim list` shows
        exp = fs::absolute(experiment_path(named));
    p.experiment = exp.lexically_normal().string();
    if (!fs::is_regular_file(p.experiment)) throw fail("/experiment", "no such file: " + p.experiment);
    if (spec.contains("name") && !spec["name"].is_string()) throw fail("/name", "expected a string");
    p.name = spec.value("name", fs::path(spec_path).stem().string());

    std::vector<std::string> fixed;
    std::map<std::string, std::string> origin;  // key -> spec pointer of its value(s)
    if (spec.contains("set")) {
        if (!spec["set"].is_object()) throw fail("/set", "expected an object of dotted.key: value");
        for (auto& [k, v] : spec["set"].items()) {
            fixed.push_back(k + "=" + v.dump());
            origin[k] = "/set/" + pointer_token(k);
        }
    }
    std::vector<axis> axes;
    auto add_lists = [&](const char* section, bool zipped) {
        if (!spec.contains(section)) return;
        const std::string base = std::string("/") + section;
        if (!spec[section].is_object() || spec[section].empty())
            throw fail(base, "expected an object of dotted.key: [values...]");
        axis zip;
        for (auto& [k, v] : spec[section].items()) {
            const std::string ptr = base + "/" + pointer_token(k);
            if (!v.is_array() || v.empty()) throw fail(ptr, "expected a non-empty array of values");
            if (origin.count(k)) throw fail(ptr, "key already given at " + origin[k]);
            if (k == "seed") throw fail(ptr, "sweep seeds with \"seeds\"");
            if (zipped && !zip.lists.empty() && v.size() != zip.size())
                throw fail(ptr, std::to_string(v.size()) + " values, the other zip lists have " + std::to_string(zip.size()));
            origin[k] = ptr;
            axis& a = zipped ? zip : axes.emplace_back();
            a.keys.push_back(k);
            a.pointers.push_back(ptr);
            a.lists.push_back(&v);
        }
        if (zipped) axes.push_back(zip);
    };
    add_lists("product", false);
    add_lists("zip", true);
    if (spec.contains("seeds")) {
        const auto& s = spec["seeds"];
        if (!s.is_array() || s.empty()) throw fail("/seeds", "expected a non-empty array of seeds");
        for (size_t i = 0; i < s.size(); ++i)
            if (!s[i].is_number_unsigned()) throw fail("/seeds/" + std::to_string(i), "a seed is a non-negative integer");
        if (origin.count("seed")) throw fail("/seeds", "seed already given at " + origin["seed"]);
        axes.push_back({{"seed"}, {"/seeds"}, {&s}});
    }
    if (axes.empty()) throw fail("", "the grid is empty: give product, zip or seeds");
    for (auto& a : axes) p.keys.insert(p.keys.end(), a.keys.begin(), a.keys.end());

    // Mixed-radix count over the axes, the first axis varying slowest.
    size_t total = 1;
    for (auto& a : axes) {
        total *= a.size();
        if (total > max_points) throw fail("", "the grid has more than " + std::to_string(max_points) + " points");
    }
    std::vector<std::string> problems;
    std::set<std::string> seen_problems;
    std::map<std::string, size_t> ids;
    for (size_t n = 0; n < total; ++n) {
        point pt;
        pt.sets = fixed;
        std::map<std::string, std::string> where = origin;  // key -> pointer of this point's value
        size_t rest = n, stride = total;
        for (auto& a : axes) {
            stride /= a.size();
            const size_t i = rest / stride;
            rest %= stride;
            for (size_t k = 0; k < a.keys.size(); ++k) {
                const ordered_json& v = (*a.lists[k])[i];
                pt.values[a.keys[k]] = v;
                pt.sets.push_back(a.keys[k] + "=" + v.dump());
                where[a.keys[k]] = a.pointers[k] + "/" + std::to_string(i);
            }
        }
        try {
            const config cfg = config::load(p.experiment, pt.sets);
            pt.id = hash_id(cfg.tree().dump());
        } catch (const config_error& e) {
            // Lines from a --set name the spec's value; others are the experiment's own.
            std::istringstream lines(e.what());
            for (std::string line; std::getline(lines, line);) {
                std::string ptr = "/experiment";
                if (line.rfind("--set ", 0) == 0) {
                    const std::string key = line.substr(6, line.find('=') - 6);
                    if (where.count(key)) ptr = where[key], line = line.substr(6);
                }
                const std::string msg = spec_path + ": " + ptr + ": " + line;
                if (seen_problems.insert(msg).second) problems.push_back(msg);
            }
            continue;
        }
        if (auto [it, fresh] = ids.emplace(pt.id, n); !fresh)
            throw fail("", "points " + std::to_string(it->second) + " and " + std::to_string(n) +
                               " resolve to the same configuration");
        p.points.push_back(std::move(pt));
    }
    if (!problems.empty()) {
        std::string all;
        for (auto& l : problems) all += (all.empty() ? "" : "\n") + l;
        throw config_error(all);
    }
    return p;
}

ordered_json manifest(const plan& p) {
    ordered_json m;
    m["name"] = p.name;
    m["spec"] = p.spec_path;
    m["experiment"] = p.experiment;
    m["keys"] = p.keys;
    m["points"] = ordered_json::array();
    for (auto& pt : p.points) m["points"].push_back({{"id", pt.id}, {"values", pt.values}, {"sets", pt.sets}});
    return m;
}

namespace {

struct sweep_options {
    std::string spec, out;
    unsigned jobs = 1, shard = 0, shards = 1, tasks = 0;  // tasks: array size with --slurm, 0 = one per point
    bool force = false, slurm = false, submit = false, wait = false;
};

unsigned parse_count(const std::string& text, const std::string& what, unsigned min) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(text.c_str(), &end, 10);
    if (text.empty() || *end || errno || v < min || v > 1000000 || text[0] == '-')
        throw bad_usage{what + ": expected an integer >= " + std::to_string(min) + ", got '" + text + "'"};
    return unsigned(v);
}

void parse_shard(const std::string& text, const std::string& what, sweep_options& o) {
    const size_t slash = text.find('/');
    if (slash == std::string::npos) throw bad_usage{what + ": expected I/N, got '" + text + "'"};
    o.shard = parse_count(text.substr(0, slash), what + " (I)", 0);
    o.shards = parse_count(text.substr(slash + 1), what + " (N)", 1);
    if (o.shard >= o.shards) throw bad_usage{what + ": I must be below N (0-based), got '" + text + "'"};
}

sweep_options parse_sweep(const std::vector<std::string>& args) {
    sweep_options o;
    bool shard_given = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& flag) -> std::string {
            if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
            if (i + 1 >= args.size()) throw bad_usage{flag + " needs a value"};
            return args[++i];
        };
        auto is = [&](const std::string& flag) { return a == flag || a.rfind(flag + "=", 0) == 0; };
        if (is("--out")) o.out = value("--out");
        else if (is("--jobs")) o.jobs = parse_count(value("--jobs"), "--jobs", 1);
        else if (is("--tasks")) o.tasks = parse_count(value("--tasks"), "--tasks", 1);
        else if (is("--shard")) parse_shard(value("--shard"), "--shard", o), shard_given = true;
        else if (a == "--force") o.force = true;
        else if (a == "--slurm") o.slurm = true;
        else if (a == "--submit") o.submit = true;
        else if (a == "--wait") o.wait = true;
        else if (a.rfind("-", 0) == 0) throw bad_usage{"unknown option '" + a + "' for sweep"};
        else if (o.spec.empty()) o.spec = a;
        else throw bad_usage{"unexpected argument '" + a + "'"};
    }
    if (o.spec.empty()) throw bad_usage{"sweep needs a SPEC.json"};
    if (o.out.empty()) throw bad_usage{"sweep needs --out DIR"};
    if ((o.submit || o.wait) && !o.slurm) throw bad_usage{"--submit and --wait go with --slurm"};
    if (o.wait && !o.submit) throw bad_usage{"--wait goes with --submit"};
    if (o.tasks && !o.slurm) throw bad_usage{"--tasks goes with --slurm"};
    // Inside a Slurm array task the task is the shard.
    const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
    const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
    if (!shard_given && !o.slurm && id && count) {
        const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
        const unsigned task = parse_count(id, "SLURM_ARRAY_TASK_ID", 0);
        const unsigned first = min ? parse_count(min, "SLURM_ARRAY_TASK_MIN", 0) : 0;
        if (task < first) throw bad_usage{"SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN"};
        parse_shard(std::to_string(task - first) + "/" + count, "SLURM_ARRAY_TASK_ID/COUNT", o);
    }
    return o;
}

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string last_line(const fs::path& log) {
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    return last;
}

// Starts `argv` with stdout and stderr appended to `log` (or inherited when empty).
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!log.empty()) {
        posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    return pid;
}

int exit_status(int wstatus) {
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
}

std::string describe(const point& pt) {
    std::string s;
    for (auto& [k, v] : pt.values.items()) s += (s.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    return s;
}

size_t array_tasks(const plan& p, const sweep_options& o) {
    return o.tasks ? std::min<size_t>(o.tasks, p.points.size()) : p.points.size();
}

// Writes DIR/sweep.sbatch: an array job whose every task runs its shard of the points, --jobs
// at a time on as many CPUs.
fs::path write_sbatch(const plan& p, const sweep_options& o, const std::string& self, const fs::path& dir) {
    fs::create_directories(dir / "slurm");
    std::ostringstream s;
    s << "#!/bin/sh\n"
      << "# " << p.points.size() << " points of " << p.spec_path << " in " << array_tasks(p, o) << " array tasks.\n"
      << "#SBATCH --job-name=" << shell_quote("fecsim-" + p.name) << "\n"
      << "#SBATCH --array=0-" << array_tasks(p, o) - 1 << "\n"
      << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" << o.jobs << "\n"
      << "#SBATCH --output=" << (dir / "slurm" / "%A_%a.out").string() << "\n"
      // The tree this command expanded the spec with, whatever the task's environment holds.
      << "export FECSIM_CONFIG_DIR=" << shell_quote(fs::absolute(config::default_config_dir()).lexically_normal().string())
      << "\n"
      << "exec " << shell_quote(self) << " sweep " << shell_quote(p.spec_path) << " --out " << shell_quote(dir.string())
      << (o.jobs > 1 ? " --jobs " + std::to_string(o.jobs) : "") << (o.force ? " --force" : "") << "\n";
    const fs::path script = dir / "sweep.sbatch";
    write_atomically(script, s.str());
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
    return script;
}

int submit(const fs::path& script, bool wait) {
    std::vector<std::string> argv{"sbatch", "--parsable"};
    if (wait) argv.push_back("--wait");
    argv.push_back(script.string());
    int ws = 0;
    try {
        waitpid(spawn(argv, ""), &ws, 0);
    } catch (const std::exception& e) {
        std::cerr << "fecsim: " << e.what() << " (is Slurm installed?)\n";
        return 1;
    }
    return exit_status(ws);
}

// Runs the points of this shard, `jobs` at a time; returns the number that failed.
size_t run_points(const plan& p, const sweep_options& o, const std::string& self, const fs::path& dir) {
    std::vector<size_t> todo;
    size_t in_shard = 0, done = 0;
    for (size_t i = o.shard; i < p.points.size(); i += o.shards, ++in_shard) {
        if (!o.force && fs::exists(dir / "points" / p.points[i].id / "result.json")) ++done;
        else todo.push_back(i);
    }
    std::printf("sweep %s: %zu points, %zu in shard %u/%u, %zu already done, %zu to run\n", p.name.c_str(),
                p.points.size(), in_shard, o.shard, o.shards, done, todo.size());
    std::fflush(stdout);
    using clock = std::chrono::steady_clock;
    struct running { size_t index; clock::time_point start; };
    std::map<pid_t, running> children;
    size_t next = 0, finished = 0, failed = 0;
    while (next < todo.size() || !children.empty()) {
        while (next < todo.size() && children.size() < o.jobs) {
            const point& pt = p.points[todo[next++]];
            const fs::path pd = dir / "points" / pt.id;
            fs::create_directories(pd);
            fs::remove(pd / "result.json");
            std::vector<std::string> argv{self, "run", p.experiment};
            for (auto& s : pt.sets) argv.insert(argv.end(), {"--set", s});
            argv.insert(argv.end(), {"--out", (pd / "result.json.part").string()});
            children[spawn(argv, (pd / "log").string())] = {size_t(&pt - p.points.data()), clock::now()};
        }
        int ws = 0;
        const pid_t pid = ::wait(&ws);
        if (pid < 0) break;
        auto it = children.find(pid);
        if (it == children.end()) continue;
        const point& pt = p.points[it->second.index];
        const double wall = std::chrono::duration<double>(clock::now() - it->second.start).count();
        children.erase(it);
        const fs::path pd = dir / "points" / pt.id;
        const int code = exit_status(ws);
        ordered_json status{{"exit", code}, {"wall_s", wall}};
        if (code == 0 && fs::exists(pd / "result.json.part")) {
            fs::rename(pd / "result.json.part", pd / "result.json");
        } else {
            status["message"] = WIFSIGNALED(ws) ? "killed by signal " + std::to_string(WTERMSIG(ws)) : last_line(pd / "log");
            ++failed;
        }
        write_atomically(pd / "status.json", status.dump(2) + "\n");
        std::printf("[%zu/%zu] %s %s: %s (%.1f s)\n", ++finished, todo.size(), pt.id.c_str(), describe(pt).c_str(),
                    code == 0 ? "ok" : ("failed, exit " + std::to_string(code) + ": " + status.value("message", "")).c_str(),
                    wall);
        std::fflush(stdout);
    }
    return failed;
}

}  // namespace

int sweep_main(const std::vector<std::string>& args, const std::string& self) {
    sweep_options o;
    plan p;
    try {
        o = parse_sweep(args);
        p = expand(o.spec);
    } catch (const bad_usage& e) {
        std::cerr << "fecsim: " << e.message << '\n';
        return 2;
    } catch (const config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    }
    const fs::path dir = fs::absolute(o.out).lexically_normal();
    try {
        fs::create_directories(dir / "points");
        write_atomically(dir / "manifest.json", manifest(p).dump(2) + "\n");
        if (o.slurm) {
            const fs::path script = write_sbatch(p, o, self, dir);
            std::printf("%s: %zu points in %zu array tasks\n", script.c_str(), p.points.size(), array_tasks(p, o));
            std::fflush(stdout);
            return o.submit ? submit(script, o.wait) : 0;
        }
        return run_points(p, o, self, dir) ? 1 : 0;
    } catch (const std::exception& e) {  // file system errors in DIR
        std::cerr << "fecsim: " << o.out << ": " << e.what() << '\n';
        return 2;
    }
}

namespace {

// The manifest as `sweep` writes it. Another tool's manifest.json, or a hand-edited one, is bad
// input named by its JSON pointer; an id is a point directory's name, so it must be one of ours.
void check_manifest(const ordered_json& m, const std::string& path) {
    auto fail = [&](const std::string& pointer, const std::string& what) {
        return config_error(path + ": " + pointer + ": " + what);
    };
    if (!m.is_object()) throw fail("/", "expected an object");
    if (m.contains("name") && !m["name"].is_string()) throw fail("/name", "expected a string");
    if (!m.contains("keys") || !m["keys"].is_array()) throw fail("/keys", "expected an array of swept keys");
    for (size_t i = 0; i < m["keys"].size(); ++i)
        if (!m["keys"][i].is_string()) throw fail("/keys/" + std::to_string(i), "expected a key");
    if (!m.contains("points") || !m["points"].is_array()) throw fail("/points", "expected an array of points");
    for (size_t i = 0; i < m["points"].size(); ++i) {
        const ordered_json& pt = m["points"][i];
        const std::string at = "/points/" + std::to_string(i);
        if (!pt.is_object()) throw fail(at, "expected an object");
        const bool hex_id = pt.contains("id") && pt["id"].is_string() && pt["id"].get<std::string>().size() == 16 &&
                            pt["id"].get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
        if (!hex_id) throw fail(at + "/id", "expected a point id (16 hex digits)");
        if (!pt.contains("values") || !pt["values"].is_object()) throw fail(at + "/values", "expected an object");
    }
}

}  // namespace

int collect_main(const std::vector<std::string>& args) {
    if (args.size() != 1 || args[0].rfind("-", 0) == 0) {
        std::cerr << "fecsim: usage: fecsim collect DIR\n";
        return 2;
    }
    const fs::path dir = args[0];
    ordered_json m;
    try {
        m = read_ordered((dir / "manifest.json").string());
        check_manifest(m, (dir / "manifest.json").string());
    } catch (const config_error& e) {
        std::cerr << e.what() << " (not a sweep directory?)\n";
        return 2;
    }
    // Rows: id, status, the swept keys, then every scalar metric (columns in first-seen order).
    ordered_json rows = ordered_json::array();
    std::vector<std::string> columns{"id", "status"};
    for (auto& k : m["keys"]) columns.push_back(k.get<std::string>());
    const size_t fixed_columns = columns.size();
    std::set<std::string> known(columns.begin(), columns.end());
    size_t ok = 0;
    std::vector<std::string> problems;
    for (auto& pt : m["points"]) {
        const std::string id = pt["id"];
        const fs::path pd = dir / "points" / id;
        ordered_json row{{"id", id}, {"status", "ok"}};
        for (auto& [k, v] : pt["values"].items()) row[k] = v;
        std::string what;
        for (auto& [k, v] : pt["values"].items()) what += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
        try {
            if (fs::exists(pd / "result.json")) {
                for (auto& [k, v] : inspect::metrics(inspect::read_result((pd / "result.json").string()))) {
                    if (known.insert(k).second) columns.push_back(k);
                    row[k] = v;
                }
                ++ok;
            } else if (fs::exists(pd / "status.json")) {
                const ordered_json s = read_ordered((pd / "status.json").string());
                if (!s.is_object() || !s.contains("exit") || !s["exit"].is_number_integer())
                    throw config_error((pd / "status.json").string() + ": /exit: expected the run's exit status");
                const bool has_message = s.contains("message") && s["message"].is_string();
                row["status"] = "failed";
                problems.push_back("failed " + id + what + ": exit " + s["exit"].dump() + ": " +
                                   (has_message ? s["message"].get<std::string>() : ""));
            } else {
                row["status"] = "missing";
                problems.push_back("missing " + id + what);
            }
        } catch (const config_error& e) {
            row["status"] = "unreadable";
            problems.push_back(std::string("unreadable ") + e.what());
        }
        rows.push_back(row);
    }
    auto csv_cell = [](const ordered_json& v) {
        if (v.is_null()) return std::string();
        std::string s = v.is_string() ? v.get<std::string>() : v.dump();
        if (s.find_first_of(",\"\n") == std::string::npos) return s;
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    std::ostringstream csv;
    for (size_t c = 0; c < columns.size(); ++c) csv << (c ? "," : "") << csv_cell(columns[c]);
    csv << '\n';
    for (auto& row : rows) {
        for (size_t c = 0; c < columns.size(); ++c) csv << (c ? "," : "") << (row.contains(columns[c]) ? csv_cell(row[columns[c]]) : "");
        csv << '\n';
    }
    try {
        write_atomically(dir / "results.csv", csv.str());
        write_atomically(dir / "results.json", rows.dump(2) + "\n");
    } catch (const std::exception& e) {
        std::cerr << "fecsim: " << e.what() << '\n';
        return 2;
    }
    for (auto& l : problems) std::cerr << "collect: " << l << '\n';
    std::printf("collect %s: %zu points, %zu ok, %zu failed or missing; %zu columns (%zu swept) -> %s, %s\n",
                m.value("name", "").c_str(), rows.size(), ok, rows.size() - ok, columns.size(), fixed_columns - 2,
                (dir / "results.csv").c_str(), (dir / "results.json").c_str());
    return problems.empty() ? 0 : 1;
}

}  // namespace fecsim::sweep
