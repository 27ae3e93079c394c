// Configuration: an experiment file layered over a platform profile, then --set overrides,
// validated against the schema in configs/schema/*.json. See docs/configuration.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fecsim {

// Bad input. what() holds one or more lines of the form "FILE: /json/pointer: message".
struct config_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An input file that cannot be used at all: "PATH: message" (missing, a directory, too large).
struct input_file_error : config_error {
    using config_error::config_error;
};

// Bounds on input, so that a hostile file or --set ends in a config_error instead of
// exhausting the memory or the stack.
constexpr size_t max_input_bytes = size_t(64) << 20;  // any file read whole (JSON, pktgen commands, captures)
constexpr int max_json_depth = 32;                    // nesting of objects and arrays
constexpr size_t max_key_bytes = 256;                 // a --set key

// input_file_error if `path` is a directory or a regular file of more than max_input_bytes.
void check_input_file(const std::string& path);
// The error for an input that grows past max_input_bytes while it is read (a pipe, a device).
input_file_error input_too_large(const std::string& path);
// The whole of a regular file, a device or a pipe; input_file_error if it cannot be opened,
// is a directory or holds more than max_input_bytes (a read stops there: /dev/zero).
std::string read_input_file(const std::string& path);

// Parses a JSON file's text: errors name `path` and the line; objects and arrays nest at most
// max_json_depth deep, and a key given twice in one object is an error naming both lines.
nlohmann::json parse_json_file(const std::string& text, const std::string& path);

// A value the schema accepted but a model cannot use, thrown while the model is built from
// its configuration. `keys` are the dotted configuration keys involved ("driver.rx_ring_size";
// several for a combination), so the platform can name the JSON pointer and the file (or
// --set) the value came from: the most recently layered of them.
struct param_error : std::invalid_argument {
    param_error(std::string key, const std::string& message)
        : std::invalid_argument(message), keys{std::move(key)} {}
    param_error(std::vector<std::string> ks, const std::string& message)
        : std::invalid_argument(message), keys(std::move(ks)) {}
    std::vector<std::string> keys;
};

// Read-only view of one section of a resolved configuration (e.g. "cpu" or "fec.rx").
// Keys are dotted paths relative to the section. Every key is validated before a view exists,
// so a missing key here is a programming error (std::logic_error), not bad input.
class config_view {
public:
    config_view(const nlohmann::json& root, std::string prefix);

    const nlohmann::json& at(std::string_view key) const;
    bool has(std::string_view key) const;
    double number(std::string_view key) const;
    int64_t integer(std::string_view key) const;
    uint64_t address(std::string_view key) const;  // integer or "0x..." string
    bool boolean(std::string_view key) const;
    const std::string& string(std::string_view key) const;
    config_view section(std::string_view key) const;
    const std::string& prefix() const { return prefix_; }

private:
    config_view(const nlohmann::json* node, std::string prefix) : node_(node), prefix_(std::move(prefix)) {}
    const nlohmann::json* node_;
    std::string prefix_;
};

// Parses an address value: a non-negative integer or a "0x..." hex string.
uint64_t parse_address(const nlohmann::json& value);

class config {
public:
    // Directory holding platforms/, schema/, costs/, experiments/.
    static std::string default_config_dir();

    // The *.json files in CONFIG_DIR/KIND ("platforms", "experiments", "schema"), sorted;
    // config_error naming the directory when it is missing or unreadable.
    static std::vector<std::string> json_files(const std::string& config_dir, const std::string& kind);

    // Loads EXPERIMENT (which names "platform"), merges it over the platform profile, applies
    // `sets` ("dotted.key=value"; the value is typed as JSON when it parses, else a string),
    // fills schema defaults and validates. Throws config_error listing every problem.
    static config load(const std::string& experiment_path, const std::vector<std::string>& sets,
                       const std::string& config_dir = default_config_dir());

    // The configuration of a board built from profile `platform` with `settings` layered over
    // it as if an experiment file named `source` held them (a board peer: generator.platform).
    static config for_platform(const std::string& platform, nlohmann::json settings, const std::string& source,
                               const std::string& config_dir = default_config_dir());

    const nlohmann::json& tree() const { return tree_; }
    config_view view(std::string_view section = "") const { return config_view(tree_, std::string(section)); }
    uint64_t seed() const { return tree_.at("seed").get<uint64_t>(); }

    // A config_error for a value the schema accepted but the assembled model cannot use,
    // naming the file the value at `pointer` came from.
    config_error error_at(const std::string& pointer, const std::string& message) const;
    config_error error_at(const param_error& e) const;

    std::string origin_of(const std::string& pointer) const;  // file or "--set ..." of a value

private:
    static config assemble(const nlohmann::json& experiment, const std::string& experiment_path,
                           const std::vector<std::string>& sets, const std::string& config_dir);
    int layer(const std::string& source) const;  // 0 profile, 1 experiment, 2 --set
    nlohmann::json tree_;
    std::map<std::string, std::string> origin_;  // JSON pointer -> file or "--set ..."
};

}  // namespace fecsim
