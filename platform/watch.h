// `fecsim watch ADDR:PORT`: connects to a run's telemetry (`fecsim run --listen ADDR:PORT`) and
// prints it as a live table: the lines the run prints, one row per telemetry object (rates,
// rings, drops, ns per packet) and a progress bar with an ETA.
#pragma once

#include <string>
#include <vector>

namespace fecsim {

// Exit status: 0 the run finished, 1 no connection or it ended early, 2 bad command line.
int watch_main(const std::vector<std::string>& args);

}  // namespace fecsim
