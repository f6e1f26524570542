#include "common/support/json_doc.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kob::json {

std::string dump(const Doc& d, int indent) { return d.dump(indent, ' ', false, Doc::error_handler_t::replace); }

double figure(double v) {
  if (!std::isfinite(v)) return 0;
  // to_chars and back, not printf: the measured program may have set a locale with a decimal comma.
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf - 1, v, std::chars_format::general, 6);
  double out = 0;
  std::from_chars(buf, r.ptr, out, std::chars_format::general);
  return out;
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

Doc parse_or_null(const std::string& text) {
  Doc d = Doc::parse(text, nullptr, false);
  return d.is_discarded() ? Doc() : d;
}

}  // namespace kob::json
