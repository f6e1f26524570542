#include "kokkos_hooks/kokkos_lifecycle.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "common/session/config.hpp"
#include "common/support/log.hpp"
#include "common/session/session.hpp"
#include "kokkos_hooks/kokkos_events.hpp"

namespace kob::kokkos {

FenceFn g_tool_fence = nullptr;
bool g_fence_at_end = false;
bool g_end_slow = false;

namespace {
// Set when request_tool_settings told Kokkos that we require global fencing: Kokkos then fences
// before every kernel hook itself (3.x and 4.x alike), and a fence of ours at the kernel end
// would be a second one.
bool g_kokkos_fences = false;

// --exact-kernel-end needs one fence before each kernel end: Kokkos' if it fences globally,
// else ours (when the option came only on the command line, after Kokkos asked for settings).
void update_fence_at_end() {
  g_fence_at_end = session::config().exact_kernel_end && !g_kokkos_fences;
  update_end_slow();
}
}  // namespace

void update_end_slow() { g_end_slow = g_fence_at_end || g_hot.kokkos_chained; }

void init_library(int load_seq, std::uint64_t version, std::uint32_t ndevinfos, Kokkos_Profiling_KokkosPDeviceInfo* devinfos) {
  session::ensure_started();
  std::vector<std::uint64_t> ids;
  if (devinfos != nullptr) {
    for (std::uint32_t i = 0; i < ndevinfos; ++i) ids.push_back(devinfos[i].deviceID);
  }
  session::kokkos_initialised(load_seq, version, std::move(ids));
  log::debug("Kokkos tools interface version " + std::to_string(version) + ", load sequence " + std::to_string(load_seq));
}

void finalize_library() { session::kokkos_finalised(); }

void parse_args(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    if (argv == nullptr || argv[i] == nullptr) continue;
    std::string a = argv[i];
    // Kokkos puts the program (3.x) or the library (4.x) name first.
    if (i == 0 && a.rfind("--", 0) != 0) continue;
    if (!a.empty()) args.push_back(std::move(a));
  }
  session::apply_command_line(args);
  update_fence_at_end();
}

void print_help(const char* /*prog*/) {
  session::ensure_started();
  session::help_run();  // Kokkos finalizes and exits right after: no files, no summary
  const std::string text = help_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void request_tool_settings(std::uint32_t n, Kokkos_Tools_ToolSettings* settings, bool child_fences) {
  session::ensure_started();
  // Kokkos' default (3.x and 4.x) fences before every kernel and region hook; we need that only
  // for exact end times (or a chained tool for its own reasons: the union of both wishes).
  if (settings != nullptr && n >= 1) {
    settings->requires_global_fencing = session::config().exact_kernel_end || child_fences;
    g_kokkos_fences = settings->requires_global_fencing;
    log::debug(std::string("asked Kokkos for global fencing: ") + (g_kokkos_fences ? "yes" : "no"));
  }
  update_fence_at_end();
}

bool kokkos_fences() { return g_kokkos_fences; }

void provide_tool_programming_interface(std::uint32_t n, const Kokkos_Tools_ToolProgrammingInterface& iface) {
  if (n >= 1) g_tool_fence = iface.fence;
  update_fence_at_end();
}

void declare_metadata(const char* key, const char* value) {
  session::add_metadata(key ? key : "<null>", value ? value : "<null>");
}

}  // namespace kob::kokkos
