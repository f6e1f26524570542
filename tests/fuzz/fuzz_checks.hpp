// What the fuzz targets assert about their results, shared by them.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string_view>

#include "common/support/text_safe.hpp"

namespace kob_fuzz {

// A property that failed: its line on stderr, then abort (libFuzzer keeps the input).
inline void require(bool ok, std::source_location where = std::source_location::current()) {
  if (ok) return;
  std::fprintf(stderr, "%s:%u: property failed\n", where.file_name(), static_cast<unsigned>(where.line()));
  std::abort();
}

// Whether s prints as one line that changes nothing on a terminal: no C0 or C1 control, no DEL,
// only whole UTF-8 sequences.
inline bool one_safe_line(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) return false;
    if (c >= 0x80) {
      const std::size_t n = kob::text::utf8_sequence(s, i);
      if (n == 0) return false;
      i += n - 1;
    }
  }
  return true;
}

}  // namespace kob_fuzz
