// A Kokkos tool library run beside this one (the child): every Kokkos hook this library receives is
// passed on to it, as kokkos-tools' own parent tools do (the child is the entry after ours in
// KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY, or --chain=LIB, and is started with our load
// sequence + 1). The child keeps its own kernel, fence and section ids.
//
// The hooks' slow way: a hook records at once only while kokkos_direct() holds (Kokkos events
// recorded, no child), its one test; otherwise it comes here, which passes it on to the child when
// one runs and records it when Kokkos events are recorded. So a hook without a child costs what it
// did (but a fence's end: one test more).
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

// Start-up, each after this library's own hook but settings, which are asked on a copy of what
// Kokkos gave before ours overwrites it (true: the child wants global fencing).
void init(int load_seq, std::uint64_t version, std::uint32_t ndevinfos, Kokkos_Profiling_KokkosPDeviceInfo* devinfos);
bool request_settings(std::uint32_t n, const Kokkos_Tools_ToolSettings* settings);
void provide_interface(std::uint32_t n, const Kokkos_Tools_ToolProgrammingInterface& iface);
void parse_args(int argc, char** argv);  // starts the child named by --chain on the command line
void print_help(char* prog);
void declare_metadata(const char* key, const char* value);
void finalize();  // before ours

// The id Kokkos holds for a kernel or fence this library did not record while a child runs (not 0,
// so that its end comes here): this bit and a count.
constexpr std::uint64_t kNotRecorded = std::uint64_t{1} << 63;

// The slow ways (noinline). With a child, its begins come before ours and its ends after ours, so
// that none of our spans holds the child's own cost.
void begin_kernel(KernelKind kind, const char* name, std::uint32_t devid, std::uint64_t* kernid);
void end_kernel(std::uint64_t kernid, KernelKind kind);  // the id first: where the hook has it (one move less)
void begin_fence(const char* name, std::uint32_t devid, std::uint64_t* handle);
void end_fence(std::uint64_t handle);
void named_event(Ev type, const char* name);  // a region's push or a profile event
void pop_region();
void create_section(const char* name, std::uint32_t* sec_id);
void section_event(Ev type, std::uint32_t id);
void memory_event(Ev type, Kokkos_Profiling_SpaceHandle& space, const char* name, const void* ptr, std::uint64_t size);
void begin_deep_copy(Kokkos_Profiling_SpaceHandle& dst_space, const char* dst_name, const void* dst_ptr, Kokkos_Profiling_SpaceHandle& src_space,
                     const char* src_name, const void* src_ptr, std::uint64_t size);
void end_deep_copy();
void dual_view(const char* name, const void* ptr, bool on_device, bool modify);

}  // namespace kob::kokkos::chain
