// The trace formats in bounded memory: the span stream is collected into a window that is written
// (TraceProducer::window) and dropped as soon as it is big enough and the records reach a point
// where cutting there changes nothing in the trace. Memory then follows the window size and what
// is open, not the run length.
//
// A cut is allowed when (TimelineBuilder::can_cut) nothing is open that an arrow or a hold lane
// needs whole (a kernel, fence, deep copy, target construct or explicit task; and never
// with device tracing, whose records come late). Two kinds of span still cross a cut and go into
// a later window: those open there (the initial task, Kokkos regions, an enclosing parallel
// region, a worker's implicit task whose end libomp reports at the next region, a lock waited
// for or held), and those held
// back (held()): a parallel region whose workers' implicit tasks are still to come (the arrows to
// them start on it), the kernel that opened it with every region that kernel opened, and the
// implicit tasks of a region open or held back. The trace is then the same as in one window as
// long as no span already written overlaps one of them without one holding the other (on the
// same track); where one would, the cut waits for a later point.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/timeline/span_sink.hpp"
#include "common/timeline/timeline_builder.hpp"
#include "common/formats/trace_producer.hpp"

namespace kob {

// The window being collected is the TimelineCollector's timeline (t_).
class TraceWindow : public TimelineCollector, public TimelineBuilder::Poller {
 public:
  static constexpr std::size_t kDefaultSpans = std::size_t(1) << 16;  // about 10 MiB of window
  // min_spans: a window is written once it holds this many spans (and a cut is allowed).
  // background: the windows are written (sorted, produced, encoded) by a thread of the window's
  // own while the records are read on, one window at a time: two windows in memory. Without a
  // thread (it cannot be made), they are written in the caller's thread.
  explicit TraceWindow(TraceProducer& producer, std::size_t min_spans = kDefaultSpans, bool background = false);
  ~TraceWindow() override;
  TraceWindow(const TraceWindow&) = delete;
  TraceWindow& operator=(const TraceWindow&) = delete;

  // The spans come as TimelineCollector keeps them (into t_); task creates are renumbered.
  void omp_task(const OmpTaskSpan& s) override;
  // Writes what is left as the last window.
  void finish(const Timeline& rest) override;

  // Between two records: writes the window if it is big enough and the records allow a cut.
  std::uint32_t poll(TimelineBuilder& b) override;

  // After finish: the tracks not used yet and the end of the trace.
  bool end(const std::string& other_data_json);

  std::size_t windows() const { return windows_; }
  std::size_t largest_window() const { return largest_; }

 private:
  void write_window(const Timeline& known);
  void produce(Timeline& w);  // sort, write, empty
  void writer_loop();
  void wait_idle();
  bool safe_to_cut();
  void hold_back();
  // Whether a span goes to the next window (safe_to_cut decides for the window being cut): a
  // region whose workers' ends are still to come, the kernel that opened one, an implicit task
  // of a region open or held back. Other spans never are.
  bool held(const OmpParallelSpan& p) const { return held_teams_.count(p.id) != 0; }
  bool held(const KernelSpan& k) const { return held_kernels_.count(k.id) != 0; }
  bool held(const OmpImplicitTaskSpan& i) const { return !i.initial && open_teams_.count(i.parallel_id) != 0; }
  template <class S>
  bool held(const S&) const {
    return false;
  }

  TraceProducer& producer_;
  std::size_t min_spans_;
  Timeline held_;        // spans held back from the window being written, for the next one
  Timeline rest_;        // the final tracks and devices (finish)
  std::size_t creates_before_ = 0;  // task creates in the windows written
  std::size_t windows_ = 0, largest_ = 0;
  std::size_t next_try_ = 0;         // the window size at which a cut is tried next
  // The writer thread (background): it takes `handed_` when `has_work_`, and says when it is done.
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  Timeline handed_;
  bool has_work_ = false, busy_ = false, stop_ = false;
  bool writer_failed_ = false;  // written by the writer, read after wait_idle
  builder::OpenState open_;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> late_;  // per track: (start, end) of spans that cross the cut
  std::unordered_set<std::uint64_t> held_teams_, held_kernels_;  // parallel region ids, kernel ids
  std::unordered_set<std::uint64_t> open_teams_;  // parallel regions open or held back: their implicit tasks wait
};

}  // namespace kob
