// The raw trace on the recording side: ring slots recycled by the writer thread, every committed
// record in the file after a clean end, _exit or SIGKILL, bounded memory, --max-trace-size and a
// file size limit (LOST entries, counted drops), a fork child's own file made on demand.
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "common/record/intern.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/raw_writer.hpp"
#include "common/record/recorder.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;
using kob::Record;
using kob::ThreadBuffer;
using kob::raw::kSlotBytes;
using kob::raw::kSlotRecords;

namespace {
using kob_test::emit_seq;

using kob_test::RawReset;
using kob_test::wait_child;

// This process's directory of test files, removed when the process ends (not by its fork children).
struct TestDir {
  const pid_t owner = getpid();
  const fs::path dir = fs::temp_directory_path() / ("kob-raw-test-" + std::to_string(getpid()));
  ~TestDir() {
    std::error_code ec;
    if (getpid() == owner) fs::remove_all(dir, ec);
  }
};

std::string tmp_path(const std::string& name) {
  static TestDir test_dir;
  const fs::path& dir = test_dir.dir;
  fs::create_directories(dir);
  const fs::path p = dir / name;
  fs::remove(p);
  return p.string();
}

// A raw trace read with the library's reader (src/common/timeline/raw_reader.hpp); plus what the reader does
// not expose, the block layout (blocks of each kind, where the walk stopped), counted here from
// the block headers of docs/raw-format.md.
struct RawRead {
  struct Lost {
    std::uint32_t thread, reason;
    std::uint64_t first, last, events;
  };
  kob::raw::Reader reader;
  bool ok = false;
  std::uint64_t size = 0;
  std::vector<Lost> lost;  // every thread's LOST entries
  std::uint64_t compact_blocks = 0, compact_bytes = 0, ring_slots = 0, pads = 0;
  std::uint64_t first_ring = 0;  // the file offset of the first ring slot's block (0: none)
  bool bad_block = false;  // the walk stopped at something that is not a whole block

  explicit RawRead(const std::string& path) {
    std::string error;
    ok = reader.open(path, error);
    if (!ok) return;
    size = fs::file_size(path);
    bad_block = reader.cut_tail_bytes() != 0;
    for (const kob::ThreadSource* t : reader.threads())
      for (const kob::Loss& l : t->losses)
        lost.push_back({t->index, static_cast<std::uint32_t>(l.reason), l.first_tick, l.last_tick, l.events});
    std::ifstream in(path, std::ios::binary);
    const std::string d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::size_t off = 4096; off + 48 <= d.size();) {
      std::uint32_t magic, payload;
      std::uint16_t kind;
      std::memcpy(&magic, d.data() + off, 4);
      std::memcpy(&kind, d.data() + off + 4, 2);
      std::memcpy(&payload, d.data() + off + 12, 4);
      if (magic != 0x4B4C424B || off + 48 + payload > d.size()) break;
      const std::size_t total = (48 + std::size_t{payload} + 7) & ~std::size_t{7};
      compact_blocks += kind == 1;
      compact_bytes += kind == 1 ? total : 0;
      ring_slots += kind == 2;
      if (kind == 2 && first_ring == 0) first_ring = off;
      pads += kind == 4;
      off += total;
    }
  }
  std::vector<Record> records(std::uint32_t thread) const { return kob_test::raw_records(reader, thread); }
  const kob::ThreadSource* thread(std::uint32_t index) const {
    for (const kob::ThreadSource* t : reader.threads())
      if (t->index == index) return t;
    return nullptr;
  }
  std::size_t threads_with_records() const {
    std::size_t n = 0;
    for (const kob::ThreadSource* t : reader.threads()) n += !records(t->index).empty();
    return n;
  }
  std::string name(std::uint32_t id) const {
    std::string text = "(none)";
    for (const auto& [i, t] : reader.names())
      if (i == id) text = t;
    return text;
  }
  std::uint64_t lost_events(std::uint32_t reason) const {
    std::uint64_t n = 0;
    for (const Lost& l : lost) n += l.reason == reason ? l.events : 0;
    return n;
  }
};

// The records are exactly emit_seq(tag, n)'s, in order.
void check_seq(const std::vector<Record>& recs, std::uint64_t tag, std::uint64_t n) {
  CHECK(recs.size() == n);
  CHECK(kob_test::is_seq(recs, tag, n));
}

