// What each Kokkos hook records. Inline so the extern "C" wrapper compiles to one short
// function: check the group, take a slot in this thread's buffer, fill it.
#pragma once

#include <cstdint>

#include "common/record/record_fields.hpp"
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
    fields::Kernel::kind.set(r, kind);
    fields::Kernel::name.set(r, nid);
    fields::Kernel::id.set(r, id);
    fields::Kernel::devid.set(r, devid);
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
    fields::Kernel::id.set(r, id);
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
    fields::Fence::name.set(r, nid);
    fields::Fence::id.set(r, id);
    fields::Fence::devid.set(r, devid);
  });
}

KOB_HOT_INLINE void end_fence(std::uint64_t id) {
  if (id == 0) return;
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::FenceEnd;
    fields::Fence::id.set(r, id);
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
    fields::Named::name.set(r, nid);
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
    fields::Section::id.set(r, id);
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
    fields::Section::name.set(r, nid);
    fields::Section::id.set(r, id);
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
    fields::Memory::space.set(r, sid);
    fields::Memory::name.set(r, nid);
    fields::Memory::ptr.set(r, reinterpret_cast<std::uintptr_t>(ptr));
    fields::Memory::bytes.set(r, bytes);
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
    fields::DeepCopy::dst_space.set(r, ds);
    fields::DeepCopy::id.set(r, id);
    fields::DeepCopy::dst_name.set(r, dn);
    fields::DeepCopy::src_space.set(r, ss);
    fields::DeepCopy::src_name.set(r, sn);
    fields::DeepCopy::bytes.set(r, bytes);
    fields::DeepCopy::dst_ptr.set(r, reinterpret_cast<std::uintptr_t>(dst_ptr));
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
    fields::DeepCopy::id.set(r, id);
  });
}

inline void dual_view(const char* name, const void* ptr, bool on_device, bool modify) {
  if (KOB_UNLIKELY(!recording(kGroupKokkos))) return;
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::DualView;
    fields::DualView::modify.set(r, modify);
    fields::DualView::name.set(r, nid);
    fields::DualView::ptr.set(r, reinterpret_cast<std::uintptr_t>(ptr));
    fields::DualView::on_device.set(r, on_device);
  });
}

}  // namespace kob::kokkos
