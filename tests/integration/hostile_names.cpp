// Drives the library's Kokkos hooks with names a filter or a text table can choke on: a 50 KB
// and a 1 MB kernel name made of one repeated letter (the worst case for backtracking regular
// expressions), names with terminal control characters, a region with a 60 KB name. Each kernel
// runs a fixed number of times so that the test can check exact counts after filtering.
// Usage: hostile_names LIB [tool args...]; the tool args go to kokkosp_parse_args. Exits with 7
// so that the test can tell the program's own exit code from a crash.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "test_program_util.hpp"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) return 2;
  auto init = sym<void (*)(int, std::uint64_t, std::uint32_t, void*)>(h, "kokkosp_init_library");
  auto fin = sym<void (*)()>(h, "kokkosp_finalize_library");
  auto parse = sym<void (*)(int, char**)>(h, "kokkosp_parse_args");
  auto begin_for = sym<void (*)(const char*, std::uint32_t, std::uint64_t*)>(h, "kokkosp_begin_parallel_for");
  auto end_for = sym<void (*)(std::uint64_t)>(h, "kokkosp_end_parallel_for");
  auto push = sym<void (*)(const char*)>(h, "kokkosp_push_profile_region");
  auto pop = sym<void (*)()>(h, "kokkosp_pop_profile_region");

  init(0, 20210225, 0, nullptr);
  argv[1] = argv[0];  // Kokkos 3.x passes the program name first
  parse(argc - 1, argv + 1);

  // Name and calls; the test (test_hostile_names.py) knows the same list.
  const std::string long50k = "L" + std::string(50 * 1024 - 2, 'a') + "Z";
  const std::string long1m = "HEAD_" + std::string(1 << 20, 'a') + "_b_TAIL";
  const struct {
    std::string name;
    int calls;
  } kernels[] = {
      {long50k, 2},
      {long1m, 3},
      {"esc\x1b[31mred\x1b[0m", 1},
      {"cr\rname", 1},
      {"tab\tb", 1},
      {"soh\x01name", 1},
      {"plain_b", 4},
      {"ends_in_aaa", 5},
  };
  const std::string region = "region_" + std::string(60 * 1024, 'a') + "_end";
  push(region.c_str());
  for (const auto& k : kernels) {
    for (int i = 0; i < k.calls; ++i) {
      std::uint64_t id = 0;
      begin_for(k.name.c_str(), 0, &id);
      end_for(id);
    }
  }
  pop();
  fin();
  std::printf("done\n");
  return 7;
}
