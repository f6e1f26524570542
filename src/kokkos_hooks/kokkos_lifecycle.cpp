#include "kokkos_hooks/kokkos_lifecycle.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "common/log.hpp"
#include "common/session.hpp"
#include "kokkos_hooks/kokkos_events.hpp"

namespace kob::kokkos {

FenceFn g_tool_fence = nullptr;
bool g_fence_at_end = false;

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
  g_fence_at_end = session::config().exact_kernel_end;
}

void print_help(const char* /*prog*/) {
  const std::string text = help_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void request_tool_settings(std::uint32_t n, Kokkos_Tools_ToolSettings* settings) {
  session::ensure_started();
  // Kokkos' default (4.x) fences around every hook; we need that only for exact end times.
  if (settings != nullptr && n >= 1) settings->requires_global_fencing = session::config().exact_kernel_end;
}

void provide_tool_programming_interface(std::uint32_t n, const Kokkos_Tools_ToolProgrammingInterface& iface) {
  if (n >= 1) g_tool_fence = iface.fence;
  g_fence_at_end = session::config().exact_kernel_end;
}

void declare_metadata(const char* key, const char* value) {
  session::add_metadata(key ? key : "<null>", value ? value : "<null>");
}

}  // namespace kob::kokkos
