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
// The inside of such a string (no quotes) written at out, which has room for 6 * s.size()
// bytes; returns the end. A long string goes in pieces cut where piece_end says, so that the
// room needed stays small: the pieces give the same bytes as the whole.
char* write_chars(char* out, std::string_view s);
constexpr std::size_t kPiece = 1 << 16;
// The end of the piece of s that starts at `at`: at most kPiece bytes, never inside a valid
// UTF-8 sequence.
std::size_t piece_end(std::string_view s, std::size_t at);

// Appends ns / 1000 as a JSON number with three decimals ("12.345"), without floating point.
void append_us(std::string& out, std::uint64_t ns);

void append_uint(std::string& out, std::uint64_t v);
void append_int(std::string& out, std::int64_t v);
// Finite doubles with up to 6 significant decimals; NaN and infinities become 0.
void append_double(std::string& out, double v);

}  // namespace kob::json
