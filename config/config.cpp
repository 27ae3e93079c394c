#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fecsim {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string dotted_to_pointer(std::string_view dotted) {
    std::string p;
    size_t start = 0;
    while (start <= dotted.size() && !dotted.empty()) {
        size_t dot = dotted.find('.', start);
        if (dot == std::string_view::npos) dot = dotted.size();
        p += '/';
        p += dotted.substr(start, dot - start);
        start = dot + 1;
    }
    return p;
}

std::string describe(const json& v) {
    switch (v.type()) {
    case json::value_t::string: return "string " + v.dump();
    case json::value_t::boolean: return "boolean " + v.dump();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return v.dump();
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    default: return "null";
    }
}

// "line L, column C" of byte offset `byte` in `text`.
std::string position(const std::string& text, size_t byte) {
    byte = std::min(byte, text.size());
    const size_t line = 1 + std::count(text.begin(), text.begin() + byte, '\n');
    const size_t line_start = byte == 0 ? 0 : text.rfind('\n', byte - 1) + 1;  // npos + 1 == 0
    return "line " + std::to_string(line) + ", column " + std::to_string(byte - line_start + 1);
}

// Refuses objects and arrays nested deeper than max_json_depth while parsing, before the
// recursive passes over the tree (merge, comments, validation) could exhaust the stack.
json::parser_callback_t depth_limit(const std::string& where) {
    return [where](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
            depth >= max_json_depth)
            throw config_error(where + ": objects and arrays nested deeper than " + std::to_string(max_json_depth) +
                               " levels");
        return true;
    };
}

// The number nlohmann could not hold ("number overflow parsing '1e400'").
std::string overflowing_number(const json::out_of_range& e) {
    const std::string msg = e.what();
    const size_t open = msg.find('\''), close = msg.rfind('\'');
    return open < close ? msg.substr(open + 1, close - open - 1) : "";
}

// On text that parsed: the first key given twice in one object (JSON would keep the last
// silently). Comment keys ("//...") may repeat. `root` is the JSON pointer of the text's value
// (a --set's key).
void reject_duplicate_keys(const std::string& text, const std::string& path, const std::string& root = "") {
    struct level {
        bool object;
        std::string pointer, key;
        size_t index = 0;
        bool expect_key;
        std::map<std::string, size_t> line_of;
    };
    std::vector<level> open;
    size_t line = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
        } else if (c == '"') {
            const size_t start = i;
            for (++i; text[i] != '"'; ++i) i += text[i] == '\\';  // valid JSON: the string is closed
            if (open.empty() || !open.back().object || !open.back().expect_key) continue;
            level& o = open.back();
            o.expect_key = false;
            o.key = json::parse(text.substr(start, i + 1 - start)).get<std::string>();
            if (o.key.rfind("//", 0) == 0) continue;
            const auto [first, fresh] = o.line_of.emplace(o.key, line);
            if (!fresh)
                throw config_error(path + ": " + o.pointer + "/" + o.key + ": key given twice (lines " +
                                   std::to_string(first->second) + " and " + std::to_string(line) + ")");
        } else if (c == '{' || c == '[') {
            std::string p = root;
            if (!open.empty()) p = open.back().pointer + "/" + (open.back().object ? open.back().key : std::to_string(open.back().index));
            open.push_back({c == '{', p, "", 0, c == '{', {}});
        } else if (c == '}' || c == ']') {
            open.pop_back();
        } else if (c == ',' && !open.empty()) {
            if (open.back().object) open.back().expect_key = true;
            else ++open.back().index;
        }
    }
}

json read_json_file(const std::string& path) { return parse_json_file(read_input_file(path), path); }

// nlohmann's dump() is the UTF-8 check: it refuses what it could not write.
bool valid_utf8(const std::string& s) {
    try {
        (void)json(s).dump();
        return true;
    } catch (const json::type_error&) {
        return false;
    }
}

