// A test OpenMP runtime that implements the OMPT device tracing interface (OpenMP 5.1, 4.6.2)
// and drives the real libkokkos_ompt_bridge.so through it, because no runtime installed here
// offers that interface (libomptarget's lookup("ompt_start_trace") returns NULL).
//
//   device_tracing_test --lib PATH --scenario full|region|no-device-events --out RESULT.json
//
// It loads the library, calls ompt_start_tool and initialize like libomp, announces devices
// through the tool's device_initialize callback, writes trace records into the buffers the tool
// hands out, completes them out of order from a helper thread, answers the tool's cursor and
// record calls exactly as 4.6.2 says, and finalizes. RESULT.json holds what the runtime saw and
// every record's true host times; test_device_tracing.py compares that with the trace the
// library wrote (KOB_ARGS in the environment chooses its output prefix).
//
// Clocks. The tool's time line is CLOCK_MONOTONIC_RAW. Our omp_get_wtime line ("wtime") is that
// same clock with another origin: wtime(h) = kWtimeOrigin + (h - origin) / 1e9 s, where origin is
// CLOCK_MONOTONIC_RAW when this runtime starts. Why this base:
//   - not CLOCK_MONOTONIC_RAW itself: translate_time is then off the tool's line by a constant
//     that only the calibration at each completion can find; a tool that took translate_time's
//     seconds for raw nanoseconds would be off by the process's age since boot and fail;
//   - the same rate as CLOCK_MONOTONIC_RAW: the true host time of every record is exact on the
//     tool's line, so the 1 us tolerance measures the tool, not a clock we cannot compare;
//   - small values (about 1000 s): a double keeps better than 1e-12 s there, so rounding in
//     translate_time's return value is no part of the error (libomp's wtime, gettimeofday since
//     1970, only keeps about 0.2 us).
// Each device clock runs with an offset and a drift: device(h) = a + b * (h - origin), in device
// ticks; translate_time inverts that exactly, and get_device_time reads it from the host clock.
#include <dlfcn.h>
#include <omp-tools.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr double kWtimeOrigin = 1000.25;
constexpr std::uint64_t kCursorBase = 0x10000;  // cursors are offsets in the buffer plus this
constexpr std::uint64_t kGapNs = 5000;          // between consecutive device spans
constexpr const char* kType = "kob-test-device";

std::uint64_t raw_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t g_origin = 0;

// ---- what went wrong on the tool's side of the protocol ----

std::mutex g_problems_mu;
std::vector<std::string> g_problems;
void problem(const std::string& p) {
  std::lock_guard<std::mutex> lock(g_problems_mu);
  if (g_problems.size() < 50) g_problems.push_back(p);
}

// ---- one helper thread: completions come from it, never from the thread that writes ----

class Helper {
 public:
  Helper() : thread_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Runs f on the helper thread and waits for it.
  void run(const std::function<void()>& f) {
    if (std::this_thread::get_id() == thread_.get_id()) {
      f();
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t ticket = ++posted_;
    queue_.push_back(f);
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_ >= ticket; });
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return quit_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto f = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      f();
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::uint64_t posted_ = 0, done_ = 0;
  bool quit_ = false;
  std::thread thread_;
};
Helper* g_helper = nullptr;

// ---- buffers and records ----

// Each record in a buffer: this header, then the record (8-byte aligned).
struct EntryHeader {
  std::uint32_t kind;  // ompt_record_t: 1 OMPT, 2 native; 7 is a kind no spec defines
  std::uint32_t size;  // bytes of the whole entry
};
struct NativeRecord {
  ompt_record_abstract_t abstract;
  ompt_id_t host_op_id;
  int has_abstract;
};

struct HeldBuffer {
  char* mem = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;       // bytes written
  std::size_t delivered = 0;  // bytes already completed (records before this offset)
  bool sealed = false;        // full: the next record goes to a new buffer
};

// The record a test expects in the trace, with its true host times (CLOCK_MONOTONIC_RAW ns).
struct TrueRecord {
  int device;
  unsigned type;
  std::uint64_t host_op_id, target_id, start_ns, end_ns, size, kind, endpoint;
};

struct FakeDevice {
  int num = 0;
  std::int64_t a = 0;  // device ticks at origin
  double b = 1.0;      // device ticks per host ns

  std::mutex mu;  // guards what follows; never held while calling the tool
  ompt_callback_buffer_request_t request = nullptr;
  ompt_callback_buffer_complete_t complete = nullptr;
  bool started = false, stopped = false, paused = false;
  std::set<unsigned> enabled;
  std::vector<HeldBuffer> held;  // in request order
  std::uint64_t vclock = 0;      // next free host ns for a span
  // Counters for the report.
  int start_calls = 0, stop_calls = 0, flush_calls = 0, set_trace_native_calls = 0, num_procs_calls = 0;
  int calls_after_stop = 0;
  std::vector<int> pause_args;
  std::vector<unsigned> set_trace_ompt_etypes;
  int request_calls = 0, completions = 0, completions_owned = 0;
  std::set<const void*> addresses;
  std::size_t max_held = 0;
  std::set<std::thread::id> request_threads, complete_threads;
  std::uint64_t written = 0, dropped_paused = 0, dropped_disabled = 0, dropped_not_tracing = 0;
  std::vector<TrueRecord> expected;  // OMPT records of the kinds the tool records
  std::vector<std::uint64_t> skipped_host_op_ids;  // native records: must not appear

  std::uint64_t device_time(std::uint64_t host) const {
    return static_cast<std::uint64_t>(a + std::llround(b * static_cast<double>(static_cast<std::int64_t>(host - g_origin))));
  }
  double translate(ompt_device_time_t t) const {
    const long double host_rel = static_cast<long double>(static_cast<std::int64_t>(t) - a) / b;  // ns since origin
    return static_cast<double>(kWtimeOrigin + host_rel / 1e9L);
  }
};

