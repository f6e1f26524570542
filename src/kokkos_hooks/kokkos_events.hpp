// What each Kokkos hook records. Inline so the extern "C" wrapper compiles to one short
// function: check the group, take a slot in this thread's buffer, fill it. The check is
// kokkos_direct() (Kokkos events recorded, no Kokkos tool beside this library); without it a hook
// takes its slow way in kokkos_chain, which passes it on to that tool or records nothing. The
// record_* parts record without the check, for both ways.
#pragma once

#include <cstdint>

#include "common/record/record_fields.hpp"
#include "common/record/recorder.hpp"
#include "common/session/session.hpp"
#include "kokkos_hooks/kokkos_chain.hpp"

namespace kob::kokkos {

// Kokkos' tool fence, kept for --exact-kernel-end.
using FenceFn = void (*)(std::uint32_t);
extern FenceFn g_tool_fence;
extern bool g_fence_at_end;
extern bool g_end_slow;  // g_fence_at_end, or a Kokkos tool beside this library

KOB_HOT_INLINE void record_kernel_begin(KernelKind kind, const char* name, std::uint32_t devid, std::uint64_t* kernid) {
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

KOB_HOT_INLINE void begin_kernel(KernelKind kind, const char* name, std::uint32_t devid, std::uint64_t* kernid) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::begin_kernel(kind, name, devid, kernid);
  record_kernel_begin(kind, name, devid, kernid);
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

KOB_HOT_INLINE void record_kernel_end(std::uint64_t id) {
  const std::uint64_t t = clock::now();
  ThreadBuffer& b = this_thread();
  pop_kernel(b.kokkos, id);
  b.emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::KernelEnd;
    fields::Kernel::id.set(r, id);
  });
}

// Id 0: the begin recorded nothing and no child runs (with one, such a kernel has an id of
// chain::kNotRecorded's). g_end_slow: a fence first (--exact-kernel-end), or a child.
KOB_HOT_INLINE void end_kernel(KernelKind kind, std::uint64_t id) {
  if (id == 0) return;
  if (KOB_UNLIKELY(g_end_slow)) return chain::end_kernel(id, kind);
  record_kernel_end(id);
}

KOB_HOT_INLINE void record_fence_begin(const char* name, std::uint32_t devid, std::uint64_t* handle) {
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

KOB_HOT_INLINE void begin_fence(const char* name, std::uint32_t devid, std::uint64_t* handle) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::begin_fence(name, devid, handle);
  record_fence_begin(name, devid, handle);
}

KOB_HOT_INLINE void record_fence_end(std::uint64_t id) {
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::FenceEnd;
    fields::Fence::id.set(r, id);
  });
}

KOB_HOT_INLINE void end_fence(std::uint64_t id) {
  if (id == 0) return;
  if (KOB_UNLIKELY(g_hot.kokkos_chained)) return chain::end_fence(id);
  record_fence_end(id);
}

// Records an event with one interned name and no other payload (regions, profile events).
// --device-trace-region: a region push may resume device tracing (checked before the group, so
// that it works with --events leaving out kokkos too).
KOB_HOT_INLINE void record_named(Ev type, const char* name) {
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = type;
    fields::Named::name.set(r, nid);
  });
}

KOB_HOT_INLINE void named_event(Ev type, const char* name) {
  if (type == Ev::RegionPush) {
    if (const RegionListener* l = g_region_listener.load(std::memory_order_relaxed); KOB_UNLIKELY(l != nullptr)) l->push(name);
  }
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::named_event(type, name);
  record_named(type, name);
}

KOB_HOT_INLINE void record_region_pop() {
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = Ev::RegionPop;
  });
}

KOB_HOT_INLINE void pop_region() {
  if (const RegionListener* l = g_region_listener.load(std::memory_order_relaxed); KOB_UNLIKELY(l != nullptr)) l->pop();
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::pop_region();
  record_region_pop();
}

inline void record_section(Ev type, std::uint32_t id) {
  const std::uint64_t t = clock::now();
  this_thread().emit([&](Record& r) {
    r.tick = t;
    r.type = type;
    fields::Section::id.set(r, id);
  });
}

inline void section_event(Ev type, std::uint32_t id) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::section_event(type, id);
  record_section(type, id);
}

// Ids are handed out whether or not the section is recorded.
inline std::uint32_t new_section_id() { return g_ids.section.fetch_add(1, std::memory_order_relaxed) + 1; }

inline void record_section_create(const char* name, std::uint32_t id) {
  ThreadBuffer& b = this_thread();
  const std::uint32_t nid = b.names.lookup(name);
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::SectionCreate;
    fields::Section::name.set(r, nid);
    fields::Section::id.set(r, id);
  });
}

inline void create_section(const char* name, std::uint32_t* sec_id) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::create_section(name, sec_id);
  const std::uint32_t id = new_section_id();
  if (sec_id) *sec_id = id;
  record_section_create(name, id);
}

inline void record_memory(Ev type, const char* space, const char* name, const void* ptr, std::uint64_t bytes) {
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

inline void record_deep_copy_begin(const char* dst_space, const char* dst_name, const void* dst_ptr, const char* src_space,
                                   const char* src_name, std::uint64_t bytes) {
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

inline void record_deep_copy_end() {
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

inline void record_dual_view(const char* name, const void* ptr, bool on_device, bool modify) {
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

// The hooks whose whole work is one record_* part. Memory and deep copies take Kokkos' space
// handles as the exported hooks got them (a child gets them unchanged).
inline void memory_event(Ev type, Kokkos_Profiling_SpaceHandle& space, const char* name, const void* ptr, std::uint64_t bytes) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::memory_event(type, space, name, ptr, bytes);
  space.name[63] = 0;  // our copy: a 64-character name is safe to read
  record_memory(type, space.name, name, ptr, bytes);
}

inline void begin_deep_copy(Kokkos_Profiling_SpaceHandle& dst_space, const char* dst_name, const void* dst_ptr,
                            Kokkos_Profiling_SpaceHandle& src_space, const char* src_name, const void* src_ptr, std::uint64_t bytes) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::begin_deep_copy(dst_space, dst_name, dst_ptr, src_space, src_name, src_ptr, bytes);
  dst_space.name[63] = 0;
  src_space.name[63] = 0;
  record_deep_copy_begin(dst_space.name, dst_name, dst_ptr, src_space.name, src_name, bytes);
}

inline void end_deep_copy() {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::end_deep_copy();
  record_deep_copy_end();
}

inline void dual_view(const char* name, const void* ptr, bool on_device, bool modify) {
  if (KOB_UNLIKELY(!kokkos_direct())) return chain::dual_view(name, ptr, on_device, modify);
  record_dual_view(name, ptr, on_device, modify);
}

}  // namespace kob::kokkos
