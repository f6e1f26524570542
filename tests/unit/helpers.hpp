// Shared helpers of the unit tests: recorder state reset, synthetic record streams, and a
// python3 JSON check.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/record/clock.hpp"
#include "common/record/intern.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/record.hpp"
#include "common/record/record_fields.hpp"
#include "common/record/recorder.hpp"
#include "common/timeline/thread_source.hpp"
#include "common/timeline/timeline.hpp"
#include "common/formats/trace_events.hpp"
#include "common/formats/trace_writer.hpp"

namespace kob_test {

// Built with -fsanitize=thread (build-tsan). Its runtime emulates signal delivery, and in a
// fork() child of a multi-threaded process a raised signal does not reach the default action.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// Forgets all registered threads and counters on entry and exit, restores the default memory cap,
// and makes ticks read as nanoseconds (ns = tick).
struct RecorderReset {
  static constexpr std::uint64_t kDefaultLimit = 1024ull << 20;
  RecorderReset() { reset(); }
  ~RecorderReset() { reset(); }
  static void reset() {
    kob::recorder::reset_for_test();
    kob::recorder::set_memory_limit(kDefaultLimit);
    kob::clock::set_calibration_for_test(false, 0, 0, 1.0);
  }
};

// RecorderReset plus the raw trace: stops the writer and forgets every thread, file and counter
// on entry and exit.
struct RawReset {
  RawReset() { reset(); }
  ~RawReset() { reset(); }
  static void reset() {
    kob::raw::reset_for_test();
    RecorderReset::reset();
  }
};

// A span of type Span on a track, from start to end (ns); its other fields default.
template <class Span>
Span span(std::uint32_t track, std::uint64_t start, std::uint64_t end) {
  Span s;
  s.track = track;
  s.start = start;
  s.end = end;
  return s;
}

inline std::uint32_t nm(const char* s) { return kob::names().intern(s); }

// A forked child's wait status; a child still running after 60 s is killed (-1): a hang fails
// the test instead of stalling it.
inline int wait_child(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 600; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    usleep(100'000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// One record with the given fields (u[0], u[1], ... in order).
inline kob::Record rec(std::uint64_t tick, kob::Ev type, std::uint32_t a = 0, std::initializer_list<std::uint64_t> u = {},
                       std::uint16_t sub = 0) {
  kob::Record r{};
  r.tick = tick;
  r.type = type;
  r.a = a;
  r.sub = sub;
  std::size_t i = 0;
  for (std::uint64_t v : u) r.u[i++] = v;
  return r;
}

// Zero in every field the record's type does not carry (fields::kCarried), as the hot path's
// zeroed slots leave them: the coder does not look at those.
inline kob::Record declared_only(kob::Record r) {
  using kob::fields::Slot;
  const unsigned carried = kob::fields::kCarried[static_cast<unsigned>(r.type)];
  auto has = [&](Slot s) { return (carried >> static_cast<unsigned>(s)) & 1; };
  if (!has(Slot::sub)) r.sub = 0;
  if (!has(Slot::a)) r.a = 0;
  for (unsigned i = 0; i < 6; ++i)
    if (!has(static_cast<Slot>(static_cast<unsigned>(Slot::u0) + i))) r.u[i] = 0;
  return r;
}

// Records written straight into in-memory threads (no thread_local, no clock), then read with
// build_timeline. Track i is thread i.
struct Synth {
  std::vector<std::unique_ptr<kob::MemoryThread>> bufs;

  explicit Synth(int tracks) {
    for (int i = 0; i < tracks; ++i) {
      auto b = std::make_unique<kob::MemoryThread>();
      b->index = static_cast<std::uint32_t>(i);
      b->os_tid = 1000u + static_cast<std::uint64_t>(i);
      bufs.push_back(std::move(b));
    }
  }

  void rec(int track, std::uint64_t tick, kob::Ev type, std::uint32_t a = 0, std::initializer_list<std::uint64_t> u = {},
           std::uint16_t sub = 0) {
    add(track, kob_test::rec(tick, type, a, u, sub));
  }
  void add(int track, const kob::Record& r) { bufs[static_cast<std::size_t>(track)]->records.push_back(r); }

  // The Kokkos records, field by field.
  void kernel_begin(int tr, std::uint64_t t, std::uint64_t id, const char* name,
                    kob::KernelKind kind = kob::KernelKind::ParallelFor, std::uint32_t devid = 0x01000000) {
    using F = kob::fields::Kernel;
    kob::Record r = kob_test::rec(t, kob::Ev::KernelBegin);
    F::kind.set(r, kind);
    F::name.set(r, nm(name));
    F::id.set(r, id);
    F::devid.set(r, devid);
    add(tr, r);
  }
  void kernel_end(int tr, std::uint64_t t, std::uint64_t id) { add(tr, with_id<kob::fields::Kernel>(t, kob::Ev::KernelEnd, id)); }
  void fence_begin(int tr, std::uint64_t t, std::uint64_t id, const char* name, std::uint32_t devid = 0) {
    using F = kob::fields::Fence;
    kob::Record r = kob_test::rec(t, kob::Ev::FenceBegin);
    F::name.set(r, nm(name));
    F::id.set(r, id);
    F::devid.set(r, devid);
    add(tr, r);
  }
  void fence_end(int tr, std::uint64_t t, std::uint64_t id) { add(tr, with_id<kob::fields::Fence>(t, kob::Ev::FenceEnd, id)); }
  void push(int tr, std::uint64_t t, const char* name) {
    kob::Record r = kob_test::rec(t, kob::Ev::RegionPush);
    kob::fields::Named::name.set(r, nm(name));
    add(tr, r);
  }
  void pop(int tr, std::uint64_t t) { add(tr, kob_test::rec(t, kob::Ev::RegionPop)); }
  void section_create(int tr, std::uint64_t t, std::uint32_t id, const char* name) {
    kob::Record r = with_id<kob::fields::Section>(t, kob::Ev::SectionCreate, id);
    kob::fields::Section::name.set(r, nm(name));
    add(tr, r);
  }
  void section_start(int tr, std::uint64_t t, std::uint32_t id) {
    add(tr, with_id<kob::fields::Section>(t, kob::Ev::SectionStart, id));
  }
  void section_stop(int tr, std::uint64_t t, std::uint32_t id) { add(tr, with_id<kob::fields::Section>(t, kob::Ev::SectionStop, id)); }
  void alloc(int tr, std::uint64_t t, const char* space, const char* name, std::uint64_t ptr, std::uint64_t bytes) {
    add(tr, memory(t, kob::Ev::Alloc, space, name, ptr, bytes));
  }
  void dealloc(int tr, std::uint64_t t, const char* space, const char* name, std::uint64_t ptr, std::uint64_t bytes) {
    add(tr, memory(t, kob::Ev::Dealloc, space, name, ptr, bytes));
  }
  void copy_begin(int tr, std::uint64_t t, std::uint64_t id, const char* dst_space, const char* dst_name, const char* src_space,
                  const char* src_name, std::uint64_t bytes) {
    using F = kob::fields::DeepCopy;
    kob::Record r = with_id<F>(t, kob::Ev::DeepCopyBegin, id);
    F::dst_space.set(r, nm(dst_space));
    F::dst_name.set(r, nm(dst_name));
    F::src_space.set(r, nm(src_space));
    F::src_name.set(r, nm(src_name));
    F::bytes.set(r, bytes);
    F::dst_ptr.set(r, 0xdead);
    add(tr, r);
  }
  void copy_end(int tr, std::uint64_t t, std::uint64_t id) { add(tr, with_id<kob::fields::DeepCopy>(t, kob::Ev::DeepCopyEnd, id)); }

  template <class Fields>
  static kob::Record with_id(std::uint64_t t, kob::Ev type, typename decltype(Fields::id)::Type id) {
    kob::Record r = kob_test::rec(t, type);
    Fields::id.set(r, id);
    return r;
  }
  static kob::Record memory(std::uint64_t t, kob::Ev type, const char* space, const char* name, std::uint64_t ptr,
                            std::uint64_t bytes) {
    using F = kob::fields::Memory;
    kob::Record r = kob_test::rec(t, type);
    F::space.set(r, nm(space));
    F::name.set(r, nm(name));
    F::ptr.set(r, ptr);
    F::bytes.set(r, bytes);
    return r;
  }

  std::vector<const kob::ThreadSource*> list() const {
    std::vector<const kob::ThreadSource*> v;
    for (const auto& b : bufs) v.push_back(b.get());
    return v;
  }
  kob::Timeline build(bool ended_cleanly = true) const { return kob::build_timeline(list(), -1, ended_cleanly); }
};

// A fresh folder under the temporary directory, removed with what it holds when it goes out of
// scope (a failed check included: the failure says what was wrong).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kob-unit-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // "" when it could not be made.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Feeds a trace sink one process (pid 100 + process) with one thread track (index 0) and three
// kernel slices named `name` (Event::name_fixed) with the arg `where` = value (Arg::fixed): the
// writers' caches of texts by address see the same addresses again when the caller reuses the
// buffers for the next process.
inline void feed_fixed_texts(kob::trace::TraceSink& sink, int process, std::string_view name, std::string_view value) {
  sink.process(100 + static_cast<std::uint64_t>(process), "p", 1000);
  kob::trace::TrackDesc d;
  d.index = 0;
  d.id = 1;
  d.os_tid = 7;
  d.name = "thread";
  sink.track(d);
  kob::trace::Args args;
  args.shared_fixed("where", value);
  for (int i = 0; i < 3; ++i) {
    kob::trace::Event e;
    e.phase = kob::trace::Phase::Slice;
    e.cat = "kokkos.kernel";
    e.name = name;
    e.name_fixed = true;
    e.track = 0;
    e.ts = 2000 + 100 * static_cast<std::uint64_t>(i);
    e.end = e.ts + 50;
    e.args = &args;
    sink.event(e);
  }
}

// A file path under the temporary directory, unique to this process.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kob_unit_" + std::to_string(::getpid()) + "_" + name)).string();
}

// Removes a test's file when the test ends, however it ends.
struct RemoveAtEnd {
  std::string path;
  ~RemoveAtEnd() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

// Emits n records on the calling thread through its buffer: tick = 1000 + i, u[0] = tag, u[1] = i
// (i from `first`), type ProfileEvent, a = 7.
inline void emit_seq(std::uint64_t tag, std::uint64_t n, std::uint64_t first = 0) {
  kob::ThreadBuffer& b = kob::this_thread();
  for (std::uint64_t i = first; i < first + n; ++i) {
    b.emit([&](kob::Record& r) {
      r.tick = 1000 + i;
      r.type = kob::Ev::ProfileEvent;
      r.sub = 0;
      r.a = 7;
      r.u[0] = tag;
      r.u[1] = i;
      for (int k = 2; k < 6; ++k) r.u[k] = 0;
    });
  }
}

// Whether recs are exactly emit_seq(tag, n)'s records, in order.
inline bool is_seq(const std::vector<kob::Record>& recs, std::uint64_t tag, std::uint64_t n) {
  if (recs.size() != n) return false;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const kob::Record& r = recs[i];
    if (r.u[1] != i || r.u[0] != tag || r.tick != 1000 + i || r.type != kob::Ev::ProfileEvent || r.a != 7) return false;
  }
  return true;
}

// Thread `index`'s records in a raw trace, read with the library's reader (none: empty).
inline std::vector<kob::Record> raw_records(const kob::raw::Reader& r, std::uint32_t index) {
  std::vector<kob::Record> out;
  for (const kob::ThreadSource* t : r.threads())
    if (t->index == index) t->for_each([&](const kob::Record& rec) { out.push_back(rec); });
  return out;
}

// The timeline as a Chrome trace (written through a temporary file, as the tool writes it), with
// pid 4242, process name `unit "proc"` and otherData {"dropped_events": 0}; *ok (if given) gets
// what the writer returned.
inline std::string chrome_trace_text(const kob::Timeline& t, std::uint64_t* clipped, bool* ok = nullptr) {
  static int counter = 0;
  const std::string path = temp_path("trace" + std::to_string(counter++) + ".json");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "";
  kob::TraceInfo info;
  info.pid = 4242;
  info.process_name = "unit \"proc\"";
  info.other_data_json = "{\"dropped_events\": 0}";
  const bool r = kob::write_chrome_trace(f, t, info, clipped);
  std::fclose(f);
  if (ok) *ok = r;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return text;
}

// Runs python3 on the JSON text: the document must parse (json.load), then `checks` (Python
// statements, the document bound to `d`) must run without an exception. Returns the exit status.
inline int python_json_check(const std::string& json_text, const std::string& checks = "", bool quiet = false) {
  static int counter = 0;
  const std::string base = temp_path("py" + std::to_string(counter++));
  const std::string jpath = base + ".json", ppath = base + ".py";
  {
    std::ofstream(jpath, std::ios::binary) << json_text;
    std::ofstream(ppath) << "import json, sys\nd = json.load(open(sys.argv[1], encoding='utf-8'))\n" << checks << "\n";
  }
  const int st = std::system(("python3 " + ppath + " " + jpath + (quiet ? " 2>/dev/null" : "")).c_str());
  std::filesystem::remove(jpath);
  std::filesystem::remove(ppath);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace kob_test
