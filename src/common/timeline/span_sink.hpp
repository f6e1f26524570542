// The run as a stream: what the timeline builder hands on as soon as each piece is final, so that
// the summary and the trace writers never need the whole run in memory. Timeline (timeline.hpp)
// is one receiver of this stream: it keeps everything (tests, small runs); the summary folds it.
#pragma once

#include "common/timeline/timeline.hpp"

namespace kob {

// Each span or instant is given exactly once, with every field final (as Timeline holds it after
// build_timeline), the moment it is final:
// - spans normally at their end record, so in roughly end order: a span nested in another on
//   the same thread comes before it (regions, kernels, syncs inside implicit tasks...);
// - a worker's implicit task (and the sync regions and waits at its end) only when libomp reports
//   its end, which is when the next parallel region starts: after its parallel region and after
//   the Kokkos kernel that opened the region;
// - spans still open at the end of the records, at finish() time (before finish() is called);
// - instants, memory events, task creates and device loads in time order (ties: lower track first).
// Task creates are numbered 0, 1, ... in the order given; OmpTaskSpan::create is that number.
// OmpParallelSpan::team_size is final when the region is given (its implicit tasks have all begun).
// The Timeline given to finish() holds everything that is not a span or an instant: tracks (final:
// hidden-helper marks, omp_wait_ns, record counts, dropped), omp_devices, t0, t_end, dropped, lost,
// run_end, cut_short, cut_spans, problems, omp_records, omp_target_records, omp_tasks_completed,
// omp_tasks_cancelled, omp_tasks_discarded, filtered_kernels, filtered_regions; its span and
// instant vectors are empty.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void kernel(const KernelSpan&) {}
  virtual void fence(const FenceSpan&) {}
  virtual void region(const RegionSpan&) {}
  virtual void section(const SectionSpan&) {}
  virtual void deep_copy(const DeepCopySpan&) {}
  virtual void memory(const MemoryEvent&) {}
  virtual void instant(const InstantEvent&) {}
  virtual void dual_view(const DualViewEvent&) {}
  virtual void omp_parallel(const OmpParallelSpan&) {}
  virtual void omp_implicit_task(const OmpImplicitTaskSpan&) {}
  virtual void omp_work(const OmpWorkSpan&) {}
  virtual void omp_sync(const OmpSyncSpan&) {}
  virtual void omp_task_create(const OmpTaskCreate&) {}
  virtual void omp_task(const OmpTaskSpan&) {}
  virtual void omp_mutex(const OmpMutexSpan&) {}
  virtual void omp_instant(const OmpInstant&) {}
  virtual void omp_target(const OmpTargetSpan&) {}
  virtual void omp_data_op(const OmpDataOpSpan&) {}
  virtual void omp_submit(const OmpSubmitSpan&) {}
  virtual void omp_device_load(const OmpDeviceLoad&) {}
  virtual void omp_device_op(const OmpDeviceOp&) {}
  virtual void mpi(const MpiSpan&) {}
  virtual void tool_flush(const ToolFlushSpan&) {}
  virtual void finish(const Timeline& rest) { (void)rest; }
};

// Gives a whole Timeline to a sink in the order above (as far as a finished Timeline allows:
// spans by end, then by start descending so that what is nested comes first; instants by time;
// worker implicit tasks after their parallel region and its kernel). For tests of receivers,
// and for receivers fed from a Timeline built some other way.
void replay_timeline(const Timeline& t, SpanSink& sink);

}  // namespace kob
