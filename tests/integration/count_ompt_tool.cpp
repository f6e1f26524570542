// An OMPT tool that only counts, independent of kokkos-ompt-bridge, for the test of OpenMP tools
// run side by side (test_ompt_chain.py). It registers every callback of OpenMP 5.2 but the 5.0
// target ones (the EMI forms instead), counts each per endpoint and kind, and checks its own
// ompt_data_t words: each parallel region, task, target region and host operation word is empty
// when the object begins (a host operation's id may hold the last one's), holds the tool's tag for that kind of object in every later callback,
// and the inquiries (ompt_get_thread_data, ompt_get_parallel_info, ompt_get_task_info) return the
// very words its callbacks got. A failed check counts under "bad". At its finalize it writes
// JSON to $COUNT_OMPT_OUT: counts, bad, the runtime's answers to its ompt_set_callback calls, and
// what ompt_start_trace returned for each device (when $COUNT_OMPT_TRACE=1).
// COUNT_OMPT_START=decline: ompt_start_tool returns NULL; =crash: it crashes there.
// COUNT_OMPT_INIT=decline: initialize returns 0; =crash: it crashes there.
#include <omp-tools.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

// Never destroyed: the runtime's last callbacks (the initial task's end) come after exit() has
// run the program's static destructors.
std::mutex& g_mutex = *new std::mutex;
std::map<std::string, std::uint64_t>& g_counts = *new std::map<std::string, std::uint64_t>;
std::map<std::string, std::uint64_t>& g_bad = *new std::map<std::string, std::uint64_t>;
std::map<std::string, std::uint64_t>& g_set = *new std::map<std::string, std::uint64_t>;
std::vector<int>& g_start_trace = *new std::vector<int>;
std::uint64_t g_next = 1;
int g_initialized = 0;

ompt_set_callback_t g_set_callback;
ompt_get_thread_data_t g_get_thread_data;
ompt_get_parallel_info_t g_get_parallel_info;
ompt_get_task_info_t g_get_task_info;
thread_local ompt_data_t* t_thread_word = nullptr;

enum Tag : std::uint64_t { kThread = 0xA1, kParallel = 0xA2, kTask = 0xA3, kTarget = 0xA4, kHostOp = 0xA5 };

