// The OMPT device tracing interface (OpenMP 5.1, 4.6.2), tool side.
//
// Start: at device_initialize we look up the device's 14 tracing entry points. Where start_trace,
// stop_trace, the buffer cursor and record functions and the two time functions are there, and
// --events has omp-device, we enable the OMPT records of target regions, data operations and
// kernel submissions (5.0 and EMI event numbers; their records are ompt_record_target_t,
// ompt_record_target_data_op_t and ompt_record_target_kernel_t) and start tracing with our two
// buffer callbacks. otherData says per device which path it took ("devices": "tracing" or
// "callbacks") and why.
//
// Buffers: each traced device has a table of kMaxBuffers slots; kInitialBuffers buffers of
// kBufferBytes are allocated before tracing starts. The request callback takes a free one with
// one compare-and-swap on the slot's state (no lock, no allocation); only when every buffer is out
// does it allocate one more, up to kMaxBuffers, after which the runtime gets no buffer and the
// request is counted. The complete callback walks the records and, when the runtime passes
// ownership back (buffer_owned), returns the buffer to the pool for the next request.
//
// Time: record times are device times. translate_time gives seconds on the omp_get_wtime time
// line, whose origin (and, for libomp's gettimeofday, rate) is not our clock's. The trace is on
// CLOCK_MONOTONIC_RAW (clock::raw_ns), so at each completion, promptly as 4.6.2.3 recommends, we
// find where "now" is on both lines: get_device_time bracketed by two raw_ns reads (the tightest
// of three tries), translated. A record time t then maps to
//   raw_ref + (translate_time(t) - translate_time(device_now)) seconds,
// which keeps the runtime's own offset and drift correction and only re-bases the wtime line.
//
// Robustness: a null device or lookup, entry points missing, records of unknown types, cursors
// past the end, buffers completed twice or never handed out: one warning line per kind of
// problem, a counter in otherData, and the run goes on.
#include "ompt_backend/device_tracing.hpp"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <new>
#include <string>

#include "common/record/clock.hpp"
#include "common/session/config.hpp"
#include "common/support/log.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/record/record.hpp"
#include "common/record/record_fields.hpp"
#include "common/record/recorder.hpp"
#include "common/session/session.hpp"

namespace kob::omp::device_tracing {

namespace {

struct EntryPoints {
  ompt_get_device_num_procs_t get_device_num_procs = nullptr;
  ompt_get_device_time_t get_device_time = nullptr;
  ompt_translate_time_t translate_time = nullptr;
  ompt_set_trace_ompt_t set_trace_ompt = nullptr;
  ompt_set_trace_native_t set_trace_native = nullptr;
  ompt_start_trace_t start_trace = nullptr;
  ompt_pause_trace_t pause_trace = nullptr;
  ompt_flush_trace_t flush_trace = nullptr;
  ompt_stop_trace_t stop_trace = nullptr;
  ompt_advance_buffer_cursor_t advance_buffer_cursor = nullptr;
  ompt_get_record_type_t get_record_type = nullptr;
  ompt_get_record_ompt_t get_record_ompt = nullptr;
  ompt_get_record_native_t get_record_native = nullptr;
  ompt_get_record_abstract_t get_record_abstract = nullptr;
};

// A pool slot: empty (no buffer yet), free (in the pool), out (the runtime has it), busy (being
// allocated, or its records being read before it goes back to the pool).
enum SlotState : std::uint8_t { kSlotEmpty, kSlotFree, kSlotOut, kSlotBusy };

struct Slot {
  std::atomic<void*> buffer{nullptr};  // set once, never changed: buffers are never freed
  std::atomic<std::uint8_t> state{kSlotEmpty};
};

struct Device {
  int num = 0;
  std::string type;
  ompt_device_t* handle = nullptr;
  EntryPoints ep;
  Slot slots[kMaxBuffers];
  // Under g_mu.
  bool started = false;
  bool stopped = false;
  bool paused = false;

