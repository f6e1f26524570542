// The kokkosp_* symbols Kokkos looks up with dlsym: one-line wrappers, nothing else.
#include "kokkos_hooks/kokkos_abi.hpp"
#include "kokkos_hooks/kokkos_events.hpp"
#include "kokkos_hooks/kokkos_lifecycle.hpp"

#define KOB_EXPORT extern "C" __attribute__((visibility("default")))

using kob::Ev;
using kob::KernelKind;
namespace kk = kob::kokkos;

KOB_EXPORT void kokkosp_init_library(const int load_seq, const std::uint64_t version, const std::uint32_t ndevinfos,
                                     Kokkos_Profiling_KokkosPDeviceInfo* devinfos) {
  kk::init_library(load_seq, version, ndevinfos, devinfos);
}
KOB_EXPORT void kokkosp_finalize_library() { kk::finalize_library(); }
KOB_EXPORT void kokkosp_parse_args(int argc, char** argv) { kk::parse_args(argc, argv); }
KOB_EXPORT void kokkosp_print_help(char* prog) { kk::print_help(prog); }
KOB_EXPORT void kokkosp_request_tool_settings(const std::uint32_t n, Kokkos_Tools_ToolSettings* settings) {
  kk::request_tool_settings(n, settings);
}
KOB_EXPORT void kokkosp_provide_tool_programming_interface(const std::uint32_t n, Kokkos_Tools_ToolProgrammingInterface iface) {
  kk::provide_tool_programming_interface(n, iface);
}
KOB_EXPORT void kokkosp_declare_metadata(const char* key, const char* value) { kk::declare_metadata(key, value); }

KOB_EXPORT void kokkosp_begin_parallel_for(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {
  kk::begin_kernel(KernelKind::ParallelFor, name, devid, kernid);
}
KOB_EXPORT void kokkosp_end_parallel_for(const std::uint64_t kernid) { kk::end_kernel(kernid); }
KOB_EXPORT void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {
  kk::begin_kernel(KernelKind::ParallelReduce, name, devid, kernid);
}
KOB_EXPORT void kokkosp_end_parallel_reduce(const std::uint64_t kernid) { kk::end_kernel(kernid); }
KOB_EXPORT void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {
  kk::begin_kernel(KernelKind::ParallelScan, name, devid, kernid);
}
KOB_EXPORT void kokkosp_end_parallel_scan(const std::uint64_t kernid) { kk::end_kernel(kernid); }
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

// The handle comes by value: terminating our copy makes a 64-character space name safe to read.
KOB_EXPORT void kokkosp_allocate_data(Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr,
                                      const std::uint64_t size) {
  space.name[63] = 0;
  kk::memory_event(Ev::Alloc, space.name, name, ptr, size);
}
KOB_EXPORT void kokkosp_deallocate_data(Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr,
                                        const std::uint64_t size) {
  space.name[63] = 0;
  kk::memory_event(Ev::Dealloc, space.name, name, ptr, size);
}

KOB_EXPORT void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char* dst_name, const void* dst_ptr,
                                        Kokkos_Profiling_SpaceHandle src_space, const char* src_name, const void* /*src_ptr*/,
                                        const std::uint64_t size) {
  dst_space.name[63] = 0;
  src_space.name[63] = 0;
  kk::begin_deep_copy(dst_space.name, dst_name, dst_ptr, src_space.name, src_name, size);
}
KOB_EXPORT void kokkosp_end_deep_copy() { kk::end_deep_copy(); }

KOB_EXPORT void kokkosp_dual_view_sync(const char* name, const void* const ptr, bool on_device) {
  kk::dual_view(name, ptr, on_device, false);
}
KOB_EXPORT void kokkosp_dual_view_modify(const char* name, const void* const ptr, bool on_device) {
  kk::dual_view(name, ptr, on_device, true);
}