// LOST entries of `reason`: one exact, gapless run of ticks [first, last] (entries may split it).
void check_lost_run(const RawRead& r, std::uint32_t reason, std::uint64_t first, std::uint64_t last) {
  std::vector<RawRead::Lost> l;
  for (const auto& x : r.lost)
    if (x.reason == reason) l.push_back(x);
  REQUIRE_FALSE(l.empty());
  std::sort(l.begin(), l.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CHECK(l.front().first == first);
  CHECK(l.back().last == last);
  std::uint64_t gaps = 0;
  for (std::size_t i = 1; i < l.size(); ++i) gaps += l[i].first != l[i - 1].last + 1;
  CHECK(gaps == 0);
  std::uint64_t events = 0;
  for (const auto& x : l) events += x.events;
  CHECK(events == last - first + 1);
}

long vm_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Descriptors of this process that point at `path`.
int fds_on(const std::string& path) {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char target[4096];
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t k = readlink(link.c_str(), target, sizeof target - 1);
      if (k > 0 && std::string(target, static_cast<std::size_t>(k)) == path) ++n;
    }
    closedir(d);
  }
  return n;
}

}  // namespace

TEST_CASE("raw trace: the writer recycles a thread's 4 slots; every record reaches the file once, in order") {
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);  // chunks of the writer alone, whatever the load
  const std::string path = tmp_path("ring.kob");
  REQUIRE(kob::raw::open(path));
  CHECK(kob::raw::path() == path);
  constexpr std::uint64_t kN = 50 * kSlotRecords + 17;
  ThreadBuffer* b = nullptr;
  std::uint32_t ring = 0;
  std::thread([&] {
    b = &kob::this_thread();
    emit_seq(1, kN);
    b->omp_thread_type.store(2);
    b->omp_proc.store(3);
    b->omp_place.store(1);
    ring = b->ring_size();  // while it runs: at its end the ring goes back to the pool
  }).join();
  CHECK(ring == kob::recorder::kDefaultRing);
  CHECK(b->file_backed());
  CHECK(kob::recorder::memory_used() == kob::recorder::kDefaultRing * kSlotBytes);
  CHECK(kob::raw::finish());
  CHECK(kob::raw::finish());  // idempotent
  CHECK(b->dropped() == 0);
  const auto st = kob::raw::stats();
  CHECK(st.chunks_written == 51);  // 50 full slots and the partial one at the end
  CHECK(st.records_written == kN);
  CHECK(st.records_dropped == 0);

  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  CHECK_FALSE(r.bad_block);
  CHECK(r.size == st.bytes);
  CHECK(r.reader.header().pid == static_cast<std::uint64_t>(getpid()));
  CHECK(r.reader.header().parent_pid == static_cast<std::uint64_t>(getppid()));
  CHECK(r.compact_blocks == 51);
  CHECK(r.ring_slots == kob::recorder::kDefaultRing);
  // The slot group starts on a page: a pad before it unless what came before ends on one (the
  // META blocks' size depends on the modules the test program loaded).
  CHECK(r.first_ring % 4096 == 0);
  CHECK(r.pads <= 1);
  CHECK(r.lost.empty());
  CHECK(r.reader.calibrations().size() >= 1);
  check_seq(r.records(b->index), 1, kN);
  const kob::ThreadSource* t = r.thread(b->index);
  REQUIRE(t != nullptr);
  CHECK(t->os_tid == b->os_tid);
  CHECK(t->omp_thread_type == 2);  // the identity at the end
  CHECK(t->omp_proc == 3);
  CHECK(t->omp_place == 1);
}

namespace {
// Resident KiB of the mapping that holds `addr` (/proc/self/smaps), -1 when none holds it.
long resident_kib(const void* addr) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2) {  // a mapping's first line (no attribute line parses so)
      inside = lo <= a && a < hi;
      continue;
    }
    long kib = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %ld kB", &kib) == 1) return kib;
  }
  return -1;
}
}  // namespace

