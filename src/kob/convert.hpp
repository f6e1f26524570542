// `kob convert RUN... [--to=LIST] [--output=PREFIX] [--quiet]`: the raw traces to the usual files.
#pragma once

#include <string>
#include <vector>

namespace kob::cli {

// Exit status: 0 every RUN converted; 1 a RUN could not be read or a file not written; 2 usage.
int convert_main(const std::vector<std::string>& args);
std::string convert_help();

}  // namespace kob::cli
