// The Chrome trace writer's JSON pieces (formats/trace_writer.cpp streams events too many to
// build as documents): escaping that always yields valid UTF-8 JSON, and times as microseconds
// with exact nanosecond decimals. The small documents are built with json_doc.hpp.
#pragma once

#include <bit>
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

// The decimal digits of v written at p (room for 20); returns the end. Two digits a step from a
// table: a trace writes several numbers per event, and std::to_chars was a sixth of a Chrome
// conversion.
inline unsigned decimal_digits(std::uint64_t v) {
  static constexpr std::uint64_t kPow10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                               10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                               100000000000ull, 1000000000000ull, 10000000000000ull,
                                               100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                               100000000000000000ull, 1000000000000000000ull,
                                               10000000000000000000ull};
  const unsigned t = (static_cast<unsigned>(std::bit_width(v | 1)) * 1233) >> 12;  // log10, or one less
  return t + ((v | 1) >= kPow10[t] ? 1 : 0);
}
inline char* write_uint(char* p, std::uint64_t v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char* const end = p + decimal_digits(v);
  char* q = end;
  while (v >= 100) {
    const auto i = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    q -= 2;
    q[0] = kPairs[i];
    q[1] = kPairs[i + 1];
  }
  if (v >= 10) {
    q[-2] = kPairs[v * 2];
    q[-1] = kPairs[v * 2 + 1];
  } else {
    q[-1] = static_cast<char>('0' + v);
  }
  return end;
}
// ns / 1000 with three decimals, as append_us, written at p (room for 21); returns the end: ns's
// own digits with the point put before the last three.
inline char* write_us(char* p, std::uint64_t ns) {
  if (ns < 1000) {
    p[0] = '0';
    p[1] = '.';
    p[2] = static_cast<char>('0' + ns / 100);
    p[3] = static_cast<char>('0' + ns / 10 % 10);
    p[4] = static_cast<char>('0' + ns % 10);
    return p + 5;
  }
  char* e = write_uint(p, ns);
  e[0] = e[-1];
  e[-1] = e[-2];
  e[-2] = e[-3];
  e[-3] = '.';
  return e + 1;
}

void append_uint(std::string& out, std::uint64_t v);
void append_int(std::string& out, std::int64_t v);
// Finite doubles with up to 6 significant decimals; NaN and infinities become 0.
void append_double(std::string& out, double v);

}  // namespace kob::json
