// Where a user's names point: an experiment given by name, the documentation that goes with the
// configuration tree in use (config::default_config_dir: next to the binary, installed, or
// FECSIM_CONFIG_DIR).
#pragma once

#include <string>

namespace fecsim {

// `arg` itself when it is a file or a path; else experiments/ARG(.json) of the configuration
// tree when it exists ("imx8mp-xdp-tx"), so an installed fecsim runs them by name.
std::string experiment_path(const std::string& arg);

// TREE/docs, or PREFIX/share/doc/fecsim for an installed tree; "docs" when neither is there.
std::string doc_dir();

}  // namespace fecsim