FakeDevice g_dev[5];

FakeDevice* check_device(ompt_device_t* device, const char* fn) {
  for (FakeDevice& d : g_dev)
    if (device == &d) return &d;
  problem(std::string(fn) + " called with a device handle we never gave out");
  return nullptr;
}

// Completions in flight: what the record functions may read.
struct Delivery {
  FakeDevice* dev;
  char* mem;
  std::size_t begin, end, used;
};
std::mutex g_deliveries_mu;
std::map<const void*, Delivery> g_deliveries;

bool find_delivery(const void* buffer, Delivery& out, const char* fn) {
  std::lock_guard<std::mutex> lock(g_deliveries_mu);
  auto it = g_deliveries.find(buffer);
  if (it == g_deliveries.end()) {
    problem(std::string(fn) + " called for a buffer outside its completion callback");
    return false;
  }
  out = it->second;
  return true;
}

// The entry at a cursor, or nullptr when the cursor is out of bounds of the completed records.
const EntryHeader* entry_at(const Delivery& dl, ompt_buffer_cursor_t cur) {
  if (cur < kCursorBase) return nullptr;
  const std::uint64_t off = cur - kCursorBase;
  if (off < dl.begin || off >= dl.end || off + sizeof(EntryHeader) > dl.used) return nullptr;
  const auto* e = reinterpret_cast<const EntryHeader*>(dl.mem + off);
  if (e->size < sizeof(EntryHeader) || off + e->size > dl.used) return nullptr;
  return e;
}

// Calls the tool's completion callback for [begin, end) of a buffer, on the helper thread.
void complete(FakeDevice& d, char* mem, std::size_t begin, std::size_t end, std::size_t used, bool owned) {
  g_helper->run([&] {
    {
      std::lock_guard<std::mutex> lock(g_deliveries_mu);
      g_deliveries[mem] = Delivery{&d, mem, begin, end, used};
    }
    {
      std::lock_guard<std::mutex> lock(d.mu);
      ++d.completions;
      d.completions_owned += owned;
      d.complete_threads.insert(std::this_thread::get_id());
    }
    d.complete(d.num, mem, end - begin, kCursorBase + begin, owned ? 1 : 0);
    std::lock_guard<std::mutex> lock(g_deliveries_mu);
    g_deliveries.erase(mem);
  });
}

// Asks the tool for a buffer (on the calling thread, the one that writes records).
HeldBuffer* request_buffer(FakeDevice& d, std::unique_lock<std::mutex>& lock) {
  auto req = d.request;
  lock.unlock();
  void* buf = nullptr;
  std::size_t bytes = 0;
  req(d.num, &buf, &bytes);
  lock.lock();
  ++d.request_calls;
  d.request_threads.insert(std::this_thread::get_id());
  if (buf == nullptr || bytes < 4096) {
    problem("the tool gave no usable buffer (" + std::to_string(bytes) + " bytes)");
    return nullptr;
  }
  for (const HeldBuffer& h : d.held)
    if (h.mem == buf) problem("the tool handed out a buffer the runtime still holds");
  d.addresses.insert(buf);
  d.held.push_back(HeldBuffer{static_cast<char*>(buf), bytes, 0, 0, false});
  d.max_held = std::max(d.max_held, d.held.size());
  return &d.held.back();
}

HeldBuffer* current(FakeDevice& d) {
  if (d.held.empty() || d.held.back().sealed) return nullptr;
  return &d.held.back();
}

// Writes one record into the current buffer (requesting one when needed). Returns false when
// the runtime drops it: not tracing, paused, or its type not enabled (unless forced).
bool write_entry(FakeDevice& d, std::uint32_t kind, const void* payload, std::uint32_t size, unsigned etype, bool force) {
  std::unique_lock<std::mutex> lock(d.mu);
  if (!d.started || d.stopped) return ++d.dropped_not_tracing, false;
  if (d.paused) return ++d.dropped_paused, false;
  if (kind == ompt_record_ompt && !force && !d.enabled.count(etype)) return ++d.dropped_disabled, false;
  const std::uint32_t entry = static_cast<std::uint32_t>((sizeof(EntryHeader) + size + 7) & ~std::size_t{7});
  HeldBuffer* cur = current(d);
  if (cur == nullptr || cur->used + entry > cur->size) {
    if (cur) cur->sealed = true;
    cur = request_buffer(d, lock);
    if (cur == nullptr) return false;
  }
  auto* h = reinterpret_cast<EntryHeader*>(cur->mem + cur->used);
  h->kind = kind;
  h->size = entry;
  std::memcpy(cur->mem + cur->used + sizeof(EntryHeader), payload, size);
  cur->used += entry;
  ++d.written;
  return true;
}

// ---- the 14 entry points, as 4.6.2 specifies them ----

int ep_get_device_num_procs(ompt_device_t* device) {
  FakeDevice* d = check_device(device, "ompt_get_device_num_procs");
  if (d == nullptr) return 0;
  std::lock_guard<std::mutex> lock(d->mu);
  ++d->num_procs_calls;
  return 108;
}

ompt_device_time_t ep_get_device_time(ompt_device_t* device) {
  FakeDevice* d = check_device(device, "ompt_get_device_time");
  return d ? d->device_time(raw_ns()) : 0;
}

double ep_translate_time(ompt_device_t* device, ompt_device_time_t time) {
  FakeDevice* d = check_device(device, "ompt_translate_time");
  return d ? d->translate(time) : 0.0;
}

bool is_target_type(unsigned e) {
  return e == ompt_callback_target || e == ompt_callback_target_data_op || e == ompt_callback_target_submit ||
         e == ompt_callback_target_emi || e == ompt_callback_target_data_op_emi || e == ompt_callback_target_submit_emi;
}

