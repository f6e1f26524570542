// Writes a raw trace PREFIX.kob by hand (tests/unit/raw_test_writer.hpp follows docs/raw-format.md)
// for the `kob convert` tests: N Kokkos kernels on thread 0, each with an OpenMP parallel region
// of two implicit tasks (threads 0 and 1). Ticks run at 3 per ns from (tick 3000, ns 1000).
//   make_raw_trace PATH N clean   the run ended cleanly (END); the last chunks in ring slots
//   make_raw_trace PATH N crash   no END; the last kernel and its parallel region never end
//   make_raw_trace PATH N crash_team_done  as crash, but the last region's implicit tasks ended
//                                 (the run ended between thread 0's task end and the region's)
//   make_raw_trace PATH N lost    clean, and thread 1 lost a stretch of 500 events
//   make_raw_trace PATH N flushed clean, and thread 1 copied its own full slots: each of its
//                                 chunks after the first opens with a ToolFlush record (2 us)
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/record/record_fields.hpp"
#include "raw_test_writer.hpp"

using kob::Ev;
using kob::Record;

namespace {

constexpr std::uint64_t kTick0 = 3000, kNs0 = 1000;
std::uint64_t tick(std::uint64_t ns) { return kTick0 + 3 * (ns - kNs0); }
std::uint64_t ns_of(std::uint64_t t) { return kNs0 + (t - kTick0) / 3; }

Record rec(std::uint64_t ns, Ev type) {
  Record r{};
  r.tick = tick(ns);
  r.type = type;
  return r;
}

// The records this trace is made of, field by field (common/record/record_fields.hpp).
Record thread_begin(std::uint64_t ns, std::uint16_t thread_type) {
  Record r = rec(ns, Ev::OmpThreadBegin);
  kob::fields::OmpThread::thread_type.set(r, thread_type);
  return r;
}
Record region_push(std::uint64_t ns, std::uint32_t name) {
  Record r = rec(ns, Ev::RegionPush);
  kob::fields::Named::name.set(r, name);
  return r;
}
Record kernel(std::uint64_t ns, Ev type, std::uint64_t id, std::uint32_t name = 0) {
  Record r = rec(ns, type);
  kob::fields::Kernel::id.set(r, id);
  if (type == Ev::KernelBegin) {
    kob::fields::Kernel::name.set(r, name);
    kob::fields::Kernel::devid.set(r, 0x01000000);
  }
  return r;
}
// Parallel region `id` of kernel `id`, asking for 2 threads.
Record parallel(std::uint64_t ns, Ev type, std::uint64_t id) {
  Record r = rec(ns, type);
  kob::fields::OmpParallel::parallel_id.set(r, id);
  kob::fields::OmpParallel::kernel.set(r, id);
  if (type == Ev::OmpParallelBegin) kob::fields::OmpParallel::requested_team_size.set(r, 2);
  return r;
}
// Thread `thread_num`'s implicit task in parallel region `id` of kernel `id`, a team of 2.
Record implicit_task(std::uint64_t ns, Ev type, std::uint32_t thread_num, std::uint64_t id) {
  using F = kob::fields::OmpImplicitTask;
  Record r = rec(ns, type);
  F::flags.set(r, 2);  // implicit
  F::thread_num.set(r, thread_num);
  F::parallel_id.set(r, id);
  F::kernel.set(r, id);
  if (type == Ev::OmpImplicitTaskBegin) F::team_size.set(r, 2);
  return r;
}

// Chunks of up to 1000 records as COMPACT blocks; the last one also in its ring slot. A run cut
// short has that chunk only in the slot. After a clean end the slot holds one more record, added
// after END (a thread ending at exit), which is not part of the run.
void chunks(kob_test::RawTraceWriter& w, std::uint32_t thread, const std::vector<Record>& recs, bool crash,
            bool flushed = false) {
  std::uint64_t seq = 0;
  for (std::size_t at = 0; at < recs.size(); at += 1000) {
    std::vector<Record> part(recs.begin() + long(at), recs.begin() + long(std::min(recs.size(), at + 1000)));
    if (flushed && at > 0) {
      // The flush's time is when the copy began; it ends 1 ns before the chunk's first record
      // (an implicit task's end: the flush lies inside the task).
      Record f = rec(ns_of(part.front().tick) - 2001, Ev::ToolFlush);
      kob::fields::ToolFlush::records.set(f, 1000);
      kob::fields::ToolFlush::ticks.set(f, 3 * 2000);
      part.insert(part.begin(), f);
    }
    ++seq;
    const bool last = at + 1000 >= recs.size();
    if (!last || !crash) w.compact(thread, seq, part);
    if (last) {
      if (!crash) part.push_back(rec(9000000000, Ev::OmpThreadEnd));
      w.ring(thread, seq, 1, static_cast<std::uint32_t>(part.size()), part);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const std::string path = argv[1];
  const int n = std::atoi(argv[2]);
  const std::string mode = argv[3];
  const bool team_done = mode == "crash_team_done";
  const bool crash = mode == "crash" || team_done, lost = mode == "lost", flushed = mode == "flushed";

  kob_test::RawStart start;
  start.pid = 31337;
  start.clock = 1;
  start.tick = kTick0;
  start.ns = kNs0;
  kob_test::RawTraceWriter w(start);
  w.name(1, "raw_kernel");
  w.name(3, "raw_region");  // id 2 never named: a placeholder
  w.kv("kob", "tool_version", "9.9.9");
  // no pid entry: the header's
  w.kv("kob", "exe", "raw_program");
  w.kv("kob", "host", "rawhost");
  w.kv("kob", "start_time", "2026-01-02T03:04:05Z");
  w.kv("kob", "clock", "tsc");
  w.kv("kob", "args", "--format=chrome\n--events=kokkos,omp-parallel");
  w.kv("kob", "args", "--format=chrome,summary,json\n--events=kokkos,omp-parallel\n--include=raw_");  // the last wins
  w.kv("kob", "kokkos_interface_version", "20211015");
  w.kv("kob", "openmp_runtime", "fake omp");
  w.kv("meta", "meta_key", "meta_value");
  w.kv("other:ompt", "initial_device_num", "0");
  w.thread(0, 9000, 1);
  w.thread(1, 9001, 2);

  std::vector<Record> t0, t1;
  t0.push_back(thread_begin(1000, 1));
  t1.push_back(thread_begin(1001, 2));
  t0.push_back(region_push(1002, 3));
  for (int i = 0; i < n; ++i) {
    const std::uint64_t b = 2000 + std::uint64_t(i) * 10000, id = std::uint64_t(i) + 1;
    const bool open = crash && i == n - 1;
    t0.push_back(kernel(b, Ev::KernelBegin, id, 1));
    t0.push_back(parallel(b + 1000, Ev::OmpParallelBegin, id));
    t0.push_back(implicit_task(b + 1100, Ev::OmpImplicitTaskBegin, 0, id));
    t1.push_back(implicit_task(b + 1200, Ev::OmpImplicitTaskBegin, 1, id));
    if (open && !team_done) break;
    t1.push_back(implicit_task(b + 3900, Ev::OmpImplicitTaskEnd, 1, id));
    t0.push_back(implicit_task(b + 4000, Ev::OmpImplicitTaskEnd, 0, id));
    if (open) break;
    t0.push_back(parallel(b + 5000, Ev::OmpParallelEnd, id));
    t0.push_back(kernel(b + 6000, Ev::KernelEnd, id));
  }
  if (!crash) t0.push_back(rec(2000 + std::uint64_t(n) * 10000, Ev::RegionPop));
  chunks(w, 0, t0, crash);
  chunks(w, 1, t1, crash, flushed);
  const std::uint64_t end_ns = 3000 + std::uint64_t(n) * 10000;
  w.calib(tick(end_ns), end_ns);
  if (lost) w.lost(1, 1, tick(5000), tick(7000), 500);
  if (!crash) w.end(tick(end_ns));
  if (crash) w.cut_tail(200);
  return w.write(path) ? 0 : 1;
}
