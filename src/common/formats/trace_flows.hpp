// The correlation arrows of a trace: which Kokkos or OpenMP event caused which, as flows between
// two events, numbered 1, 2, ... in a fixed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/timeline/timeline.hpp"
#include "common/formats/trace_events.hpp"

namespace kob::trace {

// The kinds of span a trace shows; equal spans on one track nest in this order (first outermost).
// OmpTaskCreate (an instant) only names a flow's end.
enum class SpanKind : std::uint8_t {
  Kernel, Fence, Region, DeepCopy, Mpi, OmpTarget, OmpDataOp, OmpSubmit, OmpParallel, OmpImplicitTask, OmpWork, OmpSync,
  OmpTask, OmpMutex, ToolFlush, OmpDevice, OmpTaskCreate
};

// Calls fn(vector, kind) for each of a Timeline's span vectors on host threads' tracks, in
// SpanKind order (device records aside: their track is their device's).
template <class T, class Fn>
void for_each_thread_spans(T& t, Fn&& fn) {
  fn(t.kernels, SpanKind::Kernel);
  fn(t.fences, SpanKind::Fence);
  fn(t.regions, SpanKind::Region);
  fn(t.deep_copies, SpanKind::DeepCopy);
  fn(t.mpi_calls, SpanKind::Mpi);
  fn(t.omp_targets, SpanKind::OmpTarget);
  fn(t.omp_data_ops, SpanKind::OmpDataOp);
  fn(t.omp_submits, SpanKind::OmpSubmit);
  fn(t.omp_parallels, SpanKind::OmpParallel);
  fn(t.omp_implicit_tasks, SpanKind::OmpImplicitTask);
  fn(t.omp_works, SpanKind::OmpWork);
  fn(t.omp_syncs, SpanKind::OmpSync);
  fn(t.omp_tasks, SpanKind::OmpTask);
  fn(t.omp_mutexes, SpanKind::OmpMutex);
  fn(t.tool_flushes, SpanKind::ToolFlush);
}

class TraceFlows {
 public:
  TraceFlows() = default;
  // device_tracks: the track index of each device number. Ids are base + 1, base + 2, ...
  TraceFlows(const Timeline& t, const std::unordered_map<int, std::uint32_t>& device_tracks, std::uint64_t base = 0) {
    build(t, device_tracks, base);
  }
  // The flows of a window, in place of the last one's: the arrays keep their storage from window
  // to window (fresh pages for each window's arrays were a tenth of a conversion's time).
  void build(const Timeline& t, const std::unordered_map<int, std::uint32_t>& device_tracks, std::uint64_t base = 0);

  // Ids to positions in a vector of the Timeline (trace_flows.cpp).
  struct IdEntry {
    std::uint64_t id;
    std::size_t at;
  };

  const std::vector<Flow>& flows() const { return flows_; }
  // The ids of the flows that leave and that reach the event (kind, index), ascending; both stay
  // valid as long as this object.
  void at(SpanKind kind, std::size_t index, std::span<const std::uint64_t>& out, std::span<const std::uint64_t>& in) const;

 private:
  static constexpr std::size_t kKinds = static_cast<std::size_t>(SpanKind::OmpTaskCreate) + 1;
  // One slot per event that can hold an arrow end: kind_base_[kind] + index.
  std::size_t slot(SpanKind kind, std::size_t index) const { return kind_base_[static_cast<std::size_t>(kind)] + index; }
  void add(const char* name, SpanKind from_kind, std::size_t from, std::uint32_t from_track, std::uint64_t from_ts,
           SpanKind to_kind, std::size_t to, std::uint32_t to_track, std::uint64_t to_ts);
  void index_ends();
  std::uint64_t base_ = 0;
  std::vector<Flow> flows_;
  std::vector<std::size_t> from_slot_, to_slot_;  // per flow, while building
  std::size_t kind_base_[kKinds + 1] = {};
  // Per slot, its flows: out_ids_[out_at_[s] .. out_at_[s + 1]) (the same for in): a lookup is
  // two array reads, no search and no copy.
  std::vector<std::uint32_t> out_at_, in_at_;
  std::vector<std::uint64_t> out_ids_, in_ids_;
  std::vector<std::uint32_t> out_next_, in_next_;
  std::vector<IdEntry> ids_[5];  // the id indexes' storage: kernels, parallels, targets, copies, host ops
};

}  // namespace kob::trace
