// Names made safe for text output: escapes and cuts.
#include <doctest/doctest.h>

#include <string>

#include "common/support/text_safe.hpp"

using kob::text::columns;
using kob::text::escape;
using kob::text::shorten;

namespace {
bool has_control_byte(const std::string& s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("text: control characters are escaped, printable text and UTF-8 pass") {
  CHECK(escape("plain name <int>") == "plain name <int>");
  CHECK(escape("a\tb\rc\nd") == "a\\tb\\rc\\nd");
  CHECK(escape("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(escape(std::string("nul\0soh\x01" "del\x7f", 12)) == "nul\\x00soh\\x01del\\x7f");
  CHECK(escape("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82") == "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82");
  CHECK(escape("csi\xc2\x9b" "31m") == "csi\\u009b31m");  // C1 control (CSI) in UTF-8
  CHECK(escape("bad\xff\xc3") == "bad\\xff\\xc3");         // not UTF-8: bytes escaped
  CHECK(escape("over\xc0\xaflong") == "over\\xc0\\xaflong");
  CHECK(escape("back\\slash") == "back\\slash");
}

TEST_CASE("text: names that fit are only escaped") {
  CHECK(shorten("short", 60) == "short");
  const std::string exact(60, 'n');
  CHECK(shorten(exact, 60) == exact);
  CHECK(shorten("tab\there", 60) == "tab\\there");
}

TEST_CASE("text: long names keep both ends around the marker, within the width") {
  const std::string name = "HEAD_" + std::string(1 << 20, 'a') + "_b_TAIL";
  const std::string s = shorten(name, 60);
  CHECK(columns(s) == 60);
  CHECK(s.rfind("HEAD_aaa", 0) == 0);
  CHECK(s.find("...") != std::string::npos);
  CHECK(s.size() >= 10);
  CHECK(s.substr(s.size() - 10) == "aaa_b_TAIL");
  CHECK(shorten("0123456789abcdefghij", 11) == "0123...ghij");
  CHECK(shorten("0123456789", 2) == "012...89");  // below 8 columns: 8
}

TEST_CASE("text: cuts never split a UTF-8 character or an escape, and stay within the width") {
  std::string name;
  for (int i = 0; i < 200; ++i) name += i % 3 == 0 ? "\xc3\xa9" : i % 3 == 1 ? "\x1b" : "x";
  for (std::size_t width : {8u, 9u, 10u, 31u, 60u, 61u}) {
    CAPTURE(width);
    const std::string s = shorten(name, width);
    CHECK(columns(s) <= width);
    CHECK(columns(s) + 6 >= width);  // at each end at most an escape that did not fit is left out
    CHECK_FALSE(has_control_byte(s));
    // Every escape whole, every UTF-8 character whole.
    CHECK(escape(s) == s);
    const std::size_t marker = s.find("...");
    REQUIRE(marker != std::string::npos);
    CHECK(escape(name).find(s.substr(0, marker)) == 0);
    const std::string tail = s.substr(marker + 3);
    const std::string full = escape(name);
    CHECK(full.compare(full.size() - tail.size(), tail.size(), tail) == 0);
  }
}

TEST_CASE("text: columns count UTF-8 characters") {
  CHECK(columns("abc") == 3);
  CHECK(columns("caf\xc3\xa9") == 4);
  CHECK(columns("") == 0);
}
