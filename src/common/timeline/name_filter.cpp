#include "common/timeline/name_filter.hpp"

#include <re2/re2.h>

#include "common/record/intern.hpp"

namespace kob {

namespace {

RE2::Options pattern_options() {
  RE2::Options o;
  o.set_log_errors(false);  // RE2 would print to stderr itself; Config reports in one line
  o.set_never_capture(true);  // groups only group: nothing is extracted
  return o;
}

std::unique_ptr<RE2> compile(const std::string& pattern) {
  if (pattern.empty()) return nullptr;
  auto re = std::make_unique<RE2>(pattern, pattern_options());
  if (!re->ok()) return nullptr;
  return re;
}

}  // namespace

NameFilter::NameFilter(const std::string& include, const std::string& exclude)
    : include_(compile(include)), exclude_(compile(exclude)) {}

NameFilter::~NameFilter() = default;

bool NameFilter::keep_text(std::string_view text) const {
  const re2::StringPiece s(text.data(), text.size());
  bool k = true;
  if (include_) {
    ++evaluations_;
    k = RE2::PartialMatch(s, *include_);
  }
  if (k && exclude_) {
    ++evaluations_;
    k = !RE2::PartialMatch(s, *exclude_);
  }
  return k;
}

bool NameFilter::keep(std::uint32_t name) {
  if (!active()) return true;
  if (name >= cache_.size()) {
    // An id no name was given (a damaged trace) must not size the cache: answered uncached.
    if (name >= names().size()) return keep_text(names().str(name));
    cache_.resize(names().size(), -1);
  }
  std::int8_t& c = cache_[name];
  if (c < 0) c = keep_text(names().str(name)) ? 1 : 0;
  return c == 1;
}

std::string NameFilter::check(std::string_view pattern) {
  const RE2 re(re2::StringPiece(pattern.data(), pattern.size()), pattern_options());
  return re.ok() ? std::string() : re.error();
}

}  // namespace kob
