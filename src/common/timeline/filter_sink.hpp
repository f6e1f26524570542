// --include / --exclude on the span stream: hands everything on to another sink except the Kokkos
// kernels and regions whose names the patterns drop, and counts those.
#pragma once

#include <cstdint>
#include <string>

#include "common/timeline/name_filter.hpp"
#include "common/timeline/span_sink.hpp"

namespace kob {

class FilterSink : public SpanSink {
 public:
  // Empty patterns drop nothing. `next` must outlive this sink.
  FilterSink(SpanSink& next, const std::string& include, const std::string& exclude);

  void kernel(const KernelSpan& k) override;
  void fence(const FenceSpan& f) override { next_.fence(f); }
  void mpi(const MpiSpan& m) override { next_.mpi(m); }
  void tool_flush(const ToolFlushSpan& f) override { next_.tool_flush(f); }
  void region(const RegionSpan& r) override;
  void section(const SectionSpan& s) override { next_.section(s); }
  void deep_copy(const DeepCopySpan& d) override { next_.deep_copy(d); }
  void memory(const MemoryEvent& m) override { next_.memory(m); }
  void instant(const InstantEvent& e) override { next_.instant(e); }
  void dual_view(const DualViewEvent& d) override { next_.dual_view(d); }
  void omp_parallel(const OmpParallelSpan& p) override { next_.omp_parallel(p); }
  void omp_implicit_task(const OmpImplicitTaskSpan& i) override { next_.omp_implicit_task(i); }
  void omp_work(const OmpWorkSpan& w) override { next_.omp_work(w); }
  void omp_sync(const OmpSyncSpan& y) override { next_.omp_sync(y); }
  void omp_task_create(const OmpTaskCreate& c) override { next_.omp_task_create(c); }
  void omp_task(const OmpTaskSpan& k) override { next_.omp_task(k); }
  void omp_mutex(const OmpMutexSpan& m) override { next_.omp_mutex(m); }
  void omp_instant(const OmpInstant& e) override { next_.omp_instant(e); }
  void omp_target(const OmpTargetSpan& x) override { next_.omp_target(x); }
  void omp_data_op(const OmpDataOpSpan& x) override { next_.omp_data_op(x); }
  void omp_submit(const OmpSubmitSpan& x) override { next_.omp_submit(x); }
  void omp_device_load(const OmpDeviceLoad& x) override { next_.omp_device_load(x); }
  void omp_device_op(const OmpDeviceOp& x) override { next_.omp_device_op(x); }
  // Hands on `rest` with filtered_kernels / filtered_regions raised by the counts dropped here.
  void finish(const Timeline& rest) override;

  std::uint64_t filtered_kernels() const { return kernels_; }
  std::uint64_t filtered_regions() const { return regions_; }

 private:
  SpanSink& next_;
  NameFilter filter_;
  std::uint64_t kernels_ = 0, regions_ = 0;
};

}  // namespace kob
