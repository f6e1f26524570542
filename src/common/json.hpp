// Minimal JSON output helpers: escaping that always yields valid UTF-8 JSON, and times as
// microseconds with exact nanosecond decimals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kob::json {

// Appends s as a quoted JSON string. Control characters become \u00XX; bytes that are not valid
// UTF-8 become U+FFFD, so names from any source never break the document.
void append_string(std::string& out, std::string_view s);
std::string quote(std::string_view s);
// The same bytes written at out, which has room for max_string_bytes(s.size()); returns the end.
constexpr std::size_t max_string_bytes(std::size_t n) { return 6 * n + 2; }
char* write_string(char* out, std::string_view s);

// Appends ns / 1000 as a JSON number with three decimals ("12.345"), without floating point.
void append_us(std::string& out, std::uint64_t ns);

void append_uint(std::string& out, std::uint64_t v);
void append_int(std::string& out, std::int64_t v);
// Finite doubles with up to 6 significant decimals; NaN and infinities become 0.
void append_double(std::string& out, double v);

}  // namespace kob::json
