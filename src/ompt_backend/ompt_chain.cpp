#include "ompt_backend/ompt_chain.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/record/raw_trace.hpp"
#include "common/session/config.hpp"
#include "common/session/session.hpp"
#include "common/support/crash_guard.hpp"
#include "common/support/log.hpp"
#include "common/support/tool_libraries.hpp"
#include "ompt_backend/chain_tables.hpp"
#include "ompt_backend/ompt_runtime.hpp"

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*);

namespace kob::omp::chain {

namespace {

ompt_start_tool_result_t* g_result = nullptr;  // the child's
std::string g_path;
bool g_active = false;  // the child's result was taken: callbacks go through the wrappers

// Where a candidate was named: what a failure to load it says.
enum class Named { KobList, Chain, OmpList };

struct Candidate {
  std::string path;
  Named named;
};

std::vector<Candidate> candidates() {
  std::vector<Candidate> out;
  for (const std::string& p : tool_libraries::entries(std::getenv("KOB_TOOL_LIBRARIES"), ':')) out.push_back({p, Named::KobList});
  if (!session::config().chain.empty()) out.push_back({session::config().chain, Named::Chain});
  const std::vector<std::string> omp = tool_libraries::entries(std::getenv("OMP_TOOL_LIBRARIES"), ':');
  std::size_t from = 0;
  for (std::size_t i = 0; i < omp.size(); ++i)
    if (tool_libraries::same_file(omp[i].c_str(), tool_libraries::own_path())) from = i + 1;
  for (std::size_t i = from; i < omp.size(); ++i) out.push_back({omp[i], Named::OmpList});
  return out;
}

bool has_kokkos_hooks(void* lib) {
  for (const char* h : {"kokkosp_init_library", "kokkosp_begin_parallel_for", "kokkosp_push_profile_region"})
    if (dlsym(lib, h) != nullptr) return true;
  return false;
}

// A second file of this library (an installed copy beside a build's, say): two of it in one
// process would write the same files.
bool another_copy(void* symbol) {
  Dl_info info{};
  const char* self = tool_libraries::own_path();
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr || self == nullptr) return false;
  const std::string theirs = info.dli_fname, ours = self;
  const bool same = theirs.substr(theirs.rfind('/') + 1) == ours.substr(ours.rfind('/') + 1);
  if (same) log::debug(theirs + " is another copy of this library; it is not started twice");
  return same;
}

// The library's ompt_start_tool, or null (said where the user named it for us).
ompt_start_tool_result_t* (*start_function(const Candidate& c))(unsigned int, const char*) {
  void* lib = dlopen(c.path.c_str(), RTLD_LAZY | RTLD_LOCAL);  // as libomp opens tools
  if (lib == nullptr) {
    const char* why = dlerror();
    const std::string line = "cannot load the chained tool " + c.path + " (" + (why ? why : "dlopen failed") + "); this library runs on without it";
    if (c.named == Named::Chain) log::warn_once(log::Once::ChainUnloadable, line);
    else log::warn(line);
    return nullptr;
  }
  auto* fn = reinterpret_cast<ompt_start_tool_result_t* (*)(unsigned int, const char*)>(dlsym(lib, "ompt_start_tool"));
  if (fn == &::ompt_start_tool || another_copy(reinterpret_cast<void*>(fn))) return nullptr;  // this library, named again
  if (fn == nullptr) {
    if (c.named == Named::Chain && !has_kokkos_hooks(lib))
      log::warn_once(log::Once::ChainNoHook,
                     "the chained tool " + c.path + " has neither kokkosp_* hooks nor ompt_start_tool; this library runs on without it");
    else if (c.named == Named::KobList)
      log::warn("the OpenMP tool " + c.path + " in KOB_TOOL_LIBRARIES has no ompt_start_tool; it is not started");
    else
      log::debug("the tool " + c.path + " has no ompt_start_tool; not an OpenMP tool");
    return nullptr;
  }
  return fn;  // dlclose never: the tool may have left atexit handlers
}

void drop(const std::string& why) {
  g_active = false;
  for (int e = 1; e < kEvents; ++e) {
    g_theirs[e].store(nullptr, std::memory_order_relaxed);
    if (wrapper(e) != nullptr) g_rt.set_callback(static_cast<ompt_callbacks_t>(e), g_ours[e].load(std::memory_order_relaxed));
  }
  log::warn("the chained OpenMP tool " + g_path + " " + why + "; this library runs on without it");
}

}  // namespace

