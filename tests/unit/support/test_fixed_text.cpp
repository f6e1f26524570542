// Numbers with fixed decimals: the same bytes as printf's "%.Nf" and "%+.Nf" (the text summary,
// kob diff's tables and the findings were written by printf before).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "common/support/fixed_text.hpp"

using kob::text::fixed;

namespace {
std::string printf_fixed(double v, int decimals, bool plus) {
  char buf[400];
  std::snprintf(buf, sizeof buf, plus ? "%+.*f" : "%.*f", decimals, v);
  return buf;
}
}  // namespace

TEST_CASE("fixed text: exact cases, ties as printf rounds them") {
  CHECK(fixed(66.1, 1) == "66.1");
  CHECK(fixed(0.25, 1) == "0.2");  // the binary value is exactly half way: to even
  CHECK(fixed(0.35, 1) == "0.3");  // 0.34999...
  CHECK(fixed(2.5, 0) == "2");
  CHECK(fixed(3.5, 0) == "4");
  CHECK(fixed(-0.04, 1) == "-0.0");
  CHECK(fixed(-0.04, 1, true) == "-0.0");
  CHECK(fixed(0.0, 2, true) == "+0.00");
  CHECK(fixed(1234.5678, 2, " GB/s") == "1234.57 GB/s");
  CHECK(fixed(98.66, 1, "%") == "98.7%");
  CHECK(fixed(1e300, 1).size() == 303);
}

TEST_CASE("fixed text: 500,000 values in 8 formats each against printf") {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  const auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int differ = 0;
  for (int i = 0; i < 500000; ++i) {
    double v = 0;
    switch (i % 5) {
      case 0: v = double(next() % 100000000) / 1e3; break;        // times in us as the summary divides them
      case 1: v = double(next() % 100000) / 8.0; break;           // exact binary fractions: ties
      case 2: v = std::ldexp(double(next() >> 11), int(next() % 90) - 70); break;
      case 3: v = -double(next() % 1000000) / 1e6; break;
      default: v = 100.0 * double(next() % 10000) / double(1 + next() % 10000); break;  // percentages
    }
    for (int d = 0; d <= 3; ++d)
      for (const bool plus : {false, true}) differ += fixed(v, d, plus) != printf_fixed(v, d, plus);
  }
  CHECK(differ == 0);
  for (const double v : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::max(), -0.0, 5e-324})
    for (int d = 0; d <= 3; ++d)
      for (const bool plus : {false, true}) CHECK(fixed(v, d, plus) == printf_fixed(v, d, plus));
}