ompt_set_result_t ep_set_trace_ompt(ompt_device_t* device, unsigned int enable, unsigned int etype) {
  FakeDevice* d = check_device(device, "ompt_set_trace_ompt");
  if (d == nullptr) return ompt_set_error;
  std::lock_guard<std::mutex> lock(d->mu);
  d->set_trace_ompt_etypes.push_back(etype);
  std::vector<unsigned> types;
  if (etype == 0) {
    for (unsigned e = 1; e <= 37; ++e)
      if (is_target_type(e)) types.push_back(e);
  } else if (is_target_type(etype)) {
    types.push_back(etype);
  } else {
    return ompt_set_never;  // this device records target activity only
  }
  for (unsigned e : types) {
    if (enable > 0) {
      d->enabled.insert(e);
    } else {
      d->enabled.erase(e);
    }
  }
  return ompt_set_always;
}

ompt_set_result_t ep_set_trace_native(ompt_device_t* device, int /*enable*/, int /*flags*/) {
  FakeDevice* d = check_device(device, "ompt_set_trace_native");
  if (d == nullptr) return ompt_set_error;
  std::lock_guard<std::mutex> lock(d->mu);
  ++d->set_trace_native_calls;
  return ompt_set_sometimes;
}

int ep_start_trace(ompt_device_t* device, ompt_callback_buffer_request_t request, ompt_callback_buffer_complete_t complete) {
  FakeDevice* d = check_device(device, "ompt_start_trace");
  if (d == nullptr) return 0;
  std::lock_guard<std::mutex> lock(d->mu);
  ++d->start_calls;
  if (request == nullptr || complete == nullptr) return 0;
  d->request = request;
  d->complete = complete;
  d->started = true;
  d->stopped = false;
  d->paused = false;
  d->vclock = raw_ns();
  return 1;
}

int ep_pause_trace(ompt_device_t* device, int begin_pause) {
  FakeDevice* d = check_device(device, "ompt_pause_trace");
  if (d == nullptr) return 0;
  std::lock_guard<std::mutex> lock(d->mu);
  d->pause_args.push_back(begin_pause);
  if (!d->started || d->stopped) {
    ++d->calls_after_stop;
    return 0;
  }
  d->paused = begin_pause != 0;  // redundant commands are idempotent
  return 1;
}

// Delivers every record not yet delivered; every buffer goes back to the tool. Completes the
// buffers newest first, so that even a flush delivers out of order.
int flush(FakeDevice& d) {
  std::vector<HeldBuffer> out;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    out.swap(d.held);
  }
  for (auto it = out.rbegin(); it != out.rend(); ++it) complete(d, it->mem, it->delivered, it->used, it->used, true);
  return 1;
}

int ep_flush_trace(ompt_device_t* device) {
  FakeDevice* d = check_device(device, "ompt_flush_trace");
  if (d == nullptr) return 0;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    ++d->flush_calls;
    if (!d->started || d->stopped) {
      ++d->calls_after_stop;
      return 0;
    }
  }
  return flush(*d);
}

int ep_stop_trace(ompt_device_t* device) {
  FakeDevice* d = check_device(device, "ompt_stop_trace");
  if (d == nullptr) return 0;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    ++d->stop_calls;
    if (!d->started || d->stopped) {
      ++d->calls_after_stop;
      return 0;
    }
  }
  flush(*d);  // halts tracing and flushes what is pending
  std::lock_guard<std::mutex> lock(d->mu);
  d->stopped = true;
  return 1;
}

int ep_advance_buffer_cursor(ompt_device_t* device, ompt_buffer_t* buffer, size_t size, ompt_buffer_cursor_t current,
                             ompt_buffer_cursor_t* next) {
  FakeDevice* d = check_device(device, "ompt_advance_buffer_cursor");
  Delivery dl;
  if (d == nullptr || next == nullptr || !find_delivery(buffer, dl, "ompt_advance_buffer_cursor")) return 0;
  if (dl.dev != d) problem("ompt_advance_buffer_cursor called with another device's handle");
  if (size != dl.end - dl.begin)
    problem("ompt_advance_buffer_cursor called with size " + std::to_string(size) + ", the completion gave " +
            std::to_string(dl.end - dl.begin));
  const EntryHeader* e = entry_at(dl, current);
  if (e == nullptr) return 0;
  const std::uint64_t n = current + e->size;
  *next = n;
  return n - kCursorBase < dl.end && entry_at(dl, n) != nullptr;  // true: the next position is a valid record
}

ompt_record_t ep_get_record_type(ompt_buffer_t* buffer, ompt_buffer_cursor_t current) {
  Delivery dl;
  if (!find_delivery(buffer, dl, "ompt_get_record_type")) return ompt_record_invalid;
  const EntryHeader* e = entry_at(dl, current);
  return e ? static_cast<ompt_record_t>(e->kind) : ompt_record_invalid;
}

ompt_record_ompt_t* ep_get_record_ompt(ompt_buffer_t* buffer, ompt_buffer_cursor_t current) {
  Delivery dl;
  if (!find_delivery(buffer, dl, "ompt_get_record_ompt")) return nullptr;
  const EntryHeader* e = entry_at(dl, current);
  if (e == nullptr || e->kind != ompt_record_ompt) return nullptr;
  return reinterpret_cast<ompt_record_ompt_t*>(const_cast<char*>(reinterpret_cast<const char*>(e)) + sizeof(EntryHeader));
}

void* ep_get_record_native(ompt_buffer_t* buffer, ompt_buffer_cursor_t current, ompt_id_t* host_op_id) {
  Delivery dl;
  if (!find_delivery(buffer, dl, "ompt_get_record_native")) return nullptr;
  const EntryHeader* e = entry_at(dl, current);
  if (e == nullptr || e->kind != ompt_record_native) return nullptr;
  auto* n = reinterpret_cast<NativeRecord*>(const_cast<char*>(reinterpret_cast<const char*>(e)) + sizeof(EntryHeader));
  if (host_op_id) *host_op_id = n->host_op_id;
  return n;
}

