// The bytes each memory space holds, event by event: Kokkos allocations and frees, in time order
// over all threads, matched by (space, address). What no recorded allocation covers (a block
// allocated before the tool was loaded, a free reported larger than its allocation) is counted on
// the event (MemoryEvent::unmatched), named once per cause, and leaves the level alone: it never
// goes below 0. The timeline builder and the per-thread engine's join both keep one.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include "common/timeline/builder_parts.hpp"
#include "common/timeline/timeline.hpp"

namespace kob {

class MemoryLevels {
 public:
  // Sets m.space_level (the space's bytes after it), m.unmatched and m.unmatched_block.
  void account(MemoryEvent& m, builder::ProblemCounter& problems);

 private:
  std::unordered_map<std::uint32_t, std::uint64_t> space_level_;
  // The blocks allocated and not freed yet, by (space, address): their sizes. A free takes its
  // block's size off the level, whatever size it reports.
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> live_blocks_;
};

}  // namespace kob
