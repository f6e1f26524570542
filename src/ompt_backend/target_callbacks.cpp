// Target offload callbacks (host side). With the EMI callbacks (OpenMP 5.1) we hand out our own
// ids: target_data carries pack(kernel, target id) from target begin to its data ops, submits
// and end; *host_op_id carries our op id from a data op's or submit's begin to its end (and to
// the device tracing records). The 5.0 callbacks are registered only where the runtime cannot
// deliver the EMI ones; they carry the runtime's ids and report data ops and submits as points.
#include <omp-tools.h>

#include "common/session/config.hpp"
#include "common/record/intern.hpp"
#include "common/record/record_fields.hpp"
#include "common/record/recorder.hpp"
#include "common/session/session.hpp"
#include "ompt_backend/callback_table.hpp"
#include "ompt_backend/device_tracing.hpp"
#include "ompt_backend/omp_ids.hpp"
#include "ompt_backend/ompt_runtime.hpp"

namespace kob::omp {

namespace {

using OpenTarget = OmpTargetContext::Open;

// The address a data op names on its device side: the destination, or the freed block for a
// delete (which has no destination).
inline const void* op_address(ompt_target_data_op_t optype, const void* src_addr, const void* dest_addr) {
  return optype == ompt_target_data_delete || optype == ompt_target_data_delete_async ? src_addr : dest_addr;
}

inline std::uint64_t kernel_or(const ThreadBuffer& b, const ompt_data_t* d) {
  const std::uint64_t k = kernel_of(d);
  return k != 0 ? k : b.current_kernel();
}

// ---- target regions ----

void target_event(ThreadBuffer& b, bool begin, ompt_target_t kind, int device_num, std::uint64_t id, std::uint64_t kernel,
                  std::uint64_t deep_copy, const void* codeptr = nullptr) {
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = begin ? Ev::OmpTargetBegin : Ev::OmpTargetEnd;
    using F = fields::OmpTarget;
    F::kind.set(r, static_cast<std::uint16_t>(kind));
    F::device.set(r, device_num);
    F::target_id.set(r, id);
    F::kernel.set(r, kernel);
    F::deep_copy.set(r, deep_copy);
    F::codeptr.set(r, reinterpret_cast<std::uintptr_t>(codeptr));
  });
}

void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num, ompt_data_t* task_data,
                   ompt_data_t* /*target_task_data*/, ompt_data_t* target_data, const void* codeptr) {
  ThreadBuffer& b = this_thread();
  if (endpoint == ompt_scope_begin) {
    std::uint64_t kernel = b.current_kernel();
    if (kernel == 0) kernel = kernel_of(task_data);
    const std::uint64_t deep_copy = b.kokkos.deep_copy();
    const std::uint64_t id = (g_ids.target.fetch_add(1, std::memory_order_relaxed) + 1) & kIdMask;
    if (target_data) target_data->value = pack(kernel, id);
    b.omp_target.push({0, id, kernel, deep_copy});
    if (!recording(kGroupOmpTarget)) return;
    target_event(b, true, kind, device_num, id, kernel, deep_copy, codeptr);
  } else {
    const std::uint64_t id = id_of(target_data);
    const OpenTarget* open = b.omp_target.pop(id);  // a nowait region may end on another thread
    if (!recording(kGroupOmpTarget)) return;
    target_event(b, false, kind, device_num, id, kernel_of(target_data), open ? open->deep_copy : 0);
  }
}

void on_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num, ompt_data_t* task_data,
               ompt_id_t target_id, const void* codeptr) {
  ThreadBuffer& b = this_thread();
  if (endpoint == ompt_scope_begin) {
    std::uint64_t kernel = b.current_kernel();
    if (kernel == 0) kernel = kernel_of(task_data);
    const std::uint64_t deep_copy = b.kokkos.deep_copy();
    b.omp_target.push({target_id, target_id, kernel, deep_copy});
    if (!recording(kGroupOmpTarget)) return;
    target_event(b, true, kind, device_num, target_id, kernel, deep_copy, codeptr);
  } else {
    const OpenTarget* open = b.omp_target.pop(target_id);
    if (!recording(kGroupOmpTarget)) return;
    target_event(b, false, kind, device_num, target_id, open ? open->kernel : b.current_kernel(), open ? open->deep_copy : 0);
  }
}