void count(const std::string& key) {
  std::lock_guard<std::mutex> l(g_mutex);
  ++g_counts[key];
}
void bad(const std::string& key) {
  std::lock_guard<std::mutex> l(g_mutex);
  ++g_bad[key];
}
std::uint64_t tagged(Tag t) {
  std::lock_guard<std::mutex> l(g_mutex);
  return (std::uint64_t{t} << 48) | g_next++;
}
bool has(const ompt_data_t* d, Tag t) { return d != nullptr && (d->value >> 48) == t; }
// A new object's word: empty, then tagged.
void fresh(ompt_data_t* d, Tag t, const char* what) {
  if (d == nullptr) return bad(std::string(what) + " null");
  if (d->value != 0) bad(std::string(what) + " not empty at begin");
  d->value = tagged(t);
}
void expect(const ompt_data_t* d, Tag t, const char* what) {
  if (!has(d, t)) bad(what);
}
// A word that may be null (a worker's barrier end names no parallel region).
void expect_if(const ompt_data_t* d, Tag t, const char* what) {
  if (d != nullptr) expect(d, t, what);
}
const char* ep(ompt_scope_endpoint_t e) { return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend"; }
std::string key(const char* name, long kind, ompt_scope_endpoint_t e) { return std::string(name) + " " + std::to_string(kind) + " " + ep(e); }

void on_thread_begin(ompt_thread_t type, ompt_data_t* d) {
  count("thread_begin " + std::to_string(type));
  fresh(d, kThread, "thread word");
  t_thread_word = d;
}
void on_thread_end(ompt_data_t* d) {
  count("thread_end");
  expect(d, kThread, "thread word at end");
}

void on_parallel_begin(ompt_data_t* task, const ompt_frame_t*, ompt_data_t* par, unsigned int, int flags, const void*) {
  count("parallel_begin " + std::to_string(flags));
  expect(task, kTask, "encountering task at parallel_begin");
  fresh(par, kParallel, "parallel word");
}
void on_parallel_end(ompt_data_t* par, ompt_data_t* task, int flags, const void*) {
  count("parallel_end " + std::to_string(flags));
  expect(par, kParallel, "parallel word at parallel_end");
  expect(task, kTask, "encountering task at parallel_end");
}

void check_inquiries(ompt_data_t* par, ompt_data_t* task) {
  if (g_get_thread_data != nullptr && t_thread_word != nullptr && g_get_thread_data() != t_thread_word) bad("ompt_get_thread_data");
  ompt_data_t* p = nullptr;
  int size = 0;
  if (g_get_parallel_info != nullptr && g_get_parallel_info(0, &p, &size) != 0 && p != par) bad("ompt_get_parallel_info");
  int flags = 0, num = 0;
  ompt_data_t *t = nullptr, *tp = nullptr;
  ompt_frame_t* frame = nullptr;
  if (g_get_task_info != nullptr && g_get_task_info(0, &flags, &t, &frame, &tp, &num) != 0 && (t != task || tp != par))
    bad("ompt_get_task_info");
}

void on_implicit_task(ompt_scope_endpoint_t e, ompt_data_t* par, ompt_data_t* task, unsigned int, unsigned int, int flags) {
  count(key("implicit_task", flags, e));
  if (e == ompt_scope_begin) {
    if ((flags & ompt_task_initial) && par != nullptr && par->value == 0) par->value = tagged(kParallel);  // no parallel_begin
    expect(par, kParallel, "parallel word at implicit_task begin");
    fresh(task, kTask, "implicit task word");
    check_inquiries(par, task);
  } else {
    expect_if(par, kParallel, "parallel word at implicit_task end");
    expect(task, kTask, "implicit task word at end");
  }
}

void on_work(ompt_work_t type, ompt_scope_endpoint_t e, ompt_data_t* par, ompt_data_t* task, std::uint64_t, const void*) {
  count(key("work", type, e));
  expect_if(par, kParallel, "parallel word at work");
  expect(task, kTask, "task word at work");
}
void on_masked(ompt_scope_endpoint_t e, ompt_data_t* par, ompt_data_t* task, const void*) {
  count(key("masked", 0, e));
  expect_if(par, kParallel, "parallel word at masked");
  expect(task, kTask, "task word at masked");
}
void on_dispatch(ompt_data_t* par, ompt_data_t* task, ompt_dispatch_t kind, ompt_data_t) {
  count("dispatch " + std::to_string(kind));
  expect_if(par, kParallel, "parallel word at dispatch");
  expect(task, kTask, "task word at dispatch");
}
template <int Which>
void on_sync(ompt_sync_region_t kind, ompt_scope_endpoint_t e, ompt_data_t* par, ompt_data_t* task, const void*) {
  const char* name = Which == 0 ? "sync_region" : Which == 1 ? "sync_region_wait" : "reduction";
  count(key(name, kind, e));
  expect_if(par, kParallel, "parallel word at sync");
  expect(task, kTask, "task word at sync");
}
void on_flush(ompt_data_t* d, const void*) {
  count("flush");
  expect(d, kThread, "thread word at flush");
}
void on_task_create(ompt_data_t* task, const ompt_frame_t*, ompt_data_t* new_task, int flags, int, const void*) {
  count("task_create " + std::to_string(flags));
  expect_if(task, kTask, "encountering task at task_create");
  fresh(new_task, kTask, "explicit task word");
}
void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  count("task_schedule " + std::to_string(status));
  expect(prior, kTask, "prior task at task_schedule");
  expect_if(next, kTask, "next task at task_schedule");
}
void on_dependences(ompt_data_t* task, const ompt_dependence_t*, int n) {
  count("dependences " + std::to_string(n));
  expect(task, kTask, "task word at dependences");
}
void on_task_dependence(ompt_data_t* src, ompt_data_t* sink) {
  count("task_dependence");
  expect(src, kTask, "source task at task_dependence");
  expect(sink, kTask, "sink task at task_dependence");
}
template <int Which>
void on_mutex_acquire(ompt_mutex_t kind, unsigned int, unsigned int, ompt_wait_id_t, const void*) {
  count(std::string(Which == 0 ? "mutex_acquire " : "lock_init ") + std::to_string(kind));
}
template <int Which>
void on_mutex(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  count(std::string(Which == 0 ? "mutex_acquired " : Which == 1 ? "mutex_released " : "lock_destroy ") + std::to_string(kind));
}
void on_nest_lock(ompt_scope_endpoint_t e, ompt_wait_id_t, const void*) { count(key("nest_lock", 0, e)); }
void on_cancel(ompt_data_t* task, int flags, const void*) {
  count("cancel " + std::to_string(flags));
  expect(task, kTask, "task word at cancel");
}
int on_control_tool(std::uint64_t command, std::uint64_t, void*, const void*) {
  count("control_tool " + std::to_string(command));
  return 0;
}
void on_error(ompt_severity_t severity, const char*, size_t, const void*) { count("error " + std::to_string(severity)); }

