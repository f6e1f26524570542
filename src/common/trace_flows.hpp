// The correlation arrows of a trace: which Kokkos or OpenMP event caused which, as flows between
// two events, numbered 1, 2, ... in a fixed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/timeline.hpp"
#include "common/trace_events.hpp"

namespace kob::trace {

// The kinds of span a trace shows; equal spans on one track nest in this order (first outermost).
// OmpTaskCreate (an instant) only names a flow's end.
enum class SpanKind : std::uint8_t {
  Kernel, Fence, Region, DeepCopy, OmpTarget, OmpDataOp, OmpSubmit, OmpParallel, OmpImplicitTask, OmpWork, OmpSync,
  OmpTask, OmpMutex, OmpDevice, OmpTaskCreate
};

class TraceFlows {
 public:
  // device_tracks: the track index of each device number.
  TraceFlows(const Timeline& t, const std::unordered_map<int, std::uint32_t>& device_tracks);

  const std::vector<Flow>& flows() const { return flows_; }
  // The ids of the flows that leave and that reach the event (kind, index); both stay valid
  // until the next call.
  void at(SpanKind kind, std::size_t index, std::span<const std::uint64_t>& out, std::span<const std::uint64_t>& in);

 private:
  struct End {
    std::uint64_t key;  // kind << 56 | index
    std::uint64_t id;
    bool out;
  };
  void add(const char* name, SpanKind from_kind, std::size_t from, std::uint32_t from_track, std::uint64_t from_ts,
           SpanKind to_kind, std::size_t to, std::uint32_t to_track, std::uint64_t to_ts);
  std::vector<Flow> flows_;
  std::vector<End> ends_;  // sorted by key after construction
  std::vector<std::uint64_t> out_, in_;
};

}  // namespace kob::trace
