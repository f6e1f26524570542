// The file through which the processes of a `kob run` say what they wrote.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/session/run_report.hpp"
#include "helpers.hpp"

namespace rr = kob::run_report;

TEST_CASE("run report: each process appends its line, read back in order; nothing without the variable") {
  const std::string path = kob_test::temp_path("report");
  { std::ofstream(path).flush(); }  // kob run makes the file empty first
  unsetenv(rr::kVariable);
  rr::append(7, {"nothing.kob"});  // not started by kob run: no line
  setenv(rr::kVariable, path.c_str(), 1);
  rr::append(1234, {"run.kob", "run.pftrace", "run.summary.txt"});
  rr::append(1235, {});
  rr::append(1236, {"a\tb.kob", "child.kob"});  // a name with a tab cannot be on the line: left out
  unsetenv(rr::kVariable);
  const auto entries = rr::read(path);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].pid == 1234);
  CHECK(entries[0].files == std::vector<std::string>{"run.kob", "run.pftrace", "run.summary.txt"});
  CHECK(entries[1].pid == 1235);
  CHECK(entries[1].files.empty());
  CHECK(entries[2].files == std::vector<std::string>{"child.kob"});
  std::remove(path.c_str());
  CHECK(rr::read(path).empty());  // a missing file: no entries
}