// ---- devices and target regions ----

void on_buffer_request(int, ompt_buffer_t** buffer, size_t* bytes) {
  *buffer = std::malloc(4096);
  *bytes = *buffer ? 4096 : 0;
}
void on_buffer_complete(int, ompt_buffer_t* buffer, size_t, ompt_buffer_cursor_t, int owned) {
  count("buffer_complete");
  if (owned) std::free(buffer);
}
void on_device_initialize(int num, const char*, ompt_device_t* device, ompt_function_lookup_t lookup, const char*) {
  count("device_initialize " + std::to_string(num));
  const char* want = std::getenv("COUNT_OMPT_TRACE");
  if (want == nullptr || std::strcmp(want, "1") != 0 || lookup == nullptr) return;
  auto start = reinterpret_cast<ompt_start_trace_t>(lookup("ompt_start_trace"));
  const int r = start ? start(device, &on_buffer_request, &on_buffer_complete) : -1;
  std::lock_guard<std::mutex> l(g_mutex);
  g_start_trace.push_back(r);
}
void on_device_finalize(int num) { count("device_finalize " + std::to_string(num)); }
void on_device_load(int num, const char*, std::int64_t, void*, size_t, void*, void*, std::uint64_t) { count("device_load " + std::to_string(num)); }
void on_device_unload(int num, std::uint64_t) { count("device_unload " + std::to_string(num)); }

void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t e, int, ompt_data_t* task, ompt_data_t*, ompt_data_t* target, const void*) {
  count(key("target_emi", kind, e));
  expect_if(task, kTask, "task word at target_emi");
  if (e == ompt_scope_begin) fresh(target, kTarget, "target word");
  else expect(target, kTarget, "target word at end");
}
// A data op or submit outside any target region has an empty target word.
void host_op(ompt_scope_endpoint_t e, ompt_data_t* target, ompt_id_t* id, const char* what) {
  if (target != nullptr && target->value != 0) expect(target, kTarget, what);
  if (id == nullptr) return bad(std::string(what) + ": null host_op_id");
  if (e == ompt_scope_begin)  // libomptarget leaves the last operation's id there: not checked
    *id = tagged(kHostOp);
  else if ((*id >> 48) != kHostOp) {
    bad(std::string(what) + ": host_op_id at end");
  }
}
void on_data_op_emi(ompt_scope_endpoint_t e, ompt_data_t*, ompt_data_t* target, ompt_id_t* id, ompt_target_data_op_t op, void*, int,
                    void*, int, size_t, const void*) {
  count(key("target_data_op_emi", op, e));
  host_op(e, target, id, "target_data_op_emi");
}
void on_submit_emi(ompt_scope_endpoint_t e, ompt_data_t* target, ompt_id_t* id, unsigned int) {
  count(key("target_submit_emi", 0, e));
  host_op(e, target, id, "target_submit_emi");
}
void on_map_emi(ompt_data_t*, unsigned int n, void**, void**, size_t*, unsigned int*, const void*) { count("target_map_emi " + std::to_string(n)); }

template <class F>
ompt_callback_t cb(F* f) {
  return reinterpret_cast<ompt_callback_t>(f);
}

void set(ompt_callbacks_t event, const char* name, ompt_callback_t fn) {
  const int r = g_set_callback(event, fn);
  std::lock_guard<std::mutex> l(g_mutex);
  g_set[name] = static_cast<std::uint64_t>(r);
}

