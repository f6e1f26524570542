// --include / --exclude: which Kokkos kernel and region names to keep. RE2 syntax, matched
// anywhere in the name, in time linear in the name's length (no backtracking, no recursion on
// the name), and once per distinct interned name whatever the number of events.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace kob {

class NameFilter {
 public:
  // Empty patterns filter nothing. A pattern that does not compile filters nothing either
  // (Config rejects such patterns before they get here).
  NameFilter(const std::string& include, const std::string& exclude);
  ~NameFilter();
  NameFilter(const NameFilter&) = delete;
  NameFilter& operator=(const NameFilter&) = delete;

  bool active() const { return include_ != nullptr || exclude_ != nullptr; }
  // Whether the interned name id passes; the patterns run on the first call for an id only.
  bool keep(std::uint32_t name);
  // The same for a text, not cached.
  bool keep_text(std::string_view text) const;
  // Pattern evaluations so far (tests: one per distinct name and pattern).
  std::uint64_t evaluations() const { return evaluations_; }

  // Empty when the pattern compiles, else RE2's message (syntax error, or too large for RE2's
  // memory budget).
  static std::string check(std::string_view pattern);

 private:
  std::unique_ptr<re2::RE2> include_, exclude_;
  std::vector<std::int8_t> cache_;  // by name id: -1 not evaluated yet, 0 drop, 1 keep
  mutable std::uint64_t evaluations_ = 0;
};

}  // namespace kob