const char* child_path() { return g_path.c_str(); }

ompt_start_tool_result_t* start(unsigned int omp_version, const char* runtime_version) {
  for (const Candidate& c : candidates()) {
    auto* fn = start_function(c);
    if (fn == nullptr) continue;
    ompt_start_tool_result_t* result = nullptr;
    const int r = crash_guard::call([&] { result = fn(omp_version, runtime_version); });
    if (r != crash_guard::kReturned) {
      log::warn("the chained OpenMP tool " + c.path +
                (r == crash_guard::kThrew ? " threw an exception" : " crashed (signal " + std::to_string(r) + ")") +
                " in ompt_start_tool; this library runs on without it");
      return nullptr;
    }
    if (result == nullptr) {  // as libomp does: the next one
      log::debug("the OpenMP tool " + c.path + " declined to start (its ompt_start_tool returned NULL)");
      continue;
    }
    g_result = result;
    g_path = c.path;
    g_active = true;
    raw::add_kv("kob", "ompt_chain", c.path);
    log::info("OpenMP (OMPT) callbacks shared with " + c.path);
    return result;
  }
  return nullptr;
}

ompt_start_tool_result_t* hand_over() {
  g_active = false;
  if (g_result != nullptr) log::info("the OpenMP runtime talks to " + g_path + " alone (no OpenMP event group in --events)");
  return g_result;
}

int install(int event) {
  const auto e = static_cast<ompt_callbacks_t>(event);
  const ompt_callback_t mine = g_ours[event].load(std::memory_order_relaxed);
  const ompt_callback_t child = g_theirs[event].load(std::memory_order_relaxed);
  const ompt_callback_t both = wrapper(event);
  if (both == nullptr) return g_rt.set_callback(e, mine ? mine : child);  // an event of a later OpenMP: not shared
  return g_rt.set_callback(e, mine || child || keeps_words(event) ? both : nullptr);
}

int set_ours(ompt_callbacks_t event, ompt_callback_t fn) {
  g_ours[event].store(fn, std::memory_order_relaxed);  // our tables' events are all below kEvents
  return g_active ? install(event) : g_rt.set_callback(event, fn);
}

void initialize_child(ompt_function_lookup_t lookup, int initial_device_num) {
  if (!g_active || g_result == nullptr || g_result->initialize == nullptr) return;
  set_runtime_lookup(lookup);
  for (int e = 1; e < kEvents; ++e)
    if (keeps_words(e) && g_ours[e].load(std::memory_order_relaxed) == nullptr) install(e);
  int ok = 0;
  const int r = crash_guard::call([&] { ok = g_result->initialize(&child_lookup, initial_device_num, &g_result->tool_data); });
  if (r != crash_guard::kReturned)
    drop(r == crash_guard::kThrew ? "threw an exception in its initialize" : "crashed (signal " + std::to_string(r) + ") in its initialize");
  else if (ok == 0)
    drop("declined to start (its initialize returned 0)");
}

void finalize_child() {
  if (!g_active || g_result == nullptr || g_result->finalize == nullptr) return;
  g_active = false;  // once
  g_result->finalize(&g_result->tool_data);
  // Nothing reaches the child after its finalize (the wrappers stay for ours).
  for (auto& f : g_theirs) f.store(nullptr, std::memory_order_relaxed);
}

}  // namespace kob::omp::chain