TEST_CASE("raw trace: once complete, the rings' pages are let go and their content stays") {
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);
  const std::string path = tmp_path("release.kob");
  REQUIRE(kob::raw::open(path));
  const kob::raw::Slot* pooled = nullptr;  // a ring given back by an ended thread
  std::thread([&] {
    emit_seq(1, 3 * kSlotRecords + 5);
    pooled = kob::this_thread().ring_slot(0);
  }).join();
  ThreadBuffer& live = kob::this_thread();  // a thread still running at the end
  emit_seq(7, 2 * kSlotRecords + 9);
  const kob::raw::Slot* held = live.ring_slot(0);
  REQUIRE(pooled != nullptr);
  REQUIRE(held != nullptr);
  CHECK(resident_kib(held) >= long(kSlotBytes / 1024));  // faulted in when the ring was set up
  CHECK(kob::raw::finish());
  CHECK(resident_kib(held) == 0);
  CHECK(resident_kib(pooled) == 0);
  // Still mapped, with the file's content (read back on access).
  CHECK(held->block.magic == kob::raw::kBlockMagic);
  CHECK(pooled->block.magic == kob::raw::kBlockMagic);
  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  check_seq(r.records(live.index), 7, 2 * kSlotRecords + 9);
}

TEST_CASE("raw trace: names, KV entries, rename and discard") {
  RawReset reset;
  const std::uint32_t before = kob::names().intern("raw_name_before_open");
  kob::raw::add_kv("meta", "early", "1");  // before the file exists: written when it is made
  const std::string path = tmp_path("names.kob"), moved = tmp_path("moved.kob");
  REQUIRE(kob::raw::open(path));
  const std::uint32_t after = kob::names().intern("raw_name_after_open");
  kob::raw::add_kv("other:sec", "k", "v w");
  std::thread([] { emit_seq(3, kSlotRecords + 5); }).join();
  REQUIRE(kob::raw::rename_to(moved));
  CHECK(kob::raw::path() == moved);
  CHECK_FALSE(fs::exists(path));
  std::thread([] { emit_seq(4, 10); }).join();  // a new thread after the move: its slots still map the file
  CHECK(kob::raw::finish());
  const RawRead r(moved);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  CHECK(r.name(before) == "raw_name_before_open");
  CHECK(r.name(after) == "raw_name_after_open");
  CHECK(r.name(0) == "<null>");
  CHECK(r.reader.kv_value("meta", "early") == "1");
  CHECK(r.reader.kv_value("other:sec", "k") == "v w");
  check_seq(r.records(0), 3, kSlotRecords + 5);
  check_seq(r.records(1), 4, 10);

  RawReset::reset();
  const std::string gone = tmp_path("discard.kob");
  REQUIRE(kob::raw::open(gone));
  CHECK(fs::exists(gone));
  kob::raw::discard();
  CHECK_FALSE(fs::exists(gone));
  CHECK(fds_on(gone) == 0);
}

TEST_CASE("raw trace: after _exit or SIGKILL every committed record is in the file") {
  for (const int mode : {0, 1}) {
    CAPTURE(mode);
    RawReset reset;
    const std::string path = tmp_path(mode == 0 ? "exit.kob" : "kill.kob");
    constexpr std::uint64_t kN = 3 * kSlotRecords + 100;  // 3 full slots (copied or not) and a partial one
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      if (!kob::raw::open(path)) _exit(3);
      kob::names().intern("name_before_the_kill");
      emit_seq(9, kN);
      if (mode == 0) _exit(0);
      raise(SIGKILL);
      _exit(4);
    }
    const int status = wait_child(child);
    if (mode == 0) {
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    } else {
      CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    }
    const RawRead r(path);
    REQUIRE(r.ok);
    CHECK_FALSE(r.reader.complete());  // cut short
    // No bad_block check here: the writer thread may be inside a write when the process ends, and
    // the kernel stops a write to a file between pages once the process is dying; the reader drops
    // such a cut tail (cut_tail_bytes). What was committed before is all there (below).
    CHECK(r.reader.header().pid == static_cast<std::uint64_t>(child));
    CHECK(r.reader.header().parent_pid == static_cast<std::uint64_t>(getpid()));
    check_seq(r.records(0), 9, kN);
    bool named = false;
    for (const auto& [id, text] : r.reader.names()) named |= text == "name_before_the_kill";
    CHECK(named);
    CHECK(r.lost.empty());
  }
}