// ---- data operations ----

void data_op_event(ThreadBuffer& b, Ev type, ompt_target_data_op_t optype, int src, int dst, std::uint64_t host_op_id,
                   std::uint64_t kernel, std::uint64_t bytes, std::uint64_t target_id, const void* dest_addr) {
  const std::uint64_t deep_copy = b.kokkos.deep_copy();
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = type;
    using F = fields::OmpDataOp;
    F::optype.set(r, static_cast<std::uint16_t>(optype));
    F::devices.set(r, F::pack_devices(src, dst));
    F::host_op_id.set(r, host_op_id);
    F::kernel.set(r, kernel);
    F::bytes.set(r, bytes);
    F::target_id.set(r, target_id);
    F::deep_copy.set(r, deep_copy);
    F::address.set(r, reinterpret_cast<std::uintptr_t>(dest_addr));
  });
}

// EMI data ops and submits: we hand the runtime our id at begin, and it gives it back at end.
inline std::uint64_t host_op_for(ompt_scope_endpoint_t endpoint, ompt_id_t* host_op_id) {
  if (endpoint != ompt_scope_begin) return host_op_id ? *host_op_id : 0;
  const std::uint64_t id = g_ids.host_op.fetch_add(1, std::memory_order_relaxed) + 1;
  if (host_op_id) *host_op_id = id;
  return id;
}

void on_target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t* /*target_task_data*/, ompt_data_t* target_data,
                           ompt_id_t* host_op_id, ompt_target_data_op_t optype, void* src_addr, int src_device_num,
                           void* dest_addr, int dest_device_num, size_t bytes, const void* /*codeptr*/) {
  if (!recording(kGroupOmpTarget)) return;
  ThreadBuffer& b = this_thread();
  const std::uint64_t id = host_op_for(endpoint, host_op_id);
  data_op_event(b, endpoint == ompt_scope_begin ? Ev::OmpDataOpBegin : Ev::OmpDataOpEnd, optype, src_device_num,
                dest_device_num, id, kernel_or(b, target_data), bytes, id_of(target_data), op_address(optype, src_addr, dest_addr));
}

// The target a 5.0 callback names by the runtime's id: ours when we saw it open on this thread.
inline const OpenTarget* target_for(const ThreadBuffer& b, ompt_id_t target_id) {
  return target_id != 0 ? b.omp_target.find_runtime(target_id) : nullptr;
}

void on_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t optype, void* src_addr,
                       int src_device_num, void* dest_addr, int dest_device_num, size_t bytes, const void* /*codeptr*/) {
  if (!recording(kGroupOmpTarget)) return;
  ThreadBuffer& b = this_thread();
  const OpenTarget* t = target_for(b, target_id);
  data_op_event(b, Ev::OmpDataOp, optype, src_device_num, dest_device_num, host_op_id, t ? t->kernel : b.current_kernel(),
                bytes, t ? t->id : target_id, op_address(optype, src_addr, dest_addr));
}

// ---- kernel submission ----

void submit_event(ThreadBuffer& b, Ev type, unsigned int teams, std::uint64_t host_op_id, std::uint64_t kernel,
                  std::uint64_t target_id) {
  b.emit([&](Record& r) {
    r.tick = clock::now();
    r.type = type;
    using F = fields::OmpSubmit;
    F::requested_teams.set(r, teams);
    F::host_op_id.set(r, host_op_id);
    F::kernel.set(r, kernel);
    F::target_id.set(r, target_id);
  });
}

void on_target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t* target_data, ompt_id_t* host_op_id,
                          unsigned int requested_num_teams) {
  if (!recording(kGroupOmpTarget)) return;
  ThreadBuffer& b = this_thread();
  const std::uint64_t id = host_op_for(endpoint, host_op_id);
  submit_event(b, endpoint == ompt_scope_begin ? Ev::OmpSubmitBegin : Ev::OmpSubmitEnd, requested_num_teams, id,
               kernel_or(b, target_data), id_of(target_data));
}