bool has_control_char(const std::string& s) {
    return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

// `line` with its control characters escaped as JSON escapes them: a value holding a newline
// (--set 'x=a<newline>b', a key in a file) must not split its problem's one line.
std::string one_line(const std::string& line) {
    std::string out;
    for (const char c : line) {
        if (static_cast<unsigned char>(c) >= 0x20) {
            out += c;
        } else {
            const std::string escaped = json(std::string(1, c)).dump();  // "\n", "\u0001", ...
            out += escaped.substr(1, escaped.size() - 2);
        }
    }
    return out;
}

// A --set as it can be printed: invalid UTF-8 replaced, at most 120 bytes.
std::string set_label(const std::string& s) {
    std::string label = "--set ";
    // A control character (a newline) would split the error's one line: escaped as JSON does.
    if (!has_control_char(s) && valid_utf8(s)) {
        label += s;
    } else {
        const std::string q = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
        label += q.substr(1, q.size() - 2);
    }
    if (label.size() > 120) {
        size_t cut = 117;
        while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;  // whole characters
        label = label.substr(0, cut) + "...";
    }
    return label;
}


size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

// Keys starting with "//" are comments (sources, reasoning) and never reach the models.
void strip_comments(json& node) {
    if (node.is_object()) {
        for (auto it = node.begin(); it != node.end();) {
            if (it.key().rfind("//", 0) == 0) it = node.erase(it);
            else strip_comments(*it++);
        }
    } else if (node.is_array()) {
        for (auto& e : node) strip_comments(e);
    }
}

bool is_leaf_schema(const json& s) { return s.is_object() && s.contains("type") && s["type"].is_string(); }

// The layered tree and where each value came from (JSON pointer -> file name or "--set ...").
class layered_tree {
public:
    json tree = json::object();
    std::map<std::string, std::string> origin;

    void merge(const json& layer, const std::string& source) { merge_into(tree, layer, "", source); }

    void set(const std::string& pointer, const json& value, const std::string& source) {
        json* node = &tree;
        std::string p;
        size_t start = 1;
        while (start <= pointer.size()) {
            size_t slash = pointer.find('/', start);
            if (slash == std::string::npos) slash = pointer.size();
            std::string key = pointer.substr(start, slash - start);
            const bool index = node->is_array() && !key.empty() && key.size() < 6 &&
                               std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (index) key = std::to_string(std::stoul(key));  // "01" is element 1: its errors are the --set's
            p += "/" + key;
            const std::string parent = p.substr(0, p.rfind('/'));
            if (node->is_array()) {  // an existing array element: mem.regions.1.latency_ns
                // Index == size appends: generator.pktgen.0=... to a list the experiment left empty.
                if (!index || std::stoul(key) > node->size())
                    throw config_error(source + ": " + p + ": no such array element (" + parent + " has " +
                                       std::to_string(node->size()) + "; index " + std::to_string(node->size()) +
                                       " appends)");
                if (std::stoul(key) == node->size()) node->push_back(nullptr);
                json& element = (*node)[std::stoul(key)];
                if (slash == pointer.size()) return place(element, value, p, source);
                node = &element;
                start = slash + 1;
                continue;
            }
            if (!node->is_object()) throw config_error(source + ": " + parent + ": is not an object");
            if (slash == pointer.size()) return place((*node)[key], value, p, source);
            if (!node->contains(key)) {
                // A list the layers left out (schema default []) starts empty: "list.0" appends.
                const bool list = slash + 1 < pointer.size() && std::isdigit(static_cast<unsigned char>(pointer[slash + 1]));
                (*node)[key] = list ? json::array() : json::object();
                origin.emplace(p, source);
            }
            node = &(*node)[key];
            start = slash + 1;
        }
    }

    std::string source_of(std::string pointer) const {
        while (true) {
            auto it = origin.find(pointer);
            if (it != origin.end()) return it->second;
            if (pointer.empty()) return "<config>";
            pointer = pointer.substr(0, pointer.rfind('/'));
        }
    }

private:
    // An object merges into the object below it key by key, as a layer's objects do; any other
    // value replaces what was there.
    void place(json& slot, const json& value, const std::string& p, const std::string& source) {
        if (value.is_object() && slot.is_object()) return merge_into(slot, value, p, source);
        slot = value;
        record(p, value, source);
    }

    void record(const std::string& p, const json& v, const std::string& source) {
        origin[p] = source;
        if (v.is_object())
            for (auto& [k, c] : v.items()) record(p + "/" + k, c, source);
        else if (v.is_array())
            for (size_t i = 0; i < v.size(); ++i) record(p + "/" + std::to_string(i), v[i], source);
    }

    void merge_into(json& dst, const json& src, const std::string& p, const std::string& source) {
        for (auto& [k, v] : src.items()) {
            std::string cp = p + "/" + k;
            if (v.is_object() && dst.contains(k) && dst[k].is_object()) {
                merge_into(dst[k], v, cp, source);
            } else {
                dst[k] = v;
                record(cp, v, source);
            }
        }
    }
};

class validator {
public:
    validator(const layered_tree& t, std::vector<std::string>& errors) : t_(t), errors_(errors) {}

    void object(json& node, const json& schema, const std::string& p) {
        if (!node.is_object()) {
            error(p, "expected an object, got " + describe(node));
            return;
        }
        for (auto& [k, v] : node.items()) {
            if (!schema.contains(k) || k[0] == '$') {
                error(p + "/" + k, "unknown key" + suggestion(k, schema));
                continue;
            }
            (void)v;
        }
        for (auto& [k, s] : schema.items()) {
            if (k[0] == '$') continue;
            const std::string cp = p + "/" + k;
            if (!node.contains(k)) {
                if (is_leaf_schema(s) && s.contains("default")) {
                    node[k] = s["default"];
                } else if (!is_leaf_schema(s) && !has_required(s)) {
                    node[k] = json::object();
                } else {
                    error(cp, "missing required key", p);
                    continue;
                }
            }
            if (is_leaf_schema(s)) leaf(node[k], s, cp);
            else object(node[k], s, cp);
        }
    }

private:
    void leaf(json& v, const json& s, const std::string& p) {
        const std::string type = s["type"];
        if (type == "number") {
            if (!v.is_number()) return error(p, "expected a number, got " + describe(v));
            range(v, s, p);
        } else if (type == "integer") {
            if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>())
                return error(p, "expected an integer, got " + describe(v));
            // Check the range before converting: an integral float may be far beyond int64.
            if (!range(v, s, p)) return;
            if (v.is_number_float()) {
                if (std::abs(v.get<double>()) >= 9.2e18) return error(p, "expected a 64-bit integer, got " + v.dump());
                v = static_cast<int64_t>(v.get<double>());
            }
        } else if (type == "boolean") {
            if (!v.is_boolean()) return error(p, "expected true or false, got " + describe(v));
        } else if (type == "string") {
            if (!v.is_string()) return error(p, "expected a string, got " + describe(v));
        } else if (type == "address") {
            try {
                (void)parse_address(v);
            } catch (const std::invalid_argument&) {
                return error(p, "expected an address (integer or \"0x...\" string), got " + describe(v));
            }
        } else if (type == "enum") {
            const json& values = s["values"];
            if (std::find(values.begin(), values.end(), v) == values.end()) {
                std::string list;
                for (auto& a : values) list += (list.empty() ? "" : ", ") + (a.is_string() ? a.get<std::string>() : a.dump());
                return error(p, "expected one of " + list + ", got " + (v.is_string() ? v.dump() : describe(v)));
            }
        } else if (type == "array") {
            if (!v.is_array()) return error(p, "expected an array, got " + describe(v));
            const json& items = s["items"];
            for (size_t i = 0; i < v.size(); ++i) {
                const std::string ip = p + "/" + std::to_string(i);
                if (is_leaf_schema(items)) leaf(v[i], items, ip);
                else object(v[i], items, ip);
            }
        } else {
            throw std::logic_error("schema: " + p + ": unknown type '" + type + "'");
        }
    }

    // False (and an error) when `v` lies outside the leaf's [min, max].
    bool range(const json& v, const json& s, const std::string& p) {
        const double x = v.get<double>();
        const bool lo = s.contains("min") && x < s["min"].get<double>();
        const bool hi = s.contains("max") && x > s["max"].get<double>();
        if (lo || hi) {
            std::string want = s.contains("min") && s.contains("max")
                ? "a value in [" + s["min"].dump() + ", " + s["max"].dump() + "]"
                : s.contains("min") ? "a value >= " + s["min"].dump() : "a value <= " + s["max"].dump();
            error(p, "expected " + want + ", got " + v.dump());
            return false;
        }
        return true;
    }

    static bool has_required(const json& schema) {
        for (auto& [k, s] : schema.items()) {
            if (k[0] == '$') continue;
            if (is_leaf_schema(s) ? !s.contains("default") : has_required(s)) return true;
        }
        return false;
    }

    static std::string suggestion(const std::string& key, const json& schema) {
        std::string best;
        size_t best_d = 3;
        for (auto& [k, s] : schema.items()) {
            if (k[0] == '$') continue;
            size_t d = edit_distance(key, k);
            if (d < best_d) best_d = d, best = k;
        }
        return best.empty() ? "" : " (did you mean '" + best + "'?)";
    }

    void error(const std::string& p, const std::string& msg, const std::string& source_pointer = "") {
        errors_.push_back(one_line(t_.source_of(source_pointer.empty() ? p : source_pointer) + ": " + p + ": " + msg));
    }

    const layered_tree& t_;
    std::vector<std::string>& errors_;
};

