#include "common/timeline/memory_levels.hpp"

#include <algorithm>
#include <string_view>

#include "common/record/intern.hpp"

namespace kob {

void MemoryLevels::account(MemoryEvent& m, builder::ProblemCounter& problems) {
  std::uint64_t& level = space_level_[m.space];
  if (m.alloc) {
    level += m.bytes;
    live_blocks_[{m.space, m.ptr}] = m.bytes;
    m.space_level = level;
    return;
  }
  auto it = live_blocks_.find({m.space, m.ptr});
  const std::uint64_t covered = it == live_blocks_.end() ? 0 : it->second;
  if (it != live_blocks_.end()) {
    level -= std::min(level, covered);
    live_blocks_.erase(it);
  }
  m.space_level = level;
  m.unmatched_block = it == live_blocks_.end();
  m.unmatched = m.bytes > covered ? m.bytes - covered : 0;
  if (m.unmatched == 0) return;
  const std::string_view name = names().str(m.name);
  if (name == "[unlabeled]" || name.rfind("Kokkos::", 0) == 0)
    problems.add("kokkosp_deallocate_data of Kokkos' own scratch or thread data beyond what its allocations recorded "
                 "(blocks it allocated before the tool was loaded, frees reported larger than allocated): Kokkos' "
                 "doing, not the program's; counted in summary.json memory[].unmatched_frees");
  else
    problems.add("kokkosp_deallocate_data of a block with no recorded allocation or of more bytes than it was "
                 "allocated with (allocated before the tool was loaded, or a mismatched size); counted in "
                 "summary.json memory[].unmatched_frees");
}

}  // namespace kob
