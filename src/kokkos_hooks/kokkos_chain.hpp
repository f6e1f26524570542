// A Kokkos tool library run beside this one (the child): every Kokkos hook this library receives is
// passed on to it, as kokkos-tools' own parent tools do (the child is the entry after ours in
// KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY, or --chain=LIB, and is started with our load
// sequence + 1). The child keeps its own kernel, fence and section ids. Without a child each
// exported hook pays one test of `active()`; the forwarding below is out of line.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/record/record_fields.hpp"
#include "kokkos_hooks/kokkos_abi.hpp"

namespace kob::kokkos::chain {

using BeginFn = void (*)(const char*, std::uint32_t, std::uint64_t*);
using EndFn = void (*)(std::uint64_t);

// The child's hooks, each null where it exports none.
struct Hooks {
  void (*init)(int, std::uint64_t, std::uint32_t, Kokkos_Profiling_KokkosPDeviceInfo*) = nullptr;
  void (*finalize)() = nullptr;
  void (*parse_args)(int, char**) = nullptr;
  void (*print_help)(char*) = nullptr;
  void (*request_tool_settings)(std::uint32_t, Kokkos_Tools_ToolSettings*) = nullptr;
  void (*provide_tool_programming_interface)(std::uint32_t, Kokkos_Tools_ToolProgrammingInterface) = nullptr;
  void (*declare_metadata)(const char*, const char*) = nullptr;
  BeginFn begin_parallel_for = nullptr, begin_parallel_reduce = nullptr, begin_parallel_scan = nullptr, begin_fence = nullptr;
  EndFn end_parallel_for = nullptr, end_parallel_reduce = nullptr, end_parallel_scan = nullptr, end_fence = nullptr;
  void (*push_profile_region)(const char*) = nullptr;
  void (*pop_profile_region)() = nullptr;
  void (*profile_event)(const char*) = nullptr;
  void (*create_profile_section)(const char*, std::uint32_t*) = nullptr;
  void (*start_profile_section)(std::uint32_t) = nullptr;
  void (*stop_profile_section)(std::uint32_t) = nullptr;
  void (*destroy_profile_section)(std::uint32_t) = nullptr;
  void (*allocate_data)(Kokkos_Profiling_SpaceHandle, const char*, const void*, std::uint64_t) = nullptr;
  void (*deallocate_data)(Kokkos_Profiling_SpaceHandle, const char*, const void*, std::uint64_t) = nullptr;
  void (*begin_deep_copy)(Kokkos_Profiling_SpaceHandle, const char*, const void*, Kokkos_Profiling_SpaceHandle, const char*, const void*,
                          std::uint64_t) = nullptr;
  void (*end_deep_copy)() = nullptr;
  void (*dual_view_sync)(const char*, const void*, bool) = nullptr;
  void (*dual_view_modify)(const char*, const void*, bool) = nullptr;
};

extern Hooks g_hooks;
extern std::atomic<bool> g_active;

// Whether a child runs: set once, while Kokkos initialises (before any kernel).
inline bool active() { return g_active.load(std::memory_order_relaxed); }

// Start-up, each after this library's own hook. settings: the child's answer is asked on a copy of
// what Kokkos gave (true: it wants global fencing); call before ours overwrites it.
void init(int load_seq, std::uint64_t version, std::uint32_t ndevinfos, Kokkos_Profiling_KokkosPDeviceInfo* devinfos);
bool request_settings(std::uint32_t n, const Kokkos_Tools_ToolSettings* settings);
void provide_interface(std::uint32_t n, const Kokkos_Tools_ToolProgrammingInterface& iface);
void settings_given(bool kokkos_fences);  // what Kokkos was told (a late child's wish is then fenced here)
void parse_args(int argc, char** argv);  // loads the child named by --chain on the command line
void print_help(char* prog);
void finalize();  // before ours

// The hooks with a child: the child's begin before ours and its end after ours, so that neither
// of our spans holds the child's own cost.
void begin_kernel(BeginFn child, KernelKind kind, const char* name, std::uint32_t devid, std::uint64_t* kernid);
void end_kernel(EndFn child, std::uint64_t kernid);
void begin_fence(const char* name, std::uint32_t devid, std::uint64_t* handle);
void end_fence(std::uint64_t handle);
void push_region(const char* name);
void pop_region();
void profile_event(const char* name);
void create_section(const char* name, std::uint32_t* sec_id);
void section_event(Ev type, std::uint32_t id);
void memory_event(Ev type, Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr, std::uint64_t size);
void begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char* dst_name, const void* dst_ptr, Kokkos_Profiling_SpaceHandle src_space,
                     const char* src_name, const void* src_ptr, std::uint64_t size);
void end_deep_copy();
void dual_view(const char* name, const void* ptr, bool on_device, bool modify);
void declare_metadata(const char* key, const char* value);

}  // namespace kob::kokkos::chain
