// One fixed-size event record: the only thing the hot path writes.
#pragma once

#include <cstdint>

namespace kob {

// Record types. Begin/end pairs are matched at the end of the run, never on the hot path.
enum class Ev : std::uint16_t {
  None = 0,
  // Kokkos
  KernelBegin,     // sub=KernelKind a=name u0=id u1=devid
  KernelEnd,       // u0=id
  FenceBegin,      // a=name u0=id u1=devid
  FenceEnd,        // u0=id
  RegionPush,      // a=name
  RegionPop,       //
  SectionCreate,   // a=name u0=section id
  SectionStart,    // u0=section id
  SectionStop,     // u0=section id
  SectionDestroy,  // u0=section id
  Alloc,           // a=space u0=name u1=ptr u2=bytes u3=alloc id
  Dealloc,         // a=space u0=name u1=ptr u2=bytes
  DeepCopyBegin,   // a=dst space u0=id u1=dst name u2=src space u3=src name u4=bytes u5=dst ptr
  DeepCopyEnd,     // u0=id
  ProfileEvent,    // a=name
  DualView,        // sub=1 modify / 0 sync, a=name u0=ptr u1=on_device
  // MPI (the PMPI layer libkob_mpi_<family>.so, common/session/mpi_bridge.hpp; the calls: mpi_calls.hpp): a blocking call on this thread.
  MpiBegin,        // sub=call (kob_mpi_send, ...)
  MpiEnd,          // sub=call u0=bytes a=peer rank (int32 as u32; -1 none)
  // OpenMP (OMPT). u1 is always the Kokkos kernel id the event belongs to (0: none). Task ids
  // are our explicit-task ids; parallel ids are ours too (see ompt_backend/omp_ids.hpp), both
  // below 2^31. codeptr: the construct's code address as the runtime gave it (codeptr_ra, 0: none),
  // resolved to a source location at conversion only (common/record/module_map.hpp).
  OmpFirst = 64,
  OmpThreadBegin = OmpFirst,  // sub=ompt_thread_t
  OmpThreadEnd,               //
  OmpParallelBegin,           // u0=parallel id u1=kernel a=requested team size u2=flags u3=codeptr
  OmpParallelEnd,             // u0=parallel id u1=kernel u2=flags
  OmpImplicitTaskBegin,       // u0=parallel id u1=kernel a=thread num u2=team size sub=flags (1 initial, 2 implicit)
  OmpImplicitTaskEnd,         // u0=parallel id u1=kernel a=thread num sub=flags
  OmpWorkBegin,               // sub=ompt_work_t u0=parallel id u1=kernel u2=count u3=codeptr
  OmpWorkEnd,                 // sub=ompt_work_t u0=parallel id u1=kernel u2=count (no codeptr: the begin's)
  OmpMaskedBegin,             // u0=parallel id u1=kernel u2=codeptr
  OmpMaskedEnd,               // u0=parallel id u1=kernel
  OmpDispatch,                // sub=ompt_dispatch_t u0=parallel id u1=kernel u2=instance value
  OmpSyncBegin,               // sub=ompt_sync_region_t u0=parallel id u1=kernel a=task id (0: implicit task) u2=codeptr
                              //   folded (record_fold.hpp): the wait and end that followed it on this
                              //   thread with nothing recorded between, as tick steps plus one (0: not
                              //   folded) u3=wait begin - begin u4=wait end - wait begin u5=end - the
                              //   step before (wait end, else begin)
  OmpSyncEnd,                 // same fields (u2 0: the begin's codeptr names it; u3..u5 0)
  OmpSyncWaitBegin,           // same fields (u2 0)
  OmpSyncWaitEnd,             // same fields (u2 0)
  OmpTaskCreate,              // u0=task id u1=kernel (of the creator) a=flags sub=has_dependences u2=codeptr
  OmpTaskSchedule,            // u0=prior task id (0: not explicit) u1=kernel of next a=prior status u2=next task id
  OmpDependences,             // u0=task id a=number of dependences
  OmpTaskDependence,          // u0=source task id u2=sink task id
  OmpMutexAcquire,            // sub=ompt_mutex_t u0=wait id u1=kernel a=implementation u2=hint u3=codeptr
  OmpMutexAcquired,           // sub=ompt_mutex_t u0=wait id u1=kernel
  OmpMutexReleased,           // sub=ompt_mutex_t u0=wait id u1=kernel
  OmpNestLock,                // sub=ompt_scope_endpoint_t (1 begin, 2 end) u0=wait id u1=kernel
  OmpLockInit,                // sub=ompt_mutex_t u0=wait id a=implementation u2=hint u3=codeptr
  OmpLockDestroy,             // sub=ompt_mutex_t u0=wait id u3=codeptr
  OmpCancel,                  // a=flags u1=kernel u2=codeptr
  OmpFlush,                   // u1=kernel u2=codeptr
  OmpControlTool,             // a=command u0=modifier u2=codeptr
  OmpError,                   // the error directive (at execution): sub=ompt_severity_t a=message (interned)
                              //   u1=kernel u2=message length as the runtime gave it u3=codeptr
  // Target offload (host side: target callbacks). Device numbers are stored as int16 pairs in a
  // (src << 16 | dst, two's complement) or as the int device number in a, as the runtime reports
  // them (the timeline tells the host apart). Target ids and host op ids are ours (IdCounters)
  // with the EMI callbacks, the runtime's with the 5.0 (non-EMI) ones.
  OmpTargetBegin,             // sub=ompt_target_t a=device num u0=target id u1=kernel u2=deep copy id u3=codeptr
  OmpTargetEnd,               // sub=ompt_target_t a=device num u0=target id u1=kernel u2=deep copy id
  OmpDataOpBegin,             // sub=ompt_target_data_op_t a=src<<16|dst u0=host op id u1=kernel u2=bytes
                              //   u3=target id (0: none) u4=deep copy id u5=destination address (for
                              //   delete and delete_async, which have none, the source: the freed block)
  OmpDataOpEnd,               // same fields as OmpDataOpBegin
  OmpDataOp,                  // a data op reported as one point (non-EMI runtimes); same fields
  OmpSubmitBegin,             // a=requested teams u0=host op id u1=kernel u3=target id
  OmpSubmitEnd,               // same fields
  OmpSubmit,                  // a submit reported as one point (non-EMI runtimes); same fields
  OmpDeviceInit,              // a=device num u0=type name (interned) u1=1 if device tracing is used
  OmpDeviceFinalize,          // a=device num
  OmpDeviceLoad,              // a=device num u0=file name (interned) u1=host addr u2=device addr u3=bytes u4=module id
  OmpDeviceUnload,            // a=device num u4=module id
  // A record from the device tracing interface, times already translated to host ns.
  OmpDeviceRecord,            // sub=ompt_callbacks_t of the record a=device num u0=host op id u1=target id
                              //   u2=start host ns u3=end host ns (0: a point) u4=bytes or teams u5=op kind
                              //   by record: target(_emi) u0=0 u4=ompt_scope_endpoint_t u5=ompt_target_t;
                              //   data op u4=bytes u5=ompt_target_data_op_t; submit u4=requested teams
                              //   u5=granted teams
  OmpLast,
};

enum class KernelKind : std::uint16_t { ParallelFor = 0, ParallelReduce = 1, ParallelScan = 2 };

// 64 bytes, one cache line: wide enough for a deep copy in one record, so no event ever spans two.
struct alignas(64) Record {
  std::uint64_t tick;  // raw clock ticks; converted to ns at the end
  Ev type;
  std::uint16_t sub;
  std::uint32_t a;
  std::uint64_t u[6];
};
static_assert(sizeof(Record) == 64, "records must stay one cache line");
static_assert(static_cast<int>(Ev::OmpLast) < 128, "the raw trace stores a record type in one byte");

}  // namespace kob
