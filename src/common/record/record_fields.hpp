// The fields of each record type, declared once: the hooks write a record and the readers read it
// through these names (fields::Kernel::name.set(r, id), fields::Kernel::id.get(r)), never through
// its slots. A field is a slot and a type and nothing else, so a set or a get compiles to the one
// store or load it names. Types that share a layout share one declaration (OmpSync for the four sync
// records). Only the record stage (codec, writer, fold) handles slots as such.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>

#include "common/record/record.hpp"

namespace kob::fields {

// A record's payload slots, in the order the codec codes them.
enum class Slot : std::uint8_t { sub, a, u0, u1, u2, u3, u4, u5 };

template <class T, Slot S>
struct Field {
  using Type = T;
  static constexpr Slot kSlot = S;
  static constexpr T get(const Record& r) noexcept { return static_cast<T>(slot(r)); }
  // A decoded event (common/record/event.hpp) reads its slots itself.
  template <class E>
  static constexpr T get(const E& e) noexcept {
    return static_cast<T>(e.template slot<S>());
  }
  // A member access on r itself, not through slot(): the compiler keeps the record's alignment
  // (two neighbouring stores merge into one aligned 16-byte store, as with r.u[2], r.u[3]).
  static constexpr void set(Record& r, T v) noexcept {
    if constexpr (S == Slot::sub)
      r.sub = static_cast<std::uint16_t>(v);
    else if constexpr (S == Slot::a)
      r.a = static_cast<std::uint32_t>(v);
    else
      r.u[kIndex] = static_cast<std::uint64_t>(v);
  }
  // The slot itself: for the sync fold, which completes a published record through atomic_ref.
  template <class R>
  static constexpr auto& slot(R& r) noexcept {
    if constexpr (S == Slot::sub)
      return r.sub;
    else if constexpr (S == Slot::a)
      return r.a;
    else
      return r.u[kIndex];
  }

