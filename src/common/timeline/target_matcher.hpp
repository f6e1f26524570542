// Target offload records, in time order: targets, data ops and submits pair by id (target id, host
// op id) across threads; device records go to their device. A data op is linked to the Kokkos
// allocation whose block holds its address (AllocLinker) before it is handed on.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/timeline/builder_parts.hpp"
#include "common/record/event.hpp"
#include "common/record/record.hpp"
#include "common/support/pooled_map.hpp"

namespace kob::builder {

// Kokkos allocations get their ids (1, 2, ... in time order). A data op names the Kokkos
// allocation whose block holds its address: Kokkos 3.x reports the block with its 128-byte
// SharedAllocationHeader in front (ptr) and the data size (bytes), so data lies at ptr + 128. Of
// the blocks there, the one live at the op's start; for an alloc op, the next one reported (Kokkos
// reports after allocating); for a delete, the one freed last before it (Kokkos reports before
// freeing). Freed blocks are remembered for a while (kKeepFreed), alloc ops wait for the next
// allocation for a while (kWaitAllocs allocations).
class AllocLinker {
 public:
  explicit AllocLinker(SpanSink& out) : out_(out) {}
  // A Kokkos allocation or deallocation (time order); sets m.id for an allocation.
  void memory(MemoryEvent& m);
  // A finished data op: handed on now, or once the allocation it waits for is known.
  void data_op(const OmpDataOpSpan& d);
  void finish();
  std::size_t kept() const { return blocks_.size() + waiting_.size(); }
  bool waiting() const { return !waiting_.empty(); }

 private:
  static constexpr std::size_t kKeepFreed = 4096, kWaitAllocs = 64;
  static constexpr std::uint64_t kHeader = 128, kNever = ~std::uint64_t(0);
  struct Block {
    std::uint64_t ptr = 0, end = 0, alloc = 0, free = kNever, id = 0;
  };
  struct Waiting {
    OmpDataOpSpan op;
    std::uint64_t allocs_seen = 0;  // allocations reported since it arrived
  };
  // pick: 0 none, else the block's id. wait: an alloc op with nothing live there yet.
  std::uint64_t pick(const OmpDataOpSpan& d, bool& wait) const;
  void give(OmpDataOpSpan d, std::uint64_t id);

  SpanSink& out_;
  std::multimap<std::uint64_t, Block> blocks_;  // by ptr: live blocks, and freed ones for a while
  std::unordered_map<std::uint64_t, std::vector<std::multimap<std::uint64_t, Block>::iterator>> live_;  // ptr -> not yet freed
  std::deque<std::multimap<std::uint64_t, Block>::iterator> freed_;  // oldest freed first
  std::deque<Waiting> waiting_;
  std::uint64_t next_id_ = 0;
};

class TargetMatcher {
 public:
  TargetMatcher(Context& c, int initial_device_num) : c_(c), initial_device_num_(initial_device_num), linker_(c.out) {}

  static bool handles(Ev type) { return type >= Ev::OmpTargetBegin && type < Ev::OmpLast; }
  void record(const Event& r, std::uint64_t ns, std::uint32_t track);
  void memory(MemoryEvent& m) { linker_.memory(m); }
  void finish(bool lost_ends, const OpenEnd& open_end);
  std::size_t kept() const { return linker_.kept(); }
  // No target construct, data op or submit open or waiting, and no device traced.
  bool can_cut() const;
  // A target construct, data op or submit begun and not ended.
  bool spans_open() const { return !open_targets_.empty() || !open_ops_.empty() || !open_submits_.empty(); }
  // The devices known so far, by number.
  void devices(std::vector<OmpDevice>& out) const;

 private:
  // record(), by family: target regions, data ops, submits, and the device's own records.
  void target_record(const Event& r, std::uint64_t ns, std::uint32_t track);
  void data_op_record(const Event& r, std::uint64_t ns, std::uint32_t track);
  void submit_record(const Event& r, std::uint64_t ns, std::uint32_t track);
  void device_record(const Event& r, std::uint64_t ns, std::uint32_t track);
  OmpDevice& device(int num);
  // Device numbers as the host (-1) where host_device says so, from the devices initialised so far.
  void normalise(int& dev) const;
  void give_target(OmpTargetSpan x);
  void give_data_op(OmpDataOpSpan d);

  Context& c_;
  int initial_device_num_;
  AllocLinker linker_;
  PooledMap<std::uint64_t, OmpTargetSpan> open_targets_;
  PooledMap<std::uint64_t, OmpDataOpSpan> open_ops_;
  PooledMap<std::uint64_t, OmpSubmitSpan> open_submits_;
  std::map<int, OmpDevice> devices_;
  std::vector<int> initialised_;
};

}  // namespace kob::builder
