#include "kob/run.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/session/config.hpp"
#include "common/session/output_name.hpp"
#include "common/session/run_outputs.hpp"
#include "common/support/atomic_file.hpp"
#include "common/session/run_report.hpp"
#include "common/support/install_layout.hpp"
#include "kob/kokkos_version.hpp"
#include "kob/mpi_family.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

std::string directory_of_this_program() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// One of the project's libraries, as an absolute path: beside kob (the build tree), else in the
// library folder as installed relative to kob's (install_layout.hpp); empty when in neither.
std::string project_library(const char* name) {
  const std::string here = directory_of_this_program();
  for (const std::string& dir : {here, here + "/" + KOB_LIBDIR_FROM_BINDIR}) {
    const std::string p = dir + "/" + name;
    char real[PATH_MAX];
    if (access(p.c_str(), R_OK) == 0 && realpath(p.c_str(), real) != nullptr) return real;
  }
  return "";
}

// Where project_library looks, for the message when it finds nothing.
std::string where_libraries_go() {
  const std::string here = directory_of_this_program();
  return here + " or " + here + "/" + KOB_LIBDIR_FROM_BINDIR;
}

// Every rank runs kob run: rank 0 (or a run without a launcher) says what --mpi chose, once.
bool first_rank() {
  return output_name::rank_from_environment([](const char* v) -> const char* { return std::getenv(v); }) <= 0;
}

// The PMPI layer of the program's MPI ABI, or "" (the run goes on without it: clocks aligned by
// wall clock); one line says which.
std::string choose_mpi_layer(const std::string& program) {
  const MpiFamily f = program_mpi_family(program);
  const bool say_it = first_rank();
  if (f.layer.empty()) {
    if (say_it) say("run: --mpi: cannot tell the program's MPI (" + f.library + "); running without the PMPI layer, clocks aligned by wall clock");
    return "";
  }
  const std::string name = "libkob_mpi_" + f.layer + ".so";
  const std::string layer = project_library(name.c_str());
  if (layer.empty()) {
    if (say_it)
      say("run: --mpi: the program uses " + f.library + " but " + name + " is in neither " + where_libraries_go() +
          " (built when that MPI is found; -Dmpi_layers for another); running without the PMPI layer, clocks aligned by wall clock");
    return "";
  }
  if (say_it) say("run: --mpi: the program uses " + f.library + ": preloading " + name);
  return layer;
}

std::string library_path(std::string& error) {
  if (const char* v = std::getenv("KOB_LIBRARY"); v != nullptr && *v != '\0') {
    char real[PATH_MAX];
    if (access(v, R_OK) != 0 || realpath(v, real) == nullptr) {
      error = std::string("KOB_LIBRARY names ") + v + ", which cannot be read: " + std::strerror(errno);
      return "";
    }
    return real;
  }
  std::string p = project_library("libkokkos_ompt_bridge.so");
  if (p.empty()) error = "libkokkos_ompt_bridge.so is in neither " + where_libraries_go() + " (or set KOB_LIBRARY)";
  return p;
}

// The program's pid while it runs: the forwarding handler's target.
volatile sig_atomic_t g_child = 0;

extern "C" void forward_signal(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

// Signals a batch system or a user sends to kob's pid reach the program; those a terminal sends
// to the whole foreground group (Ctrl-C, Ctrl-\) reach it already, and kob waits for it instead
// of dying first, as a shell does.
constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
constexpr int kIgnored[] = {SIGINT, SIGQUIT};

void append_path(const char* var, const std::string& value) {
  const char* old = std::getenv(var);
  const std::string v = old != nullptr && *old != '\0' ? std::string(old) + ":" + value : value;
  setenv(var, v.c_str(), 1);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = strsignal(WTERMSIG(status));
    return "signal " + std::to_string(WTERMSIG(status)) + " (" + (name ? name : "?") + ")";
  }
  return "status " + std::to_string(status);
}

}  // namespace

