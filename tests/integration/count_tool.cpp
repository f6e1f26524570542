// A Kokkos Tools library that only counts, independent of kokkos-ompt-bridge, for the test of
// Kokkos' own unit tests: kernels per name, kind and execution space (the device id's type),
// region pushes per name, fences, allocations and frees per space (calls and bytes), deep copies
// (calls and bytes). At kokkosp_finalize_library it writes them as JSON to $COUNT_TOOL_OUT.
// Hooks may come from several threads (Kokkos' own are on the launching thread, but a program's
// threads may launch): one mutex, this is a test tool.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace {

struct SpaceHandle {
  char name[64];
};

std::mutex g_mutex;
std::map<std::uint64_t, std::tuple<std::string, std::string, std::uint32_t>> g_open;  // kernel id -> (name, kind, type)
std::map<std::tuple<std::string, std::string, std::uint32_t>, std::uint64_t> g_kernels;
std::map<std::string, std::uint64_t> g_regions;
std::uint64_t g_fences = 0, g_copies = 0, g_copy_bytes = 0, g_next_id = 1;
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> g_allocs, g_frees;  // space -> (calls, bytes)

void begin(const char* kind, const char* name, std::uint32_t devid, std::uint64_t* id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next_id++;
  g_open[*id] = {name != nullptr ? name : "", kind, devid >> 24};
}

void end(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_open.find(id);
  if (it == g_open.end()) return;
  ++g_kernels[it->second];
  g_open.erase(it);
}

// JSON string escaping of the few characters a kernel name may hold.
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

}  // namespace

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {}

void kokkosp_begin_parallel_for(const char* name, std::uint32_t devid, std::uint64_t* id) { begin("parallel_for", name, devid, id); }
void kokkosp_end_parallel_for(std::uint64_t id) { end(id); }
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t devid, std::uint64_t* id) {
  begin("parallel_reduce", name, devid, id);
}
void kokkosp_end_parallel_reduce(std::uint64_t id) { end(id); }
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t devid, std::uint64_t* id) { begin("parallel_scan", name, devid, id); }
void kokkosp_end_parallel_scan(std::uint64_t id) { end(id); }

void kokkosp_push_profile_region(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_regions[name != nullptr ? name : ""];
}
void kokkosp_pop_profile_region() {}

void kokkosp_begin_fence(const char*, std::uint32_t, std::uint64_t* id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next_id++;
  ++g_fences;
}
void kokkosp_end_fence(std::uint64_t) {}

void kokkosp_allocate_data(SpaceHandle space, const char*, const void*, std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& a = g_allocs[space.name];
  ++a.first;
  a.second += bytes;
}
void kokkosp_deallocate_data(SpaceHandle space, const char*, const void*, std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& a = g_frees[space.name];
  ++a.first;
  a.second += bytes;
}

void kokkosp_begin_deep_copy(SpaceHandle, const char*, const void*, SpaceHandle, const char*, const void*, std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_copies;
  g_copy_bytes += bytes;
}
void kokkosp_end_deep_copy() {}

void kokkosp_finalize_library() {
  const char* path = std::getenv("COUNT_TOOL_OUT");
  std::FILE* f = path != nullptr ? std::fopen(path, "w") : nullptr;
  if (f == nullptr) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(f, "{\"kernels\": [");
  const char* sep = "";
  for (const auto& [k, n] : g_kernels) {
    std::fprintf(f, "%s[%s, \"%s\", %u, %llu]", sep, quoted(std::get<0>(k)).c_str(), std::get<1>(k).c_str(), std::get<2>(k),
                 static_cast<unsigned long long>(n));
    sep = ", ";
  }
  std::fprintf(f, "], \"regions\": {");
  sep = "";
  for (const auto& [name, n] : g_regions) {
    std::fprintf(f, "%s%s: %llu", sep, quoted(name).c_str(), static_cast<unsigned long long>(n));
    sep = ", ";
  }
  std::fprintf(f, "}, \"fences\": %llu, \"deep_copies\": [%llu, %llu]", static_cast<unsigned long long>(g_fences),
               static_cast<unsigned long long>(g_copies), static_cast<unsigned long long>(g_copy_bytes));
  for (const auto* m : {&g_allocs, &g_frees}) {
    std::fprintf(f, ", \"%s\": {", m == &g_allocs ? "allocations" : "deallocations");
    sep = "";
    for (const auto& [space, cb] : *m) {
      std::fprintf(f, "%s%s: [%llu, %llu]", sep, quoted(space).c_str(), static_cast<unsigned long long>(cb.first),
                   static_cast<unsigned long long>(cb.second));
      sep = ", ";
    }
    std::fprintf(f, "}");
  }
  std::fprintf(f, "}\n");
  std::fclose(f);
}

}  // extern "C"
