// Gives the span stream to two receivers (the summary fold and, when a trace is asked for, the
// timeline the trace writers read).
#pragma once

#include "common/timeline/span_sink.hpp"

namespace kob {

class TeeSink : public SpanSink {
 public:
  TeeSink(SpanSink& a, SpanSink& b) : a_(a), b_(b) {}
  void kernel(const KernelSpan& s) override { a_.kernel(s), b_.kernel(s); }
  void fence(const FenceSpan& s) override { a_.fence(s), b_.fence(s); }
  void mpi(const MpiSpan& s) override { a_.mpi(s), b_.mpi(s); }
  void tool_flush(const ToolFlushSpan& s) override { a_.tool_flush(s), b_.tool_flush(s); }
  void region(const RegionSpan& s) override { a_.region(s), b_.region(s); }
  void section(const SectionSpan& s) override { a_.section(s), b_.section(s); }
  void deep_copy(const DeepCopySpan& s) override { a_.deep_copy(s), b_.deep_copy(s); }
  void memory(const MemoryEvent& s) override { a_.memory(s), b_.memory(s); }
  void instant(const InstantEvent& s) override { a_.instant(s), b_.instant(s); }
  void dual_view(const DualViewEvent& s) override { a_.dual_view(s), b_.dual_view(s); }
  void omp_parallel(const OmpParallelSpan& s) override { a_.omp_parallel(s), b_.omp_parallel(s); }
  void omp_implicit_task(const OmpImplicitTaskSpan& s) override { a_.omp_implicit_task(s), b_.omp_implicit_task(s); }
  void omp_work(const OmpWorkSpan& s) override { a_.omp_work(s), b_.omp_work(s); }
  void omp_sync(const OmpSyncSpan& s) override { a_.omp_sync(s), b_.omp_sync(s); }
  void omp_task_create(const OmpTaskCreate& s) override { a_.omp_task_create(s), b_.omp_task_create(s); }
  void omp_task(const OmpTaskSpan& s) override { a_.omp_task(s), b_.omp_task(s); }
  void omp_mutex(const OmpMutexSpan& s) override { a_.omp_mutex(s), b_.omp_mutex(s); }
  void omp_instant(const OmpInstant& s) override { a_.omp_instant(s), b_.omp_instant(s); }
  void omp_target(const OmpTargetSpan& s) override { a_.omp_target(s), b_.omp_target(s); }
  void omp_data_op(const OmpDataOpSpan& s) override { a_.omp_data_op(s), b_.omp_data_op(s); }
  void omp_submit(const OmpSubmitSpan& s) override { a_.omp_submit(s), b_.omp_submit(s); }
  void omp_device_load(const OmpDeviceLoad& s) override { a_.omp_device_load(s), b_.omp_device_load(s); }
  void omp_device_op(const OmpDeviceOp& s) override { a_.omp_device_op(s), b_.omp_device_op(s); }
  void finish(const Timeline& rest) override { a_.finish(rest), b_.finish(rest); }

 private:
  SpanSink& a_;
  SpanSink& b_;
};

}  // namespace kob