std::string run_help() {
  return "usage: kob run [--mpi] [TOOL OPTIONS] [--] PROGRAM [ARGS...]\n"
         "\n"
         "Runs PROGRAM with kokkos-ompt-bridge loaded: sets OMP_TOOL_LIBRARIES and the variable\n"
         "PROGRAM's Kokkos reads, KOKKOS_TOOLS_LIBS (Kokkos 3.7 and later) or KOKKOS_PROFILE_LIBRARY\n"
         "(older), to the library (beside kob in the build tree, in the library folder once installed;\n"
         "KOB_LIBRARY overrides it); which Kokkos, kob reads from PROGRAM's libkokkoscore (or a Kokkos linked\n"
         "into it); where it cannot tell, it says so and sets both. KOB_ARGS gets the TOOL OPTIONS (after any\n"
         "KOB_ARGS already set, so that these win). PROGRAM's input, output and exit status pass through unchanged (a program\n"
         "killed by a signal makes kob end by the same signal); SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and\n"
         "SIGALRM sent to kob are passed on to PROGRAM. At the end kob prints on stderr, one line per\n"
         "process, the files each process of the run wrote (forked children included). Under mpirun:\n"
         "`mpirun -np 4 kob run [--mpi] -- PROGRAM`.\n"
         "\n"
         "  --mpi        also preload the PMPI layer of the program's MPI (libkob_mpi_openmpi.so or\n"
         "               libkob_mpi_mpich.so, by its DT_NEEDED; clock offsets to rank 0, MPI calls);\n"
         "               without a match, one line, and the program runs without it\n"
         "  --help       this text\n"
         "\n"
         "TOOL OPTIONS are the library's options, as --key=value or --flag (values without blanks):\n" +
         help_text() +
         "\n"
         "Exit status: PROGRAM's; 127 PROGRAM could not be started; 2 a usage error (nothing is run).\n";
}

namespace {

// kob's and the tool's options, which come first: the program starts at `--` or at the first
// argument that is not an option (its index). --mpi is taken out into `mpi`.
int split_options(int argc, char** argv, std::vector<std::string>& options, bool& mpi) {
  int at = 0;
  for (; at < argc; ++at) {
    const std::string a = argv[at];
    if (a == "--") {
      ++at;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    if (a == "--mpi") {
      mpi = true;
      continue;
    }
    options.push_back(a);
  }
  return at;
}

// The tool options as the library will read them; false (said) when one is bad.
bool check_options(const std::vector<std::string>& options, Config& tool) {
  std::vector<std::string> errors;
  // What the program's library will see: KOB_ARGS as it is now, then these options (they win).
  // --quiet given either way keeps kob quiet too; KOB_ARGS' own mistakes are the library's to say.
  if (const char* env = std::getenv("KOB_ARGS")) {
    std::vector<std::string> ignored;
    tool.apply(split_args(env), ignored);
  }
  tool.apply(options, errors);
  if (!errors.empty()) {
    std::string e = errors.front();
    if (e.rfind("ignoring ", 0) == 0) e.erase(0, 9);  // the library goes on without it; kob run stops
    say("run: " + e + " (kob run --help lists the options)");
    return false;
  }
  for (const std::string& o : options) {
    if (o.find_first_of(" \t\n") != std::string::npos) {
      say("run: '" + o + "': option values cannot hold blanks (KOB_ARGS splits on them)");
      return false;
    }
  }
  return true;
}

// The environment that loads the library into the program (and the MPI layer, when there is one):
// only the Kokkos variable the program's Kokkos reads (Kokkos 4 warns on the program's stderr when
// it finds the older one set).
void set_environment(const std::string& lib, const std::vector<std::string>& options, const std::string& mpi_layer,
                     const KokkosTools& kokkos) {
  using Reads = KokkosTools::Reads;
  if (kokkos.reads == Reads::Unknown)
    say("run: cannot tell which Kokkos the program uses (" + kokkos.why +
        "): setting both KOKKOS_TOOLS_LIBS and KOKKOS_PROFILE_LIBRARY (Kokkos 4 then warns that the second is deprecated)");
  if (kokkos.reads != Reads::ProfileLibrary) setenv("KOKKOS_TOOLS_LIBS", lib.c_str(), 1);
  if (kokkos.reads != Reads::ToolsLibs) setenv("KOKKOS_PROFILE_LIBRARY", lib.c_str(), 1);
  setenv("OMP_TOOL_LIBRARIES", lib.c_str(), 1);
  if (!options.empty()) {
    std::string args;
    if (const char* old = std::getenv("KOB_ARGS"); old != nullptr && *old != '\0') args = old;
    for (const std::string& o : options) args += (args.empty() ? "" : " ") + o;
    setenv("KOB_ARGS", args.c_str(), 1);
  }
  // After what is there: a sanitizer runtime must stay first, and any position precedes libmpi.
  if (!mpi_layer.empty()) append_path("LD_PRELOAD", mpi_layer);
}

// Where each process of the run says what it wrote (common/session/run_report.hpp): a new file in
// $TMPDIR, else /tmp; "" when none can be made.
std::string make_report_file() {
  char report[] = "/tmp/kob-run-XXXXXX";
  const char* tmpdir = std::getenv("TMPDIR");
  std::string report_path;
  std::string tmpl = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/kob-run-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) {
    fd = mkstemp(report);  // TMPDIR unusable: /tmp
    if (fd >= 0) report_path = report;
  } else {
    report_path = buf.data();
  }
  if (fd >= 0) close(fd);
  return report_path;
}

// Waits for the program, passing on the signals sent to kob meanwhile; its wait status.
int wait_for(pid_t child) {
  g_child = child;
  struct sigaction fwd {}, ign {}, old[sizeof kForwarded / sizeof kForwarded[0] + sizeof kIgnored / sizeof kIgnored[0]];
  fwd.sa_handler = forward_signal;
  sigemptyset(&fwd.sa_mask);
  fwd.sa_flags = SA_RESTART;
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  std::size_t n = 0;
  for (int sig : kForwarded) sigaction(sig, &fwd, &old[n++]);
  for (int sig : kIgnored) sigaction(sig, &ign, &old[n++]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      status = 0;
      break;
    }
  }
  g_child = 0;
  n = 0;
  for (int sig : kForwarded) sigaction(sig, &old[n++], nullptr);
  for (int sig : kIgnored) sigaction(sig, &old[n++], nullptr);
  return status;
}