 private:
  static constexpr int kIndex = static_cast<int>(S) - static_cast<int>(Slot::u0);  // in u[], for u0..u5
};

// What the values are: the types say it where a plain integer would not.
using NameId = std::uint32_t;       // an interned text (InternTable; kNullName: none)
using KernelId = std::uint64_t;     // a Kokkos kernel's id (0: none)
using Address = std::uint64_t;      // a pointer as the program or runtime gave it
using CodeAddress = std::uint64_t;  // a construct's codeptr_ra (0: none), resolved at conversion (module_map.hpp)

// ---- Kokkos ----

struct Kernel {  // KernelBegin; KernelEnd has the id only
  static constexpr Field<KernelKind, Slot::sub> kind{};
  static constexpr Field<NameId, Slot::a> name{};
  static constexpr Field<std::uint64_t, Slot::u0> id{};
  static constexpr Field<std::uint32_t, Slot::u1> devid{};  // Kokkos' device id of the execution space
};

struct Fence {  // FenceBegin; FenceEnd has the id only
  static constexpr Field<NameId, Slot::a> name{};
  static constexpr Field<std::uint64_t, Slot::u0> id{};
  static constexpr Field<std::uint32_t, Slot::u1> devid{};
};

struct Named {  // RegionPush, ProfileEvent (RegionPop has no field)
  static constexpr Field<NameId, Slot::a> name{};
};

struct Section {  // SectionCreate; SectionStart, SectionStop, SectionDestroy have the id only
  static constexpr Field<NameId, Slot::a> name{};
  static constexpr Field<std::uint32_t, Slot::u0> id{};
};

struct Memory {  // Alloc, Dealloc
  static constexpr Field<NameId, Slot::a> space{};
  static constexpr Field<NameId, Slot::u0> name{};
  static constexpr Field<Address, Slot::u1> ptr{};
  static constexpr Field<std::uint64_t, Slot::u2> bytes{};
};

struct DeepCopy {  // DeepCopyBegin; DeepCopyEnd has the id only (the innermost open copy's)
  static constexpr Field<NameId, Slot::a> dst_space{};
  static constexpr Field<std::uint64_t, Slot::u0> id{};
  static constexpr Field<NameId, Slot::u1> dst_name{};
  static constexpr Field<NameId, Slot::u2> src_space{};
  static constexpr Field<NameId, Slot::u3> src_name{};
  static constexpr Field<std::uint64_t, Slot::u4> bytes{};
  static constexpr Field<Address, Slot::u5> dst_ptr{};
};

struct DualView {
  static constexpr Field<bool, Slot::sub> modify{};  // false: a sync
  static constexpr Field<NameId, Slot::a> name{};
  static constexpr Field<Address, Slot::u0> ptr{};
  static constexpr Field<bool, Slot::u1> on_device{};
};

// ---- MPI: a blocking call on this thread (the PMPI layer, common/session/mpi_bridge.hpp) ----

struct Mpi {  // MpiBegin has the call only
  static constexpr Field<std::uint16_t, Slot::sub> call{};  // kob_mpi_send, ... (mpi_calls.hpp)
  static constexpr Field<std::int32_t, Slot::a> peer{};     // rank (-1: none)
  static constexpr Field<std::uint64_t, Slot::u0> bytes{};
};

// ---- The tool's own work on a program thread ----

struct ToolFlush {  // the record's tick is when the copy began
  static constexpr Field<std::uint32_t, Slot::a> records{};        // records copied
  static constexpr Field<std::uint64_t, Slot::u0> ticks{};         // how long it took, in clock ticks
};

// ---- OpenMP (OMPT), host side ----
// Task ids are our explicit-task ids; parallel ids are ours too (ompt_backend/omp_ids.hpp), both
// below 2^31. The kernel is the Kokkos kernel the event belongs to.

struct OmpThread {  // OmpThreadBegin; OmpThreadEnd has no field
  static constexpr Field<std::uint16_t, Slot::sub> thread_type{};  // ompt_thread_t
};

struct InKernel {
  static constexpr Field<KernelId, Slot::u1> kernel{};
};

struct InParallel : InKernel {
  static constexpr Field<std::uint64_t, Slot::u0> parallel_id{};
};

struct OmpParallel : InParallel {  // OmpParallelBegin; the end has no team size and no codeptr
  static constexpr Field<std::uint32_t, Slot::a> requested_team_size{};
  static constexpr Field<std::uint32_t, Slot::u2> flags{};  // ompt_parallel_flag_t
  static constexpr Field<CodeAddress, Slot::u3> codeptr{};
};

struct OmpImplicitTask : InParallel {  // OmpImplicitTaskBegin; the end has no team size
  static constexpr Field<std::uint16_t, Slot::sub> flags{};  // 1 initial, 2 implicit
  static constexpr Field<std::uint32_t, Slot::a> thread_num{};
  static constexpr Field<std::uint32_t, Slot::u2> team_size{};
};

struct OmpWork : InParallel {  // OmpWorkBegin, OmpWorkEnd (codeptr 0: the begin's names it)
  static constexpr Field<std::uint16_t, Slot::sub> work_type{};  // ompt_work_t
  static constexpr Field<std::uint64_t, Slot::u2> count{};
  static constexpr Field<CodeAddress, Slot::u3> codeptr{};
};

struct OmpMasked : InParallel {  // OmpMaskedBegin, OmpMaskedEnd (codeptr 0)
  static constexpr Field<CodeAddress, Slot::u2> codeptr{};
};

struct OmpDispatch : InParallel {
  static constexpr Field<std::uint16_t, Slot::sub> kind{};       // ompt_dispatch_t
  static constexpr Field<std::uint64_t, Slot::u2> instance{};  // the ompt_data_t instance's value
};

// OmpSyncBegin, OmpSyncWaitBegin, OmpSyncWaitEnd, OmpSyncEnd. Only the begin has a codeptr (0 on the
// others: the begin's names the construct). A begin may be folded (record_fold.hpp): the wait and
// end that followed it on this thread with nothing recorded between, as tick steps plus one (0: not
// folded); the others leave the steps 0.
struct OmpSync : InParallel {
  static constexpr Field<std::uint16_t, Slot::sub> kind{};     // ompt_sync_region_t
  static constexpr Field<std::uint32_t, Slot::a> task_id{};    // 0: an implicit task
  static constexpr Field<CodeAddress, Slot::u2> codeptr{};
  static constexpr Field<std::uint64_t, Slot::u3> wait_begin_step{};  // wait begin - begin
  static constexpr Field<std::uint64_t, Slot::u4> wait_end_step{};    // wait end - wait begin
  static constexpr Field<std::uint64_t, Slot::u5> end_step{};         // end - the step before (wait end, else begin)
};

struct OmpTaskCreate : InKernel {  // the kernel: the creator's
  static constexpr Field<bool, Slot::sub> has_dependences{};
  static constexpr Field<std::uint32_t, Slot::a> flags{};  // ompt_task_flag_t
  static constexpr Field<std::uint64_t, Slot::u0> task_id{};
  static constexpr Field<CodeAddress, Slot::u2> codeptr{};
};

struct OmpTaskSchedule {
  static constexpr Field<std::uint32_t, Slot::a> prior_status{};  // ompt_task_status_t
  static constexpr Field<std::uint64_t, Slot::u0> prior_task_id{};  // 0: not an explicit task
  static constexpr Field<KernelId, Slot::u1> next_kernel{};
  static constexpr Field<std::uint64_t, Slot::u2> next_task_id{};
};

struct OmpDependences {
  static constexpr Field<std::uint32_t, Slot::a> count{};
  static constexpr Field<std::uint64_t, Slot::u0> task_id{};
};

struct OmpTaskDependence {
  static constexpr Field<std::uint64_t, Slot::u0> src_task_id{};
  static constexpr Field<std::uint64_t, Slot::u2> sink_task_id{};
};

// OmpMutexAcquire, OmpLockInit; OmpLockDestroy (no implementation, no hint); OmpMutexAcquired and
// OmpMutexReleased (kind, wait id and kernel only).
struct OmpMutex : InKernel {
  static constexpr Field<std::uint16_t, Slot::sub> kind{};  // ompt_mutex_t
  static constexpr Field<std::uint32_t, Slot::a> implementation{};
  static constexpr Field<std::uint64_t, Slot::u0> wait_id{};
  static constexpr Field<std::uint64_t, Slot::u2> hint{};
  static constexpr Field<CodeAddress, Slot::u3> codeptr{};
};

struct OmpNestLock : InKernel {
  static constexpr Field<std::uint16_t, Slot::sub> endpoint{};  // ompt_scope_endpoint_t (1 begin, 2 end)
  static constexpr Field<std::uint64_t, Slot::u0> wait_id{};
};

struct OmpCancel : InKernel {
  static constexpr Field<std::uint32_t, Slot::a> flags{};  // ompt_cancel_flag_t
  static constexpr Field<CodeAddress, Slot::u2> codeptr{};
};

struct OmpFlush : InKernel {
  static constexpr Field<CodeAddress, Slot::u2> codeptr{};
};

struct OmpControlTool {
  static constexpr Field<std::uint32_t, Slot::a> command{};
  static constexpr Field<std::uint64_t, Slot::u0> modifier{};
  static constexpr Field<CodeAddress, Slot::u2> codeptr{};
};

struct OmpError : InKernel {  // the error directive, at execution
  static constexpr Field<std::uint16_t, Slot::sub> severity{};  // ompt_severity_t
  static constexpr Field<NameId, Slot::a> message{};           // interned (kNullName: none)
  static constexpr Field<std::uint64_t, Slot::u2> message_length{};  // as the runtime gave it
  static constexpr Field<CodeAddress, Slot::u3> codeptr{};
};

// ---- Target offload, host side (target callbacks) ----
// Device numbers as the runtime reports them (the timeline tells the host apart). Target ids and
// host op ids are ours (IdCounters) with the EMI callbacks, the runtime's with the 5.0 ones.

struct OnDevice {
  static constexpr Field<std::int32_t, Slot::a> device{};
};

struct OmpTarget : OnDevice, InKernel {  // OmpTargetBegin; the end has no codeptr
  static constexpr Field<std::uint16_t, Slot::sub> kind{};  // ompt_target_t
  static constexpr Field<std::uint64_t, Slot::u0> target_id{};
  static constexpr Field<std::uint64_t, Slot::u2> deep_copy{};  // the Kokkos deep copy (0: none)
  static constexpr Field<CodeAddress, Slot::u3> codeptr{};
};

// OmpDataOpBegin, OmpDataOpEnd, and OmpDataOp (one point, from non-EMI runtimes).
struct OmpDataOp : InKernel {
  static constexpr Field<std::uint16_t, Slot::sub> optype{};  // ompt_target_data_op_t
  static constexpr Field<std::uint32_t, Slot::a> devices{};   // pack_devices(src, dst)
  static constexpr Field<std::uint64_t, Slot::u0> host_op_id{};
  static constexpr Field<std::uint64_t, Slot::u2> bytes{};
  static constexpr Field<std::uint64_t, Slot::u3> target_id{};  // 0: none
  static constexpr Field<std::uint64_t, Slot::u4> deep_copy{};
  // The destination; for delete and delete_async, which have none, the source: the freed block.
  static constexpr Field<Address, Slot::u5> address{};