  // A free buffer for the runtime, or nullptr when the pool is exhausted.
  void* take();
  Slot* find(const void* buffer);
  bool add_free_buffer();
  void* add_buffer(std::uint8_t state);
};

// Counters for otherData. Relaxed atomics: read once, at the end.
struct Stats {
  std::atomic<std::uint64_t> buffers_allocated{0};
  std::atomic<std::uint64_t> buffers_requested{0};
  std::atomic<std::uint64_t> buffer_requests_denied{0};
  std::atomic<std::uint64_t> buffer_completions{0};
  std::atomic<std::uint64_t> buffer_completions_partial{0};  // buffer_owned 0: the runtime keeps it
  std::atomic<std::uint64_t> buffer_completions_empty{0};
  std::atomic<std::uint64_t> buffer_completions_duplicate{0};
  std::atomic<std::uint64_t> buffer_completions_unknown{0};
  std::atomic<std::uint64_t> buffers_returned{0};
  std::atomic<std::uint64_t> records{0};
  std::atomic<std::uint64_t> records_other_ompt{0};
  std::atomic<std::uint64_t> records_native{0};
  std::atomic<std::uint64_t> records_abstract{0};
  std::atomic<std::uint64_t> records_invalid{0};
  std::atomic<std::uint64_t> records_unknown_type{0};
  std::atomic<std::uint64_t> records_bad_time{0};
  std::atomic<std::uint64_t> records_end_before_start{0};
  std::atomic<std::uint64_t> walks_cut{0};
  std::atomic<std::uint64_t> pause_calls{0};
  std::atomic<std::uint64_t> resume_calls{0};
  std::atomic<std::uint64_t> calibration_max_bracket_ns{0};
};
Stats g_stats;

// Device numbers 0 .. kMaxDevices-1; a Device, once made, lives until the process ends (the
// runtime may call the buffer callbacks late).
std::atomic<Device*> g_devices[kMaxDevices];
std::atomic<bool> g_any_traced{false};
std::atomic<bool> g_reported{false};

// Guards device set-up and the started/stopped/paused state, and the region gate below. Never
// taken in the buffer callbacks.
std::mutex g_mu;
int g_open_regions = 0;                  // --device-trace-region regions open, all threads
std::atomic<bool> g_gate_synced{false};  // the devices' pause state follows g_open_regions

// Kokkos regions open on this thread: which of the first 64 levels are the named region.
struct RegionStack {
  std::uint64_t matched = 0;
  std::uint32_t depth = 0;
};
constinit thread_local RegionStack t_regions __attribute__((tls_model("initial-exec")));

// One warning per kind of problem per process.
enum Warn {
  kWarnUnknownDevice,
  kWarnNullArgs,
  kWarnPoolExhausted,
  kWarnUnknownBuffer,
  kWarnDuplicate,
  kWarnInvalidRecord,
  kWarnUnknownType,
  kWarnBadTime,
  kWarnEndBeforeStart,
  kWarnCut,
  kWarnNoPause,
  kWarnCount
};
std::atomic<bool> g_warned[kWarnCount];

void warn_once(Warn w, const std::string& msg) {
  if (!g_warned[w].exchange(true, std::memory_order_relaxed)) log::warn(msg);
}

void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

const char* set_result_name(int r) { return omp_names::set_result(r); }

bool set_ok(int r) { return r == ompt_set_sometimes || r == ompt_set_sometimes_paired || r == ompt_set_always; }

Device* device_at(int device_num) {
  if (device_num < 0 || device_num >= kMaxDevices) return nullptr;
  return g_devices[device_num].load(std::memory_order_acquire);
}

void* allocate_buffer() { return ::operator new(kBufferBytes, std::align_val_t{64}, std::nothrow); }

void* Device::take() {
  for (Slot& s : slots) {
    std::uint8_t expected = kSlotFree;
    if (s.state.load(std::memory_order_relaxed) == kSlotFree &&
        s.state.compare_exchange_strong(expected, kSlotOut, std::memory_order_acq_rel)) {
      return s.buffer.load(std::memory_order_relaxed);
    }
  }
  // Every buffer is out: grow the pool by one (this is the request callback, not a hot path).
  return add_buffer(kSlotOut);
}

// Allocates a buffer into an empty slot, leaving the slot in `state` (free, or already out).
void* Device::add_buffer(std::uint8_t state) {
  for (Slot& s : slots) {
    std::uint8_t expected = kSlotEmpty;
    if (s.state.load(std::memory_order_relaxed) == kSlotEmpty &&
        s.state.compare_exchange_strong(expected, kSlotBusy, std::memory_order_acq_rel)) {
      void* p = allocate_buffer();
      if (p == nullptr) {
        s.state.store(kSlotEmpty, std::memory_order_release);
        return nullptr;
      }
      s.buffer.store(p, std::memory_order_release);
      s.state.store(state, std::memory_order_release);
      bump(g_stats.buffers_allocated);
      return p;
    }
  }
  return nullptr;
}

bool Device::add_free_buffer() { return add_buffer(kSlotFree) != nullptr; }

Slot* Device::find(const void* buffer) {
  for (Slot& s : slots) {
    if (s.buffer.load(std::memory_order_acquire) == buffer) return &s;
  }
  return nullptr;
}

// ---- time ----

struct Calibration {
  std::int64_t raw_ref = 0;  // CLOCK_MONOTONIC_RAW ns at the reference moment
  double wtime_ref = 0;      // the same moment on the omp_get_wtime line, seconds
};

Calibration calibrate(const Device& d) {
  std::uint64_t best_width = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t raw = 0;
  ompt_device_time_t device_now = 0;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t r0 = clock::raw_ns();
    const ompt_device_time_t t = d.ep.get_device_time(d.handle);
    const std::uint64_t r1 = clock::raw_ns();
    if (r1 - r0 < best_width) {
      best_width = r1 - r0;
      raw = r0 + (r1 - r0) / 2;
      device_now = t;
    }
  }
  std::uint64_t seen = g_stats.calibration_max_bracket_ns.load(std::memory_order_relaxed);
  while (best_width > seen &&
         !g_stats.calibration_max_bracket_ns.compare_exchange_weak(seen, best_width, std::memory_order_relaxed)) {
  }
  return {static_cast<std::int64_t>(raw), d.ep.translate_time(d.handle, device_now)};
}

// Host ns of a device time, or -1 when the runtime's translation makes no sense.
std::int64_t host_ns(const Device& d, const Calibration& c, ompt_device_time_t t) {
  const double w = d.ep.translate_time(d.handle, t);
  const double delta_ns = (w - c.wtime_ref) * 1e9;
  if (!std::isfinite(delta_ns) || std::fabs(delta_ns) > 1e18) return -1;
  const std::int64_t ns = c.raw_ref + std::llround(delta_ns);
  return ns > 0 ? ns : -1;
}

// ---- records ----

struct Walk {
  Device& d;
  int device_num;
  ompt_buffer_t* buffer;
  Calibration cal;
  ThreadBuffer& out;
};

void ompt_record(Walk& w, ompt_buffer_cursor_t cur) {
  const ompt_record_ompt_t* r = w.d.ep.get_record_ompt(w.buffer, cur);
  if (r == nullptr) {
    bump(g_stats.records_invalid);
    warn_once(kWarnInvalidRecord, "device " + std::to_string(w.device_num) +
                                      ": ompt_get_record_ompt returned no record for an OMPT record; skipped");
    return;
  }
  std::uint64_t host_op = 0, target = r->target_id, size = 0, kind = 0;
  const ompt_device_time_t start = r->time;
  ompt_device_time_t end = 0;
  switch (r->type) {
    case ompt_callback_target:
    case ompt_callback_target_emi:
      if (target == 0) target = r->record.target.target_id;
      size = static_cast<std::uint64_t>(r->record.target.endpoint);
      kind = static_cast<std::uint64_t>(r->record.target.kind);
      break;
    case ompt_callback_target_data_op:
    case ompt_callback_target_data_op_emi:
      host_op = r->record.target_data_op.host_op_id;
      size = r->record.target_data_op.bytes;
      kind = static_cast<std::uint64_t>(r->record.target_data_op.optype);
      end = r->record.target_data_op.end_time;
      break;
    case ompt_callback_target_submit:
    case ompt_callback_target_submit_emi:
      host_op = r->record.target_kernel.host_op_id;
      size = r->record.target_kernel.requested_num_teams;
      kind = r->record.target_kernel.granted_num_teams;
      end = r->record.target_kernel.end_time;
      break;
    default:
      bump(g_stats.records_other_ompt);
      return;
  }
  const std::int64_t s_ns = start != 0 ? host_ns(w.d, w.cal, start) : -1;
  if (s_ns < 0) {
    bump(g_stats.records_bad_time);
    warn_once(kWarnBadTime, "device " + std::to_string(w.device_num) + ": a trace record with time " +
                                std::to_string(start) + " that translate_time cannot place; such records are skipped");
    return;
  }
  std::int64_t e_ns = 0;
  if (end != 0) {
    e_ns = host_ns(w.d, w.cal, end);
    if (e_ns < s_ns) {
      bump(g_stats.records_end_before_start);
      warn_once(kWarnEndBeforeStart, "device " + std::to_string(w.device_num) +
                                         ": a trace record ends before it starts; recorded with no duration");
      e_ns = s_ns;
    }
  }
  const auto type = static_cast<std::uint16_t>(r->type);
  w.out.emit([&](Record& x) {
    x.tick = clock::now();
    x.type = Ev::OmpDeviceRecord;
    using F = fields::OmpDeviceRecord;
    F::record_type.set(x, type);
    F::device.set(x, w.device_num);
    F::host_op_id.set(x, host_op);
    F::target_id.set(x, target);
    F::start.set(x, static_cast<std::uint64_t>(s_ns));
    F::end.set(x, static_cast<std::uint64_t>(e_ns));
    F::value.set(x, size);
    F::op_kind.set(x, kind);
  });
  bump(g_stats.records);
  if (log::level() == log::Level::Trace) {
    log::trace("device record: device " + std::to_string(w.device_num) + " type " + std::to_string(type) +
               " host_op_id " + std::to_string(host_op) + " target_id " + std::to_string(target) + " start_ns " +
               std::to_string(s_ns) + " end_ns " + std::to_string(e_ns) + " size " + std::to_string(size) + " kind " +
               std::to_string(kind));
  }
}

void native_record(Walk& w, ompt_buffer_cursor_t cur) {
  bump(g_stats.records_native);
  if (w.d.ep.get_record_native == nullptr) return;
  ompt_id_t host_op = 0;
  void* native = w.d.ep.get_record_native(w.buffer, cur, &host_op);
  if (native != nullptr && w.d.ep.get_record_abstract != nullptr && w.d.ep.get_record_abstract(native) != nullptr)
    bump(g_stats.records_abstract);
}

// Reads the records from begin, within bytes, as the runtime's cursor functions walk them.
void walk(Device& d, int device_num, ompt_buffer_t* buffer, std::size_t bytes, ompt_buffer_cursor_t begin) {
  if (bytes == 0) {
    bump(g_stats.buffer_completions_empty);
    return;
  }
  Walk w{d, device_num, buffer, calibrate(d), this_thread()};
  ompt_buffer_cursor_t cur = begin;
  // Every record takes at least one byte: a walk longer than that is a runtime going round.
  for (std::size_t step = 0;; ++step) {
    if (step >= bytes) {
      bump(g_stats.walks_cut);
      warn_once(kWarnCut, "device " + std::to_string(device_num) +
                              ": ompt_advance_buffer_cursor went past the buffer's bytes; the walk was cut there");
      return;
    }
    // An int at once: the runtime (C) may return a value no ompt_record_t enumerator names, and
    // such a value held in the enum type is undefined behaviour in C++ (UBSan: invalid enum load).
    const int kind = static_cast<int>(d.ep.get_record_type(buffer, cur));
    if (kind == ompt_record_ompt) {
      ompt_record(w, cur);
    } else if (kind == ompt_record_native) {
      native_record(w, cur);
    } else if (kind == ompt_record_invalid) {
      bump(g_stats.records_invalid);
      warn_once(kWarnInvalidRecord, "device " + std::to_string(device_num) +
                                        ": an invalid trace record (cursor out of bounds?); the rest of that buffer is skipped");
      return;
    } else {
      bump(g_stats.records_unknown_type);
      warn_once(kWarnUnknownType, "device " + std::to_string(device_num) + ": a trace record of unknown type " +
                                      std::to_string(kind) + "; skipped");
    }
    ompt_buffer_cursor_t next = cur;
    if (!d.ep.advance_buffer_cursor(d.handle, buffer, bytes, cur, &next)) return;
    if (next == cur) {
      bump(g_stats.walks_cut);
      warn_once(kWarnCut, "device " + std::to_string(device_num) +
                              ": ompt_advance_buffer_cursor did not move; the rest of that buffer is skipped");
      return;
    }
    cur = next;
  }
}

// ---- the two buffer callbacks ----

void on_buffer_request(int device_num, ompt_buffer_t** buffer, std::size_t* bytes) {
  if (buffer == nullptr || bytes == nullptr) {
    warn_once(kWarnNullArgs, "the OpenMP runtime asked for a trace buffer with null arguments; ignored");
    return;
  }
  *buffer = nullptr;
  *bytes = 0;
  Device* d = device_at(device_num);
  if (d == nullptr) {
    warn_once(kWarnUnknownDevice, "the OpenMP runtime asked for a trace buffer for device " +
                                      std::to_string(device_num) + ", which we do not trace; none given");
    return;
  }
  void* b = d->take();
  if (b == nullptr) {
    bump(g_stats.buffer_requests_denied);
    warn_once(kWarnPoolExhausted, "device " + std::to_string(device_num) + ": all " + std::to_string(kMaxBuffers) +
                                      " trace buffers are out; the runtime gets none and may drop device records");
    return;
  }
  bump(g_stats.buffers_requested);
  *buffer = b;
  *bytes = kBufferBytes;
}

void on_buffer_complete(int device_num, ompt_buffer_t* buffer, std::size_t bytes, ompt_buffer_cursor_t begin,
                        int buffer_owned) {
  bump(g_stats.buffer_completions);
  Device* d = device_at(device_num);
  if (d == nullptr) {
    warn_once(kWarnUnknownDevice, "the OpenMP runtime completed a trace buffer of device " +
                                      std::to_string(device_num) + ", which we do not trace; ignored");
    return;
  }
  Slot* s = buffer != nullptr ? d->find(buffer) : nullptr;
  if (s == nullptr) {
    bump(g_stats.buffer_completions_unknown);
    warn_once(kWarnUnknownBuffer, "device " + std::to_string(device_num) +
                                      ": the runtime completed a trace buffer we never handed out; its records are skipped");
    return;
  }
  if (buffer_owned) {
    // Ours again: read it exclusively, then back to the pool.
    std::uint8_t expected = kSlotOut;
    if (!s->state.compare_exchange_strong(expected, kSlotBusy, std::memory_order_acq_rel)) {
      bump(g_stats.buffer_completions_duplicate);
      warn_once(kWarnDuplicate, "device " + std::to_string(device_num) +
                                    ": the runtime completed a trace buffer it had already given back; skipped");
      return;
    }
    walk(*d, device_num, buffer, bytes, begin);
    s->state.store(kSlotFree, std::memory_order_release);
    bump(g_stats.buffers_returned);
  } else {
    // The runtime keeps the buffer and will complete it again with the records that follow.
    if (s->state.load(std::memory_order_acquire) != kSlotOut) {
      bump(g_stats.buffer_completions_duplicate);
      warn_once(kWarnDuplicate, "device " + std::to_string(device_num) +
                                    ": the runtime completed a trace buffer it had already given back; skipped");
      return;
    }
    bump(g_stats.buffer_completions_partial);
    walk(*d, device_num, buffer, bytes, begin);
  }
}

// ---- pause and resume (--device-trace-region) ----

// Under g_mu: every traced device paused unless a named region is open.
void apply_gate_locked() {
  const bool pause = g_open_regions == 0;
  for (auto& slot : g_devices) {
    Device* d = slot.load(std::memory_order_acquire);
    if (d == nullptr || !d->started || d->stopped || d->paused == pause) continue;
    if (d->ep.pause_trace == nullptr) {
      warn_once(kWarnNoPause, "device " + std::to_string(d->num) +
                                  " offers no ompt_pause_trace: --device-trace-region cannot pause its tracing");
      continue;
    }
    const int r = d->ep.pause_trace(d->handle, pause ? 1 : 0);
    d->paused = pause;
    bump(pause ? g_stats.pause_calls : g_stats.resume_calls);
    log::debug("ompt_pause_trace(device " + std::to_string(d->num) + ", " + (pause ? "1" : "0") +
               ") = " + std::to_string(r));
  }
}

// ---- flush and stop ----

void stop_device(Device* d) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!d->started || d->stopped) return;
    d->stopped = true;
  }
  // Outside the lock: the runtime delivers the remaining buffers through on_buffer_complete.
  const int flushed = d->ep.flush_trace ? d->ep.flush_trace(d->handle) : 1;
  const int stopped = d->ep.stop_trace(d->handle);
  log::debug("device " + std::to_string(d->num) + ": ompt_flush_trace = " + std::to_string(flushed) +
             ", ompt_stop_trace = " + std::to_string(stopped));
  if (!flushed || !stopped)
    log::warn("device " + std::to_string(d->num) + ": " + (!flushed ? "ompt_flush_trace" : "ompt_stop_trace") +
              " failed; device records still in the runtime's buffers may be missing");
}

