#include "kokkos_hooks/kokkos_chain.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/record/raw_trace.hpp"
#include "common/session/config.hpp"
#include "common/support/crash_guard.hpp"
#include "common/support/tool_libraries.hpp"
#include "common/support/log.hpp"
#include "kokkos_hooks/kokkos_events.hpp"
#include "kokkos_hooks/kokkos_lifecycle.hpp"

extern "C" void kokkosp_init_library(int, std::uint64_t, std::uint32_t, Kokkos_Profiling_KokkosPDeviceInfo*);

namespace kob::kokkos::chain {

namespace {

Hooks g_hooks;  // all null without a child
std::atomic<bool> g_active{false};
bool active() { return g_active.load(std::memory_order_relaxed); }

// A child runs, or no longer (it crashed as it started): the hooks' ways follow.
void set_child(const Hooks& h, bool on) {
  g_hooks = on ? h : Hooks{};
  g_active.store(on, std::memory_order_relaxed);
  session::set_kokkos_chained(on);
  update_end_slow();
}

// What Kokkos gave this library at start-up, for a child named only on the command line
// (parse_args comes after init_library, request_tool_settings and the programming interface).
struct StartUp {
  bool initialised = false;
  int load_seq = 0;
  std::uint64_t version = 0;
  std::uint32_t ndevinfos = 0;
  Kokkos_Profiling_KokkosPDeviceInfo* devinfos = nullptr;
  bool have_iface = false;
  std::uint32_t iface_count = 0;
  Kokkos_Tools_ToolProgrammingInterface iface{};
};
StartUp g_start;
std::string g_child_path;  // "" until a child was tried
// The child asked for global fencing after Kokkos had been told: its kernel and region hooks are
// fenced here instead, through Kokkos' tool fence.
bool g_fence_for_child = false;
// The child's argv (program name and --chain-arg words): it may keep the pointers.
std::vector<std::string> g_child_words;
std::vector<char*> g_child_argv;

// The child's section ids by ours (Kokkos' section ids are small counters); past the table the
// child gets ours.
constexpr std::uint32_t kSections = 4096;
std::atomic<std::uint32_t> g_sections[kSections];

// ---- which library, and loading it ----------------------------------------------------------

// kokkos-tools' convention: in KOKKOS_TOOLS_LIBS (else KOKKOS_PROFILE_LIBRARY) this library is
// entry load_seq, its child entry load_seq + 1. Of the two variables the one that names this
// library there is taken first (a run may set both, Kokkos 3.x reading only the second).
std::string child_from_environment(int load_seq) {
  if (load_seq < 0) return "";
  const std::size_t at = static_cast<std::size_t>(load_seq);
  const char* self = tool_libraries::own_path();
  std::string fallback;
  bool have_fallback = false;
  for (const char* var : {"KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    const std::vector<std::string> e = tool_libraries::entries(v, ';');
    const std::string next = at + 1 < e.size() ? e[at + 1] : "";
    if (at < e.size() && tool_libraries::same_file(e[at].c_str(), self)) return next;
    if (!have_fallback) fallback = next, have_fallback = true;
  }
  return fallback;
}

template <class T>
void find(void* lib, const char* name, T& slot, bool& any) {
  slot = reinterpret_cast<T>(dlsym(lib, name));
  any = any || slot != nullptr;
}

bool look_up(void* lib, Hooks& h) {
  bool any = false;
  find(lib, "kokkosp_init_library", h.init, any);
  find(lib, "kokkosp_finalize_library", h.finalize, any);
  find(lib, "kokkosp_parse_args", h.parse_args, any);
  find(lib, "kokkosp_print_help", h.print_help, any);
  find(lib, "kokkosp_request_tool_settings", h.request_tool_settings, any);
  find(lib, "kokkosp_provide_tool_programming_interface", h.provide_tool_programming_interface, any);
  find(lib, "kokkosp_declare_metadata", h.declare_metadata, any);
  find(lib, "kokkosp_begin_parallel_for", h.begin_parallel_for, any);
  find(lib, "kokkosp_begin_parallel_reduce", h.begin_parallel_reduce, any);
  find(lib, "kokkosp_begin_parallel_scan", h.begin_parallel_scan, any);
  find(lib, "kokkosp_begin_fence", h.begin_fence, any);
  find(lib, "kokkosp_end_parallel_for", h.end_parallel_for, any);
  find(lib, "kokkosp_end_parallel_reduce", h.end_parallel_reduce, any);
  find(lib, "kokkosp_end_parallel_scan", h.end_parallel_scan, any);
  find(lib, "kokkosp_end_fence", h.end_fence, any);
  find(lib, "kokkosp_push_profile_region", h.push_profile_region, any);
  find(lib, "kokkosp_pop_profile_region", h.pop_profile_region, any);
  find(lib, "kokkosp_profile_event", h.profile_event, any);
  find(lib, "kokkosp_create_profile_section", h.create_profile_section, any);
  find(lib, "kokkosp_start_profile_section", h.start_profile_section, any);
  find(lib, "kokkosp_stop_profile_section", h.stop_profile_section, any);
  find(lib, "kokkosp_destroy_profile_section", h.destroy_profile_section, any);
  find(lib, "kokkosp_allocate_data", h.allocate_data, any);
  find(lib, "kokkosp_deallocate_data", h.deallocate_data, any);
  find(lib, "kokkosp_begin_deep_copy", h.begin_deep_copy, any);
  find(lib, "kokkosp_end_deep_copy", h.end_deep_copy, any);
  find(lib, "kokkosp_dual_view_sync", h.dual_view_sync, any);
  find(lib, "kokkosp_dual_view_modify", h.dual_view_modify, any);
  return any;
}

// ---- a child that crashes while it starts ---------------------------------------------------

// Runs one start-up hook of the child; false (the child dropped, one line said) when it crashed
// or threw.
template <class F>
bool guarded(const char* hook, F&& call) {
  const int r = crash_guard::call(call);
  if (r == crash_guard::kReturned) return true;
  set_child(Hooks{}, false);
  log::warn("the chained Kokkos tool " + g_child_path +
            (r == crash_guard::kThrew ? " threw an exception" : " crashed (signal " + std::to_string(r) + ")") + " in " + hook +
            "; this library runs on without it");
  return false;
}

// The child's start: init_library with our load sequence + 1, its settings (fenced here when
// Kokkos can no longer be asked), the programming interface.
void start_child(bool late) {
  Hooks& h = g_hooks;
  if (h.init != nullptr && !guarded("kokkosp_init_library", [] {
        g_hooks.init(g_start.load_seq + 1, g_start.version, g_start.ndevinfos, g_start.devinfos);
      }))
    return;
  if (late && h.request_tool_settings != nullptr) {
    Kokkos_Tools_ToolSettings s{};
    s.requires_global_fencing = true;  // Kokkos' default
    if (!guarded("kokkosp_request_tool_settings", [&] { g_hooks.request_tool_settings(1, &s); })) return;
    g_fence_for_child = s.requires_global_fencing && !kokkos_fences();  // what Kokkos was told (kokkos_lifecycle)
  }
  if (late && g_start.have_iface && h.provide_tool_programming_interface != nullptr)
    guarded("kokkosp_provide_tool_programming_interface", [] { g_hooks.provide_tool_programming_interface(g_start.iface_count, g_start.iface); });
}

// Loads the child at path and starts it; one line and no child when it cannot be.
void load(const std::string& path, bool late) {
  g_child_path = path;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {  // dlopen's own message names the file and the cause
    const char* why = dlerror();
    log::warn_once(log::Once::ChainUnloadable, "cannot load the chained tool " + path + " (" + (why ? why : "dlopen failed") +
                                                   "); this library runs on without it");
    return;
  }
  Hooks h;
  if (!look_up(lib, h)) {
    if (dlsym(lib, "ompt_start_tool") != nullptr)  // an OpenMP tool only: the OMPT half runs it
      log::debug("the chained tool " + path + " has no kokkosp_* hook; its OpenMP half only");
    else
      log::warn_once(log::Once::ChainNoHook, "the chained tool " + path +
                                                 " has neither kokkosp_* hooks nor ompt_start_tool; this library runs on without it");
    dlclose(lib);
    return;
  }
  if (h.init == &kokkosp_init_library) {  // dlopen gave this library's own handle
    log::warn("the chained Kokkos tool " + path + " is this library itself; it runs once");
    return;
  }
  set_child(h, true);  // dlclose never: the child may have left atexit handlers
  raw::add_kv("kob", "kokkos_chain", path);
  log::info("Kokkos hooks passed on to " + path);
  start_child(late);
}

// The child's parse_args: its program name (ours) and the --chain-arg words.
void child_parse_args(int argc, char** argv) {
  if (!active() || g_hooks.parse_args == nullptr) return;
  g_child_words.clear();
  g_child_words.emplace_back(argc > 0 && argv != nullptr && argv[0] != nullptr ? argv[0] : "");
  for (const std::string& w : session::config().chain_args) g_child_words.push_back(w);
  g_child_argv.clear();
  for (std::string& w : g_child_words) g_child_argv.push_back(w.data());
  g_child_argv.push_back(nullptr);
  guarded("kokkosp_parse_args", [] { g_hooks.parse_args(static_cast<int>(g_child_words.size()), g_child_argv.data()); });
}

// ---- the hot hooks' ids ---------------------------------------------------------------------

void push_ids(std::uint64_t key, std::uint64_t theirs) {
  ChainIds& c = this_thread().chain;
  if (c.depth >= ChainIds::kMaxDepth) return;  // the child's end then does not come
  c.ours[c.depth] = key;
  c.theirs[c.depth] = theirs;
  ++c.depth;
}

// The child's id for ours, taken off the thread's stack (innermost first).
bool pop_ids(std::uint64_t key, std::uint64_t& theirs) {
  ChainIds& c = this_thread().chain;
  for (std::uint32_t i = c.depth; i-- > 0;) {
    if (c.ours[i] != key) continue;
    theirs = c.theirs[i];
    for (std::uint32_t j = i + 1; j < c.depth; ++j) {
      c.ours[j - 1] = c.ours[j];
      c.theirs[j - 1] = c.theirs[j];
    }
    --c.depth;
    return true;
  }
  return false;
}

void fence_for_child() {
  if (KOB_UNLIKELY(g_fence_for_child) && g_tool_fence != nullptr) g_tool_fence(0);
}

}  // namespace

// ---- start-up -------------------------------------------------------------------------------

void init(int load_seq, std::uint64_t version, std::uint32_t ndevinfos, Kokkos_Profiling_KokkosPDeviceInfo* devinfos) {
  g_start.initialised = true;
  g_start.load_seq = load_seq;
  g_start.version = version;
  g_start.ndevinfos = ndevinfos;
  g_start.devinfos = devinfos;
  const std::string& named = session::config().chain;
  const std::string path = !named.empty() ? named : child_from_environment(load_seq);
  if (!path.empty()) load(path, false);
}

bool request_settings(std::uint32_t n, const Kokkos_Tools_ToolSettings* settings) {
  if (!active() || g_hooks.request_tool_settings == nullptr || settings == nullptr || n == 0) return false;
  Kokkos_Tools_ToolSettings copy = *settings;
  if (!guarded("kokkosp_request_tool_settings", [&] { g_hooks.request_tool_settings(n, &copy); })) return false;
  return copy.requires_global_fencing;
}

void provide_interface(std::uint32_t n, const Kokkos_Tools_ToolProgrammingInterface& iface) {
  g_start.have_iface = true;
  g_start.iface_count = n;
  g_start.iface = iface;
  if (active() && g_hooks.provide_tool_programming_interface != nullptr)
    guarded("kokkosp_provide_tool_programming_interface", [&] { g_hooks.provide_tool_programming_interface(n, iface); });
}


void parse_args(int argc, char** argv) {
  const std::string& named = session::config().chain;
  if (g_child_path.empty() && !named.empty() && g_start.initialised) load(named, true);
  else if (!named.empty() && named != g_child_path)
    log::warn("--chain=" + named + " came after the chained Kokkos tool " + g_child_path + " was started; it stays the only one");
  child_parse_args(argc, argv);
}

void print_help(char* prog) {
  if (active() && g_hooks.print_help != nullptr) g_hooks.print_help(prog);
}

void finalize() {
  if (active() && g_hooks.finalize != nullptr) g_hooks.finalize();
}

// ---- the hooks' slow way ----------------------------------------------------------------------

namespace {

bool recorded() { return recording(kGroupKokkos); }

// Kokkos' id for a kernel or fence not recorded: kNotRecorded and a count, unless no child runs
// (0, as the fast way gives, whose end then records nothing).
std::atomic<std::uint64_t> g_unrecorded{0};
std::uint64_t unrecorded_id() { return active() ? kNotRecorded | (g_unrecorded.fetch_add(1, std::memory_order_relaxed) + 1) : 0; }
bool ours(std::uint64_t id) { return id != 0 && (id & kNotRecorded) == 0; }

// The key of an id on the thread's stack of the child's ids: fences apart from kernels.
constexpr std::uint64_t kFenceKey = std::uint64_t{1} << 62;

BeginFn child_begin(KernelKind kind) {
  return kind == KernelKind::ParallelFor ? g_hooks.begin_parallel_for : kind == KernelKind::ParallelReduce ? g_hooks.begin_parallel_reduce : g_hooks.begin_parallel_scan;
}
EndFn child_end(KernelKind kind) {
  return kind == KernelKind::ParallelFor ? g_hooks.end_parallel_for : kind == KernelKind::ParallelReduce ? g_hooks.end_parallel_reduce : g_hooks.end_parallel_scan;
}

}  // namespace

void begin_kernel(KernelKind kind, const char* name, std::uint32_t devid, std::uint64_t* kernid) {
  const BeginFn child = child_begin(kind);
  std::uint64_t theirs = 0;
  if (child != nullptr) {
    fence_for_child();
    child(name, devid, &theirs);
  }
  if (recorded()) record_kernel_begin(kind, name, devid, kernid);
  else if (kernid != nullptr) *kernid = unrecorded_id();
  if (child != nullptr) push_ids(kernid != nullptr ? *kernid : 0, theirs);
}

void end_kernel(std::uint64_t kernid, KernelKind kind) {
  if (ours(kernid)) {
    if (g_fence_at_end && g_tool_fence != nullptr) g_tool_fence(0);
    record_kernel_end(kernid);
  }
  const EndFn child = child_end(kind);
  std::uint64_t theirs = 0;
  if (child == nullptr || !pop_ids(kernid, theirs)) return;
  fence_for_child();
  child(theirs);
}

void begin_fence(const char* name, std::uint32_t devid, std::uint64_t* handle) {
  std::uint64_t theirs = 0;
  if (g_hooks.begin_fence != nullptr) g_hooks.begin_fence(name, devid, &theirs);
  if (recorded()) record_fence_begin(name, devid, handle);
  else if (handle != nullptr) *handle = unrecorded_id();
  if (g_hooks.begin_fence != nullptr) push_ids((handle != nullptr ? *handle : 0) ^ kFenceKey, theirs);
}

void end_fence(std::uint64_t handle) {
  if (ours(handle)) record_fence_end(handle);
  std::uint64_t theirs = 0;
  if (g_hooks.end_fence != nullptr && pop_ids(handle ^ kFenceKey, theirs)) g_hooks.end_fence(theirs);
}

void named_event(Ev type, const char* name) {
  if (type == Ev::RegionPush && g_hooks.push_profile_region != nullptr) {
    fence_for_child();
    g_hooks.push_profile_region(name);
  }
  if (recorded()) record_named(type, name);
  if (type == Ev::ProfileEvent && g_hooks.profile_event != nullptr) g_hooks.profile_event(name);
}

void pop_region() {
  if (recorded()) record_region_pop();
  if (g_hooks.pop_profile_region != nullptr) {
    fence_for_child();
    g_hooks.pop_profile_region();
  }
}

void create_section(const char* name, std::uint32_t* sec_id) {
  std::uint32_t theirs = 0;
  if (g_hooks.create_profile_section != nullptr) g_hooks.create_profile_section(name, &theirs);
  const std::uint32_t ours = new_section_id();
  if (sec_id != nullptr) *sec_id = ours;
  if (recorded()) record_section_create(name, ours);
  if (ours < kSections) g_sections[ours].store(theirs, std::memory_order_relaxed);
}

void section_event(Ev type, std::uint32_t id) {
  if (recorded()) record_section(type, id);
  const std::uint32_t theirs = id < kSections ? g_sections[id].load(std::memory_order_relaxed) : id;
  const Hooks& h = g_hooks;
  const auto call = type == Ev::SectionStart ? h.start_profile_section : type == Ev::SectionStop ? h.stop_profile_section : h.destroy_profile_section;
  if (call != nullptr) call(theirs);
}

void memory_event(Ev type, Kokkos_Profiling_SpaceHandle& space, const char* name, const void* ptr, std::uint64_t size) {
  const auto call = type == Ev::Alloc ? g_hooks.allocate_data : g_hooks.deallocate_data;
  if (call != nullptr) call(space, name, ptr, size);
  space.name[63] = 0;
  if (recorded()) record_memory(type, space.name, name, ptr, size);
}

void begin_deep_copy(Kokkos_Profiling_SpaceHandle& dst_space, const char* dst_name, const void* dst_ptr, Kokkos_Profiling_SpaceHandle& src_space,
                     const char* src_name, const void* src_ptr, std::uint64_t size) {
  if (g_hooks.begin_deep_copy != nullptr) g_hooks.begin_deep_copy(dst_space, dst_name, dst_ptr, src_space, src_name, src_ptr, size);
  dst_space.name[63] = 0;
  src_space.name[63] = 0;
  if (recorded()) record_deep_copy_begin(dst_space.name, dst_name, dst_ptr, src_space.name, src_name, size);
}

void end_deep_copy() {
  if (recorded()) record_deep_copy_end();
  if (g_hooks.end_deep_copy != nullptr) g_hooks.end_deep_copy();
}

void dual_view(const char* name, const void* ptr, bool on_device, bool modify) {
  if (recorded()) record_dual_view(name, ptr, on_device, modify);
  const auto call = modify ? g_hooks.dual_view_modify : g_hooks.dual_view_sync;
  if (call != nullptr) call(name, ptr, on_device);
}

void declare_metadata(const char* key, const char* value) {
  if (g_hooks.declare_metadata != nullptr) g_hooks.declare_metadata(key, value);
}

}  // namespace kob::kokkos::chain
