#include "ompt_backend/runtime_code_range.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/timeline/timeline.hpp"

namespace kob::omp {

namespace {

// The range spanned by the mappings of the file mapped at `address` (every segment of the loaded
// object); false when it is no file, or the executable itself (the runtime linked into it shares
// its object with the user's code).
bool loaded_object_range(std::uint64_t address, std::uint64_t& start, std::uint64_t& end) {
  struct Map {
    std::uint64_t lo, hi, inode;
    std::string dev, path;
  };
  std::vector<Map> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, offset, dev, path;
    std::uint64_t inode = 0;
    if (!(ls >> range >> perms >> offset >> dev >> inode)) continue;
    std::getline(ls >> std::ws, path);
    const std::size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    maps.push_back({std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16),
                    inode, dev, path});
  }
  const auto at = std::find_if(maps.begin(), maps.end(), [&](const Map& m) { return m.lo <= address && address < m.hi; });
  if (at == maps.end() || at->inode == 0) return false;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0 && at->path == std::string(exe, static_cast<std::size_t>(n))) return false;
  start = at->lo;
  end = at->hi;
  for (const Map& m : maps)
    if (m.inode == at->inode && m.dev == at->dev) {
      start = std::min(start, m.lo);
      end = std::max(end, m.hi);
    }
  return true;
}

}  // namespace

std::string runtime_code_range(const void* fn) {
  CodeRange range;
  try {
    if (fn == nullptr || !loaded_object_range(reinterpret_cast<std::uint64_t>(fn), range.start, range.end)) range = {};
  } catch (...) {
    range = {};
  }
  return format_code_range(range);
}

}  // namespace kob::omp
