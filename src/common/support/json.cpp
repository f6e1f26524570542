#include "common/support/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/support/text_safe.hpp"

namespace kob::json {

using text::utf8_sequence;

namespace {
// Bytes that go into a JSON string as they are, in runs copied whole: printable ASCII but the
// quote and the backslash.
constexpr bool plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// The end of the run of plain bytes from i, 16 bytes at a time (a converted trace is mostly names
// and paths: a byte-at-a-time test cost about 5 instructions per byte); stops at the first block
// holding a byte that is not plain, which the caller's byte loop then finishes.
std::size_t plain_run(const char* p, std::size_t i, std::size_t n) {
#if defined(__SSE2__)
  const __m128i below = _mm_set1_epi8(0x20);  // signed: 0x80..0xff are below it too
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i slash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i odd = _mm_or_si128(_mm_cmplt_epi8(v, below),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)));
    if (const int m = _mm_movemask_epi8(odd)) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
#endif
  return i;
}
}  // namespace

std::size_t piece_end(std::string_view s, std::size_t at) {
  if (s.size() - at <= kPiece) return s.size();
  const std::size_t end = at + kPiece;
  // Cut before a byte that is not a continuation byte (10xxxxxx), the nearest within 3 back:
  // no sequence runs across it. When there is none, the lead byte of any sequence is 4 or more
  // bytes back, and a sequence has at most 3 continuation bytes: none runs across `end` either.
  for (std::size_t c = end; c + 3 >= end; --c)
    if ((static_cast<unsigned char>(s[c]) & 0xC0) != 0x80) return c;
  return end;
}

char* write_chars(char* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char* p = s.data();
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t j = plain_run(p, i, n);
    while (j < n && plain(static_cast<unsigned char>(p[j]))) ++j;
    if (j > i) {
      std::memcpy(out, p + i, j - i);
      out += j - i;
      i = j;
      if (i == n) break;
    }
    const auto c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c == '\\') {
      *out++ = '\\';
      *out++ = static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      *out++ = '\\';
      switch (c) {
        case '\n': *out++ = 'n'; break;
        case '\t': *out++ = 't'; break;
        case '\r': *out++ = 'r'; break;
        default:
          std::memcpy(out, "u00", 3);
          out[3] = kHex[c >> 4];
          out[4] = kHex[c & 0xf];
          out += 5;
      }
      ++i;
    } else if (std::size_t len = utf8_sequence(s, i)) {
      std::memcpy(out, p + i, len);
      out += len;
      i += len;
    } else {
      std::memcpy(out, "\\ufffd", 6);
      out += 6;
      ++i;
    }
  }
  return out;
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t at = 0; at < s.size();) {
    const std::size_t end = piece_end(s, at);
    const std::size_t used = out.size();
    out.resize(used + 6 * (end - at));
    char* e = write_chars(out.data() + used, s.substr(at, end - at));
    out.resize(static_cast<std::size_t>(e - out.data()));
    at = end;
  }
  out += '"';
}

std::string quote(std::string_view s) {
  std::string out;
  append_string(out, s);
  return out;
}

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  out.append(buf, write_uint(buf, v));
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_us(std::string& out, std::uint64_t ns) {
  char buf[24];
  out.append(buf, write_us(buf, ns));
}

void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;
  // to_chars, not printf: the measured program may have set a locale with a decimal comma.
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  out.append(buf, r.ptr);
}

}  // namespace kob::json