TEST_CASE("raw trace: memory stays the ring whatever the run length; nothing dropped while the writer keeps up") {
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);
  const std::string path = tmp_path("bounded.kob");
  REQUIRE(kob::raw::open(path));
  constexpr std::uint64_t kN = 100 * kSlotRecords;  // 25 times the ring, 12.5 MiB as 64-byte records
  ThreadBuffer* b = nullptr;
  long before = 0, after = 0;
  std::uint32_t ring = 0;
  std::thread([&] {
    b = &kob::this_thread();  // registers: the ring is mapped and faulted in here
    emit_seq(5, kSlotRecords);  // warm: the writer's buffers exist too
    before = vm_rss_kib();
    emit_seq(5, kN - kSlotRecords, kSlotRecords);
    after = vm_rss_kib();
    ring = b->ring_size();
  }).join();
  CHECK(ring == kob::recorder::kDefaultRing);
  CHECK(kob::recorder::memory_used() == kob::recorder::kDefaultRing * kSlotBytes);
  CHECK(b->dropped() == 0);
  REQUIRE(before > 0);
  CAPTURE(before);
  CAPTURE(after);
  CHECK(after - before < 4 * 1024);  // KiB: far below the 12.5 MiB the records would take in memory
  REQUIRE(kob::raw::finish());
  const RawRead r(path);
  REQUIRE(r.ok);
  check_seq(r.records(0), 5, kN);
  CHECK(r.lost.empty());
  // Compact: these records take a few bytes each on disk.
  CHECK(r.compact_bytes < kN * 8);
}

TEST_CASE("raw trace: --max-trace-size drops whole chunks, counted, with exact LOST spans; the run goes on") {
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);
  const std::string path = tmp_path("capped.kob");
  REQUIRE(kob::raw::open(path));
  // Half a ring past what the header and the names interned by earlier tests take.
  const std::uint64_t kCap = kob::raw::stats().bytes + kob::recorder::kDefaultRing * kSlotBytes / 2;
  kob::raw::set_max_size(kCap);
  constexpr std::uint64_t kN = 60 * kSlotRecords + 33;
  ThreadBuffer* b = nullptr;
  std::thread([&] {
    b = &kob::this_thread();
    emit_seq(6, kN);
  }).join();
  CHECK_FALSE(b->file_backed());  // the ring does not fit under the cap: anonymous slots
  CHECK(kob::raw::finish());
  const auto st = kob::raw::stats();
  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  CHECK(r.size <= kCap + 2048);  // the few META entries after the cap (thread, LOST, CALIB, END)
  const std::vector<Record> kept = r.records(0);
  const std::uint64_t k = kept.size();
  CHECK(k > 0);
  CHECK(k % kSlotRecords == 0);  // whole chunks
  check_seq(kept, 6, k);
  CHECK(b->dropped() == kN - k);
  CHECK(st.records_dropped == kN - k);
  CHECK(st.chunks_dropped == (kN - k + kSlotRecords - 1) / kSlotRecords);
  CHECK(r.lost_events(kob::raw::kLostSizeCap) == kN - k);
  check_lost_run(r, kob::raw::kLostSizeCap, 1000 + k, 1000 + kN - 1);
  for (const auto& l : r.lost) CHECK(l.thread == 0);
}

TEST_CASE("raw trace: a file size limit (EFBIG) drops chunks with LOST entries; the program goes on") {
  RawReset reset;
  const std::string path = tmp_path("fsize.kob");
  constexpr std::uint64_t kN = 10 * kSlotRecords;  // the last slot is copied (and fails) at finish
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);  // as a program that expects such failures does
    kob::recorder::set_self_flush_for_test(false);
    if (!kob::raw::open(path)) _exit(3);
    // Room for the first chunk (about 4 bytes a record) and a few META entries, not a second chunk.
    const rlim_t limit = kob::raw::stats().bytes + kSlotRecords * 5 + 1000;
    const rlimit rl{limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(4);
    emit_seq(8, kN);
    const bool finished = kob::raw::finish();
    const auto st = kob::raw::stats();
    const bool counted = kob::this_thread().dropped() == kN - kSlotRecords && st.records_dropped == kN - kSlotRecords &&
                         st.records_written == kSlotRecords && st.chunks_dropped == 9;
    _exit(finished && counted ? 0 : 5);
  }
  const int status = wait_child(child);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  CHECK_FALSE(r.bad_block);  // the cut-short writes were cut off again
  check_seq(r.records(0), 8, kSlotRecords);
  CHECK(r.lost_events(kob::raw::kLostWriteFailed) == kN - kSlotRecords);
  check_lost_run(r, kob::raw::kLostWriteFailed, 1000 + kSlotRecords, 1000 + kN - 1);
}

