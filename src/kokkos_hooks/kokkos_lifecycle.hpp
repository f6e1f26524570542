// The Kokkos hooks that set the tool up and down: none of them is on a hot path.
#pragma once

#include <cstdint>

#include "kokkos_hooks/kokkos_abi.hpp"

namespace kob::kokkos {

void init_library(int load_seq, std::uint64_t version, std::uint32_t ndevinfos, Kokkos_Profiling_KokkosPDeviceInfo* devinfos);
void finalize_library();
void parse_args(int argc, char** argv);
void print_help(const char* prog);
// child_fences: a chained tool (kokkos_chain) wants global fencing.
void request_tool_settings(std::uint32_t n, Kokkos_Tools_ToolSettings* settings, bool child_fences);
bool kokkos_fences();  // whether Kokkos was asked for global fencing
void update_end_slow();  // g_end_slow (kokkos_events.hpp) after --exact-kernel-end or a child changed
void provide_tool_programming_interface(std::uint32_t n, const Kokkos_Tools_ToolProgrammingInterface& iface);
void declare_metadata(const char* key, const char* value);

}  // namespace kob::kokkos