ompt_record_abstract_t* ep_get_record_abstract(void* native_record) {
  if (native_record == nullptr) return nullptr;
  auto* n = static_cast<NativeRecord*>(native_record);
  return n->has_abstract ? &n->abstract : nullptr;
}

template <class F>
ompt_interface_fn_t fn(F* f) {
  return reinterpret_cast<ompt_interface_fn_t>(f);
}

ompt_interface_fn_t device_lookup(const char* name) {
  static const std::pair<const char*, ompt_interface_fn_t> kTable[] = {
      {"ompt_get_device_num_procs", fn(ep_get_device_num_procs)},
      {"ompt_get_device_time", fn(ep_get_device_time)},
      {"ompt_translate_time", fn(ep_translate_time)},
      {"ompt_set_trace_ompt", fn(ep_set_trace_ompt)},
      {"ompt_set_trace_native", fn(ep_set_trace_native)},
      {"ompt_start_trace", fn(ep_start_trace)},
      {"ompt_pause_trace", fn(ep_pause_trace)},
      {"ompt_flush_trace", fn(ep_flush_trace)},
      {"ompt_stop_trace", fn(ep_stop_trace)},
      {"ompt_advance_buffer_cursor", fn(ep_advance_buffer_cursor)},
      {"ompt_get_record_type", fn(ep_get_record_type)},
      {"ompt_get_record_ompt", fn(ep_get_record_ompt)},
      {"ompt_get_record_native", fn(ep_get_record_native)},
      {"ompt_get_record_abstract", fn(ep_get_record_abstract)},
  };
  for (const auto& [n, f] : kTable)
    if (name && std::strcmp(name, n) == 0) return f;
  return nullptr;
}

// A device like libomptarget's: a lookup that knows no tracing entry point.
ompt_interface_fn_t empty_lookup(const char*) { return nullptr; }

// ---- the host side: just enough of OMPT to start the tool ----

ompt_callback_t g_callbacks[64];

ompt_set_result_t host_set_callback(ompt_callbacks_t event, ompt_callback_t callback) {
  const int e = static_cast<int>(event);
  if (e <= 0 || e >= 64) return ompt_set_error;
  g_callbacks[e] = callback;
  switch (event) {
    case ompt_callback_device_initialize:
    case ompt_callback_device_finalize:
    case ompt_callback_device_load:
    case ompt_callback_device_unload: return ompt_set_always;
    default: return ompt_set_never;
  }
}

int host_get_num_devices() { return 5; }

ompt_interface_fn_t host_lookup(const char* name) {
  if (name && std::strcmp(name, "ompt_set_callback") == 0) return fn(host_set_callback);
  if (name && std::strcmp(name, "ompt_get_num_devices") == 0) return fn(host_get_num_devices);
  return nullptr;
}

// ---- record builders: each returns whether the runtime kept it ----

std::uint64_t span(FakeDevice& d, std::uint64_t dur) {
  std::lock_guard<std::mutex> lock(d.mu);
  const std::uint64_t s = std::max(raw_ns(), d.vclock);
  d.vclock = s + dur + kGapNs;
  return s;
}

void expect(FakeDevice& d, const TrueRecord& r) {
  std::lock_guard<std::mutex> lock(d.mu);
  d.expected.push_back(r);
}

bool emi(int dev) { return dev % 2 == 0; }  // even devices use the EMI record types, odd ones the 5.0 ones

bool target_point(FakeDevice& d, std::uint64_t target_id, ompt_target_t kind, ompt_scope_endpoint_t ep) {
  const std::uint64_t t = span(d, 0);
  ompt_record_ompt_t r{};
  r.type = emi(d.num) ? ompt_callback_target_emi : ompt_callback_target;
  r.time = d.device_time(t);
  r.thread_id = 1;
  r.target_id = target_id;
  r.record.target = ompt_record_target_t{kind, ep, d.num, 7, target_id, nullptr};
  if (!write_entry(d, ompt_record_ompt, &r, sizeof r, r.type, false)) return false;
  expect(d, {d.num, static_cast<unsigned>(r.type), 0, target_id, t, 0, static_cast<std::uint64_t>(ep),
             static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(ep)});
  return true;
}

bool data_op(FakeDevice& d, std::uint64_t host_op_id, std::uint64_t target_id, ompt_target_data_op_t op,
             std::uint64_t bytes, std::uint64_t dur) {
  const std::uint64_t s = span(d, dur);
  ompt_record_ompt_t r{};
  r.type = emi(d.num) ? ompt_callback_target_data_op_emi : ompt_callback_target_data_op;
  r.time = d.device_time(s);
  r.thread_id = 1;
  r.target_id = target_id;
  const bool to_dev = op != ompt_target_data_transfer_from_device;
  r.record.target_data_op = ompt_record_target_data_op_t{host_op_id, op,      reinterpret_cast<void*>(0x1000),
                                                         to_dev ? 5 : d.num, reinterpret_cast<void*>(0x2000),
                                                         to_dev ? d.num : 5, bytes, d.device_time(s + dur), nullptr};
  if (!write_entry(d, ompt_record_ompt, &r, sizeof r, r.type, false)) return false;
  expect(d, {d.num, static_cast<unsigned>(r.type), host_op_id, target_id, s, s + dur, bytes, static_cast<std::uint64_t>(op), 0});
  return true;
}