TEST_CASE("raw trace: a fork child never writes its parent's file; it makes its own only when it has events to keep") {
  RawReset reset;
  const std::string parent_path = tmp_path("parent.kob");
  REQUIRE(kob::raw::open(parent_path));
  emit_seq(1, 10);  // the parent's main thread
  for (const int mode : {0, 1}) {
    CAPTURE(mode);
    const std::string child_path = tmp_path(mode == 0 ? "child-early.kob" : "child-full.kob");
    kob::recorder::before_fork();
    kob::raw::before_fork();
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      kob::raw::after_fork_child(child_path);
      kob::recorder::after_fork_child();
      if (fds_on(parent_path) != 0) _exit(2);  // the parent's descriptor is closed
      if (mode == 0) {
        emit_seq(2, 100);
        _exit(fs::exists(child_path) ? 3 : 0);  // nothing yet: no file
      }
      emit_seq(2, 3 * kSlotRecords + 5);  // full slots: copied by the child itself (no writer thread)
      const bool made = fs::exists(child_path);
      kob::raw::finish();
      _exit(made ? 0 : 4);
    }
    kob::raw::after_fork_parent();
    kob::recorder::after_fork_parent();
    const int status = wait_child(child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    if (mode == 0) {
      CHECK_FALSE(fs::exists(child_path));
      continue;
    }
    const RawRead c(child_path);
    REQUIRE(c.ok);
    CHECK(c.reader.complete());
    CHECK(c.reader.header().pid == static_cast<std::uint64_t>(child));
    CHECK(c.reader.header().parent_pid == static_cast<std::uint64_t>(getpid()));
    CHECK(c.threads_with_records() == 1);  // the child's one thread
    check_seq(c.records(0), 2, 3 * kSlotRecords + 5);
  }
  CHECK(kob::raw::finish());
  const RawRead p(parent_path);
  REQUIRE(p.ok);
  check_seq(p.records(0), 1, 10);  // the parent's own records only
  CHECK(p.threads_with_records() == 1);
}

TEST_CASE("raw trace: 1000 threads one after another under the default cap: every record in the file, none dropped, slots reused") {
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);
  constexpr std::uint64_t kLimit = 64ull << 20;  // --memory-limit=64: rings for 128 threads
  kob::recorder::set_memory_limit(kLimit);
  const std::string path = tmp_path("many-threads.kob");
  REQUIRE(kob::raw::open(path));
  constexpr int kThreads = 1000;
  // 1 to kSlotRecords + 500 records each: some threads end in their first slot, some in their second.
  auto count = [](int t) { return 1 + (static_cast<std::uint64_t>(t) * 7919) % (kSlotRecords + 500); };
  std::vector<std::uint32_t> index(kThreads), ring(kThreads);
  std::uint64_t most_used = 0;
  for (int t = 0; t < kThreads; ++t) {
    std::thread([&, t] {
      ThreadBuffer& b = kob::this_thread();
      index[t] = b.index;
      ring[t] = b.ring_size();
      most_used = std::max(most_used, kob::recorder::memory_used());
      emit_seq(static_cast<std::uint64_t>(t), count(t));
    }).join();
  }
  CHECK(kob::recorder::threads().size() == kThreads);
  CHECK(kob::recorder::dropped_total() == 0);
  CHECK(most_used <= kLimit);
  CHECK(kob::recorder::memory_used() <= kLimit);
  int full_rings = 0;
  for (int t = 0; t < kThreads; ++t) full_rings += ring[t] == kob::recorder::kDefaultRing;
  CHECK(full_rings == kThreads);  // not one thread got fewer slots, let alone none
  REQUIRE(kob::raw::finish());
  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  CHECK(r.lost.empty());
  int exact = 0;
  std::uint64_t total = 0, expected = 0;
  for (int t = 0; t < kThreads; ++t) {
    const std::vector<Record> recs = r.records(index[t]);
    exact += kob_test::is_seq(recs, static_cast<std::uint64_t>(t), count(t));
    total += recs.size();
    expected += count(t);
  }
  CHECK(exact == kThreads);
  CHECK(total == expected);
  // Later threads took the slots of ended ones: the file holds no more rings than the cap allows
  // at once (4000 slots without reuse).
  CHECK(r.ring_slots <= kLimit / kSlotBytes);
}