// The schema of the value at `pointer` (array elements through "items"), or nullptr.
const json* schema_at(const json& schema, const std::string& pointer) {
    const json* s = &schema;
    for (size_t start = 1; start <= pointer.size();) {
        size_t slash = pointer.find('/', start);
        if (slash == std::string::npos) slash = pointer.size();
        const std::string key = pointer.substr(start, slash - start);
        if (is_leaf_schema(*s) && s->contains("items")) s = &(*s)["items"];
        else if (s->is_object() && s->contains(key) && key[0] != '$') s = &(*s)[key];
        else return nullptr;
        start = slash + 1;
    }
    return s;
}

// A schema file of a configuration tree (FECSIM_CONFIG_DIR may name anyone's) is input like
// any other: each leaf has a type the validator knows, with the fields that type needs.
void check_schema(const json& node, const std::string& file, const std::string& p) {
    if (!node.is_object()) throw config_error(file + ": " + p + ": expected a schema object, got " + describe(node));
    for (auto& [k, s] : node.items()) {
        if (k[0] == '$') continue;
        const std::string cp = p + "/" + k;
        if (!is_leaf_schema(s)) {
            check_schema(s, file, cp);
            continue;
        }
        static const std::vector<std::string> types{"number", "integer", "boolean", "string", "enum", "address", "array"};
        const std::string type = s["type"];
        if (std::find(types.begin(), types.end(), type) == types.end())
            throw config_error(file + ": " + cp + "/type: unknown type \"" + type +
                               "\" (number, integer, boolean, string, enum, address or array)");
        for (const char* bound : {"min", "max"})
            if (s.contains(bound) && !s[bound].is_number())
                throw config_error(file + ": " + cp + "/" + bound + ": expected a number, got " + describe(s[bound]));
        if (type == "enum" && !(s.contains("values") && s["values"].is_array()))
            throw config_error(file + ": " + cp + "/values: an enum needs an array of values");
        if (type == "array" && !(s.contains("items") && s["items"].is_object()))
            throw config_error(file + ": " + cp + "/items: an array needs the schema of its items");
        if (type == "array" && !is_leaf_schema(s["items"])) check_schema(s["items"], file, cp + "/items");
    }
}

