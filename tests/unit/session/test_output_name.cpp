// Output file names: --output placeholders, the default prefix, DIR/, and the suffix that keeps
// MPI ranks and forked children from sharing files.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "common/session/config.hpp"
#include "common/session/output_name.hpp"

namespace on = kob::output_name;

namespace {

const char* fake_env(const char* name) {
  if (!std::strcmp(name, "JOB")) return "j42";
  if (!std::strcmp(name, "OMPI_COMM_WORLD_RANK")) return "3";
  return nullptr;
}

on::Context context(int rank = -1, bool child = false) {
  on::Context c;
  c.pid = 1234;
  c.rank = rank;
  c.host = "node7";
  c.exe = "app";
  c.forked_child = child;
  c.getenv = fake_env;
  return c;
}

}  // namespace

TEST_CASE("placeholders expand to pid, rank, host, environment variables and %") {
  CHECK(on::expand("run-%p", context()) == "run-1234");
  CHECK(on::expand("run-%r", context(5)) == "run-5");
  CHECK(on::expand("run-%r", context()) == "run-0");  // no rank known: 0, as for a lone MPI process
  CHECK(on::expand("%h/run", context()) == "node7/run");
  CHECK(on::expand("run-%q{JOB}-x", context()) == "run-j42-x");
  CHECK(on::expand("run-%q{UNSET_VAR}-x", context()) == "run--x");
  CHECK(on::expand("100%%-%%p", context()) == "100%-%p");
  CHECK(on::expand("plain", context()) == "plain");
}

TEST_CASE("bad placeholders are refused with one line naming them and what is accepted") {
  std::string error;
  for (const char* bad : {"run-%x", "run-%", "run-%q", "run-%q{", "run-%q{}", "run-%qJOB", "%P"}) {
    CAPTURE(bad);
    error.clear();
    CHECK_FALSE(on::check(bad, error));
    CHECK(error.find("%q{VAR}") != std::string::npos);
    CHECK(error.find('\n') == std::string::npos);
  }
  CHECK(on::check("run-%x", error) == false);
  CHECK(error.find("'%x'") != std::string::npos);
  for (const char* good : {"run", "run-%p-%r-%h-%q{A_B}", "%%", "dir/", "%q{X}%q{Y}"}) {
    CAPTURE(good);
    CHECK(on::check(good, error));
  }
}

TEST_CASE("--output refuses a bad placeholder and keeps the default") {
  kob::Config c;
  std::vector<std::string> errors;
  c.apply({"--output=run-%y"}, errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("'%y'") != std::string::npos);
  CHECK(c.output.empty());
  errors.clear();
  c.apply({"--output=run-%r"}, errors);
  CHECK(errors.empty());
  CHECK(c.output == "run-%r");
}

TEST_CASE("the default prefix names the executable, the pid and a known rank") {
  CHECK(on::resolve("", context()).prefix == "kob-app-1234");
  CHECK(on::resolve("", context(2)).prefix == "kob-app-1234-r2");
  CHECK(on::resolve("", context(2)).note.empty());
  CHECK(on::resolve("", context(-1, true)).prefix == "kob-app-1234");  // a child's pid is its own
  CHECK(on::resolve("%q{UNSET_VAR}", context()).prefix == "kob-app-1234");  // nothing left: the default
}

TEST_CASE("DIR/ means the default names inside DIR") {
  const on::Resolved r = on::resolve("out/%h/", context(1));
  CHECK(r.directory == "out/node7/");
  CHECK(r.prefix == "out/node7/kob-app-1234-r1");
  CHECK(r.note.empty());
}

TEST_CASE("a known rank adds -r<rank> unless the prefix tells ranks apart") {
  const on::Resolved plain = on::resolve("run", context(3));
  CHECK(plain.prefix == "run-r3");
  CHECK(plain.note.find("run-r3") != std::string::npos);
  CHECK(plain.note.find("rank 3") != std::string::npos);
  CHECK(on::resolve("run-%h", context(3)).prefix == "run-node7-r3");
  CHECK(on::resolve("run-%r", context(3)).prefix == "run-3");
  CHECK(on::resolve("run-%p", context(3)).prefix == "run-1234");
  CHECK(on::resolve("run-%q{OMPI_COMM_WORLD_RANK}", context(3)).prefix == "run-3");
  CHECK(on::resolve("run-%q{JOB}", context(3)).prefix == "run-j42-r3");
  CHECK(on::resolve("run-%r", context(3)).note.empty());
  CHECK(on::resolve("run", context()).prefix == "run");
  CHECK(on::resolve("run", context()).note.empty());
}

TEST_CASE("a forked child adds -<pid> unless the prefix has %p") {
  const on::Resolved r = on::resolve("run", context(-1, true));
  CHECK(r.prefix == "run-1234");
  CHECK(r.note.find("forked child pid 1234") != std::string::npos);
  CHECK(on::resolve("run-%p", context(-1, true)).prefix == "run-1234");
  CHECK(on::resolve("run-%p", context(-1, true)).note.empty());
  CHECK(on::resolve("run-%r", context(2, true)).prefix == "run-2-1234");
  CHECK(on::resolve("run", context(2, true)).prefix == "run-r2-1234");
}

TEST_CASE("the rank comes from the first launcher variable holding a number") {
  CHECK(on::rank_from_environment(fake_env) == 3);
  CHECK(on::rank_from_environment(+[](const char*) -> const char* { return nullptr; }) == -1);
  CHECK(on::rank_from_environment(+[](const char* n) -> const char* {
          return !std::strcmp(n, "OMPI_COMM_WORLD_RANK") ? "x" : !std::strcmp(n, "SLURM_PROCID") ? "7" : nullptr;
        }) == 7);
}
