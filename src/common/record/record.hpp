// One fixed-size event record: the only thing the hot path writes.
#pragma once

#include <cstdint>

namespace kob {

// Record types. Begin/end pairs are matched at the end of the run, never on the hot path. What
// each type's fields hold: the struct named beside it in record_fields.hpp (fields::Kernel...).
enum class Ev : std::uint16_t {
  None = 0,
  // Kokkos
  KernelBegin,     // Kernel
  KernelEnd,       // Kernel (id)
  FenceBegin,      // Fence
  FenceEnd,        // Fence (id)
  RegionPush,      // Named
  RegionPop,       // no field
  SectionCreate,   // Section
  SectionStart,    // Section (id)
  SectionStop,     // Section (id)
  SectionDestroy,  // Section (id)
  Alloc,           // Memory
  Dealloc,         // Memory
  DeepCopyBegin,   // DeepCopy
  DeepCopyEnd,     // DeepCopy (id)
  ProfileEvent,    // Named
  DualView,        // DualView
  // MPI (the PMPI layer libkob_mpi_<family>.so, common/session/mpi_bridge.hpp; the calls: mpi_calls.hpp): a blocking call on this thread.
  MpiBegin,        // Mpi (call)
  MpiEnd,          // Mpi
  // The tool itself: this thread copied its own full ring slots to the raw trace (the writer thread
  // was behind), from the record's tick to its end; the record follows the copy.
  ToolFlush,       // ToolFlush
  // OpenMP (OMPT)
  OmpFirst = 64,
  OmpThreadBegin = OmpFirst,  // OmpThread
  OmpThreadEnd,               // no field
  OmpParallelBegin,           // OmpParallel
  OmpParallelEnd,             // OmpParallel
  OmpImplicitTaskBegin,       // OmpImplicitTask
  OmpImplicitTaskEnd,         // OmpImplicitTask
  OmpWorkBegin,               // OmpWork
  OmpWorkEnd,                 // OmpWork
  OmpMaskedBegin,             // OmpMasked
  OmpMaskedEnd,               // OmpMasked
  OmpDispatch,                // OmpDispatch
  OmpSyncBegin,               // OmpSync (may be folded: record_fold.hpp)
  OmpSyncEnd,                 // OmpSync
  OmpSyncWaitBegin,           // OmpSync
  OmpSyncWaitEnd,             // OmpSync
  OmpTaskCreate,              // OmpTaskCreate
  OmpTaskSchedule,            // OmpTaskSchedule
  OmpDependences,             // OmpDependences
  OmpTaskDependence,          // OmpTaskDependence
  OmpMutexAcquire,            // OmpMutex
  OmpMutexAcquired,           // OmpMutex
  OmpMutexReleased,           // OmpMutex
  OmpNestLock,                // OmpNestLock
  OmpLockInit,                // OmpMutex
  OmpLockDestroy,             // OmpMutex
  OmpCancel,                  // OmpCancel
  OmpFlush,                   // OmpFlush
  OmpControlTool,             // OmpControlTool
  OmpError,                   // OmpError
  // Target offload (host side: target callbacks)
  OmpTargetBegin,             // OmpTarget
  OmpTargetEnd,               // OmpTarget
  OmpDataOpBegin,             // OmpDataOp
  OmpDataOpEnd,               // OmpDataOp
  OmpDataOp,                  // OmpDataOp
  OmpSubmitBegin,             // OmpSubmit
  OmpSubmitEnd,               // OmpSubmit
  OmpSubmit,                  // OmpSubmit
  OmpDeviceInit,              // OmpDeviceInit
  OmpDeviceFinalize,          // OnDevice
  OmpDeviceLoad,              // OmpDeviceLoad
  OmpDeviceUnload,            // OmpDeviceLoad
  // A record from the device tracing interface, times already translated to host ns.
  OmpDeviceRecord,            // OmpDeviceRecord
  OmpLast,
};

enum class KernelKind : std::uint16_t { ParallelFor = 0, ParallelReduce = 1, ParallelScan = 2 };

// 64 bytes, one cache line: wide enough for a deep copy in one record, so no event ever spans two.
struct alignas(64) Record {
  std::uint64_t tick;  // raw clock ticks; converted to ns at the end
  Ev type;
  // The payload slots: named per type in record_fields.hpp, handled as slots only by the record
  // stage (codec, writer, fold).
  std::uint16_t sub;
  std::uint32_t a;
  std::uint64_t u[6];
};
static_assert(sizeof(Record) == 64, "records must stay one cache line");
static_assert(static_cast<int>(Ev::OmpLast) < 128, "the raw trace stores a record type in one byte");
static_assert(static_cast<int>(Ev::ToolFlush) == 19, "docs/raw-format.md gives the flush record's type");

}  // namespace kob
