// A Kokkos tool that follows kokkos-tools' convention for a parent tool (kp_kernel_filter,
// kp_sampler): at init it loads the entry after its own in KOKKOS_TOOLS_LIBS (else
// KOKKOS_PROFILE_LIBRARY, ';'-separated; its own is entry loadSeq), starts it with loadSeq + 1,
// and passes every hook on, giving Kokkos ids of its own for kernels, fences and sections. For the
// test of this library run as such a child (test_kokkos_chain.py). A test tool: one mutex, maps.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct SpaceHandle {
  char name[64];
};
struct Settings {
  bool requires_global_fencing;
  bool padding[255];
};
struct Interface {
  void (*fence)(std::uint32_t);
  void (*padding[31])();
};

void* g_child = nullptr;
std::mutex g_mutex;
std::map<std::uint64_t, std::uint64_t> g_ids;  // ours -> the child's (kernels and fences)
std::map<std::uint32_t, std::uint32_t> g_sections;
std::uint64_t g_next = 5000;
std::uint32_t g_next_section = 7000;

template <class F>
F child_hook(const char* name) {
  return g_child != nullptr ? reinterpret_cast<F>(dlsym(g_child, name)) : nullptr;
}

// Calls the child's hook `name` when it has one.
#define FORWARD(name, Type, ...)                              \
  do {                                                        \
    static const auto f = child_hook<Type>("kokkosp_" name); \
    if (f != nullptr) f(__VA_ARGS__);                         \
  } while (0)

void begin(const char* hook, const char* name, std::uint32_t devid, std::uint64_t* id) {
  std::uint64_t theirs = 0;
  if (auto f = child_hook<void (*)(const char*, std::uint32_t, std::uint64_t*)>(hook)) f(name, devid, &theirs);
  std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next++;
  g_ids[*id] = theirs;
}

void end(const char* hook, std::uint64_t id) {
  std::uint64_t theirs = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_ids.find(id);
    if (it == g_ids.end()) return;
    theirs = it->second;
    g_ids.erase(it);
  }
  if (auto f = child_hook<void (*)(std::uint64_t)>(hook)) f(theirs);
}

std::uint32_t section(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_sections[id];
}

}  // namespace

extern "C" {

void kokkosp_init_library(int load_seq, std::uint64_t version, std::uint32_t n, void* devinfo) {
  const char* list = std::getenv("KOKKOS_TOOLS_LIBS");
  if (list == nullptr) list = std::getenv("KOKKOS_PROFILE_LIBRARY");
  std::vector<std::string> entries;
  std::string copy = list != nullptr ? list : "";
  for (char* t = std::strtok(copy.data(), ";"); t != nullptr; t = std::strtok(nullptr, ";")) entries.emplace_back(t);
  if (static_cast<std::size_t>(load_seq) + 1 >= entries.size()) return;
  g_child = dlopen(entries[load_seq + 1].c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (g_child == nullptr) {
    std::fprintf(stderr, "chain_parent: cannot load %s\n", entries[load_seq + 1].c_str());
    return;
  }
  FORWARD("init_library", void (*)(int, std::uint64_t, std::uint32_t, void*), load_seq + 1, version, n, devinfo);
}
void kokkosp_finalize_library() { FORWARD("finalize_library", void (*)()); }
void kokkosp_parse_args(int argc, char** argv) { FORWARD("parse_args", void (*)(int, char**), argc, argv); }
void kokkosp_print_help(char* prog) { FORWARD("print_help", void (*)(char*), prog); }
void kokkosp_request_tool_settings(std::uint32_t n, Settings* s) { FORWARD("request_tool_settings", void (*)(std::uint32_t, Settings*), n, s); }
void kokkosp_provide_tool_programming_interface(std::uint32_t n, Interface i) {
  FORWARD("provide_tool_programming_interface", void (*)(std::uint32_t, Interface), n, i);
}
void kokkosp_declare_metadata(const char* k, const char* v) { FORWARD("declare_metadata", void (*)(const char*, const char*), k, v); }
void kokkosp_begin_parallel_for(const char* n, std::uint32_t d, std::uint64_t* id) { begin("kokkosp_begin_parallel_for", n, d, id); }
void kokkosp_end_parallel_for(std::uint64_t id) { end("kokkosp_end_parallel_for", id); }
void kokkosp_begin_parallel_reduce(const char* n, std::uint32_t d, std::uint64_t* id) { begin("kokkosp_begin_parallel_reduce", n, d, id); }
void kokkosp_end_parallel_reduce(std::uint64_t id) { end("kokkosp_end_parallel_reduce", id); }
void kokkosp_begin_parallel_scan(const char* n, std::uint32_t d, std::uint64_t* id) { begin("kokkosp_begin_parallel_scan", n, d, id); }
void kokkosp_end_parallel_scan(std::uint64_t id) { end("kokkosp_end_parallel_scan", id); }
void kokkosp_begin_fence(const char* n, std::uint32_t d, std::uint64_t* id) { begin("kokkosp_begin_fence", n, d, id); }
void kokkosp_end_fence(std::uint64_t id) { end("kokkosp_end_fence", id); }
void kokkosp_push_profile_region(const char* n) { FORWARD("push_profile_region", void (*)(const char*), n); }
void kokkosp_pop_profile_region() { FORWARD("pop_profile_region", void (*)()); }
void kokkosp_profile_event(const char* n) { FORWARD("profile_event", void (*)(const char*), n); }
void kokkosp_create_profile_section(const char* n, std::uint32_t* id) {
  std::uint32_t theirs = 0;
  FORWARD("create_profile_section", void (*)(const char*, std::uint32_t*), n, &theirs);
  std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next_section++;
  g_sections[*id] = theirs;
}
void kokkosp_start_profile_section(std::uint32_t id) { FORWARD("start_profile_section", void (*)(std::uint32_t), section(id)); }
void kokkosp_stop_profile_section(std::uint32_t id) { FORWARD("stop_profile_section", void (*)(std::uint32_t), section(id)); }
void kokkosp_destroy_profile_section(std::uint32_t id) { FORWARD("destroy_profile_section", void (*)(std::uint32_t), section(id)); }
void kokkosp_allocate_data(SpaceHandle s, const char* n, const void* p, std::uint64_t b) {
  FORWARD("allocate_data", void (*)(SpaceHandle, const char*, const void*, std::uint64_t), s, n, p, b);
}
void kokkosp_deallocate_data(SpaceHandle s, const char* n, const void* p, std::uint64_t b) {
  FORWARD("deallocate_data", void (*)(SpaceHandle, const char*, const void*, std::uint64_t), s, n, p, b);
}
void kokkosp_begin_deep_copy(SpaceHandle ds, const char* dn, const void* dp, SpaceHandle ss, const char* sn, const void* sp, std::uint64_t b) {
  FORWARD("begin_deep_copy", void (*)(SpaceHandle, const char*, const void*, SpaceHandle, const char*, const void*, std::uint64_t), ds, dn, dp,
          ss, sn, sp, b);
}
void kokkosp_end_deep_copy() { FORWARD("end_deep_copy", void (*)()); }
void kokkosp_dual_view_sync(const char* n, const void* p, bool d) { FORWARD("dual_view_sync", void (*)(const char*, const void*, bool), n, p, d); }
void kokkosp_dual_view_modify(const char* n, const void* p, bool d) {
  FORWARD("dual_view_modify", void (*)(const char*, const void*, bool), n, p, d);
}

}  // extern "C"
