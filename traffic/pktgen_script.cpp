#include "traffic/pktgen_script.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

namespace fecsim::traffic {
namespace {

constexpr std::string_view proc_dir = "/proc/net/pktgen/";

[[noreturn]] void fail(const std::string& msg) { throw pktgen_command_error(msg); }

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// The words [first, last) as the shell passes them to echo: one space between each.
std::string joined(std::vector<std::string>::const_iterator first, std::vector<std::string>::const_iterator last) {
    std::string out;
    for (auto it = first; it != last; ++it) out += (out.empty() ? "" : " ") + *it;
    return out;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Shell commands a pktgen script runs around its pgset lines that do not configure pktgen.
bool harmless_shell_command(std::string_view w) {
    for (std::string_view c : {"echo", "cat", "trap", "sleep", "modprobe", "ethtool", "ip", "ifconfig", "set",
                               "export", "local", "true", "exit", "return", "shift", "ulimit", "printf", "grep", "fgrep"})
        if (w == c) return true;
    return false;
}

bool control_flow(std::string_view w) {
    for (std::string_view c : {"for", "while", "until", "if", "then", "elif", "else", "fi", "do", "done", "case", "esac",
                               "source", ".", "select"})
        if (w == c) return true;
    return false;
}

// `source ${basedir}/functions.sh` (or `. ...`), as the kernel's samples/pktgen scripts begin.
bool sources_functions_sh(std::string_view text) {
    const size_t space = text.find_first_of(" \t");
    if (space == std::string_view::npos || (text.substr(0, space) != "source" && text.substr(0, space) != ".")) return false;
    std::string_view file = trim(text.substr(space));
    if (file.size() >= 2 && (file.front() == '"' || file.front() == '\'') && file.back() == file.front())
        file = file.substr(1, file.size() - 2);
    return std::filesystem::path(std::string(file)).filename() == "functions.sh";
}

}  // namespace

void pktgen_script::finish() {
    if (in_function_) fail("a function definition has no closing }");
}

void pktgen_script::line(std::string_view text, const std::string& where) {
    text = trim(text);
    if (in_function_) {  // pgset's body (echo $1 > $PGDEV; cat $PGDEV ...): the model applies pgset itself
        if (text == "}") in_function_ = false;
        return;
    }
    if (text.empty() || text[0] == '#') return;
    if (sources_functions_sh(text))  // before expansion: the samples name it by ${basedir}
        return p_.notes.push_back(where + ": " + std::string(text) +
                                  ": not read (fecsim applies its pg_ctrl, pg_thread and pg_set itself)");

    // Shell words: quotes removed, $VAR and ${VAR} expanded (not inside single quotes).
    std::vector<std::string> words;
    bool in_word = false, redirect_seen = false, in_single = false, in_double = false;
    std::string cur;
    auto flush = [&] {
        if (in_word) words.push_back(cur);
        cur.clear();
        in_word = false;
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_single) {
            if (c == '\'') in_single = false;
            else cur += c;
        } else if (c == '\'' && !in_double) {
            in_single = in_word = true;
        } else if (c == '\\') {  // outside single quotes bash would unescape it or join the next line
            fail("shell syntax '\\' (an escape or a line continuation) is not interpreted; write the line without it");
        } else if (c == '"') {
            in_double = !in_double;
            in_word = true;
        } else if (c == '$') {
            const bool braced = i + 1 < text.size() && text[i + 1] == '{';
            size_t e = i + 1 + braced;
            while (e < text.size() && is_name_char(text[e])) ++e;
            const std::string name(text.substr(i + 1 + braced, e - i - 1 - braced));
            if (name.empty()) fail("a $ that is not a variable is not interpreted");
            if (braced && (e >= text.size() || text[e] != '}')) fail("${" + name + ": expected }");
            const auto v = vars_.find(name);
            if (v == vars_.end())
                fail("$" + name + " is not set by an assignment earlier in the script (the model reads the script's "
                     "own variables only)");
            cur += v->second;
            in_word = true;
            i = e - 1 + braced;
        } else if (in_double) {
            cur += c;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            flush();
        } else if (c == '#' && !in_word) {
            break;
        } else if (c == '>') {
            flush();
            const bool append = i + 1 < text.size() && text[i + 1] == '>';
            words.push_back(append ? ">>" : ">");
            i += append;
            redirect_seen = true;
        } else if (c == '(' && text.substr(i, 2) == "()" && (words.size() + in_word) >= 1) {
            // "pgset() {" / "function pgset() {": pgset's own body, which the model replaces
            if (text.back() != '{') fail("a function definition must open its body with { on the same line");
            in_function_ = true;
            return;
        } else if (c == ';' || c == '|' || c == '&' || c == '`' || c == '(' || c == ')' || c == '<') {
            fail(std::string("shell syntax '") + c + "' is not interpreted; write one command per line");
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (in_single || in_double) fail("unterminated quote");
    flush();
    if (words.empty()) return;
    if ((words[0] == "export" || words[0] == "local" || words[0] == "readonly") && words.size() == 2)
        words.erase(words.begin());  // export PGDEV=...: an assignment all the same
    const std::string& w0 = words[0];

    // VAR=value (one word, already unquoted and expanded)
    if (const size_t eq = w0.find('='); eq != std::string::npos && eq > 0 &&
        std::all_of(w0.begin(), w0.begin() + long(eq), is_name_char)) {
        if (words.size() > 1) fail("an assignment followed by a command is not interpreted");
        vars_[w0.substr(0, eq)] = w0.substr(eq + 1);
        if (w0.compare(0, eq, "PGDEV") == 0) pgdev_ = w0.substr(eq + 1);
        return;
    }
    if (w0 == "function") {  // "function pgset {" without ()
        if (text.back() != '{') fail("a function definition must open its body with { on the same line");
        in_function_ = true;
        return;
    }
    if (control_flow(w0)) fail(w0 + ": shell control flow is not interpreted; write the pktgen commands out");

    if (w0 == "pgset") {
        if (words.size() != 2) fail("pgset: expected one quoted command, got " + std::to_string(words.size() - 1) + " words");
        if (pgdev_.empty()) fail("pgset: PGDEV is not set (PGDEV=/proc/net/pktgen/<file> before it)");
        return write(pgdev_, words[1], where);
    }
    // The helpers of the kernel's samples/pktgen/functions.sh: proc_cmd echoes "$@" into the file.
    if (w0 == "pg_ctrl" || w0 == "pg_thread" || w0 == "pg_set") {
        const bool ctrl = w0 == "pg_ctrl", thread = w0 == "pg_thread";
        const size_t first = ctrl ? 1 : 2;  // pg_ctrl CMD, pg_thread N CMD, pg_set DEV CMD
        if (words.size() <= first)
            fail(w0 + ": expected " + (ctrl ? "a command" : thread ? "a thread number and a command" : "a device and a command"));
        const std::string command = joined(words.begin() + long(first), words.end());
        const std::string file = ctrl ? "pgctrl" : thread ? "kpktgend_" + words[1] : words[1];
        return write(std::string(proc_dir) + file, command, where);
    }
    if (redirect_seen) {  // echo "cmd" > /proc/net/pktgen/<file>
        const auto r = std::find_if(words.begin(), words.end(), [](const std::string& w) { return w == ">" || w == ">>"; });
        if (w0 != "echo" || r + 2 != words.end())
            fail("only echo \"command\" > /proc/net/pktgen/<file> redirections are interpreted");
        auto first = words.begin() + 1;
        while (first != r && (*first == "-n" || *first == "-e" || *first == "-E" || *first == "-ne" || *first == "-en"))
            ++first;  // echo's own options: not part of what it writes
        const std::string command = joined(first, r);
        if (r[1].rfind(proc_dir, 0) != 0) return;  // output of the script's own, not for pktgen
        return write(r[1], command, where);
    }
    if (harmless_shell_command(w0)) return;
    if (w0.rfind("#!", 0) == 0) return;
    // A bare command: to the device, as the plain command files always were.
    const std::string command = joined(words.begin(), words.end());
    const std::string dev = dev_.value_or("");
    if (w0 == "add_device" || w0 == "rem_device_all" || w0 == "max_before_softirq")
        return write(std::string(proc_dir) + "kpktgend_0", command, where);
    if (w0 == "start" || w0 == "stop" || w0 == "reset") return write(std::string(proc_dir) + "pgctrl", command, where);
    device_command(dev, command);
}

void pktgen_script::write(const std::string& file, const std::string& command, const std::string& where) {
    if (file.rfind(proc_dir, 0) != 0) fail(file + ": not a /proc/net/pktgen file");
    const std::string name = file.substr(proc_dir.size());
    std::string_view cmd = trim(command);
    const std::string verb(cmd.substr(0, cmd.find(' ')));
    const std::string arg(trim(cmd.substr(verb.size())));
    if (name == "pgctrl") {
        if (verb == "start") return p_.notes.push_back(where + ": start: the generator starts with the simulation");
        if (verb == "stop" || verb == "reset") return p_.notes.push_back(where + ": " + verb + ": ignored (the run's length is duration_s)");
        fail("pgctrl: unknown command \"" + verb + "\" (start, stop, reset)");
    }
    if (name.rfind("kpktgend_", 0) == 0) {
        if (verb == "rem_device_all") {
            if (!arg.empty()) fail("rem_device_all: takes no value");
            removed_ = true;
            dev_.reset();
            return;
        }
        if (verb == "add_device") {
            // eth0@1 (queue 1 of eth0, as the samples add it) is also the name of its device file
            const std::string& dev = arg;
            if (dev.empty() || dev[0] == '@' || dev.find(' ') != std::string::npos) fail("add_device: expected one device name");
            if (dev_ && *dev_ != dev)
                fail("add_device " + dev + ": fecsim models one pktgen device, " + *dev_ + " is added already");
            if (removed_) {  // a new device starts from pktgen's defaults
                auto notes = std::move(p_.notes);
                p_ = pktgen_params{};
                p_.notes = std::move(notes);
            }
            removed_ = false;
            dev_ = dev;
            return;
        }
        if (verb == "max_before_softirq") return p_.notes.push_back(where + ": max_before_softirq: ignored (one thread, no softirq model)");
        fail(name + ": unknown thread command \"" + verb + "\" (add_device, rem_device_all)");
    }
    device_command(name, std::string(cmd));
}

void pktgen_script::device_command(const std::string& dev, const std::string& command) {
    if (removed_) fail((dev.empty() ? std::string("the device") : dev) + ": removed by rem_device_all; add_device it first");
    if (!dev.empty()) {
        if (dev_ && *dev_ != dev) fail(dev + ": not the pktgen device (" + *dev_ + "); fecsim models one device");
        dev_ = dev;
    }
    apply_pktgen_command(p_, command);
}

}  // namespace fecsim::traffic