json load_schema(const std::string& config_dir) {
    const std::vector<std::string> files = config::json_files(config_dir, "schema");
    if (files.empty()) throw config_error((fs::path(config_dir) / "schema").string() + ": no schema files found");
    json schema = json::object();
    for (auto& f : files) {
        json part = read_json_file(f);
        check_schema(part, f, "");
        for (auto& [k, v] : part.items()) {
            if (schema.contains(k)) throw config_error(f + ": /" + k + ": schema section defined twice");
            schema[k] = v;
        }
    }
    return schema;
}

}  // namespace

input_file_error input_too_large(const std::string& path) {
    return input_file_error(path + ": more than " + std::to_string(max_input_bytes >> 20) +
                            " MiB, the limit for an input file");
}

void check_input_file(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw input_file_error(path + ": is a directory, not a file");
    if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) > max_input_bytes) throw input_too_large(path);
}

std::string read_input_file(const std::string& path) {
    check_input_file(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_file_error(path + ": cannot open file");
    // Devices and pipes have no size: read in chunks and stop at the limit (/dev/zero).
    std::string text;
    std::vector<char> chunk(size_t(1) << 16);
    while (in.read(chunk.data(), std::streamsize(chunk.size())) || in.gcount() > 0) {
        text.append(chunk.data(), size_t(in.gcount()));
        if (text.size() > max_input_bytes) throw input_too_large(path);
    }
    if (in.bad()) throw input_file_error(path + ": read error");
    return text;
}

json parse_json_file(const std::string& text, const std::string& path) {
    json j;
    try {
        j = json::parse(text, depth_limit(path));
    } catch (const json::parse_error& e) {
        std::string msg = e.what();
        if (const auto pos = msg.find("syntax error"); pos != std::string::npos) msg = msg.substr(pos);
        throw config_error(path + ": " + position(text, e.byte > 0 ? e.byte - 1 : 0) + ": invalid JSON: " + msg);
    } catch (const json::out_of_range& e) {  // a number beyond a double, such as 1e400
        const std::string number = overflowing_number(e);
        const size_t at = number.empty() ? std::string::npos : text.find(number);
        throw config_error(path + ": " + (at == std::string::npos ? "" : position(text, at) + ": ") + "number " +
                           number + " is out of the range of a double");
    }
    reject_duplicate_keys(text, path);
    return j;
}

uint64_t parse_address(const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
    if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        if (s.size() > 2 && s.size() <= 18 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
            std::all_of(s.begin() + 2, s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
            return std::stoull(s.substr(2), nullptr, 16);
    }
    throw std::invalid_argument("not an address");
}

std::string config::default_config_dir() {
    if (const char* env = std::getenv("FECSIM_CONFIG_DIR"); env && *env) return env;
    // Next to the running binary, so an installed, copied or moved tree reads its own configs:
    // PREFIX/bin/fecsim -> PREFIX/share/fecsim/configs, TREE/build/fecsim -> TREE/configs.
    std::error_code ec;
    const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec)
        for (const fs::path& dir : {exe_dir / "../share/fecsim/configs", exe_dir / "../configs"})
            if (fs::is_directory(dir / "schema", ec)) return fs::weakly_canonical(dir, ec).string();
    return FECSIM_SOURCE_CONFIG_DIR;  // a build directory outside its source tree
}

std::vector<std::string> config::json_files(const std::string& config_dir, const std::string& kind) {
    const fs::path dir = fs::path(config_dir) / kind;
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") files.push_back(it->path().string());
    if (ec) {
        const char* env = std::getenv("FECSIM_CONFIG_DIR");
        throw config_error(dir.string() + ": not a usable configuration directory: " + ec.message() +
                           (env && *env ? " (the configuration directory comes from FECSIM_CONFIG_DIR)" : ""));
    }
    std::sort(files.begin(), files.end());
    return files;
}

config config::load(const std::string& experiment_path, const std::vector<std::string>& sets,
                    const std::string& config_dir) {
    const json experiment = read_json_file(experiment_path);
    if (!experiment.is_object()) throw config_error(experiment_path + ": expected a JSON object at the top level");
    if (!experiment.contains("platform") && experiment.contains("rates") && experiment.contains("config"))
        throw config_error(experiment_path + ": /platform: missing required key; this looks like a result file of "
                           "fecsim run, not an experiment (its configuration is under /config)");
    return assemble(experiment, experiment_path, sets, config_dir);
}

config config::for_platform(const std::string& platform, json settings, const std::string& source,
                            const std::string& config_dir) {
    settings["platform"] = platform;
    return assemble(settings, source, {}, config_dir);
}

config config::assemble(const json& experiment, const std::string& experiment_path, const std::vector<std::string>& sets,
                        const std::string& config_dir) {
    if (!experiment.contains("platform"))
        throw config_error(experiment_path + ": /platform: missing required key (the platform profile's name)");
    if (!experiment["platform"].is_string())
        throw config_error(experiment_path + ": /platform: expected a string (the platform profile's name), got " +
                           describe(experiment["platform"]));

    const std::string platform = experiment["platform"];
    const fs::path platform_path = fs::path(config_dir) / "platforms" / (platform + ".json");
    const std::vector<std::string> profiles = json_files(config_dir, "platforms");
    if (platform.find('/') != std::string::npos ||
        std::find(profiles.begin(), profiles.end(), platform_path.string()) == profiles.end()) {
        std::string known;
        for (auto& f : profiles) known += (known.empty() ? "" : ", ") + fs::path(f).stem().string();
        throw config_error(experiment_path + ": /platform: unknown platform \"" + platform + "\" (known: " + known + ")");
    }

    const json schema = load_schema(config_dir);
    layered_tree t;
    t.origin[""] = platform_path.string();  // what the profile lacks is the profile's to provide
    const json profile = read_json_file(platform_path.string());
    if (!profile.is_object()) throw config_error(platform_path.string() + ": expected a JSON object at the top level");
    t.merge(profile, platform_path.string());
    t.merge(experiment, experiment_path);

    for (const std::string& s : sets) {
        const std::string source = set_label(s);
        if (!valid_utf8(s)) throw config_error(source + ": not valid UTF-8");
        const size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0)
            throw config_error(source + ": expected dotted.key=value");
        const std::string key = s.substr(0, eq), text = s.substr(eq + 1);
        if (key.size() > max_key_bytes)
            throw config_error(source + ": key longer than " + std::to_string(max_key_bytes) + " bytes");
        // '~' and '/' have a meaning in a JSON pointer; no key uses them (found by fuzz_config).
        if (key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos ||
            key.find_first_of("~/") != std::string::npos || has_control_char(key))
            throw config_error(source + ": malformed key " + json(key).dump());
        if (key == "platform") throw config_error(source + ": the platform is chosen by the experiment file");
        json value;
        try {
            value = json::parse(text, depth_limit(source));  // numbers, booleans, quoted strings, arrays, objects
            reject_duplicate_keys(text, source, dotted_to_pointer(key));
        } catch (const json::parse_error&) {
            value = text;  // a bare word is a string
        } catch (const json::out_of_range& e) {
            throw config_error(source + ": " + dotted_to_pointer(key) + ": number " + overflowing_number(e) +
                               " is out of the range of a double");
        }
        const std::string pointer = dotted_to_pointer(key);
        // An option string ("merge": "options", e.g. generator.sample03) keeps the options the
        // --set does not name: the later of two equal options wins, as in the script.
        const json* leaf = schema_at(schema, pointer);
        const json::json_pointer at(pointer);
        // A string key takes the text as written: sample03's "-6" or a description "2026" is not a number.
        if (leaf && leaf->value("type", "") == "string" && (value.is_number() || value.is_boolean())) value = text;
        if (leaf && leaf->value("merge", "") == "options" && value.is_string() && !value.get<std::string>().empty() &&
            t.tree.contains(at) && t.tree[at].is_string() && !t.tree[at].get<std::string>().empty())
            value = t.tree[at].get<std::string>() + " " + value.get<std::string>();
        t.set(pointer, value, source);
    }

    strip_comments(t.tree);
    std::vector<std::string> errors;
    validator(t, errors).object(t.tree, schema, "");
    if (!errors.empty()) {
        std::string all;
        for (auto& e : errors) all += (all.empty() ? "" : "\n") + e;
        throw config_error(all);
    }
    config c;
    c.tree_ = std::move(t.tree);
    c.origin_ = std::move(t.origin);
    return c;
}

