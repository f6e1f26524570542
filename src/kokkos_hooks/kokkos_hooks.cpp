// The kokkosp_* symbols Kokkos looks up with dlsym: one-line wrappers, nothing else. With a
// Kokkos tool chained beside this library (kokkos_chain), each passes the hook on as well.
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
  chain::settings_given(kk::kokkos_fences());
}
KOB_EXPORT void kokkosp_provide_tool_programming_interface(const std::uint32_t n, Kokkos_Tools_ToolProgrammingInterface iface) {
  kk::provide_tool_programming_interface(n, iface);
  chain::provide_interface(n, iface);
}
KOB_EXPORT void kokkosp_declare_metadata(const char* key, const char* value) {
  kk::declare_metadata(key, value);
  if (chain::active()) chain::declare_metadata(key, value);
}

// The hot hooks: without a child, one test more than recording alone.
#define KOB_KERNEL_HOOKS(kind_name, Kind)                                                                                 \
  KOB_EXPORT void kokkosp_begin_##kind_name(const char* name, const std::uint32_t devid, std::uint64_t* kernid) {       \
    if (KOB_UNLIKELY(chain::active())) return chain::begin_kernel(chain::g_hooks.begin_##kind_name, KernelKind::Kind, name, devid, kernid); \
    kk::begin_kernel(KernelKind::Kind, name, devid, kernid);                                                            \
  }                                                                                                                     \
  KOB_EXPORT void kokkosp_end_##kind_name(const std::uint64_t kernid) {                                                 \
    if (KOB_UNLIKELY(chain::active())) return chain::end_kernel(chain::g_hooks.end_##kind_name, kernid);                \
    kk::end_kernel(kernid);                                                                                             \
  }
KOB_KERNEL_HOOKS(parallel_for, ParallelFor)
KOB_KERNEL_HOOKS(parallel_reduce, ParallelReduce)
KOB_KERNEL_HOOKS(parallel_scan, ParallelScan)
#undef KOB_KERNEL_HOOKS

KOB_EXPORT void kokkosp_begin_fence(const char* name, const std::uint32_t devid, std::uint64_t* handle) {
  if (KOB_UNLIKELY(chain::active())) return chain::begin_fence(name, devid, handle);
  kk::begin_fence(name, devid, handle);
}
KOB_EXPORT void kokkosp_end_fence(const std::uint64_t handle) {
  if (KOB_UNLIKELY(chain::active())) return chain::end_fence(handle);
  kk::end_fence(handle);
}

KOB_EXPORT void kokkosp_push_profile_region(const char* name) {
  if (KOB_UNLIKELY(chain::active())) return chain::push_region(name);
  kk::named_event(Ev::RegionPush, name);
}
KOB_EXPORT void kokkosp_pop_profile_region() {
  if (KOB_UNLIKELY(chain::active())) return chain::pop_region();
  kk::pop_region();
}
KOB_EXPORT void kokkosp_profile_event(const char* name) {
  if (KOB_UNLIKELY(chain::active())) return chain::profile_event(name);
  kk::named_event(Ev::ProfileEvent, name);
}

KOB_EXPORT void kokkosp_create_profile_section(const char* name, std::uint32_t* sec_id) {
  if (KOB_UNLIKELY(chain::active())) return chain::create_section(name, sec_id);
  kk::create_section(name, sec_id);
}
#define KOB_SECTION_HOOK(hook, type)                                           \
  KOB_EXPORT void kokkosp_##hook##_profile_section(const std::uint32_t id) {  \
    if (KOB_UNLIKELY(chain::active())) return chain::section_event(type, id); \
    kk::section_event(type, id);                                               \
  }
KOB_SECTION_HOOK(start, Ev::SectionStart)
KOB_SECTION_HOOK(stop, Ev::SectionStop)
KOB_SECTION_HOOK(destroy, Ev::SectionDestroy)
#undef KOB_SECTION_HOOK

// The handle comes by value: terminating our copy makes a 64-character space name safe to read.
KOB_EXPORT void kokkosp_allocate_data(Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr,
                                      const std::uint64_t size) {
  if (KOB_UNLIKELY(chain::active())) return chain::memory_event(Ev::Alloc, space, name, ptr, size);
  space.name[63] = 0;
  kk::memory_event(Ev::Alloc, space.name, name, ptr, size);
}
KOB_EXPORT void kokkosp_deallocate_data(Kokkos_Profiling_SpaceHandle space, const char* name, const void* ptr,
                                        const std::uint64_t size) {
  if (KOB_UNLIKELY(chain::active())) return chain::memory_event(Ev::Dealloc, space, name, ptr, size);
  space.name[63] = 0;
  kk::memory_event(Ev::Dealloc, space.name, name, ptr, size);
}

KOB_EXPORT void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char* dst_name, const void* dst_ptr,
                                        Kokkos_Profiling_SpaceHandle src_space, const char* src_name, const void* src_ptr,
                                        const std::uint64_t size) {
  if (KOB_UNLIKELY(chain::active())) return chain::begin_deep_copy(dst_space, dst_name, dst_ptr, src_space, src_name, src_ptr, size);
  dst_space.name[63] = 0;
  src_space.name[63] = 0;
  kk::begin_deep_copy(dst_space.name, dst_name, dst_ptr, src_space.name, src_name, size);
}
KOB_EXPORT void kokkosp_end_deep_copy() {
  if (KOB_UNLIKELY(chain::active())) return chain::end_deep_copy();
  kk::end_deep_copy();
}

KOB_EXPORT void kokkosp_dual_view_sync(const char* name, const void* const ptr, bool on_device) {
  if (KOB_UNLIKELY(chain::active())) return chain::dual_view(name, ptr, on_device, false);
  kk::dual_view(name, ptr, on_device, false);
}
KOB_EXPORT void kokkosp_dual_view_modify(const char* name, const void* const ptr, bool on_device) {
  if (KOB_UNLIKELY(chain::active())) return chain::dual_view(name, ptr, on_device, true);
  kk::dual_view(name, ptr, on_device, true);
}
