#include "common/support/fixed_text.hpp"

#include <charconv>
#include <cmath>

namespace kob::text {

std::string fixed(double v, int decimals, bool plus) {
  // The widest: a sign, 309 integer digits (DBL_MAX), the point and 17 decimals.
  char buf[336];
  char* first = buf;
  if (plus && !std::signbit(v)) *first++ = '+';
  const std::to_chars_result r = std::to_chars(first, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

std::string fixed(double v, int decimals, const char* suffix) { return fixed(v, decimals).append(suffix); }

}  // namespace kob::text
