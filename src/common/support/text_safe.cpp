#include "common/support/text_safe.hpp"

#include <cstdint>

namespace kob::text {

namespace {

constexpr std::string_view kMarker = "...";

void append_hex(std::string& out, const char* prefix, unsigned v) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  out += kHex[(v >> 4) & 0xf];
  out += kHex[v & 0xf];
}

// The character at s[i]: its display form appended to out (when out is given); returns the
// bytes it takes in s, and its width in columns through cols.
std::size_t character(std::string_view s, std::size_t i, std::string* out, std::size_t& cols) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c >= 0x20 && c < 0x7f) {
    cols = 1;
    if (out) *out += static_cast<char>(c);
    return 1;
  }
  if (c == '\t' || c == '\r' || c == '\n') {
    cols = 2;
    if (out) *out += c == '\t' ? "\\t" : c == '\r' ? "\\r" : "\\n";
    return 1;
  }
  const std::size_t n = c >= 0x80 ? utf8_sequence(s, i) : 0;
  if (n == 0) {  // C0 control, DEL, or a byte that starts no valid UTF-8 character
    cols = 4;
    if (out) append_hex(*out, "\\x", c);
    return 1;
  }
  const auto c2 = static_cast<unsigned char>(s[i + 1]);
  if (c == 0xC2 && c2 < 0xA0) {  // U+0080..U+009F: C1 controls (CSI 0x9b starts escape sequences)
    cols = 6;
    if (out) append_hex(*out, "\\u00", c2);
    return 2;
  }
  cols = 1;
  if (out) out->append(s.data() + i, n);
  return n;
}

}  // namespace

std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  std::uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size();) i += character(s, i, &out, cols);
  return out;
}

std::string shorten(std::string_view s, std::size_t max_columns) {
  if (max_columns < 8) max_columns = 8;
  // First pass: the width of the escaped text; nothing is built when it fits.
  std::size_t total = 0, cols = 0;
  for (std::size_t i = 0; i < s.size();) {
    i += character(s, i, nullptr, cols);
    total += cols;
  }
  if (total <= max_columns) return escape(s);
  const std::size_t head = (max_columns - kMarker.size() + 1) / 2;
  const std::size_t tail = max_columns - kMarker.size() - head;
  // Second pass: whole characters up to head columns, the marker, then the characters whose
  // start lies within the last tail columns.
  std::string out;
  std::size_t at = 0;
  bool marked = false;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = character(s, i, nullptr, cols);
    if (at + cols <= head) {
      character(s, i, &out, cols);
    } else if (at >= total - tail) {
      if (!marked) out += kMarker;
      marked = true;
      character(s, i, &out, cols);
    } else if (!marked) {
      out += kMarker;
      marked = true;
    }
    at += cols;
    i += n;
  }
  return out;
}

std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (const char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

}  // namespace kob::text