void on_target_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int requested_num_teams) {
  if (!recording(kGroupOmpTarget)) return;
  ThreadBuffer& b = this_thread();
  const OpenTarget* t = target_for(b, target_id);
  submit_event(b, Ev::OmpSubmit, requested_num_teams, host_op_id, t ? t->kernel : b.current_kernel(), t ? t->id : target_id);
}

// ---- devices ----

void on_device_initialize(int device_num, const char* type, ompt_device_t* device, ompt_function_lookup_t lookup,
                          const char* documentation) {
  const bool traced = device_tracing::on_device_initialize(device_num, type, device, lookup, documentation);
  const std::uint32_t type_name = type ? names().intern(type) : InternTable::kNullName;
  this_thread().emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::OmpDeviceInit;
    fields::OmpDeviceInit::device.set(r, device_num);
    fields::OmpDeviceInit::type_name.set(r, type_name);
    fields::OmpDeviceInit::traced.set(r, traced);
  });
}

void on_device_finalize(int device_num) {
  device_tracing::on_device_finalize(device_num);
  this_thread().emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::OmpDeviceFinalize;
    fields::OnDevice::device.set(r, device_num);
  });
}

void on_device_load(int device_num, const char* filename, std::int64_t /*offset_in_file*/, void* /*vma_in_file*/,
                    size_t bytes, void* host_addr, void* device_addr, std::uint64_t module_id) {
  const std::uint32_t file = filename ? names().intern(filename) : InternTable::kNullName;
  this_thread().emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::OmpDeviceLoad;
    using F = fields::OmpDeviceLoad;
    F::device.set(r, device_num);
    F::file.set(r, file);
    F::host_addr.set(r, reinterpret_cast<std::uintptr_t>(host_addr));
    F::device_addr.set(r, reinterpret_cast<std::uintptr_t>(device_addr));
    F::bytes.set(r, bytes);
    F::module_id.set(r, module_id);
  });
}

void on_device_unload(int device_num, std::uint64_t module_id) {
  this_thread().emit([&](Record& r) {
    r.tick = clock::now();
    r.type = Ev::OmpDeviceUnload;
    fields::OmpDeviceLoad::device.set(r, device_num);
    fields::OmpDeviceLoad::module_id.set(r, module_id);
  });
}

template <class F>
ompt_callback_t cb(F* f) {
  return reinterpret_cast<ompt_callback_t>(f);
}

}  // namespace

std::span<const CallbackEntry> target_callbacks() {
  // Device set-up and teardown whenever any OpenMP group is recorded (the device tracks, and
  // device tracing, start there); target regions, data ops and submits with --events omp-target.
  // The 5.0 forms are registered only as fallbacks of the EMI ones. target_map(_emi) is left
  // out: libomptarget answers never, and the data ops already carry what it would say.
  constexpr std::uint32_t kAnyOmp = kGroupAllOmp;
  static const CallbackEntry kTable[] = {
      {ompt_callback_device_initialize, "device_initialize", cb(on_device_initialize), kAnyOmp},
      {ompt_callback_device_finalize, "device_finalize", cb(on_device_finalize), kAnyOmp},
      {ompt_callback_device_load, "device_load", cb(on_device_load), kAnyOmp},
      {ompt_callback_device_unload, "device_unload", cb(on_device_unload), kAnyOmp},
      {ompt_callback_target_emi, "target_emi", cb(on_target_emi), kGroupOmpTarget, ompt_callback_target},
      {ompt_callback_target_data_op_emi, "target_data_op_emi", cb(on_target_data_op_emi), kGroupOmpTarget,
       ompt_callback_target_data_op},
      {ompt_callback_target_submit_emi, "target_submit_emi", cb(on_target_submit_emi), kGroupOmpTarget,
       ompt_callback_target_submit},
      {ompt_callback_target, "target", cb(on_target), kGroupOmpTarget, 0, true},
      {ompt_callback_target_data_op, "target_data_op", cb(on_target_data_op), kGroupOmpTarget, 0, true},
      {ompt_callback_target_submit, "target_submit", cb(on_target_submit), kGroupOmpTarget, 0, true},
  };
  return kTable;
}

}  // namespace kob::omp