// How late a source was layered: the profile, then the experiment, then each --set.
int config::layer(const std::string& source) const {
    return source.rfind("--set", 0) == 0 ? 2 : source != origin_.at("") ? 1 : 0;
}

// The source of the value at `pointer` or, for an object or array, the latest source of
// anything inside it: a memory region whose base a --set moved is the --set's fault.
std::string config::origin_of(const std::string& pointer) const {
    std::string p = pointer;
    while (!origin_.count(p) && !p.empty()) p = p.substr(0, p.rfind('/'));
    std::string best = origin_.at(p);
    const std::string inside = pointer + "/";
    for (auto it = origin_.lower_bound(inside); it != origin_.end() && it->first.compare(0, inside.size(), inside) == 0; ++it)
        if (layer(it->second) > layer(best)) best = it->second;
    return best;
}

config_error config::error_at(const param_error& e) const {
    // Blame the key a --set changed, else one the experiment changed, else the first.
    std::string best = dotted_to_pointer(e.keys.at(0));
    int best_layer = layer(origin_of(best));
    for (const std::string& k : e.keys) {
        const int l = layer(origin_of(dotted_to_pointer(k)));
        if (l > best_layer) best_layer = l, best = dotted_to_pointer(k);
    }
    return error_at(best, e.what());
}