  // Two device numbers as int16 (two's complement) in one word: src << 16 | dst.
  static constexpr std::uint32_t pack_devices(int src, int dst) {
    return (static_cast<std::uint32_t>(static_cast<std::uint16_t>(static_cast<std::int16_t>(src))) << 16) |
           static_cast<std::uint16_t>(static_cast<std::int16_t>(dst));
  }
  template <class R>
  static constexpr std::int16_t src_device(const R& r) { return static_cast<std::int16_t>(devices.get(r) >> 16); }
  template <class R>
  static constexpr std::int16_t dst_device(const R& r) { return static_cast<std::int16_t>(devices.get(r) & 0xffff); }
};

// OmpSubmitBegin, OmpSubmitEnd, and OmpSubmit (one point, from non-EMI runtimes).
struct OmpSubmit : InKernel {
  static constexpr Field<std::uint32_t, Slot::a> requested_teams{};
  static constexpr Field<std::uint64_t, Slot::u0> host_op_id{};
  static constexpr Field<std::uint64_t, Slot::u3> target_id{};
};

struct OmpDeviceInit : OnDevice {  // OmpDeviceFinalize has the device only
  static constexpr Field<NameId, Slot::u0> type_name{};
  static constexpr Field<bool, Slot::u1> traced{};  // the device tracing interface is used
};

struct OmpDeviceLoad : OnDevice {  // OmpDeviceUnload has the device and the module id only
  static constexpr Field<NameId, Slot::u0> file{};
  static constexpr Field<Address, Slot::u1> host_addr{};
  static constexpr Field<Address, Slot::u2> device_addr{};
  static constexpr Field<std::uint64_t, Slot::u3> bytes{};
  static constexpr Field<std::uint64_t, Slot::u4> module_id{};
};

// A record of the device tracing interface (OmpDeviceRecord), its times already host ns.
struct OmpDeviceRecord : OnDevice {
  static constexpr Field<std::uint16_t, Slot::sub> record_type{};  // ompt_callbacks_t of the record
  static constexpr Field<std::uint64_t, Slot::u0> host_op_id{};     // target(_emi) records: 0
  static constexpr Field<std::uint64_t, Slot::u1> target_id{};
  static constexpr Field<std::uint64_t, Slot::u2> start{};
  static constexpr Field<std::uint64_t, Slot::u3> end{};  // 0: a point
  // By record: target(_emi) ompt_scope_endpoint_t; data op bytes; submit requested teams.
  static constexpr Field<std::uint64_t, Slot::u4> value{};
  // By record: target(_emi) ompt_target_t; data op ompt_target_data_op_t; submit granted teams.
  static constexpr Field<std::uint64_t, Slot::u5> op_kind{};
};

// ---- Carriers of a record's payload ----

// The slots the instant types use (dispatch, dependences, task dependence, lock init and destroy,
// cancel, flush, control tool, error, a detached task's fulfil): sub, a, u0 and u2. A carrier C
// (OmpInstant) keeps these members under the same names, copied here, the record rebuilt here, so
// that only this stage handles slots.
template <class R, class C>
constexpr void carry_instant_slots(const R& r, C& c) {  // R: a Record or an Event
  c.sub = Field<std::uint16_t, Slot::sub>::get(r);
  c.a = Field<std::uint32_t, Slot::a>::get(r);
  c.u0 = Field<std::uint64_t, Slot::u0>::get(r);
  c.u2 = Field<std::uint64_t, Slot::u2>::get(r);
}
template <class C>
constexpr Record instant_record(const C& c, Ev type) {
  Record r{};
  r.type = type;
  r.sub = c.sub;
  r.a = c.a;
  r.u[0] = c.u0;
  r.u[2] = c.u2;
  return r;
}

// ---- What each type carries ----

// The slots of the given fields, one bit each in Slot order.
template <class... F>
constexpr std::uint8_t slots(F...) {
  return static_cast<std::uint8_t>((0u | ... | (1u << static_cast<unsigned>(F::kSlot))));
}
constexpr std::uint8_t kAllSlots = 0xff;

// The slots each record type carries: what its writers on the hot path set, from the fields above.
// The others stay zero (ring slots are zeroed before reuse), so the codec codes only these. Types
// without an entry (unknown ones, ProfileEvent, which tests use to carry payloads) carry all eight.
constexpr std::array<std::uint8_t, 128> make_carried() {
  std::array<std::uint8_t, 128> t{};
  for (auto& c : t) c = kAllSlots;
  auto set = [&t](std::initializer_list<Ev> types, std::uint8_t carried) {
    for (Ev e : types) t[static_cast<unsigned>(e)] = carried;
  };
  set({Ev::KernelBegin}, slots(Kernel::kind, Kernel::name, Kernel::id, Kernel::devid));
  set({Ev::KernelEnd}, slots(Kernel::id));
  set({Ev::FenceBegin}, slots(Fence::name, Fence::id, Fence::devid));
  set({Ev::FenceEnd}, slots(Fence::id));
  set({Ev::RegionPush}, slots(Named::name));
  set({Ev::RegionPop, Ev::OmpThreadEnd}, 0);
  set({Ev::SectionCreate}, slots(Section::name, Section::id));
  set({Ev::SectionStart, Ev::SectionStop, Ev::SectionDestroy}, slots(Section::id));
  set({Ev::Alloc, Ev::Dealloc}, slots(Memory::space, Memory::name, Memory::ptr, Memory::bytes));
  set({Ev::DeepCopyBegin}, slots(DeepCopy::dst_space, DeepCopy::id, DeepCopy::dst_name, DeepCopy::src_space,
                                 DeepCopy::src_name, DeepCopy::bytes, DeepCopy::dst_ptr));
  set({Ev::DeepCopyEnd}, slots(DeepCopy::id));
  set({Ev::DualView}, slots(DualView::modify, DualView::name, DualView::ptr, DualView::on_device));
  set({Ev::MpiBegin}, slots(Mpi::call));
  set({Ev::MpiEnd}, slots(Mpi::call, Mpi::peer, Mpi::bytes));
  set({Ev::ToolFlush}, slots(ToolFlush::records, ToolFlush::ticks));
  set({Ev::OmpThreadBegin}, slots(OmpThread::thread_type));
  set({Ev::OmpParallelBegin}, slots(OmpParallel::parallel_id, OmpParallel::kernel, OmpParallel::requested_team_size,
                                    OmpParallel::flags, OmpParallel::codeptr));
  set({Ev::OmpParallelEnd}, slots(OmpParallel::parallel_id, OmpParallel::kernel, OmpParallel::flags));
  set({Ev::OmpImplicitTaskBegin}, slots(OmpImplicitTask::parallel_id, OmpImplicitTask::kernel, OmpImplicitTask::flags,
                                        OmpImplicitTask::thread_num, OmpImplicitTask::team_size));
  set({Ev::OmpImplicitTaskEnd}, slots(OmpImplicitTask::parallel_id, OmpImplicitTask::kernel, OmpImplicitTask::flags,
                                      OmpImplicitTask::thread_num));
  set({Ev::OmpWorkBegin, Ev::OmpWorkEnd},
      slots(OmpWork::parallel_id, OmpWork::kernel, OmpWork::work_type, OmpWork::count, OmpWork::codeptr));
  set({Ev::OmpMaskedBegin, Ev::OmpMaskedEnd}, slots(OmpMasked::parallel_id, OmpMasked::kernel, OmpMasked::codeptr));
  set({Ev::OmpDispatch}, slots(OmpDispatch::parallel_id, OmpDispatch::kernel, OmpDispatch::kind, OmpDispatch::instance));
  set({Ev::OmpSyncBegin, Ev::OmpSyncEnd, Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd},
      slots(OmpSync::parallel_id, OmpSync::kernel, OmpSync::kind, OmpSync::task_id, OmpSync::codeptr,
            OmpSync::wait_begin_step, OmpSync::wait_end_step, OmpSync::end_step));
  set({Ev::OmpTaskCreate}, slots(OmpTaskCreate::kernel, OmpTaskCreate::has_dependences, OmpTaskCreate::flags,
                                 OmpTaskCreate::task_id, OmpTaskCreate::codeptr));
  set({Ev::OmpTaskSchedule}, slots(OmpTaskSchedule::prior_status, OmpTaskSchedule::prior_task_id,
                                   OmpTaskSchedule::next_kernel, OmpTaskSchedule::next_task_id));
  set({Ev::OmpDependences}, slots(OmpDependences::count, OmpDependences::task_id));
  set({Ev::OmpTaskDependence}, slots(OmpTaskDependence::src_task_id, OmpTaskDependence::sink_task_id));
  // One writer for the mutex family (host_callbacks.cpp, mutex_event): every field, 0 where unused.
  set({Ev::OmpMutexAcquire, Ev::OmpMutexAcquired, Ev::OmpMutexReleased, Ev::OmpLockInit, Ev::OmpLockDestroy},
      slots(OmpMutex::kernel, OmpMutex::kind, OmpMutex::implementation, OmpMutex::wait_id, OmpMutex::hint,
            OmpMutex::codeptr));
  set({Ev::OmpNestLock}, slots(OmpNestLock::kernel, OmpNestLock::endpoint, OmpNestLock::wait_id));
  set({Ev::OmpCancel}, slots(OmpCancel::kernel, OmpCancel::flags, OmpCancel::codeptr));
  set({Ev::OmpFlush}, slots(OmpFlush::kernel, OmpFlush::codeptr));
  set({Ev::OmpControlTool}, slots(OmpControlTool::command, OmpControlTool::modifier, OmpControlTool::codeptr));
  set({Ev::OmpError}, slots(OmpError::kernel, OmpError::severity, OmpError::message, OmpError::message_length,
                            OmpError::codeptr));
  set({Ev::OmpTargetBegin, Ev::OmpTargetEnd}, slots(OmpTarget::device, OmpTarget::kernel, OmpTarget::kind,
                                                    OmpTarget::target_id, OmpTarget::deep_copy, OmpTarget::codeptr));
  set({Ev::OmpDataOpBegin, Ev::OmpDataOpEnd, Ev::OmpDataOp},
      slots(OmpDataOp::kernel, OmpDataOp::optype, OmpDataOp::devices, OmpDataOp::host_op_id, OmpDataOp::bytes,
            OmpDataOp::target_id, OmpDataOp::deep_copy, OmpDataOp::address));
  set({Ev::OmpSubmitBegin, Ev::OmpSubmitEnd, Ev::OmpSubmit},
      slots(OmpSubmit::kernel, OmpSubmit::requested_teams, OmpSubmit::host_op_id, OmpSubmit::target_id));
  set({Ev::OmpDeviceInit}, slots(OmpDeviceInit::device, OmpDeviceInit::type_name, OmpDeviceInit::traced));
  set({Ev::OmpDeviceFinalize}, slots(OnDevice::device));
  set({Ev::OmpDeviceLoad}, slots(OmpDeviceLoad::device, OmpDeviceLoad::file, OmpDeviceLoad::host_addr,
                                 OmpDeviceLoad::device_addr, OmpDeviceLoad::bytes, OmpDeviceLoad::module_id));
  set({Ev::OmpDeviceUnload}, slots(OmpDeviceLoad::device, OmpDeviceLoad::module_id));
  return t;
}
inline constexpr std::array<std::uint8_t, 128> kCarried = make_carried();

}  // namespace kob::fields
