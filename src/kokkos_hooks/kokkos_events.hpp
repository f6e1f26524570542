// What each Kokkos hook records. Inline so the extern "C" wrapper compiles to one short
// function: check the group, take a slot in this thread's buffer, fill it.
#pragma once

#include <cstdint>

#include "common/record/recorder.hpp"
#include "common/session/session.hpp"

namespace kob::kokkos {

// Kokkos' tool fence, kept for --exact-kernel-end.
using FenceFn = void (*)(std::uint32_t);
extern FenceFn g_tool_fence;
extern bool g_fence_at_end;

KOB_HOT_INLINE void begin_kernel(KernelKind kind, const char* name, std::uint32_t devid, std::uint64_t* kernid) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) {
    if (kernid) *kernid = 0;  // sentinel: the end hook records nothing
    return;
  }
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  const std::uint64_t id = g_ids.kernel.fetch_add(1, std::memory_order_relaxed) + 1;
  if (kernid) *kernid = id;
  KokkosContext& k = b.kokkos;
  if (k.kernel_depth < KokkosContext::kMaxDepth) k.kernels[k.kernel_depth] = id;
  ++k.kernel_depth;
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::KernelBegin;
    r.sub = static_cast<std::uint16_t>(kind);
    r.a = nid;
    r.u[0] = id;
    r.u[1] = devid;
  });
}

inline void pop_kernel(KokkosContext& k, std::uint64_t id) {
  std::uint32_t d = k.kernel_depth;
  if (d == 0) return;
  if (d > KokkosContext::kMaxDepth || k.kernels[d - 1] == id) {
    k.kernel_depth = d - 1;
    return;
  }
  while (d-- > 0) {  // ended out of order: drop it and whatever was opened inside it
    if (k.kernels[d] == id) {
      k.kernel_depth = d;
      return;
    }
  }
}

KOB_HOT_INLINE void end_kernel(std::uint64_t id) {
  if (id == 0) return;
  if (KOB_UNLIKELY(g_fence_at_end) && g_tool_fence) g_tool_fence(0);
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  pop_kernel(b.kokkos, id);
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::KernelEnd;
    r.u[0] = id;
  });
}

KOB_HOT_INLINE void begin_fence(const char* name, std::uint32_t devid, std::uint64_t* handle) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) {
    if (handle) *handle = 0;
    return;
  }
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  const std::uint64_t id = g_ids.fence.fetch_add(1, std::memory_order_relaxed) + 1;
  if (handle) *handle = id;
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::FenceBegin;
    r.a = nid;
    r.u[0] = id;
    r.u[1] = devid;
  });
}

KOB_HOT_INLINE void end_fence(std::uint64_t id) {
  if (id == 0) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::FenceEnd;
    r.u[0] = id;
  });
}

// Records an event with one interned name and no other payload (regions, profile events).
// --device-trace-region: a region push may resume device tracing (checked before the group, so
// that it works with --events leaving out kokkos too).
KOB_HOT_INLINE void named_event(Ev type, const char* name) {
  if (type == Ev::RegionPush) {
    if (const RegionListener* l = g_region_listener.load(std::memory_order_relaxed); KOB_UNLIKELY(l != nullptr)) l->push(name);
  }
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = type;
    r.a = nid;
  });
}

KOB_HOT_INLINE void pop_region() {
  if (const RegionListener* l = g_region_listener.load(std::memory_order_relaxed); KOB_UNLIKELY(l != nullptr)) l->pop();
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::RegionPop;
  });
}

inline void section_event(Ev type, std::uint32_t id) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = type;
    r.u[0] = id;
  });
}

inline void create_section(const char* name, std::uint32_t* sec_id) {
  const std::uint32_t id = g_ids.section.fetch_add(1, std::memory_order_relaxed) + 1;
  if (sec_id) *sec_id = id;
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::SectionCreate;
    r.a = nid;
    r.u[0] = id;
  });
}

inline void memory_event(Ev type, const char* space, const char* name, const void* ptr, std::uint64_t bytes) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  ThreadBuffer& b = this_thread();
  const std::uint32_t sid = b.names.lookup(space);
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = type;
    r.a = sid;
    r.u[0] = nid;
    r.u[1] = reinterpret_cast<std::uintptr_t>(ptr);
    r.u[2] = bytes;
  });
}

inline void begin_deep_copy(const char* dst_space, const char* dst_name, const void* dst_ptr, const char* src_space,
                            const char* src_name, std::uint64_t bytes) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  ThreadBuffer& b = this_thread();
  const std::uint32_t ds = b.names.lookup(dst_space), dn = b.names.lookup(dst_name);
  const std::uint32_t ss = b.names.lookup(src_space), sn = b.names.lookup(src_name);
  const std::uint64_t id = g_ids.deep_copy.fetch_add(1, std::memory_order_relaxed) + 1;
  KokkosContext& k = b.kokkos;
  if (k.deep_copy_depth < KokkosContext::kMaxDepth) k.deep_copies[k.deep_copy_depth] = id;
  ++k.deep_copy_depth;
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::DeepCopyBegin;
    r.a = ds;
    r.u[0] = id;
    r.u[1] = dn;
    r.u[2] = ss;
    r.u[3] = sn;
    r.u[4] = bytes;
    r.u[5] = reinterpret_cast<std::uintptr_t>(dst_ptr);
  });
}

inline void end_deep_copy() {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  KokkosContext& k = b.kokkos;
  // No id comes with this hook: the innermost open deep copy on this thread is the one ending.
  std::uint64_t id = 0;
  if (k.deep_copy_depth > 0) {
    --k.deep_copy_depth;
    if (k.deep_copy_depth < KokkosContext::kMaxDepth) id = k.deep_copies[k.deep_copy_depth];
  }
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::DeepCopyEnd;
    r.u[0] = id;
  });
}

inline void dual_view(const char* name, const void* ptr, bool on_device, bool modify) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::DualView;
    r.sub = modify ? 1 : 0;
    r.a = nid;
    r.u[0] = reinterpret_cast<std::uintptr_t>(ptr);
    r.u[1] = on_device ? 1 : 0;
  });
}

}  // namespace kob::kokkos
