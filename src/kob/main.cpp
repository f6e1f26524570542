// kob: the command-line companion of the library. Subcommands: convert.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kob/convert.hpp"
#include "version.hpp"

namespace {

const char* kUsage =
    "usage: kob COMMAND [ARGS...]\n"
    "\n"
    "commands:\n"
    "  convert RUN... [--to=LIST] [--output=PREFIX] [--quiet] [--trace-window=SPANS]\n"
    "          write the output files (trace, summaries) of a run from its raw trace PREFIX.kob\n"
    "\n"
    "kob COMMAND --help describes a command. kob --version prints the version.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("kob (kokkos-ompt-bridge) %s\n", KOB_VERSION);
    return 0;
  }
  if (cmd == "convert") return kob::cli::convert_main(args);
  std::fprintf(stderr, "kob: unknown command '%s' (kob --help lists the commands)\n", cmd.c_str());
  return 2;
}