void crash_if(const char* var) {
  const char* v = std::getenv(var);
  if (v != nullptr && std::strcmp(v, "crash") == 0) std::raise(SIGSEGV);
}
bool decline(const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr && std::strcmp(v, "decline") == 0;
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  crash_if("COUNT_OMPT_INIT");
  if (decline("COUNT_OMPT_INIT")) return 0;
  g_set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  g_get_thread_data = reinterpret_cast<ompt_get_thread_data_t>(lookup("ompt_get_thread_data"));
  g_get_parallel_info = reinterpret_cast<ompt_get_parallel_info_t>(lookup("ompt_get_parallel_info"));
  g_get_task_info = reinterpret_cast<ompt_get_task_info_t>(lookup("ompt_get_task_info"));
  if (g_set_callback == nullptr) return 0;
  set(ompt_callback_thread_begin, "thread_begin", cb(on_thread_begin));
  set(ompt_callback_thread_end, "thread_end", cb(on_thread_end));
  set(ompt_callback_parallel_begin, "parallel_begin", cb(on_parallel_begin));
  set(ompt_callback_parallel_end, "parallel_end", cb(on_parallel_end));
  set(ompt_callback_implicit_task, "implicit_task", cb(on_implicit_task));
  set(ompt_callback_work, "work", cb(on_work));
  set(ompt_callback_masked, "masked", cb(on_masked));
  set(ompt_callback_dispatch, "dispatch", cb(on_dispatch));
  set(ompt_callback_sync_region, "sync_region", cb(on_sync<0>));
  set(ompt_callback_sync_region_wait, "sync_region_wait", cb(on_sync<1>));
  set(ompt_callback_reduction, "reduction", cb(on_sync<2>));
  set(ompt_callback_flush, "flush", cb(on_flush));
  set(ompt_callback_task_create, "task_create", cb(on_task_create));
  set(ompt_callback_task_schedule, "task_schedule", cb(on_task_schedule));
  set(ompt_callback_dependences, "dependences", cb(on_dependences));
  set(ompt_callback_task_dependence, "task_dependence", cb(on_task_dependence));
  set(ompt_callback_mutex_acquire, "mutex_acquire", cb(on_mutex_acquire<0>));
  set(ompt_callback_lock_init, "lock_init", cb(on_mutex_acquire<1>));
  set(ompt_callback_mutex_acquired, "mutex_acquired", cb(on_mutex<0>));
  set(ompt_callback_mutex_released, "mutex_released", cb(on_mutex<1>));
  set(ompt_callback_lock_destroy, "lock_destroy", cb(on_mutex<2>));
  set(ompt_callback_nest_lock, "nest_lock", cb(on_nest_lock));
  set(ompt_callback_cancel, "cancel", cb(on_cancel));
  set(ompt_callback_control_tool, "control_tool", cb(on_control_tool));
  set(ompt_callback_error, "error", cb(on_error));
  set(ompt_callback_device_initialize, "device_initialize", cb(on_device_initialize));
  set(ompt_callback_device_finalize, "device_finalize", cb(on_device_finalize));
  set(ompt_callback_device_load, "device_load", cb(on_device_load));
  set(ompt_callback_device_unload, "device_unload", cb(on_device_unload));
  set(ompt_callback_target_emi, "target_emi", cb(on_target_emi));
  set(ompt_callback_target_data_op_emi, "target_data_op_emi", cb(on_data_op_emi));
  set(ompt_callback_target_submit_emi, "target_submit_emi", cb(on_submit_emi));
  set(ompt_callback_target_map_emi, "target_map_emi", cb(on_map_emi));
  g_initialized = 1;
  return 1;
}

void write_map(FILE* f, const char* name, const std::map<std::string, std::uint64_t>& m) {
  std::fprintf(f, "\"%s\": {", name);
  const char* sep = "";
  for (const auto& [k, v] : m) {
    std::fprintf(f, "%s\"%s\": %llu", sep, k.c_str(), static_cast<unsigned long long>(v));
    sep = ", ";
  }
  std::fprintf(f, "}");
}

void finalize(ompt_data_t*) {
  const char* out = std::getenv("COUNT_OMPT_OUT");
  if (out == nullptr) return;
  FILE* f = std::fopen(out, "w");
  if (f == nullptr) return;
  std::lock_guard<std::mutex> l(g_mutex);
  std::fprintf(f, "{\"initialized\": %d, ", g_initialized);
  write_map(f, "counts", g_counts);
  std::fprintf(f, ", ");
  write_map(f, "bad", g_bad);
  std::fprintf(f, ", ");
  write_map(f, "set_callback", g_set);
  std::fprintf(f, ", \"start_trace\": [");
  for (std::size_t i = 0; i < g_start_trace.size(); ++i) std::fprintf(f, "%s%d", i ? ", " : "", g_start_trace[i]);
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
  crash_if("COUNT_OMPT_START");
  if (decline("COUNT_OMPT_START")) return nullptr;
  static ompt_start_tool_result_t result{&initialize, &finalize, ompt_data_t{}};
  return &result;
}
