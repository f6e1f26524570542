// JSON string escaping and number formatting.
#include <doctest/doctest.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/support/json.hpp"
#include "common/support/json_doc.hpp"
#include "helpers.hpp"

using kob::json::quote;

namespace {
std::string us(std::uint64_t ns) {
  std::string s;
  kob::json::append_us(s, ns);
  return s;
}
std::string dbl(double v) {
  std::string s;
  kob::json::append_double(s, v);
  return s;
}
}  // namespace

TEST_CASE("json: plain text, quotes, backslashes, control characters") {
  CHECK(quote("") == R"("")");
  CHECK(quote("plain text 123") == R"("plain text 123")");
  CHECK(quote("a\"b") == R"("a\"b")");
  CHECK(quote("a\\b") == R"("a\\b")");
  CHECK(quote("\\\"") == R"("\\\"")");
  CHECK(quote("x\ny") == R"("x\ny")");
  CHECK(quote("\t\r") == R"("\t\r")");
  CHECK(quote("\x01") == R"("\u0001")");
  CHECK(quote("\x1f") == R"("\u001f")");
  CHECK(quote("\b\f") == R"("\u0008\u000c")");
  CHECK(quote(std::string_view("a\0b", 3)) == R"("a\u0000b")");
  CHECK(quote("\x7f") == "\"\x7f\"");  // DEL needs no escape
  CHECK(quote("/") == R"("/")");

  std::string out = "[";
  kob::json::append_string(out, "x");
  CHECK(out == R"(["x")");  // appends, keeps what was there
}