void report_once() {
  if (!g_any_traced.load() || g_reported.exchange(true)) return;
  std::uint64_t outstanding = 0;
  for (auto& slot : g_devices) {
    if (Device* d = slot.load(std::memory_order_acquire)) {
      for (Slot& s : d->slots) outstanding += s.state.load(std::memory_order_acquire) == kSlotOut;
    }
  }
  auto put = [](const char* key, std::uint64_t v) { session::add_other_data("device_tracing", key, std::to_string(v)); };
  const Stats& s = g_stats;
  put("buffer_bytes", kBufferBytes);
  put("buffers_allocated", s.buffers_allocated.load());
  put("buffers_requested", s.buffers_requested.load());
  put("buffer_requests_denied", s.buffer_requests_denied.load());
  put("buffer_completions", s.buffer_completions.load());
  put("buffer_completions_partial", s.buffer_completions_partial.load());
  put("buffer_completions_empty", s.buffer_completions_empty.load());
  put("buffer_completions_duplicate", s.buffer_completions_duplicate.load());
  put("buffer_completions_unknown", s.buffer_completions_unknown.load());
  put("buffers_returned", s.buffers_returned.load());
  put("buffers_outstanding", outstanding);
  put("records", s.records.load());
  put("records_other_ompt", s.records_other_ompt.load());
  put("records_native", s.records_native.load());
  put("records_abstract", s.records_abstract.load());
  put("records_invalid", s.records_invalid.load());
  put("records_unknown_type", s.records_unknown_type.load());
  put("records_bad_time", s.records_bad_time.load());
  put("records_end_before_start", s.records_end_before_start.load());
  put("walks_cut", s.walks_cut.load());
  put("pause_calls", s.pause_calls.load());
  put("resume_calls", s.resume_calls.load());
  put("calibration_max_bracket_ns", s.calibration_max_bracket_ns.load());
  if (outstanding != 0)
    log::warn(std::to_string(outstanding) + " device trace buffers were not given back by the runtime at the end");
}

