// Fuzz target: the escaping of names for text (text_safe.hpp), for JSON (json.hpp) and the text
// summary's name cells. Whatever the bytes, the text forms must hold no control character and be
// valid UTF-8, shorten() must keep to its width, and the JSON string must be one valid JSON string
// whose pieces (write_chars over piece_end) give the same bytes as the whole.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>
#include <string_view>

#include "common/analysis/summary.hpp"
#include "common/support/json.hpp"
#include "common/support/text_safe.hpp"
#include "fuzz_checks.hpp"

namespace {

using kob_fuzz::require;

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = kob::text::utf8_sequence(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// No C0 control, DEL or C1 control (U+0080..U+009F, C2 80..C2 9F in UTF-8) left to drive a terminal.
bool terminal_safe(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) return false;
  }
  return valid_utf8(s);
}

bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// One JSON string token, RFC 8259: quotes, escapes, no raw control characters, UTF-8 inside.
bool json_string(std::string_view s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return false;
  const std::string_view in = s.substr(1, s.size() - 2);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c < 0x20 || c == '"') return false;
    if (c != '\\') continue;
    if (++i == in.size()) return false;
    switch (in[i]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
      case 'u':
        if (i + 4 >= in.size()) return false;
        for (int k = 1; k <= 4; ++k)
          if (!hex(in[i + k])) return false;
        i += 4;
        break;
      default: return false;
    }
  }
  return valid_utf8(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte picks a width for shorten(); the rest is the name.
  const std::size_t width = size ? data[0] : 60;
  const std::string_view name(reinterpret_cast<const char*>(data) + (size ? 1 : 0), size ? size - 1 : 0);

  const std::string escaped = kob::text::escape(name);
  require(terminal_safe(escaped));
  const std::string cut = kob::text::shorten(name, width);
  require(terminal_safe(cut));
  require(kob::text::columns(cut) <= (width < 8 ? 8 : width));
  if (kob::text::columns(escaped) <= (width < 8 ? 8 : width)) require(cut == escaped);

  const std::string quoted = kob::json::quote(name);
  require(json_string(quoted));
  std::string appended;
  kob::json::append_string(appended, name);
  require(appended == quoted);
  // The pieces, each written into room for 6 bytes per input byte, give the whole.
  std::string pieces;
  for (std::size_t at = 0; at < name.size();) {
    const std::size_t end = kob::json::piece_end(name, at);
    require(end > at && end <= name.size() && end - at <= kob::json::kPiece);
    std::string room(6 * (end - at), '\0');
    char* stop = kob::json::write_chars(room.data(), name.substr(at, end - at));
    require(stop >= room.data() && stop <= room.data() + room.size());
    pieces.append(room.data(), stop);
    at = end;
  }
  require("\"" + pieces + "\"" == quoted);

  const std::string cell = kob::summary_format::name(name);
  require(terminal_safe(cell));
  const std::string where = kob::summary_format::location(name);
  require(terminal_safe(where));
  return 0;
}