TEST_CASE("json: valid UTF-8 is kept") {
  CHECK(quote("caf\xc3\xa9") == "\"caf\xc3\xa9\"");              // 2 bytes
  CHECK(quote("\xe2\x82\xac") == "\"\xe2\x82\xac\"");            // euro sign, 3 bytes
  CHECK(quote("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");    // emoji, 4 bytes
  CHECK(quote("\xf4\x8f\xbf\xbf") == "\"\xf4\x8f\xbf\xbf\"");    // U+10FFFF, the last code point
  CHECK(quote("\xed\x9f\xbf") == "\"\xed\x9f\xbf\"");            // U+D7FF, just below the surrogates
  CHECK(quote("\xe0\xa0\x80") == "\"\xe0\xa0\x80\"");            // U+0800, shortest 3-byte form
}

TEST_CASE("json: invalid UTF-8 becomes U+FFFD, one per bad byte") {
  CHECK(quote("\xff") == R"("\ufffd")");
  CHECK(quote("a\x80z") == R"("a\ufffdz")");            // lone continuation byte
  CHECK(quote("\xc3") == R"("\ufffd")");                // truncated at the end
  CHECK(quote("\xc3(") == R"("\ufffd(")");              // lead byte without continuation
  CHECK(quote("\xe2\x82") == R"("\ufffd\ufffd")");      // truncated 3-byte sequence
  CHECK(quote("\xc0\xaf") == R"("\ufffd\ufffd")");      // overlong '/', 2 bytes
  CHECK(quote("\xc1\xbf") == R"("\ufffd\ufffd")");      // overlong, 2 bytes
  CHECK(quote("\xe0\x80\xaf") == R"("\ufffd\ufffd\ufffd")");            // overlong, 3 bytes
  CHECK(quote("\xf0\x80\x80\xaf") == R"("\ufffd\ufffd\ufffd\ufffd")");  // overlong, 4 bytes
  CHECK(quote("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");            // U+D800, a surrogate
  CHECK(quote("\xed\xbf\xbf") == R"("\ufffd\ufffd\ufffd")");            // U+DFFF
  CHECK(quote("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");  // past U+10FFFF
  CHECK(quote("\xf5\x80\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");
  CHECK(quote("ok\xffok\xc3\xa9") == "\"ok\\ufffdok\xc3\xa9\"");        // recovers after a bad byte
}

TEST_CASE("json: microseconds with exact nanosecond decimals") {
  CHECK(us(1234567) == "1234.567");
  CHECK(us(5) == "0.005");
  CHECK(us(0) == "0.000");
  CHECK(us(50) == "0.050");
  CHECK(us(999) == "0.999");
  CHECK(us(1000) == "1.000");
  CHECK(us(std::numeric_limits<std::uint64_t>::max()) == "18446744073709551.615");
}

TEST_CASE("json: integers and doubles") {
  std::string s;
  kob::json::append_uint(s, 0);
  s += ',';
  kob::json::append_uint(s, std::numeric_limits<std::uint64_t>::max());
  s += ',';
  kob::json::append_int(s, -5);
  s += ',';
  kob::json::append_int(s, std::numeric_limits<std::int64_t>::min());
  CHECK(s == "0,18446744073709551615,-5,-9223372036854775808");
  CHECK(dbl(2.0) == "2");
  CHECK(dbl(1.5) == "1.5");
  CHECK(dbl(0.125) == "0.125");
  CHECK(dbl(std::numeric_limits<double>::quiet_NaN()) == "0");
  CHECK(dbl(std::numeric_limits<double>::infinity()) == "0");
  CHECK(dbl(-std::numeric_limits<double>::infinity()) == "0");
}

TEST_CASE("json: the python3 check used by the other tests is not vacuous") {
  CHECK(kob_test::python_json_check(R"({"a": [1, "x"]})", "assert d['a'] == [1, 'x']") == 0);
  CHECK(kob_test::python_json_check(R"({"a": 1)", "", true) != 0);                  // unbalanced
  CHECK(kob_test::python_json_check("{\"a\": \"\x01\"}", "", true) != 0);       // raw control character
  CHECK(kob_test::python_json_check("{\"a\": \"\xff\"}", "", true) != 0);       // invalid UTF-8
  CHECK(kob_test::python_json_check(R"({"a": 1})", "assert d['a'] == 2", true) != 0);
  // What append_string produces from the same bytes does parse.
  CHECK(kob_test::python_json_check("{\"a\": " + quote("\x01\xff\xed\xa0\x80\"\\") + "}",
                                    "assert d['a'] == '\\x01\\ufffd\\ufffd\\ufffd\\ufffd\"\\\\'") == 0);
}

TEST_CASE("json: a string longer than one piece gives the bytes of short ones, also where a piece ends") {
  // A piece ends near kPiece; put a 4-byte, a 3-byte and a 2-byte character, a stray
  // continuation byte and a run of them across that point, at every offset.
  const std::string chars[] = {"\xF0\x9F\x98\x80", "\xE2\x82\xAC", "\xC3\xA9", "\x80", "\xF0\x80\x80\x80\x80", "\x01\""};
  for (const std::string& c : chars) {
    for (std::size_t shift = 0; shift < 6; ++shift) {
      CAPTURE(shift);
      std::string s(kob::json::kPiece - shift, 'a');
      s += c + std::string(64, 'b');  // one piece end, inside or next to c
      // The same text escaped a few bytes at a time, where no piece logic is involved.
      std::string expect = "\"";
      std::size_t i = 0;
      while (i < s.size()) {
        // Split only between ASCII bytes, which never belong to a longer sequence.
        std::size_t j = std::min(s.size(), i + 100);
        while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x80) ++j;
        const std::string q = quote(std::string_view(s).substr(i, j - i));
        expect += q.substr(1, q.size() - 2);
        i = j;
      }
      expect += '"';
      CHECK(quote(s) == expect);
    }
  }
}

TEST_CASE("json: the 16-byte scan finds every byte to escape, at every position and length") {
  // Each odd byte at each offset of strings of 0-40 plain bytes: what the block scan copies whole
  // must be exactly the run a byte-at-a-time test stops at (the escape goes where the byte was).
  const std::string odd[] = {"\"", "\\", "\n", "\x01", "\x7f", "\xc3\xa9", "\xff"};
  const std::string want[] = {R"(\")", R"(\\)", R"(\n)", R"(\u0001)", "\x7f", "\xc3\xa9", R"(\ufffd)"};
  for (std::size_t len = 0; len <= 40; ++len) {
    std::string plain;
    for (std::size_t i = 0; i < len; ++i) plain += static_cast<char>('a' + i % 26);
    CHECK(quote(plain) == "\"" + plain + "\"");
    for (std::size_t k = 0; k < std::size(odd); ++k)
      for (std::size_t at = 0; at <= len; ++at) {
        const std::string in = plain.substr(0, at) + odd[k] + plain.substr(at);
        REQUIRE_MESSAGE(quote(in) == "\"" + plain.substr(0, at) + want[k] + plain.substr(at) + "\"",
                        "length ", len, " odd byte ", k, " at ", at);
      }
  }
}

// write_uint and write_us against std::to_chars at every length and around every power of ten.
TEST_CASE("json: integers and microseconds written from the digit table equal to_chars") {
  std::vector<std::uint64_t> values = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 123456789,
                                       std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t p = 1; p <= 10000000000000000000ull / 10; p *= 10) {
    for (std::uint64_t d : {p - 1, p, p + 1, 2 * p - 1, 5 * p, 9 * p + (p - 1)}) values.push_back(d);
    values.push_back(p * 10 - 1);
    values.push_back(p * 10);
  }
  for (std::uint64_t x = 1; x != 0 && x < (std::uint64_t{1} << 63); x = x * 3 + 7) values.push_back(x);
  for (const std::uint64_t v : values) {
    CAPTURE(v);
    char want[32], got[32];
    const char* we = std::to_chars(want, want + sizeof want, v).ptr;
    const char* ge = kob::json::write_uint(got, v);
    CHECK(std::string(got, static_cast<std::size_t>(ge - got)) == std::string(want, static_cast<std::size_t>(we - want)));
    // Microseconds: the integer part, a point and three decimals.
    const char* ie = std::to_chars(want, want + sizeof want, v / 1000).ptr;
    std::string us = std::string(want, static_cast<std::size_t>(ie - want)) + ".";
    const unsigned frac = static_cast<unsigned>(v % 1000);
    us += static_cast<char>('0' + frac / 100);
    us += static_cast<char>('0' + frac / 10 % 10);
    us += static_cast<char>('0' + frac % 10);
    CHECK(std::string(got, static_cast<std::size_t>(kob::json::write_us(got, v) - got)) == us);
    std::string appended;
    kob::json::append_us(appended, v);
    CHECK(appended == us);
  }
}

// The small documents (json_doc.hpp): any bytes in a name give a document that parses, members keep
// their order, ratios carry 6 significant digits, microseconds three decimals.

TEST_CASE("json documents: names of any bytes, members in order, figures rounded") {
  kob::json::Doc d = kob::json::Doc::object();
  d["zeta"] = std::string("ok\xff\xfe tail\x01", 10);
  d["alpha"] = kob::json::figure(1.0 / 3.0);
  d["us"] = kob::json::us(1'234'567);
  d["inf"] = kob::json::figure(std::numeric_limits<double>::infinity());
  d["other"] = kob::json::parse_or_null("{\"a\": [1, 2]}");
  d["broken"] = kob::json::parse_or_null("{\"a\": ");
  const std::string text = kob::json::dump(d);
  CHECK(text == "{\"zeta\":\"ok\xEF\xBF\xBD\xEF\xBF\xBD tail\\u0001\",\"alpha\":0.333333,\"us\":1234.567,\"inf\":0.0,"
                "\"other\":{\"a\":[1,2]},\"broken\":null}");
  CHECK(kob_test::python_json_check(text, "assert list(d) == ['zeta', 'alpha', 'us', 'inf', 'other', 'broken'], d") == 0);
}
