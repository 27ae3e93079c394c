#include "platform/locations.h"

#include "config/config.h"

#include <filesystem>

namespace fecsim {
namespace fs = std::filesystem;

std::string experiment_path(const std::string& arg) {
    std::error_code ec;
    if (fs::exists(arg, ec) || arg.find('/') != std::string::npos) return arg;
    const fs::path dir = fs::path(config::default_config_dir()) / "experiments";
    for (const fs::path& p : {dir / arg, dir / (arg + ".json")})
        if (fs::is_regular_file(p, ec)) return p.string();
    return arg;
}

std::string doc_dir() {
    const fs::path configs = config::default_config_dir();
    std::error_code ec;
    for (const fs::path& d : {configs / "../docs", configs / "../../doc/fecsim"})
        if (fs::exists(d / "configuration.md", ec)) return fs::weakly_canonical(d, ec).string();
    return "docs";
}

}  // namespace fecsim
