#include "common/support/did_you_mean.hpp"

#include <algorithm>

namespace kob::text {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the optimal-string-alignment table (the one two rows back for swaps).
  std::vector<std::size_t> back(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], back[j - 2] + 1);
    }
    back.swap(prev);
    prev.swap(cur);
  }
  return prev[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  std::size_t best_d = 3;
  for (std::string_view c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d && 2 * d < std::max(word.size(), c.size())) {
      best = c;
      best_d = d;
    }
  }
  return std::string(best);
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates, std::string_view prefix) {
  const std::string n = nearest(word, candidates);
  return n.empty() ? std::string() : " (did you mean '" + std::string(prefix) + n + "'?)";
}

}  // namespace kob::text
