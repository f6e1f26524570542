// The kokkosp_* symbols Kokkos looks up with dlsym: one-line wrappers, nothing else. A Kokkos tool
// chained beside this library (kokkos_chain) gets each hook too: the start-up ones here, the
// others through each hook's slow way (kokkos_events.hpp).
#include "kokkos_hooks/kokkos_abi.hpp"
#include "kokkos_hooks/kokkos_chain.hpp"
#include "kokkos_hooks/kokkos_events.hpp"
#include "kokkos_hooks/kokkos_lifecycle.hpp"

#define KOB_EXPORT extern "C" __attribute__((visibility("default")))

using kob::Ev;
using kob::KernelKind;
namespace kk = kob::kokkos;
namespace chain = kob::kokkos::chain;

KOB_EXPORT void kokkosp_init_library(const int load_seq, const std::uint64_t version, const std::uint32_t ndevinfos,
                                     Kokkos_Profiling_KokkosPDeviceInfo* devinfos) {
  kk::init_library(load_seq, version, ndevinfos, devinfos);
  chain::init(load_seq, version, ndevinfos, devinfos);
}
KOB_EXPORT void kokkosp_finalize_library() {
  chain::finalize();
  kk::finalize_library();
}
KOB_EXPORT void kokkosp_parse_args(int argc, char** argv) {
  kk::parse_args(argc, argv);
  chain::parse_args(argc, argv);
}
KOB_EXPORT void kokkosp_print_help(char* prog) {
  kk::print_help(prog);
  chain::print_help(prog);
}
KOB_EXPORT void kokkosp_request_tool_settings(const std::uint32_t n, Kokkos_Tools_ToolSettings* settings) {
  const bool child_fences = chain::request_settings(n, settings);  // asked on what Kokkos gave, before ours
  kk::request_tool_settings(n, settings, child_fences);
}
KOB_EXPORT void kokkosp_provide_tool_programming_interface(const std::uint32_t n, Kokkos_Tools_ToolProgrammingInterface iface) {
  kk::provide_tool_programming_interface(n, iface);
  chain::provide_interface(n, iface);
}
KOB_EXPORT void kokkosp_declare_metadata(const char* key, const char* value) {
  kk::declare_metadata(key, value);
  chain::declare_metadata(key, value);
}

KOB_EXPORT void kokkosp_begin_parallel_for(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {
  kk::begin_kernel(KernelKind::ParallelFor, name, devid, kernid);
}
KOB_EXPORT void kokkosp_end_parallel_for(const std::uint64_t kernid) { kk::end_kernel(KernelKind::ParallelFor, kernid); }
KOB_EXPORT void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {
  kk::begin_kernel(KernelKind::ParallelReduce, name, devid, kernid);
}
KOB_EXPORT void kokkosp_end_parallel_reduce(const std::uint64_t kernid) { kk::end_kernel(KernelKind::ParallelReduce, kernid); }
KOB_EXPORT void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {
  kk::begin_kernel(KernelKind::ParallelScan, name, devid, kernid);
}
KOB_EXPORT void kokkosp_end_parallel_scan(const std::uint64_t kernid) { kk::end_kernel(KernelKind::ParallelScan, kernid); }
KOB_EXPORT void kokkosp_begin_fence(const char* name, const std::uint32_t devid, std::uint64_t* handle) {
  kk::begin_fence(name, devid, handle);
}
KOB_EXPORT void kokkosp_end_fence(const std::uint64_t handle) { kk::end_fence(handle); }

KOB_EXPORT void kokkosp_push_profile_region(const char* name) { kk::named_event(Ev::RegionPush, name); }
KOB_EXPORT void kokkosp_pop_profile_region() { kk::pop_region(); }
KOB_EXPORT void kokkosp_profile_event(const char* name) { kk::named_event(Ev::ProfileEvent, name); }

KOB_EXPORT void kokkosp_create_profile_section(const char* name, std::uint32_t* sec_id) { kk::create_section(name, sec_id); }
KOB_EXPORT void kokkosp_start_profile_section(const std::uint32_t id) { kk::section_event(Ev::SectionStart, id); }
KOB_EXPORT void kokkosp_stop_profile_section(const std::uint32_t id) { kk::section_event(Ev::SectionStop, id); }
KOB_EXPORT void kokkosp_destroy_profile_section(const std::uint32_t id) { kk::section_event(Ev::SectionDestroy, id); }

// The handles come by value: ours to terminate (a 64-character space name is then safe to read).
KOB_EXPORT void kokkosp_allocate_data(Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr,
                                      const std::uint64_t size) {
  kk::memory_event(Ev::Alloc, space, name, ptr, size);
}
KOB_EXPORT void kokkosp_deallocate_data(Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr,
                                        const std::uint64_t size) {
  kk::memory_event(Ev::Dealloc, space, name, ptr, size);
}

KOB_EXPORT void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char* dst_name, const void* dst_ptr,
                                        Kokkos_Profiling_SpaceHandle src_space, const char* src_name, const void* src_ptr,
                                        const std::uint64_t size) {
  kk::begin_deep_copy(dst_space, dst_name, dst_ptr, src_space, src_name, src_ptr, size);
}
KOB_EXPORT void kokkosp_end_deep_copy() { kk::end_deep_copy(); }

KOB_EXPORT void kokkosp_dual_view_sync(const char* name, const void* const ptr, bool on_device) {
  kk::dual_view(name, ptr, on_device, false);
}
KOB_EXPORT void kokkosp_dual_view_modify(const char* name, const void* const ptr, bool on_device) {
  kk::dual_view(name, ptr, on_device, true);
}
