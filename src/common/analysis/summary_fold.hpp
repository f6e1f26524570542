// The summary computed as a fold over the span stream (span_sink.hpp): per-name statistics plus
// the state of joins not complete yet, so that its memory follows the open work and the number of
// distinct names, not the length of the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/timeline/span_sink.hpp"
#include "common/analysis/call_times.hpp"
#include "common/analysis/summary.hpp"

namespace kob {

class SummaryFold : public SpanSink {
 public:
  SummaryFold();
  ~SummaryFold() override;
  SummaryFold(const SummaryFold&) = delete;
  SummaryFold& operator=(const SummaryFold&) = delete;

  void kernel(const KernelSpan&) override;
  void fence(const FenceSpan&) override;
  void mpi(const MpiSpan&) override;
  void region(const RegionSpan&) override;
  void section(const SectionSpan&) override;
  void deep_copy(const DeepCopySpan&) override;
  void memory(const MemoryEvent&) override;
  void instant(const InstantEvent&) override;
  void dual_view(const DualViewEvent&) override;
  void omp_parallel(const OmpParallelSpan&) override;
  void omp_implicit_task(const OmpImplicitTaskSpan&) override;
  void omp_work(const OmpWorkSpan&) override;
  void omp_sync(const OmpSyncSpan&) override;
  void omp_task_create(const OmpTaskCreate&) override;
  void omp_task(const OmpTaskSpan&) override;
  void omp_mutex(const OmpMutexSpan&) override;
  void omp_instant(const OmpInstant&) override;
  void omp_target(const OmpTargetSpan&) override;
  void omp_data_op(const OmpDataOpSpan&) override;
  void omp_submit(const OmpSubmitSpan&) override;
  void omp_device_op(const OmpDeviceOp&) override;
  void finish(const Timeline& rest) override;

  // Resolves the code addresses of OpenMP constructs outside Kokkos kernels for the constructs
  // table (OmpSummary::constructs); it must outlive finish(). nullptr (the default): no table,
  // every other figure the same.
  void set_sources(SourceResolver* sources);
  // The OpenMP threads the program could have had (OMP_NUM_THREADS, else the processors; 0:
  // unknown): OmpSummary::available_threads, for serialized_region.
  void set_available_threads(std::uint32_t n) { available_threads_ = n; }
  // Every call's duration per kernel, region and construct into *out at finish() (kob diff's noise
  // model); nullptr (the default): sums only. It must outlive finish().
  void set_call_times(CallTimes* out);

  // The figures; valid after finish().
  Summary result() const { return summary_; }

  // Entries held for joins not complete yet (parallel regions waiting for implicit tasks, figures
  // waiting for their kernel, regions waiting for the region that holds them, submits and data ops
  // waiting for their target region or deep copy). Tests: stays small whatever the run length.
  std::size_t pending() const;

 private:
  // The per-thread engine (summary_engine.cpp) puts the figures it summed per thread and joined
  // by id straight into the state, and finishes through finish().
  friend struct SummaryEngineAccess;
  struct State;
  void target_copy(const DeepCopySpan& d);              // summary_fold_target.cpp
  void finish_omp(const Timeline& t, Summary& s);       // summary_fold_omp.cpp
  void finish_target(const Timeline& t, Summary& s);    // summary_fold_target.cpp
  std::unique_ptr<State> s_;
  Summary summary_;
  std::uint32_t available_threads_ = 0;
  CallTimes* call_times_ = nullptr;
};

}  // namespace kob