TEST_CASE("raw trace: a cap of one ring serves 200 threads in turn, whether or not the writer has caught up") {
  RawReset reset;
  kob::recorder::set_self_flush_for_test(false);
  const std::uint64_t limit = kob::recorder::kDefaultRing * kSlotBytes;
  kob::recorder::set_memory_limit(limit);
  const std::string path = tmp_path("one-ring.kob");
  REQUIRE(kob::raw::open(path));
  constexpr int kThreads = 200;
  // Each thread needs the ring of the one before: if the writer has not copied that thread's last
  // slot yet, the new thread copies it itself.
  auto count = [](int t) { return 1 + (static_cast<std::uint64_t>(t) * 104729) % (2 * kSlotRecords); };
  std::vector<std::uint32_t> index(kThreads), ring(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    std::thread([&, t] {
      ThreadBuffer& b = kob::this_thread();
      index[t] = b.index;
      ring[t] = b.ring_size();
      emit_seq(static_cast<std::uint64_t>(t), count(t));
    }).join();
  }
  CHECK(kob::recorder::dropped_total() == 0);
  CHECK(kob::recorder::memory_used() == limit);
  CHECK(std::count(ring.begin(), ring.end(), kob::recorder::kDefaultRing) == kThreads);
  REQUIRE(kob::raw::finish());
  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.lost.empty());
  int exact = 0;
  for (int t = 0; t < kThreads; ++t) exact += kob_test::is_seq(r.records(index[t]), static_cast<std::uint64_t>(t), count(t));
  CHECK(exact == kThreads);
  CHECK(r.ring_slots == kob::recorder::kDefaultRing);  // the one ring, mapped once
}

TEST_CASE("raw trace: events after a thread's end hook (thread_local destructors, a late callback) stay on its track, in order") {
  RawReset reset;
  const std::string path = tmp_path("late-events.kob");
  REQUIRE(kob::raw::open(path));
  kob::raw::writer::stop();  // threads copy their own slots: when a ring goes to the pool is certain
  struct EmitAtEnd {
    ~EmitAtEnd() { emit_seq(6, 5, 10); }
  };
  ThreadBuffer* b = nullptr;
  std::thread([&] {
    b = &kob::this_thread();
    emit_seq(6, 10);
    thread_local EmitAtEnd at_end;  // its destructor records after the thread function returned
    (void)at_end;
  }).join();
  CHECK(b->ring_size() == 0);  // the end hook ran after the thread_local destructor
  CHECK(kob::recorder::pooled_rings() == 1);

  ThreadBuffer* c = nullptr;
  std::uint32_t ring_at_start = 0, ring_after_end = 0, pooled_after_end = 0, ring_again = 0;
  std::thread([&] {
    c = &kob::this_thread();
    ring_at_start = c->ring_size();
    emit_seq(7, 10);
    c->retire();  // what the end hook does; libomp's own end of a root thread may still report events
    ring_after_end = c->ring_size();
    pooled_after_end = kob::recorder::pooled_rings();
    emit_seq(7, kSlotRecords + 5, 10);  // past one slot: the ring taken back works as a ring
    ring_again = c->ring_size();
  }).join();
  CHECK(ring_at_start == kob::recorder::kDefaultRing);  // b's ring, from the pool
  CHECK(ring_after_end == 0);
  CHECK(pooled_after_end == 1);
  CHECK(ring_again == kob::recorder::kDefaultRing);
  CHECK(c->ring_size() == 0);  // ended again: the hook was armed again
  CHECK(kob::recorder::pooled_rings() == 1);
  CHECK(kob::recorder::dropped_total() == 0);
  REQUIRE(kob::raw::finish());
  const RawRead r(path);
  REQUIRE(r.ok);
  CHECK(r.reader.complete());
  check_seq(r.records(b->index), 6, 15);
  check_seq(r.records(c->index), 7, kSlotRecords + 15);
  CHECK(r.ring_slots == kob::recorder::kDefaultRing);  // one ring mapped in all
}
