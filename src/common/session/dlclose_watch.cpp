// dlclose() as the program sees it when the tool library is LD_PRELOADed: the module map looks at
// the loaded objects first, so that a library dlopen'ed and dlclose'd between two of the writer's
// passes (50 ms) is still in the raw trace and its code addresses still resolve. Loaded by
// dlopen instead (KOKKOS_TOOLS_LIBS, OMP_TOOL_LIBRARIES), the program's dlclose binds to libc's
// and only the writer's passes see libraries. Built into the tool library only (src/meson.build):
// in the static core it would be hidden by --exclude-libs and would interpose in kob and the tests.
#include <dlfcn.h>

#include <atomic>

#include "common/record/module_map.hpp"
#include "common/support/log.hpp"

namespace {

using DlcloseFn = int (*)(void*);

std::atomic<DlcloseFn> g_real_dlclose{nullptr};

// The next dlclose after this library (libc's, or a sanitizer's interceptor preloaded before us,
// which in turn calls ours as its "real" one): never this one, so there is no recursion.
DlcloseFn real_dlclose() {
  DlcloseFn fn = g_real_dlclose.load(std::memory_order_acquire);
  if (fn == nullptr) {
    // Two threads may both look it up first: they find the same function.
    fn = reinterpret_cast<DlcloseFn>(dlsym(RTLD_NEXT, "dlclose"));
    if (fn != nullptr) g_real_dlclose.store(fn, std::memory_order_release);
  }
  return fn;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) noexcept {
  // Only once the session polled (it started): a program the tool never started in is left alone.
  if (kob::modules::watching()) kob::modules::poll();
  const DlcloseFn real = real_dlclose();
  if (real == nullptr) {
    // Cannot happen with a C library that has dlclose; if it does, the library stays loaded,
    // which the program cannot tell from a dlclose that kept it for another handle.
    kob::log::warn("dlclose: the C library's dlclose was not found; the library stays loaded");
    return 0;
  }
  return real(handle);
}
