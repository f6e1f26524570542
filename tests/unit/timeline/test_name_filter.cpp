// --include/--exclude: RE2 partial matches, once per distinct name, linear on hostile names.
#include <doctest/doctest.h>

#include <string>

#include "common/record/intern.hpp"
#include "common/timeline/name_filter.hpp"

using kob::NameFilter;

namespace {
std::uint32_t id(const std::string& s) { return kob::names().intern(s); }
}  // namespace

TEST_CASE("name filter: include and exclude match anywhere in the name") {
  NameFilter f("foo", "_c$|baz");
  CHECK(f.active());
  CHECK(f.keep(id("nf_foo_a")));
  CHECK_FALSE(f.keep(id("nf_bar")));
  CHECK_FALSE(f.keep(id("nf_foo_c")));
  CHECK_FALSE(f.keep(id("nf_foo_baz")));
  NameFilter none("", "");
  CHECK_FALSE(none.active());
  CHECK(none.keep(id("anything")));
  CHECK(none.evaluations() == 0);
}

TEST_CASE("name filter: each pattern runs once per distinct name, whatever the events") {
  NameFilter f("nf_once", "never_there");
  const std::uint32_t kept = id("nf_once_kept"), dropped = id("nf_other");
  for (int i = 0; i < 1000; ++i) {
    CHECK(f.keep(kept));
    CHECK_FALSE(f.keep(dropped));
  }
  // kept: include and exclude ran once each; dropped: include only (no need for exclude).
  CHECK(f.evaluations() == 3);
}

TEST_CASE("name filter: names that make backtracking engines overflow or stall") {
  const std::uint32_t long50k = id("L" + std::string(50 * 1024 - 2, 'a') + "Z");
  const std::uint32_t long1m = id("HEAD_" + std::string(1 << 20, 'a') + "_b_TAIL");
  const std::uint32_t ends_a = id("nf_ends_in_aaa");
  NameFilter star("a*b", "");
  CHECK_FALSE(star.keep(long50k));
  CHECK(star.keep(long1m));
  NameFilter nested("(a+)+$", "");
  CHECK_FALSE(nested.keep(long50k));
  CHECK_FALSE(nested.keep(long1m));
  CHECK(nested.keep(ends_a));
}

TEST_CASE("name filter: check gives RE2's reason, empty when the pattern compiles") {
  CHECK(NameFilter::check("^Kokkos::View").empty());
  CHECK(NameFilter::check("(") == "missing ): (");
  CHECK(NameFilter::check("\\pL{1000}") == "pattern too large - compile failed");
  // A pattern that does not compile filters nothing.
  NameFilter bad("(", "");
  CHECK_FALSE(bad.active());
}
