// Drives the library's Kokkos hooks directly with the bad inputs a buggy or unusual Kokkos (or a
// program calling the profiling API by hand) can produce: null names, unknown ids, pops without
// pushes, sections never created, frees of memory never allocated, a second finalize, hooks after
// finalize. The library must keep the program alive, open no file descriptor it does not close,
// warn in single lines and still write valid files.
#include <dirent.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "test_program_util.hpp"

struct SpaceHandle {
  char name[64];
};
struct ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) return 2;
  const int fds_before = open_fds();

  auto init = sym<void (*)(int, std::uint64_t, std::uint32_t, void*)>(h, "kokkosp_init_library");
  auto fin = sym<void (*)()>(h, "kokkosp_finalize_library");
  auto parse = sym<void (*)(int, char**)>(h, "kokkosp_parse_args");
  auto settings = sym<void (*)(std::uint32_t, ToolSettings*)>(h, "kokkosp_request_tool_settings");
  auto begin_for = sym<void (*)(const char*, std::uint32_t, std::uint64_t*)>(h, "kokkosp_begin_parallel_for");
  auto end_for = sym<void (*)(std::uint64_t)>(h, "kokkosp_end_parallel_for");
  auto begin_reduce = sym<void (*)(const char*, std::uint32_t, std::uint64_t*)>(h, "kokkosp_begin_parallel_reduce");
  auto begin_fence = sym<void (*)(const char*, std::uint32_t, std::uint64_t*)>(h, "kokkosp_begin_fence");
  auto end_fence = sym<void (*)(std::uint64_t)>(h, "kokkosp_end_fence");
  auto push = sym<void (*)(const char*)>(h, "kokkosp_push_profile_region");
  auto pop = sym<void (*)()>(h, "kokkosp_pop_profile_region");
  auto start_sec = sym<void (*)(std::uint32_t)>(h, "kokkosp_start_profile_section");
  auto stop_sec = sym<void (*)(std::uint32_t)>(h, "kokkosp_stop_profile_section");
  auto alloc = sym<void (*)(SpaceHandle, const char*, const void*, std::uint64_t)>(h, "kokkosp_allocate_data");
  auto dealloc = sym<void (*)(SpaceHandle, const char*, const void*, std::uint64_t)>(h, "kokkosp_deallocate_data");
  auto end_copy = sym<void (*)()>(h, "kokkosp_end_deep_copy");
  auto meta = sym<void (*)(const char*, const char*)>(h, "kokkosp_declare_metadata");
  auto event = sym<void (*)(const char*)>(h, "kokkosp_profile_event");

  init(0, 20210225, 0, nullptr);
  settings(1, nullptr);
  parse(0, nullptr);
  char prog[] = "odd_hooks", bogus[] = "--no-such-option", nul[] = "";
  char* args[] = {prog, bogus, nul, nullptr};
  parse(3, args);
  meta(nullptr, nullptr);

  std::uint64_t id = 0, id2 = 0;
  begin_for(nullptr, 0, &id);  // null name
  end_for(id);
  end_for(987654321);           // an id no begin returned
  begin_fence("fence without handle", 0, nullptr);
  end_fence(0);
  pop();                        // pop without push
  push(nullptr);
  pop();
  start_sec(4242);              // never created
  stop_sec(4242);
  stop_sec(4243);               // never started
  end_copy();                   // no deep copy open
  SpaceHandle space;
  std::memset(space.name, 'H', sizeof space.name);  // 64 characters, no terminating NUL
  alloc(space, "block", &space, 64);
  dealloc(space, "never allocated", &id, 100);       // more than allocated in that space
  event(nullptr);
  begin_reduce("never ended", 0, &id2);
  push("never popped");

  fin();
  fin();                        // a second finalize
  begin_for("after finalize", 0, &id);
  end_for(id);

  const int fds_after = open_fds();
  std::printf("done fds %d -> %d\n", fds_before, fds_after);
  return fds_after == fds_before ? 0 : 1;
}