bool submit(FakeDevice& d, std::uint64_t host_op_id, std::uint64_t target_id, unsigned requested, unsigned granted,
            std::uint64_t dur) {
  const std::uint64_t s = span(d, dur);
  ompt_record_ompt_t r{};
  r.type = emi(d.num) ? ompt_callback_target_submit_emi : ompt_callback_target_submit;
  r.time = d.device_time(s);
  r.thread_id = 1;
  r.target_id = target_id;
  r.record.target_kernel = ompt_record_target_kernel_t{host_op_id, requested, granted, d.device_time(s + dur)};
  if (!write_entry(d, ompt_record_ompt, &r, sizeof r, r.type, false)) return false;
  expect(d, {d.num, static_cast<unsigned>(r.type), host_op_id, target_id, s, s + dur, requested, granted, 0});
  return true;
}

// An OMPT record of a type the tool did not ask for (a runtime may send it anyway).
void other_ompt(FakeDevice& d, ompt_callbacks_t type) {
  ompt_record_ompt_t r{};
  r.type = type;
  r.time = d.device_time(span(d, 0));
  r.thread_id = 1;
  r.target_id = 4242;
  write_entry(d, ompt_record_ompt, &r, sizeof r, type, true);
}

void native(FakeDevice& d, std::uint64_t host_op_id, bool with_abstract) {
  const std::uint64_t s = span(d, 700);
  NativeRecord n{};
  n.abstract = ompt_record_abstract_t{ompt_record_native_event, "kob-native-copy", d.device_time(s), d.device_time(s + 700), 3};
  n.host_op_id = host_op_id;
  n.has_abstract = with_abstract;
  if (write_entry(d, ompt_record_native, &n, sizeof n, 0, true)) {
    std::lock_guard<std::mutex> lock(d.mu);
    d.skipped_host_op_ids.push_back(host_op_id);
  }
}

void unknown_kind(FakeDevice& d) {
  const std::uint64_t junk[2] = {0xdeadbeef, 0};
  write_entry(d, 7, junk, sizeof junk, 0, true);
}

// The current buffer is full as far as the test is concerned: the next record opens another.
void seal(FakeDevice& d) {
  std::lock_guard<std::mutex> lock(d.mu);
  if (HeldBuffer* c = current(d)) c->sealed = true;
}

// The held buffer with this address, copied, or an empty one.
HeldBuffer held(FakeDevice& d, const char* mem) {
  std::lock_guard<std::mutex> lock(d.mu);
  for (const HeldBuffer& h : d.held)
    if (h.mem == mem) return h;
  return {};
}

// Completes the first `records` undelivered records of a held buffer (all with -1), handing it
// back when owned.
void deliver(FakeDevice& d, char* mem, bool owned, int records = -1) {
  std::size_t begin = 0, end = 0, used = 0;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    auto it = std::find_if(d.held.begin(), d.held.end(), [&](const HeldBuffer& h) { return h.mem == mem; });
    if (it == d.held.end()) {
      std::fprintf(stderr, "test runtime: deliver of a buffer not held\n");
      std::exit(2);
    }
    begin = it->delivered;
    end = begin;
    used = it->used;
    for (int n = 0; end < used && (records < 0 || n < records); ++n)
      end += reinterpret_cast<const EntryHeader*>(it->mem + end)->size;
    it->delivered = end;
    if (owned) d.held.erase(it);
  }
  complete(d, mem, begin, end, used, owned);
}

// Sealed buffers, oldest first.
std::vector<char*> sealed(FakeDevice& d) {
  std::lock_guard<std::mutex> lock(d.mu);
  std::vector<char*> out;
  for (const HeldBuffer& h : d.held)
    if (h.sealed) out.push_back(h.mem);
  return out;
}

char* current_mem(FakeDevice& d) {
  std::lock_guard<std::mutex> lock(d.mu);
  HeldBuffer* c = current(d);
  return c ? c->mem : nullptr;
}

// ---- the tool ----

struct Tool {
  void* lib = nullptr;
  ompt_start_tool_result_t* result = nullptr;
  void (*profile_event)(const char*) = nullptr;
  void (*push_region)(const char*) = nullptr;
  void (*pop_region)() = nullptr;
};
Tool g_tool;

struct Anchor {
  std::string name;
  int group;
  std::uint64_t before, after;
};
int g_anchor_groups = 0;
std::vector<Anchor> g_anchors;

// A group of Kokkos profile events whose host times we know to within the two reads around each:
// the test takes the tightest of the first group as its reference for the trace's time origin.
// Each name is sent once before it is measured, so that the measured call finds it interned (the
// trace has both; the later one is the measured one).
void anchor() {
  const int group = g_anchor_groups++;
  for (int i = 0; i < 7; ++i) {
    const std::string name = "kob-anchor-" + std::to_string(g_anchors.size());
    g_tool.profile_event(name.c_str());
    const std::uint64_t t0 = raw_ns();
    g_tool.profile_event(name.c_str());
    const std::uint64_t t1 = raw_ns();
    g_anchors.push_back({name, group, t0, t1});
  }
}

void device_initialize(int num, ompt_device_t* device, ompt_function_lookup_t lookup) {
  auto cb = reinterpret_cast<ompt_callback_device_initialize_t>(g_callbacks[ompt_callback_device_initialize]);
  cb(num, kType, device, lookup, "test runtime device: OMPT device tracing per OpenMP 5.1 4.6.2");
}

void device_finalize(int num) {
  reinterpret_cast<ompt_callback_device_finalize_t>(g_callbacks[ompt_callback_device_finalize])(num);
}

// ---- scenarios ----

struct Extra {
  int bad_completions_duplicate = 0, bad_completions_unknown = 0, bad_completions_cursor = 0;
  int empty_completions = 0, partial_completions = 0;
  std::size_t addresses_before_reuse = 0, addresses_after_reuse = 0;
};
Extra g_extra;

