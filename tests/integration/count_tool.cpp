// A Kokkos Tools library that only counts, independent of kokkos-ompt-bridge, for the test of
// Kokkos' own unit tests: kernels per name, kind and execution space (the device id's type),
// region pushes per name, fences, allocations and frees per space (calls and bytes), deep copies
// (calls and bytes). At kokkosp_finalize_library it writes them as JSON to $COUNT_TOOL_OUT.
// Also every other hook, for the test of tools run side by side (test_kokkos_chain.py): its load
// sequence, its parse_args words, ends matched to its own ids (kernels, fences, sections), pops,
// profile events, dual views, metadata. COUNT_TOOL_FENCING=1: it asks Kokkos for global fencing.
// Hooks may come from several threads (Kokkos' own are on the launching thread, but a program's
// threads may launch): one mutex, this is a test tool.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <set>
#include <tuple>
#include <vector>

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
int g_load_seq = -1;
std::vector<std::string> g_words;  // parse_args after argv[0]
std::uint64_t g_settings = 0, g_interfaces = 0, g_metadata = 0, g_pops = 0, g_fence_ends = 0, g_copy_ends = 0;
std::uint64_t g_syncs = 0, g_modifies = 0;
std::set<std::uint64_t> g_open_fences;
std::map<std::string, std::uint64_t> g_events;
std::map<std::uint32_t, std::string> g_section_names;
std::map<std::string, std::uint64_t> g_section_calls;  // "create NAME", "start NAME", ...; "unknown id" for ids not ours
std::uint32_t g_next_section = 100;  // not Kokkos' nor another tool's numbering

void section_call(const char* what, std::uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_section_names.find(id);
  ++g_section_calls[it == g_section_names.end() ? std::string("unknown id") : what + (" " + it->second)];
}

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

// A JSON object of counts by name.
void print_counts(std::FILE* f, const std::map<std::string, std::uint64_t>& counts) {
  const char* sep = "";
  for (const auto& [name, n] : counts) {
    std::fprintf(f, "%s%s: %llu", sep, quoted(name).c_str(), static_cast<unsigned long long>(n));
    sep = ", ";
  }
}

}  // namespace

extern "C" {

void kokkosp_init_library(int load_seq, std::uint64_t, std::uint32_t, void*) { g_load_seq = load_seq; }
void kokkosp_parse_args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) g_words.emplace_back(argv[i] != nullptr ? argv[i] : "");
}
void kokkosp_print_help(char*) { std::printf("count_tool: no options\n"); }
struct ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};
void kokkosp_request_tool_settings(std::uint32_t, ToolSettings* s) {
  ++g_settings;
  const char* f = std::getenv("COUNT_TOOL_FENCING");
  s->requires_global_fencing = f != nullptr && f[0] == '1';
}
struct ToolInterface {
  void (*fence)(std::uint32_t);
  void (*padding[31])();
};
void kokkosp_provide_tool_programming_interface(std::uint32_t, ToolInterface iface) { g_interfaces += iface.fence != nullptr; }
void kokkosp_declare_metadata(const char*, const char*) { ++g_metadata; }
void kokkosp_profile_event(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_events[name != nullptr ? name : ""];
}
void kokkosp_create_profile_section(const char* name, std::uint32_t* id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next_section++;
  g_section_names[*id] = name != nullptr ? name : "";
  ++g_section_calls["create " + g_section_names[*id]];
}
void kokkosp_start_profile_section(std::uint32_t id) { section_call("start", id); }
void kokkosp_stop_profile_section(std::uint32_t id) { section_call("stop", id); }
void kokkosp_destroy_profile_section(std::uint32_t id) { section_call("destroy", id); }
void kokkosp_dual_view_sync(const char*, const void*, bool) { ++g_syncs; }
void kokkosp_dual_view_modify(const char*, const void*, bool) { ++g_modifies; }

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
void kokkosp_pop_profile_region() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_pops;
}

void kokkosp_begin_fence(const char*, std::uint32_t, std::uint64_t* id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  *id = g_next_id++;
  ++g_fences;
  g_open_fences.insert(*id);
}
void kokkosp_end_fence(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_fence_ends += g_open_fences.erase(id);
}

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
void kokkosp_end_deep_copy() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_copy_ends;
}

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
  print_counts(f, g_regions);
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
  std::fprintf(f, ", \"load_seq\": %d, \"parse_args\": [", g_load_seq);
  sep = "";
  for (const std::string& w : g_words) {
    std::fprintf(f, "%s%s", sep, quoted(w).c_str());
    sep = ", ";
  }
  std::fprintf(f, "], \"profile_events\": {");
  print_counts(f, g_events);
  std::fprintf(f, "}, \"sections\": {");
  print_counts(f, g_section_calls);
  const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::fprintf(f, "}, \"settings\": %llu, \"interfaces\": %llu, \"metadata\": %llu, \"pops\": %llu, \"fence_ends\": %llu, "
               "\"copy_ends\": %llu, \"dual_view_syncs\": %llu, \"dual_view_modifies\": %llu, \"kernels_open\": %llu",
               u(g_settings), u(g_interfaces), u(g_metadata), u(g_pops), u(g_fence_ends), u(g_copy_ends), u(g_syncs), u(g_modifies),
               u(g_open.size()));
  std::fprintf(f, "}\n");
  std::fclose(f);
}

}  // extern "C"