// Before the program starts: the folder of --output, made now (the library would make it too);
// where it cannot be, the user hears it at once, and the library writes elsewhere (said again).
void check_output_folder(const Config& tool) {
  const std::string& out = tool.output;
  const std::size_t slash = out.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  const std::string dir = out.substr(0, slash + 1);
  if (dir.find('%') != std::string::npos) return;  // a folder per rank or process: made by each
  std::string error;
  if (!atomic_file::make_directories(dir, error))
    say(error + ": the run's files will go to the current folder (else $TMPDIR) instead");
}

// One line per process that wrote its files, or one saying that none did.
void report_written(const std::string& report_path, const char* program, int status, bool quiet) {
  std::vector<run_report::Entry> entries = run_report::read(report_path);
  unlink(report_path.c_str());
  if (quiet) return;
  for (const run_report::Entry& e : entries) {
    std::string line = "pid " + std::to_string(e.pid) + " wrote";
    for (std::size_t i = 0; i < e.files.size(); ++i) line += (i ? ", " : " ") + e.files[i];
    say(e.files.empty() ? line + " no file (the lines above say why)" : line + next_step(e.files));
  }
  const bool not_started = WIFEXITED(status) && WEXITSTATUS(status) == 127;  // said by the child already
  if (entries.empty() && !not_started)
    say(std::string(program) + " ended with " + describe_status(status) +
        " and no process of it wrote its files; a raw trace PREFIX.kob it left converts with `kob convert`");
}

// kob ends as the program did: by the same signal, or with its exit status.
int end_as(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::fflush(stdout);
    std::fflush(stderr);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    return 128 + sig;  // a signal that does not end a process by default
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int run_main(int argc, char** argv) {
  std::vector<std::string> options;
  bool mpi = false;
  const int at = split_options(argc, argv, options, mpi);
  for (const std::string& o : options) {
    if (o == "--help" || o == "-h") {
      std::fputs(run_help().c_str(), stdout);
      return 0;
    }
  }
  Config tool;
  if (!check_options(options, tool)) return 2;
  if (at >= argc) {
    say("run needs a PROGRAM to run; kob run --help");
    return 2;
  }
  std::string error;
  const std::string lib = library_path(error);
  if (lib.empty()) {
    say("run: " + error);
    return 2;
  }
  check_output_folder(tool);
  set_environment(lib, options, mpi ? choose_mpi_layer(argv[at]) : std::string(), program_kokkos_tools(argv[at]));
  const std::string report_path = make_report_file();
  if (!report_path.empty()) setenv(run_report::kVariable, report_path.c_str(), 1);

  const pid_t child = fork();
  if (child < 0) {
    say(std::string("run: cannot start ") + argv[at] + ": fork: " + std::strerror(errno));
    if (!report_path.empty()) unlink(report_path.c_str());
    return 127;
  }
  if (child == 0) {
    execvp(argv[at], argv + at);
    std::fprintf(stderr, "kob: run: cannot run %s: %s\n", argv[at], std::strerror(errno));
    _exit(127);
  }
  const int status = wait_for(child);
  if (!report_path.empty()) report_written(report_path, argv[at], status, tool.quiet);
  return end_as(status);
}

}  // namespace kob::cli
