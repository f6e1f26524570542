// `kob run [--mpi] [TOOL OPTIONS] [--] PROGRAM [ARGS...]`: the program with the library loaded.
#pragma once

#include <string>

namespace kob::cli {

// argv: what follows `run` on kob's command line. Returns the program's exit status (or ends
// kob by the signal that ended the program).
int run_main(int argc, char** argv);
std::string run_help();

}  // namespace kob::cli
