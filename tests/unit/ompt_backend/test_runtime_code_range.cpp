// The OMPT start-up finds the runtime's code range; the timeline tells the hidden-helper team by it.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cstdint>
#include <string>

#include "common/timeline/timeline.hpp"
#include "ompt_backend/runtime_code_range.hpp"

TEST_CASE("ompt_backend: the runtime's code range is its loaded object's, none for the executable") {
  // This test's own code lies in the executable: no range (a runtime linked into it is not told apart).
  CHECK(kob::omp::runtime_code_range(reinterpret_cast<const void*>(&kob::omp::runtime_code_range)).empty());
  CHECK(kob::omp::runtime_code_range(nullptr).empty());
  // A function of a shared library (the C library's, as the loader has it): that object's range.
  const void* fn = dlsym(RTLD_DEFAULT, "abort");
  REQUIRE(fn != nullptr);
  const std::string text = kob::omp::runtime_code_range(fn);
  REQUIRE_FALSE(text.empty());
  const kob::CodeRange r = kob::parse_code_range(text);
  CHECK(r.contains(reinterpret_cast<std::uint64_t>(fn)));
  CHECK(r.end - r.start >= 4096);
}
