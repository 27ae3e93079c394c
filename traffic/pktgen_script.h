// pktgen configuration scripts as users write them (Documentation/networking/pktgen.rst, the
// kernel's samples/pktgen): `pgset "pkt_size 124"` with PGDEV=/proc/net/pktgen/<file>,
// `echo "count 0" > /proc/net/pktgen/eth0`, shell variables, the pgset function definition, the
// thread commands (`rem_device_all`, `add_device eth0`) and pgctrl's `start`. Bare device
// commands ("pkt_size 60") work as before. Lines are applied the way the kernel would apply
// them to fecsim's one pktgen device; what has no meaning here is noted, not silently dropped,
// and shell control flow is refused rather than misread.
#pragma once

#include "traffic/pktgen_commands.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fecsim::traffic {

class pktgen_script {
public:
    explicit pktgen_script(pktgen_params& p) : p_(p) {}

    // One script line. Throws pktgen_command_error; notes go to p.notes prefixed by `where`.
    void line(std::string_view text, const std::string& where);
    // At the end of the script: an unterminated function definition is an error.
    void finish();

private:
    void write(const std::string& file, const std::string& command, const std::string& where);
    void device_command(const std::string& dev, const std::string& command);

    pktgen_params& p_;
    std::map<std::string, std::string, std::less<>> vars_;
    std::string pgdev_;              // PGDEV: the /proc/net/pktgen file pgset writes to
    std::optional<std::string> dev_; // the device's name once a line named it
    bool removed_ = false;           // rem_device_all ran and no add_device since
    bool in_function_ = false;       // inside a shell function definition (pgset's own)
};

}  // namespace fecsim::traffic
