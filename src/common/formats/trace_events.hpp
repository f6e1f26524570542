// The trace as neutral events, between the walk over the Timeline (trace_producer) and the file
// formats (Chrome JSON, Perfetto protobuf): each format is a TraceSink and only encodes what it is
// given, so every format holds the same content.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kob::trace {

struct Arg {
  // SharedStr: a string that many events repeat (a source location): formats that can intern
  // values send it once; for the others it is a Str.
  enum class Type : std::uint8_t { Uint, Int, Bool, Str, SharedStr, Null };
  const char* key = "";  // a string literal (sinks know a key by its address)
  Type type = Type::Null;
  std::uint64_t u = 0;  // Uint; Bool as 0/1
  std::int64_t i = 0;   // Int
  std::string_view s;   // Str, SharedStr: valid until the sink call returns
  // SharedStr only: the text never changes at its address while the trace is written (a literal,
  // a name of the run, a source location), so a sink may know it by address without reading it.
  bool fixed = false;
};

// An event's arguments in the order they are written. No allocation: the producer refills one.
class Args {
 public:
  static constexpr std::size_t kMax = 12;
  Args& clear() {
    n_ = 0;
    return *this;
  }
  Args& u(const char* key, std::uint64_t v) {
    next(key, Arg::Type::Uint).u = v;
    return *this;
  }
  Args& i(const char* key, std::int64_t v) {
    next(key, Arg::Type::Int).i = v;
    return *this;
  }
  Args& b(const char* key, bool v) {
    next(key, Arg::Type::Bool).u = v ? 1 : 0;
    return *this;
  }
  Args& s(const char* key, std::string_view v) {
    next(key, Arg::Type::Str).s = v;
    return *this;
  }
  Args& shared(const char* key, std::string_view v) {
    Arg& a = next(key, Arg::Type::SharedStr);
    a.s = v;
    a.fixed = false;
    return *this;
  }
  // A SharedStr whose text never changes at its address (Arg::fixed).
  Args& shared_fixed(const char* key, std::string_view v) {
    Arg& a = next(key, Arg::Type::SharedStr);
    a.s = v;
    a.fixed = true;
    return *this;
  }
  Args& null(const char* key) {
    next(key, Arg::Type::Null);
    return *this;
  }
  const Arg* begin() const { return a_.data(); }
  const Arg* end() const { return a_.data() + n_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }

 private:
  Arg& next(const char* key, Arg::Type t) {
    Arg& a = a_[n_ < kMax ? n_++ : kMax - 1];  // more than kMax is a producer bug: the last slot is reused
    a.key = key;
    a.type = t;
    return a;
  }
  std::array<Arg, kMax> a_{};
  std::size_t n_ = 0;
};

enum class TrackKind : std::uint8_t {
  Thread,  // a host thread of the program
  Device,  // an OpenMP offload device
  Lane,    // a thread's extra lane (mutex holds that outlive the construct they began in)
};

struct TrackDesc {
  std::uint32_t index = 0;    // what events name as their track
  std::uint64_t id = 0;       // unique among the trace's tracks (the Chrome trace's tid)
  TrackKind kind = TrackKind::Thread;
  std::uint64_t os_tid = 0;   // Thread: the OS thread id
  bool os_tid_first = true;   // Thread: the first track with this OS id (a later one is a reused id)
  bool listed = true;         // false: a thread that only delivered device records (no name event)
  std::string name;
  std::uint64_t sort_index = 0;
};

enum class Phase : std::uint8_t {
  Slice,       // start..end, nested on its track
  Instant,     // thread-scoped instant
  Counter,     // the value is args[0]
  AsyncBegin,  // overlapping spans keyed by id (sections)
  AsyncEnd,
};

struct Event {
  Phase phase = Phase::Instant;
  const char* cat = "";  // a string literal (sinks know a category by its address)
  std::string_view name;
  // The name's text never changes at its address while the trace is written (a literal, a name of
  // the run, a construct's per-site name): a sink may know it by address without reading it.
  bool name_fixed = false;
  std::uint32_t track = 0;
  std::uint64_t ts = 0;   // ns on the Timeline's clock
  std::uint64_t end = 0;  // Slice
  std::uint64_t id = 0;   // Async
  const Args* args = nullptr;  // nullptr: the event has no argument object at all
  std::span<const std::uint64_t> flows_out;  // ids of the correlation arrows that start here
  std::span<const std::uint64_t> flows_in;   // ... and that end here
};

// A correlation arrow, also given to the events at its two ends (flows_out / flows_in).
struct Flow {
  const char* name = "";  // a string literal (sinks may know it by its address)
  std::uint64_t id = 0;
  std::uint32_t from_track = 0, to_track = 0;
  std::uint64_t from_ts = 0, to_ts = 0;
};

// Calls come in this order: process, then windows, then finish. A window is events, then flows,
// then window_end; a track is declared (track) before the first event on it, in any window.
// Within a window, slices come per track by start (outer first), already nested; a slice that
// began before the window's others (it was open across an earlier window's end) may start before
// slices of earlier windows on its track, and encloses those it overlaps.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) = 0;
  virtual void track(const TrackDesc& t) = 0;
  virtual void event(const Event& e) = 0;
  virtual void flow(const Flow& f) = 0;
  // The window's events are all given: nothing later nests inside what it gave.
  virtual void window_end() {}
  // other_data_json: the run's metadata as a JSON object. Returns false on an I/O error.
  virtual bool finish(const std::string& other_data_json) = 0;

  // Encoding on several threads (TraceProducer, TraceInfo::jobs): a sink that can take a window's
  // complete events (Phase::Slice) from n threads at once says so by returning true from split(n),
  // before process(); then shard(i), i < n, takes the slices of the tracks given to thread i (a
  // track's always to the same shard, in order). Shards are fed only between shards_begin() and
  // the next call to this sink, and nothing else is given to them; everything else (processes,
  // tracks, instants, counters, flows, window ends, finish) comes to this sink, which closes its
  // shards' slices at window_end() and writes their bytes at finish().
  virtual bool split(unsigned n) {
    (void)n;
    return false;
  }
  virtual TraceSink& shard(unsigned i) {
    (void)i;
    return *this;
  }
  // The shards are about to be fed: what this sink holds goes to its file before what they write
  // (a file's header, the track descriptors).
  virtual void shards_begin() {}
};

}  // namespace kob::trace