template <class T>
void look_up(ompt_function_lookup_t lookup, const char* name, T& slot, std::string& missing) {
  slot = reinterpret_cast<T>(lookup(name));
  if (slot == nullptr) missing += (missing.empty() ? "" : ",") + std::string(name);
}

struct TraceType {
  ompt_callbacks_t event;
  const char* name;
};
constexpr TraceType kTraceTypes[] = {
    {ompt_callback_target, "target"},
    {ompt_callback_target_data_op, "target_data_op"},
    {ompt_callback_target_submit, "target_submit"},
    {ompt_callback_target_emi, "target_emi"},
    {ompt_callback_target_data_op_emi, "target_data_op_emi"},
    {ompt_callback_target_submit_emi, "target_submit_emi"},
};

}  // namespace

bool on_device_initialize(int device_num, const char* type, ompt_device_t* device, ompt_function_lookup_t lookup,
                          const char* documentation) {
  const std::string num = std::to_string(device_num);
  const std::string label = "device " + num + " (" + (type ? type : "?") + ")";
  auto callbacks_only = [&](const std::string& why) {
    log::debug(label + ": device tracing not used: " + why);
    session::add_other_data("devices", num, "callbacks");
    session::add_other_data("device_tracing", "device " + num, why);
    return false;
  };
  try {
    if (!recording(kGroupOmpDevice)) return callbacks_only("omp-device is not in --events");
    if (lookup == nullptr) return callbacks_only("the runtime gave no lookup function");
    if (device == nullptr) {
      log::warn(label + ": the runtime gave a null device handle; device tracing is not used for it");
      return callbacks_only("the runtime gave a null device handle");
    }
    if (device_num < 0 || device_num >= kMaxDevices)
      return callbacks_only("device numbers from 0 to " + std::to_string(kMaxDevices - 1) + " are traced");
    if (documentation != nullptr) log::debug(label + ": " + std::string(documentation).substr(0, 400));

    EntryPoints ep;
    std::string missing;
    look_up(lookup, "ompt_get_device_num_procs", ep.get_device_num_procs, missing);
    look_up(lookup, "ompt_get_device_time", ep.get_device_time, missing);
    look_up(lookup, "ompt_translate_time", ep.translate_time, missing);
    look_up(lookup, "ompt_set_trace_ompt", ep.set_trace_ompt, missing);
    look_up(lookup, "ompt_set_trace_native", ep.set_trace_native, missing);
    look_up(lookup, "ompt_start_trace", ep.start_trace, missing);
    look_up(lookup, "ompt_pause_trace", ep.pause_trace, missing);
    look_up(lookup, "ompt_flush_trace", ep.flush_trace, missing);
    look_up(lookup, "ompt_stop_trace", ep.stop_trace, missing);
    look_up(lookup, "ompt_advance_buffer_cursor", ep.advance_buffer_cursor, missing);
    look_up(lookup, "ompt_get_record_type", ep.get_record_type, missing);
    look_up(lookup, "ompt_get_record_ompt", ep.get_record_ompt, missing);
    look_up(lookup, "ompt_get_record_native", ep.get_record_native, missing);
    look_up(lookup, "ompt_get_record_abstract", ep.get_record_abstract, missing);
    if (!missing.empty()) log::debug(label + ": the device lookup lacks " + missing);
    if (ep.start_trace == nullptr) return callbacks_only("the device offers no ompt_start_trace");
    if (!ep.stop_trace || !ep.set_trace_ompt || !ep.advance_buffer_cursor || !ep.get_record_type || !ep.get_record_ompt ||
        !ep.get_device_time || !ep.translate_time)
      return callbacks_only("the device lacks tracing entry points we need: " + missing);

    std::string enabled;
    bool any = false;
    for (const TraceType& t : kTraceTypes) {
      const ompt_set_result_t r = ep.set_trace_ompt(device, 1, static_cast<unsigned>(t.event));
      log::debug(label + ": ompt_set_trace_ompt(" + t.name + ") = " + set_result_name(r));
      enabled += (enabled.empty() ? "" : ",") + std::string(t.name) + "=" + set_result_name(r);
      any = any || set_ok(r);
    }
    session::add_other_data("device_tracing", "device " + num + " set_trace_ompt", enabled);
    if (!any) return callbacks_only("no record type could be enabled");
    if (ep.get_device_num_procs)
      session::add_other_data("device_tracing", "device " + num + " num_procs",
                              std::to_string(ep.get_device_num_procs(device)));

    std::lock_guard<std::mutex> lock(g_mu);
    Device* d = g_devices[device_num].load(std::memory_order_acquire);
    if (d != nullptr && d->started && !d->stopped) {
      log::warn(label + " initialised again while traced; its tracing goes on as before");
      return true;
    }
    const bool fresh = d == nullptr;
    if (fresh) d = new Device();  // never freed: the runtime may call the buffer callbacks late
    d->num = device_num;
    d->type = type ? type : "";
    d->handle = device;
    d->ep = ep;
    d->started = d->stopped = d->paused = false;
    if (fresh) {
      // The pool exists before tracing starts: the runtime may ask for buffers inside start_trace.
      for (int i = 0; i < kInitialBuffers; ++i) d->add_free_buffer();
      g_devices[device_num].store(d, std::memory_order_release);
    }

    if (!ep.start_trace(device, &on_buffer_request, &on_buffer_complete)) {
      log::warn(label + ": ompt_start_trace failed; its device activity is recorded from the host callbacks only");
      session::add_other_data("devices", num, "callbacks");
      session::add_other_data("device_tracing", "device " + num, "ompt_start_trace failed");
      return false;
    }
    d->started = true;
    g_any_traced.store(true);
    // --device-trace-region: start paused unless the region is open already.
    if (g_device_trace_region_set.load(std::memory_order_relaxed)) {
      g_gate_synced.store(true);
      apply_gate_locked();
    }
    session::add_other_data("devices", num, "tracing");
    session::add_other_data("device_tracing", "device " + num, "tracing");
    log::debug(label + ": device tracing started");
    return true;
  } catch (...) {
    log::warn(label + ": setting up device tracing failed; its device activity is recorded from the host callbacks only");
    return false;
  }
}

