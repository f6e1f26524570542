// Reading tool lists and telling this library's file (common/support/tool_libraries).
#include <doctest/doctest.h>

#include "common/support/tool_libraries.hpp"

using kob::tool_libraries::entries;
using kob::tool_libraries::same_file;

TEST_CASE("lists split as strtok splits them: empty entries skipped") {
  CHECK(entries("a.so;b.so", ';') == std::vector<std::string>{"a.so", "b.so"});
  CHECK(entries(";;a.so;;b.so;", ';') == std::vector<std::string>{"a.so", "b.so"});
  CHECK(entries("/x/a.so:/y/b.so", ':') == std::vector<std::string>{"/x/a.so", "/y/b.so"});
  CHECK(entries("a.so;b.so", ':') == std::vector<std::string>{"a.so;b.so"});
  CHECK(entries("", ':').empty());
  CHECK(entries(nullptr, ':').empty());
}

TEST_CASE("same_file compares files, not spellings") {
  CHECK(same_file("/proc/self/exe", "/proc/self/exe"));
  CHECK(same_file("/usr/bin/../bin/env", "/usr/bin/env"));
  CHECK_FALSE(same_file("/usr/bin/env", "/proc/self/exe"));
  CHECK_FALSE(same_file("/no/such/file", "/no/such/file"));
  CHECK_FALSE(same_file(nullptr, "/usr/bin/env"));
  CHECK(kob::tool_libraries::own_path() != nullptr);
}
