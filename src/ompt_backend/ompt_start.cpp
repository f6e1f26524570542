// Tool start-up: the runtime calls ompt_start_tool once; initialize looks up the entry points
// and registers the callbacks from the tables; finalize hands over to the session.
#include <omp-tools.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/session/config.hpp"
#include "common/support/log.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/record/recorder.hpp"
#include "common/session/session.hpp"
#include "ompt_backend/runtime_code_range.hpp"
#include "ompt_backend/callback_table.hpp"
#include "ompt_backend/device_tracing.hpp"
#include "ompt_backend/ompt_chain.hpp"
#include "ompt_backend/ompt_runtime.hpp"

namespace kob::omp {

RuntimeEntryPoints g_rt;
int g_initial_device_num = -1;

namespace {

std::atomic<bool> g_started{false};
std::string g_runtime_version;

const char* set_result_name(int r) { return omp_names::set_result(r); }

template <class T>
void look_up(ompt_function_lookup_t lookup, const char* name, T& slot, std::string& missing) {
  slot = reinterpret_cast<T>(lookup(name));
  if (slot == nullptr) missing += (missing.empty() ? "" : ",") + std::string(name);
}

void look_up_entry_points(ompt_function_lookup_t lookup) {
  std::string missing;
  look_up(lookup, "ompt_set_callback", g_rt.set_callback, missing);
  look_up(lookup, "ompt_get_thread_data", g_rt.get_thread_data, missing);
  look_up(lookup, "ompt_get_parallel_info", g_rt.get_parallel_info, missing);
  look_up(lookup, "ompt_get_task_info", g_rt.get_task_info, missing);
  look_up(lookup, "ompt_get_unique_id", g_rt.get_unique_id, missing);
  look_up(lookup, "ompt_get_num_procs", g_rt.get_num_procs, missing);
  look_up(lookup, "ompt_get_num_places", g_rt.get_num_places, missing);
  look_up(lookup, "ompt_get_place_proc_ids", g_rt.get_place_proc_ids, missing);
  look_up(lookup, "ompt_get_place_num", g_rt.get_place_num, missing);
  look_up(lookup, "ompt_get_proc_id", g_rt.get_proc_id, missing);
  look_up(lookup, "ompt_get_state", g_rt.get_state, missing);
  look_up(lookup, "ompt_enumerate_states", g_rt.enumerate_states, missing);
  look_up(lookup, "ompt_enumerate_mutex_impls", g_rt.enumerate_mutex_impls, missing);
  look_up(lookup, "ompt_get_target_info", g_rt.get_target_info, missing);
  look_up(lookup, "ompt_get_num_devices", g_rt.get_num_devices, missing);
  look_up(lookup, "ompt_finalize_tool", g_rt.finalize_tool, missing);
  if (!missing.empty()) {
    log::debug("the OpenMP runtime lacks the entry points " + missing);
    session::add_other_data("ompt", "missing_entry_points", missing);
  }
}

// Facts about the machine and runtime that only the runtime knows, for otherData.
void record_runtime_facts() {
  if (g_rt.get_num_procs) session::add_other_data("ompt", "num_procs", std::to_string(g_rt.get_num_procs()));
  // What the program may ask for (the findings tell a region serialized while more threads were to be had).
  if (const char* n = std::getenv("OMP_NUM_THREADS")) session::add_other_data("ompt", "OMP_NUM_THREADS", n);
  if (g_rt.get_num_places) session::add_other_data("ompt", "num_places", std::to_string(g_rt.get_num_places()));
  if (g_rt.get_num_devices) session::add_other_data("ompt", "num_devices", std::to_string(g_rt.get_num_devices()));
  if (g_rt.enumerate_states) {
    int state = ompt_state_undefined, n = 0;
    const char* name = nullptr;
    std::string names;
    while (n < 256 && g_rt.enumerate_states(state, &state, &name)) {
      names += (names.empty() ? "" : ",") + std::string(name ? name : "?");
      ++n;
    }
    session::add_other_data("ompt", "states", names);
  }
  if (g_rt.enumerate_mutex_impls) {
    int impl = ompt_mutex_impl_none, n = 0;
    const char* name = nullptr;
    std::string names;
    while (n < 64 && g_rt.enumerate_mutex_impls(impl, &impl, &name)) {
      names += (names.empty() ? "" : ",") + std::string(name ? name : "?");
      ++n;
    }
    session::add_other_data("ompt", "mutex_impls", names);
  }
}

bool set_failed(int r) { return r == ompt_set_never || r == ompt_set_error || r == ompt_set_impossible; }

int set_one(const CallbackEntry& e) {
  const int r = chain::set_ours(e.event, e.fn);
  log::debug(std::string("ompt_set_callback(") + e.name + ") = " + set_result_name(r));
  session::add_other_data("ompt_callbacks", e.name, set_result_name(r));
  return r;
}

void register_callbacks(std::span<const CallbackEntry> table, std::uint32_t groups) {
  for (const CallbackEntry& e : table) {
    if ((e.groups & groups) == 0 || e.fallback_only) continue;
    const CallbackEntry* used = &e;
    int r = set_one(e);
    // An EMI callback the runtime cannot deliver: try the entry named as its fallback.
    for (int hops = 0; set_failed(r) && used->fallback != 0 && hops < 4; ++hops) {
      const CallbackEntry* next = nullptr;
      for (const CallbackEntry& f : table)
        if (static_cast<int>(f.event) == used->fallback) next = &f;
      if (next == nullptr) break;
      log::debug(std::string("the OpenMP runtime cannot deliver ") + used->name + "; trying " + next->name);
      used = next;
      r = set_one(*used);
    }
    if (set_failed(r)) {
      log::info(std::string("the OpenMP runtime cannot deliver the ") + used->name + " callback (" + set_result_name(r) +
                "); those events are missing");
    }
  }
}

void finalize(ompt_data_t* /*tool_data*/) {
  chain::finalize_child();
  device_tracing::finalize_all();
  session::ompt_finalised();
}

// The OpenMP place of each thread: the place holding the processor it started on. Looked up
// here, not in thread_begin, because ompt_get_place_num may take a runtime lock (see
// on_thread_begin); the place table entry points read it without one.
void fill_thread_places() {
  if (g_rt.get_num_places == nullptr || g_rt.get_place_proc_ids == nullptr) return;
  const int places = g_rt.get_num_places();
  std::vector<std::vector<int>> procs(places > 0 ? static_cast<std::size_t>(places) : 0);
  for (int p = 0; p < places; ++p) {
    const int n = g_rt.get_place_proc_ids(p, 0, nullptr);
    if (n <= 0) continue;
    procs[p].resize(static_cast<std::size_t>(n));
    if (g_rt.get_place_proc_ids(p, n, procs[p].data()) != n) procs[p].clear();
  }
  for (ThreadBuffer* b : recorder::threads()) {
    const int cpu = b->omp_proc.load(std::memory_order_relaxed);
    for (int p = 0; cpu >= 0 && p < places; ++p) {
      if (std::find(procs[p].begin(), procs[p].end(), cpu) != procs[p].end()) {
        b->omp_place.store(p, std::memory_order_relaxed);
        break;
      }
    }
  }
}

// Before the files are written (possibly at exit, before the runtime finalizes us).
void before_write() {
  device_tracing::finalize_all();
  record_runtime_facts();
  fill_thread_places();
}

int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t* /*tool_data*/) {
  try {
    look_up_entry_points(lookup);
    if (g_rt.set_callback == nullptr) {
      log::warn("the OpenMP runtime offers no ompt_set_callback; OpenMP events are not recorded");
      return 0;
    }
    session::ompt_started(g_runtime_version);
    g_initial_device_num = initial_device_num;
    session::set_omp_initial_device(initial_device_num);
    session::add_other_data("ompt", "initial_device_num", std::to_string(initial_device_num));
    session::set_before_write(before_write);
    session::set_omp_runtime_code(runtime_code_range(reinterpret_cast<const void*>(g_rt.set_callback)));
    register_callbacks(host_callbacks(), session::config().events);
    register_callbacks(target_callbacks(), session::config().events);
    chain::initialize_child(lookup, initial_device_num);
    // The thread that initialises the runtime gets no thread_begin before its first events.
    this_thread();
    return 1;
  } catch (...) {
    log::error("OMPT initialisation failed; OpenMP events are not recorded");
    return 0;
  }
}


}  // namespace
}  // namespace kob::omp

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int omp_version,
                                                                                             const char* runtime_version) {
  using namespace kob;
  session::ensure_started();
  // One recorder per process even if a second runtime (or a second lookup) asks again.
  if (omp::g_started.exchange(true)) return nullptr;
  omp::chain::start(omp_version, runtime_version);  // an OpenMP tool beside this library, if one is named
  if ((session::config().events & kGroupAllOmp) == 0) {
    log::debug("no OpenMP event group requested (--events); not starting as an OMPT tool");
    return omp::chain::hand_over();
  }
  // OMPT as we use it (5.0 callbacks, ompt_data_t words) came with OpenMP 5.0 (201811); LLVM
  // reports its preview number 201611.
  if (omp_version < 201611) {
    log::warn("the OpenMP runtime implements OpenMP " + std::to_string(omp_version) +
              ", older than OMPT 5.0; OpenMP events are not recorded");
    return omp::chain::hand_over();
  }
  omp::g_runtime_version = runtime_version ? runtime_version : "";
  static ompt_start_tool_result_t result{&omp::initialize, &omp::finalize, ompt_data_t{}};
  return &result;
}