void scenario_full() {
  FakeDevice& d0 = g_dev[0];
  FakeDevice& d1 = g_dev[1];
  device_initialize(0, &d0, device_lookup);
  device_initialize(1, &d1, device_lookup);
  device_initialize(2, &g_dev[2], nullptr);         // no lookup
  device_initialize(3, nullptr, device_lookup);     // no device handle
  device_initialize(4, &g_dev[4], empty_lookup);    // no tracing entry points (libomptarget)
  anchor();

  // Phase A, device 0: four buffers filled by hand, completed out of order, one partly first.
  std::uint64_t op = 1000;
  target_point(d0, 1, ompt_target, ompt_scope_begin);
  data_op(d0, ++op, 1, ompt_target_data_alloc, 4096, 900);
  data_op(d0, ++op, 1, ompt_target_data_transfer_to_device, 4096, 2100);
  submit(d0, ++op, 1, 128, 96, 15000);
  char* A = current_mem(d0);
  seal(d0);
  data_op(d0, ++op, 1, ompt_target_data_transfer_to_device, 65536, 7300);
  submit(d0, ++op, 1, 4, 4, 1200);
  data_op(d0, ++op, 1, ompt_target_data_transfer_from_device, 65536, 6900);
  data_op(d0, ++op, 1, ompt_target_data_delete, 0, 300);
  target_point(d0, 1, ompt_target, ompt_scope_end);
  target_point(d0, 2, ompt_target_enter_data, ompt_scope_begin);
  data_op(d0, ++op, 2, ompt_target_data_alloc, 1 << 20, 1500);
  char* B = current_mem(d0);
  seal(d0);
  native(d0, 777001, true);
  other_ompt(d0, ompt_callback_target_map);
  data_op(d0, ++op, 2, ompt_target_data_transfer_to_device, 1 << 20, 110000);
  unknown_kind(d0);
  submit(d0, ++op, 2, 1, 1, 800);
  char* C = current_mem(d0);
  seal(d0);
  other_ompt(d0, ompt_callback_thread_begin);
  native(d0, 777002, false);
  data_op(d0, ++op, 2, ompt_target_data_associate, 256, 100);
  target_point(d0, 2, ompt_target_enter_data, ompt_scope_end);  // D stays pending for now
  char* D = current_mem(d0);
  if (!A || !B || !C || !D || A == B || B == C || C == D) {
    std::fprintf(stderr, "test runtime: phase A did not get four buffers\n");
    std::exit(2);
  }
  // An extra buffer that gets no record: completed empty.
  char* E = nullptr;
  {
    std::unique_lock<std::mutex> lock(d0.mu);
    d0.held.back().sealed = true;
    HeldBuffer* h = request_buffer(d0, lock);
    if (h) {
      h->sealed = true;
      E = h->mem;
    }
  }
  {
    std::lock_guard<std::mutex> lock(d0.mu);  // D stays the current buffer
    auto it = std::find_if(d0.held.begin(), d0.held.end(), [&](const HeldBuffer& h) { return h.mem == D; });
    it->sealed = false;
    std::rotate(it, it + 1, d0.held.end());
  }
  deliver(d0, B, false, 3);  // B, first three records; the runtime keeps B
  ++g_extra.partial_completions;
  deliver(d0, C, true);
  // C again, already handed back: the tool must skip it.
  complete(d0, C, 0, 64, 64, true);
  ++g_extra.bad_completions_duplicate;
  if (E) {
    deliver(d0, E, true);  // bytes 0
    ++g_extra.empty_completions;
  }
  deliver(d0, A, true);
  // A buffer the tool never handed out.
  static char stranger[4096];
  complete(d0, stranger, 0, 128, 128, true);
  ++g_extra.bad_completions_unknown;
  deliver(d0, B, true);  // the rest of B
  anchor();

  // Phase B, device 0: volume. Buffers fill up and wait; then they are completed in a shuffled
  // order. More buffers are out at once than the tool's initial pool holds.
  for (int i = 0; i < 24000; ++i) {
    const std::uint64_t tid = 100 + i / 6;
    switch (i % 6) {
      case 0: data_op(d0, 500000 + i, tid, ompt_target_data_alloc, 64 * (i % 97 + 1), 400 + i % 50); break;
      case 1: data_op(d0, 500000 + i, tid, ompt_target_data_transfer_to_device, 64 * (i % 97 + 1), 900 + i % 300); break;
      case 2: submit(d0, 500000 + i, tid, 1 + i % 256, 1 + i % 128, 3000 + i % 1000); break;
      case 3: data_op(d0, 500000 + i, tid, ompt_target_data_transfer_from_device, 64 * (i % 89 + 1), 800 + i % 200); break;
      case 4: data_op(d0, 500000 + i, tid, ompt_target_data_delete, 0, 200); break;
      default: submit(d0, 500000 + i, tid, 32, 32, 500); break;
    }
  }
  std::vector<char*> full = sealed(d0);
  for (std::size_t k = 0; k < full.size(); ++k) {  // 1, 3, 5, ..., then 0, 2, 4, ...
    const std::size_t idx = k < full.size() / 2 ? 2 * k + 1 : 2 * (k - full.size() / 2);
    deliver(d0, full[idx], true);
  }
  anchor();
  {
    std::lock_guard<std::mutex> lock(d0.mu);
    g_extra.addresses_before_reuse = d0.addresses.size();
  }

  // Phase C, device 0: buffers completed as they fill, in pairs swapped: the pool is reused.
  char* waiting = nullptr;
  for (int i = 0; i < 12000; ++i) {
    submit(d0, 700000 + i, 9000 + i, 64, 64, 250);
    for (char* m : sealed(d0)) {
      if (waiting == nullptr) {
        waiting = m;
      } else if (m != waiting) {
        deliver(d0, m, true);
        deliver(d0, waiting, true);
        waiting = nullptr;
      }
    }
  }
  if (waiting) deliver(d0, waiting, true);
  {
    std::lock_guard<std::mutex> lock(d0.mu);
    g_extra.addresses_after_reuse = d0.addresses.size();
  }
  anchor();

  // Device 1 (5.0 record types): a few records, a completion whose begin cursor is past the end,
  // then records that only the tool's finalize (flush, stop) delivers.
  target_point(d1, 31, ompt_target_update, ompt_scope_begin);
  data_op(d1, 900001, 31, ompt_target_data_transfer_to_device, 8192, 3300);
  target_point(d1, 31, ompt_target_update, ompt_scope_end);
  if (char* F = current_mem(d1)) {
    const HeldBuffer h = held(d1, F);
    complete(d1, F, h.used + 1024, h.used + 1024 + 112, h.used, false);  // the runtime keeps F
    ++g_extra.bad_completions_cursor;
  }
  target_point(d1, 32, ompt_target, ompt_scope_begin);
  data_op(d1, 900002, 32, ompt_target_data_alloc, 512, 600);
  submit(d1, 900003, 32, 8, 8, 42000);
  data_op(d1, 900004, 32, ompt_target_data_delete, 512, 300);
  target_point(d1, 32, ompt_target, ompt_scope_end);
  anchor();

  // Device 0 pending records go with its device_finalize; device 1's with the tool's finalize.
  submit(d0, 800001, 77, 2, 2, 1000);
  data_op(d0, 800002, 77, ompt_target_data_transfer_from_device, 100, 900);
  device_finalize(0);
  anchor();
}