config_error config::error_at(const std::string& pointer, const std::string& message) const {
    return config_error(one_line(origin_of(pointer) + ": " + pointer + ": " + message));
}

config_view::config_view(const json& root, std::string prefix) : prefix_(std::move(prefix)) {
    node_ = prefix_.empty() ? &root : &root.at(json::json_pointer(dotted_to_pointer(prefix_)));
}

const json& config_view::at(std::string_view key) const {
    const json::json_pointer ptr(dotted_to_pointer(key));
    if (!node_->contains(ptr))
        throw std::logic_error("config: no key '" + prefix_ + (prefix_.empty() ? "" : ".") + std::string(key) + "'");
    return (*node_)[ptr];
}

bool config_view::has(std::string_view key) const { return node_->contains(json::json_pointer(dotted_to_pointer(key))); }
double config_view::number(std::string_view key) const { return at(key).get<double>(); }
int64_t config_view::integer(std::string_view key) const { return at(key).get<int64_t>(); }
uint64_t config_view::address(std::string_view key) const { return parse_address(at(key)); }
bool config_view::boolean(std::string_view key) const { return at(key).get<bool>(); }
const std::string& config_view::string(std::string_view key) const { return at(key).get_ref<const std::string&>(); }

config_view config_view::section(std::string_view key) const {
    return config_view(&at(key), prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key));
}

}  // namespace fecsim
