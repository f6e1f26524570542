// empty_tool.cpp - libkob_empty_tool.so, the baseline "empty" Kokkos Tools library.
//
// Exports the hooks Kokkos calls around kernels and does nothing in them except hand out a
// kernel id (one relaxed atomic increment, as any thread-safe tool must). Loading it makes Kokkos
// take its "a tool is loaded" paths (name construction, indirect calls into the tool), so
//   cost(our library) - cost(empty tool)
// is what our hooks themselves cost per kernel. Used by benchmarks/run.sh.
//
// Like our library (without --exact-kernel-end), it answers kokkosp_request_tool_settings with
// requires_global_fencing = false: Kokkos 3.4+ otherwise calls Kokkos::fence() before every
// begin/end hook of a tool that does not export it, which would make the baseline pay for fences
// our library does not ask for. Set KOB_EMPTY_TOOL_GLOBAL_FENCING=1 to keep Kokkos' default
// (fence around every hook), e.g. to see what that default costs.
#include <atomic>
#include <cstdint>
#include <cstdlib>

#define KOB_EMPTY_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
std::atomic<std::uint64_t> g_next_id{0};

inline void assign(std::uint64_t* kernid) {
  if (kernid != nullptr) *kernid = g_next_id.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace

struct Kokkos_Profiling_KokkosPDeviceInfo;
// Layout of Kokkos::Tools::Experimental::ToolSettings (Kokkos_Profiling_C_Interface.h).
struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};

KOB_EMPTY_EXPORT void kokkosp_init_library(const int /*load_seq*/, const std::uint64_t /*version*/,
                                           const std::uint32_t /*ndevinfos*/,
                                           Kokkos_Profiling_KokkosPDeviceInfo* /*devinfos*/) {}
KOB_EMPTY_EXPORT void kokkosp_finalize_library() {}

KOB_EMPTY_EXPORT void kokkosp_request_tool_settings(const std::uint32_t n, Kokkos_Tools_ToolSettings* settings) {
  const char* fence = std::getenv("KOB_EMPTY_TOOL_GLOBAL_FENCING");
  if (settings != nullptr && n >= 1) settings->requires_global_fencing = fence != nullptr && fence[0] == '1';
}

KOB_EMPTY_EXPORT void kokkosp_begin_parallel_for(const char* /*name*/, const std::uint32_t /*devid*/,
                                                 std::uint64_t* kernid) {
  assign(kernid);
}
KOB_EMPTY_EXPORT void kokkosp_end_parallel_for(const std::uint64_t /*kernid*/) {}

KOB_EMPTY_EXPORT void kokkosp_begin_parallel_reduce(const char* /*name*/, const std::uint32_t /*devid*/,
                                                    std::uint64_t* kernid) {
  assign(kernid);
}
KOB_EMPTY_EXPORT void kokkosp_end_parallel_reduce(const std::uint64_t /*kernid*/) {}

KOB_EMPTY_EXPORT void kokkosp_begin_parallel_scan(const char* /*name*/, const std::uint32_t /*devid*/,
                                                  std::uint64_t* kernid) {
  assign(kernid);
}
KOB_EMPTY_EXPORT void kokkosp_end_parallel_scan(const std::uint64_t /*kernid*/) {}