void scenario_region() {
  FakeDevice& d0 = g_dev[0];
  device_initialize(0, &d0, device_lookup);  // the tool pauses at once: no region open
  anchor();
  std::uint64_t op = 2000;
  data_op(d0, ++op, 1, ompt_target_data_alloc, 64, 500);  // dropped: paused
  g_tool.push_region("setup");
  data_op(d0, ++op, 1, ompt_target_data_transfer_to_device, 64, 500);  // dropped
  g_tool.push_region("offload");  // resume
  data_op(d0, ++op, 1, ompt_target_data_transfer_to_device, 64, 500);
  submit(d0, ++op, 1, 16, 16, 3000);
  std::thread other([&] {
    g_tool.push_region("offload");  // a second one open: nothing to do
    g_tool.push_region("offloadX");
    data_op(d0, 2100, 1, ompt_target_data_transfer_from_device, 64, 500);
    g_tool.pop_region();
    g_tool.pop_region();
  });
  other.join();
  data_op(d0, ++op, 1, ompt_target_data_delete, 64, 500);
  g_tool.pop_region();  // offload closed: pause
  data_op(d0, ++op, 1, ompt_target_data_alloc, 64, 500);  // dropped
  g_tool.pop_region();                                    // setup
  g_tool.pop_region();                                    // one pop too many: ignored
  g_tool.push_region("offload");                          // resume
  submit(d0, ++op, 1, 32, 32, 2000);
  data_op(d0, ++op, 1, ompt_target_data_transfer_from_device, 64, 500);
  g_tool.pop_region();  // pause
  data_op(d0, ++op, 1, ompt_target_data_transfer_from_device, 64, 500);  // dropped
  anchor();
  device_finalize(0);
}

void scenario_no_device_events() {
  FakeDevice& d0 = g_dev[0];
  device_initialize(0, &d0, device_lookup);  // the tool does not trace: --events lacks omp-device
  anchor();
  data_op(d0, 3001, 1, ompt_target_data_alloc, 64, 500);  // dropped: not tracing
  submit(d0, 3002, 1, 4, 4, 1000);
  device_finalize(0);
}

// ---- the report ----

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

template <class C>
std::string json_list(const C& c) {
  std::string o = "[";
  bool first = true;
  for (const auto& v : c) {
    o += (first ? "" : ",") + std::to_string(v);
    first = false;
  }
  return o + "]";
}