void on_device_finalize(int device_num) {
  if (Device* d = device_at(device_num)) stop_device(d);
}

void finalize_all() {
  for (auto& slot : g_devices) {
    if (Device* d = slot.load(std::memory_order_acquire)) stop_device(d);
  }
  report_once();
}

void region_push(const char* name) {
  const std::string& want = session::config().device_trace_region;
  const bool match = name != nullptr && !want.empty() && want == name;
  RegionStack& st = t_regions;
  const std::uint32_t level = st.depth++;
  if (level < 64) {
    if (match) {
      st.matched |= std::uint64_t{1} << level;
    } else {
      st.matched &= ~(std::uint64_t{1} << level);
    }
  }
  if ((!match || level >= 64) && g_gate_synced.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (match && level < 64) ++g_open_regions;
  g_gate_synced.store(true, std::memory_order_relaxed);
  apply_gate_locked();
}

void region_pop() {
  RegionStack& st = t_regions;
  if (st.depth == 0) return;
  const std::uint32_t level = --st.depth;
  if (level >= 64 || ((st.matched >> level) & 1u) == 0) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_open_regions > 0) --g_open_regions;
  apply_gate_locked();
}

namespace {
// The Kokkos hooks reach region_push / region_pop through the session (the two frontends meet only
// in the core); registered when the library is loaded, so that no region is missed.
constexpr RegionListener kRegionListener{&region_push, &region_pop};
[[maybe_unused]] const bool g_region_listener_registered = (session::set_region_listener(&kRegionListener), true);
}  // namespace

}  // namespace kob::omp::device_tracing
