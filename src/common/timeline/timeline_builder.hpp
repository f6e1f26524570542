// The streaming timeline builder: reads every thread's records side by side in time order and
// hands each span, instant and memory event to a SpanSink as soon as it is final. What it keeps is
// what is open (spans begun and not ended, and the few cross-thread links still needed), so its
// memory does not grow with the run length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/timeline/builder_parts.hpp"
#include "common/timeline/span_sink.hpp"
#include "common/timeline/thread_source.hpp"

namespace kob {

class TimelineBuilder {
 public:
  // initial_device_num: the host's device number as given to the OMPT initializer (-1: unknown).
  // omp_runtime_code: the OpenMP runtime's code (the run's fact kob/omp_runtime_code).
  TimelineBuilder(SpanSink& sink, int initial_device_num = -1, CodeRange omp_runtime_code = {});
  ~TimelineBuilder();
  TimelineBuilder(const TimelineBuilder&) = delete;
  TimelineBuilder& operator=(const TimelineBuilder&) = delete;

  // A thread (its identity and losses); its track is the number of threads added before it.
  std::uint32_t add_thread(const ThreadSource& th);
  // n records of one track in a row, their times in ns on the time line (read_threads has them
  // from its merge); records come in time order over all tracks (see read_threads).
  // A track's events [begin, end), stepped with Event::next(), in their order.
  void record_run(std::uint32_t track, const Event* begin, const Event* end);
  // The records are over. ended_cleanly false: the run was cut short (crash, signal, _exit):
  // spans still open are cut at their own thread's last event instead of running to the end.
  // run_end: ns when the outputs were made (0: unknown). Hands on what is still open, then calls
  // the sink's finish().
  void finish(bool ended_cleanly, std::uint64_t run_end = 0);

  // Entries kept for spans still open and cross-thread links (tests: bounded by what is open).
  std::size_t kept() const;

  // For a trace written a window at a time (trace_window.hpp). What is open now:
  void open_state(builder::OpenState& out) const;
  // The run as known so far: its tracks and omp_devices; t0 the earliest time read so far. Not
  // const: it brings those fields of the builder's Timeline up to date first.
  const Timeline& so_far();
  // Whether OpenState::can_cut would be true now (cheap: nothing is collected).
  bool can_cut() const;
  // Something to call between two records; poll returns how many records to read before the
  // next call (at least 1).
  class Poller {
   public:
    virtual ~Poller() = default;
    virtual std::uint32_t poll(TimelineBuilder& b) = 0;
  };
  void set_poller(Poller* p);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Poller* poller_ = nullptr;
  std::uint32_t poll_in_ = 0;
};

// Sorts a Timeline's span vectors as Timeline documents (by start, longer first; equal regions by
// depth); the order they were given in breaks the remaining ties.
void sort_spans(Timeline& t);

// build_timeline's receiver: keeps everything, then sorts it as Timeline documents.
class TimelineCollector : public SpanSink {
 public:
  void kernel(const KernelSpan& s) override { t_.kernels.push_back(s); }
  void fence(const FenceSpan& s) override { t_.fences.push_back(s); }
  void mpi(const MpiSpan& s) override { t_.mpi_calls.push_back(s); }
  void tool_flush(const ToolFlushSpan& s) override { t_.tool_flushes.push_back(s); }
  void region(const RegionSpan& s) override { t_.regions.push_back(s); }
  void section(const SectionSpan& s) override { t_.sections.push_back(s); }
  void deep_copy(const DeepCopySpan& s) override { t_.deep_copies.push_back(s); }
  void memory(const MemoryEvent& s) override { t_.memory.push_back(s); }
  void instant(const InstantEvent& s) override { t_.events.push_back(s); }
  void dual_view(const DualViewEvent& s) override { t_.dual_views.push_back(s); }
  void omp_parallel(const OmpParallelSpan& s) override { t_.omp_parallels.push_back(s); }
  void omp_implicit_task(const OmpImplicitTaskSpan& s) override { t_.omp_implicit_tasks.push_back(s); }
  void omp_work(const OmpWorkSpan& s) override { t_.omp_works.push_back(s); }
  void omp_sync(const OmpSyncSpan& s) override { t_.omp_syncs.push_back(s); }
  void omp_task_create(const OmpTaskCreate& s) override { t_.omp_task_creates.push_back(s); }
  void omp_task(const OmpTaskSpan& s) override { t_.omp_tasks.push_back(s); }
  void omp_mutex(const OmpMutexSpan& s) override { t_.omp_mutexes.push_back(s); }
  void omp_instant(const OmpInstant& s) override { t_.omp_instants.push_back(s); }
  void omp_target(const OmpTargetSpan& s) override { t_.omp_targets.push_back(s); }
  void omp_data_op(const OmpDataOpSpan& s) override { t_.omp_data_ops.push_back(s); }
  void omp_submit(const OmpSubmitSpan& s) override { t_.omp_submits.push_back(s); }
  void omp_device_load(const OmpDeviceLoad& s) override { t_.omp_device_loads.push_back(s); }
  void omp_device_op(const OmpDeviceOp& s) override { t_.omp_device_ops.push_back(s); }
  void finish(const Timeline& rest) override;
  Timeline take() { return std::move(t_); }

 protected:
  Timeline t_;
};

}  // namespace kob