void write_report(const char* path, const std::string& scenario) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::perror(path);
    std::exit(2);
  }
  std::fprintf(f, "{\"scenario\":%s,\"origin_ns\":%llu,\"wtime_origin\":%.3f,\"type\":%s,\n", json_str(scenario).c_str(),
               static_cast<unsigned long long>(g_origin), kWtimeOrigin, json_str(kType).c_str());
  std::fprintf(f, "\"extra\":{\"bad_completions_duplicate\":%d,\"bad_completions_unknown\":%d,\"bad_completions_cursor\":%d,"
               "\"empty_completions\":%d,\"partial_completions\":%d,\"addresses_before_reuse\":%zu,"
               "\"addresses_after_reuse\":%zu},\n",
               g_extra.bad_completions_duplicate, g_extra.bad_completions_unknown, g_extra.bad_completions_cursor,
               g_extra.empty_completions, g_extra.partial_completions, g_extra.addresses_before_reuse,
               g_extra.addresses_after_reuse);
  {
    std::lock_guard<std::mutex> lock(g_problems_mu);
    std::fprintf(f, "\"problems\":[");
    for (std::size_t i = 0; i < g_problems.size(); ++i) std::fprintf(f, "%s%s", i ? "," : "", json_str(g_problems[i]).c_str());
    std::fprintf(f, "],\n");
  }
  std::fprintf(f, "\"anchors\":[");
  for (std::size_t i = 0; i < g_anchors.size(); ++i)
    std::fprintf(f, "%s{\"name\":%s,\"group\":%d,\"before\":%llu,\"after\":%llu}", i ? "," : "",
                 json_str(g_anchors[i].name).c_str(), g_anchors[i].group,
                 static_cast<unsigned long long>(g_anchors[i].before), static_cast<unsigned long long>(g_anchors[i].after));
  std::fprintf(f, "],\n\"devices\":[\n");
  for (int i = 0; i < 5; ++i) {
    FakeDevice& d = g_dev[i];
    std::lock_guard<std::mutex> lock(d.mu);
    bool requests_on_helper = d.request_threads.count(g_helper->id()) != 0;
    bool completes_off_helper = false;
    for (auto id : d.complete_threads) completes_off_helper |= id != g_helper->id();
    std::fprintf(f,
                 "%s{\"num\":%d,\"a\":%lld,\"b\":%.9f,\"start_calls\":%d,\"stop_calls\":%d,\"flush_calls\":%d,"
                 "\"calls_after_stop\":%d,\"set_trace_native_calls\":%d,\"num_procs_calls\":%d,\"pause_args\":%s,"
                 "\"set_trace_ompt_etypes\":%s,\"enabled\":%s,\"request_calls\":%d,\"completions\":%d,"
                 "\"completions_owned\":%d,\"distinct_buffers\":%zu,\"max_held\":%zu,\"held_at_end\":%zu,"
                 "\"requests_on_helper\":%s,\"completes_off_helper\":%s,\"written\":%llu,\"dropped_paused\":%llu,"
                 "\"dropped_disabled\":%llu,\"dropped_not_tracing\":%llu,\"skipped_host_op_ids\":%s,\n\"expected\":[",
                 i ? ",\n" : "", d.num, static_cast<long long>(d.a), d.b, d.start_calls, d.stop_calls, d.flush_calls,
                 d.calls_after_stop, d.set_trace_native_calls, d.num_procs_calls, json_list(d.pause_args).c_str(),
                 json_list(d.set_trace_ompt_etypes).c_str(), json_list(d.enabled).c_str(), d.request_calls,
                 d.completions, d.completions_owned, d.addresses.size(), d.max_held, d.held.size(),
                 requests_on_helper ? "true" : "false", completes_off_helper ? "true" : "false",
                 static_cast<unsigned long long>(d.written), static_cast<unsigned long long>(d.dropped_paused),
                 static_cast<unsigned long long>(d.dropped_disabled), static_cast<unsigned long long>(d.dropped_not_tracing),
                 json_list(d.skipped_host_op_ids).c_str());
    for (std::size_t k = 0; k < d.expected.size(); ++k) {
      const TrueRecord& r = d.expected[k];
      std::fprintf(f, "%s[%u,%llu,%llu,%llu,%llu,%llu,%llu,%llu]", k ? ",\n" : "", r.type,
                   static_cast<unsigned long long>(r.host_op_id), static_cast<unsigned long long>(r.target_id),
                   static_cast<unsigned long long>(r.start_ns), static_cast<unsigned long long>(r.end_ns),
                   static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.kind),
                   static_cast<unsigned long long>(r.endpoint));
    }
    std::fprintf(f, "]}");
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

template <class T>
T must(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "test runtime: %s not found in the library\n", name);
    std::exit(2);
  }
  return reinterpret_cast<T>(p);
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib, scenario = "full", out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--lib") lib = argv[i + 1];
    else if (k == "--scenario") scenario = argv[i + 1];
    else if (k == "--out") out = argv[i + 1];
  }
  if (lib.empty() || out.empty()) {
    std::fprintf(stderr, "usage: %s --lib LIB --scenario full|region|no-device-events --out RESULT.json\n", argv[0]);
    return 2;
  }
  g_origin = raw_ns();
  const std::int64_t offsets[5] = {7'000'000'000'000LL, 123'456'789LL, 0, 0, 0};
  const double drifts[5] = {1.000137, 0.999912, 1.0, 1.0, 1.0};
  for (int i = 0; i < 5; ++i) {
    g_dev[i].num = i;
    g_dev[i].a = offsets[i];
    g_dev[i].b = drifts[i];
  }
  Helper helper;
  g_helper = &helper;

  g_tool.lib = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (g_tool.lib == nullptr) {
    std::fprintf(stderr, "test runtime: %s\n", dlerror());
    return 2;
  }
  auto start_tool = must<ompt_start_tool_result_t* (*)(unsigned, const char*)>(g_tool.lib, "ompt_start_tool");
  g_tool.profile_event = must<void (*)(const char*)>(g_tool.lib, "kokkosp_profile_event");
  g_tool.push_region = must<void (*)(const char*)>(g_tool.lib, "kokkosp_push_profile_region");
  g_tool.pop_region = must<void (*)()>(g_tool.lib, "kokkosp_pop_profile_region");

  g_tool.result = start_tool(201811, "kob test runtime 1.0 (OMPT device tracing, OpenMP 5.1 4.6.2)");
  if (g_tool.result == nullptr) {
    std::fprintf(stderr, "test runtime: ompt_start_tool returned NULL\n");
    return 2;
  }
  if (!g_tool.result->initialize(host_lookup, 5, &g_tool.result->tool_data)) {
    std::fprintf(stderr, "test runtime: the tool's initialize returned 0\n");
    return 2;
  }
  if (!g_callbacks[ompt_callback_device_initialize] || !g_callbacks[ompt_callback_device_finalize]) {
    std::fprintf(stderr, "test runtime: the tool registered no device_initialize/device_finalize callback\n");
    return 2;
  }
  g_tool.profile_event("kob-warm-up");  // registers this thread with the recorder before the anchors
  anchor();  // the reference: as close as possible to the tool's clock start (ompt_start_tool)

  if (scenario == "full") {
    scenario_full();
  } else if (scenario == "region") {
    scenario_region();
  } else if (scenario == "no-device-events") {
    scenario_no_device_events();
  } else {
    std::fprintf(stderr, "test runtime: unknown scenario %s\n", scenario.c_str());
    return 2;
  }

  // The runtime shuts down: the tool's finalize (it flushes and stops what is still traced and
  // writes its files), then late device_finalize callbacks and a record after the end.
  g_tool.result->finalize(&g_tool.result->tool_data);
  if (scenario == "full") {
    device_finalize(1);
    data_op(g_dev[1], 999999, 99, ompt_target_data_alloc, 1, 100);  // not tracing any more: dropped
  }
  write_report(out.c_str(), scenario);
  return 0;
}
