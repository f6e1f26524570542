// One program thread's fold (common/analysis/thread_fold.hpp), fed events made by the real decoder
// from records: its kernel, region and fence figures must be what the test counts from the calls it
// made itself (random names, kinds, spaces, nesting and lengths), in chunks cut anywhere; an odd
// hook order or a record the engine does not cover must make it decline, with a reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/analysis/thread_fold.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/record/event_decoder.hpp"
#include "common/record/record_fold.hpp"
#include "common/record/record_fields.hpp"

using kob::Ev;
using kob::Record;
using kob::engine::ThreadFold;
namespace fields = kob::fields;

namespace {

// Ticks are ns (no TSC): the times the test wrote are the times the fold sees, apart from the
// decoder's nudge, which a strictly increasing clock never needs.
struct Recorder {
  std::vector<Record> recs;
  std::uint64_t now = 1000;
  Record& add(Ev type, std::uint64_t step) {
    now += step;
    Record r{};
    r.tick = now;
    r.type = type;
    recs.push_back(r);
    return recs.back();
  }
};

// Feeds the records to a fold in chunks of `chunk` records (the decoder carries its place over)
// and finishes it.
void feed(ThreadFold& f, const std::vector<Record>& recs, std::size_t chunk, bool cut = false, bool lost_ends = false) {
  kob::clock::Line line;  // tsc false: ticks are ns
  kob::EventDecoder decoder(line, kob::EventDecoder::SyncSteps::InBegin);  // as the engine decodes
  kob::EventChunk events;
  for (std::size_t i = 0; i < recs.size(); i += chunk) {
    events.clear();
    decoder.append(recs.data() + i, std::min(chunk, recs.size() - i), events);
    f.events(events.begin(), events.end());
  }
  f.finish(cut, lost_ends);
}

ThreadFold fold_records(const std::vector<Record>& recs, std::size_t chunk, bool keep_calls = false) {
  ThreadFold f(0, 0, kob::CodeRange{}, false);
  if (keep_calls) f.keep_calls();
  feed(f, recs, chunk);
  return f;
}

struct Expected {
  std::uint64_t calls = 0, total = 0, min = UINT64_MAX, max = 0;
  std::vector<std::uint64_t> durations;  // every call's, in order
  void add(std::uint64_t d) {
    durations.push_back(d);
    ++calls;
    total += d;
    min = std::min(min, d);
    max = std::max(max, d);
  }
};

}  // namespace

TEST_CASE("thread fold: kernels, regions and fences are the calls made, in any chunking") {
  std::mt19937_64 rng(20261205);
  for (int round = 0; round < 20; ++round) {
    Recorder rec;
    // (name, kind, space) -> figures; region path -> calls, inclusive; fence name -> calls, total.
    std::map<std::tuple<std::uint32_t, int, std::uint32_t>, Expected> kernels;
    std::map<std::vector<std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>> regions;
    std::map<std::vector<std::uint32_t>, std::vector<std::uint64_t>> region_calls;  // path -> every call's time
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> fences;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> open_regions;  // name, start
    std::uint64_t next_id = 1;
    for (int step = 0; step < 400; ++step) {
      const int what = static_cast<int>(rng() % 4);
      if (what == 0 && open_regions.size() < 4) {
        const std::uint32_t name = 100 + static_cast<std::uint32_t>(rng() % 3);
        fields::Named::name.set(rec.add(Ev::RegionPush, 1 + rng() % 50), name);
        open_regions.push_back({name, rec.now});
      } else if (what == 1 && !open_regions.empty()) {
        rec.add(Ev::RegionPop, 1 + rng() % 50);
        std::vector<std::uint32_t> path;
        for (const auto& r : open_regions) path.push_back(r.first);
        auto& fig = regions[path];
        ++fig.first;
        fig.second += rec.now - open_regions.back().second;
        region_calls[path].push_back(rec.now - open_regions.back().second);
        open_regions.pop_back();
      } else if (what == 2) {
        const std::uint32_t name = 1 + static_cast<std::uint32_t>(rng() % 5);
        const auto kind = static_cast<kob::KernelKind>(rng() % 3);
        const std::uint32_t space = static_cast<std::uint32_t>(rng() % 2);
        const std::uint64_t id = next_id++;
        Record& b = rec.add(Ev::KernelBegin, 1 + rng() % 30);
        fields::Kernel::name.set(b, name);
        fields::Kernel::kind.set(b, kind);
        fields::Kernel::id.set(b, id);
        fields::Kernel::devid.set(b, space << 17);
        const std::uint64_t start = rec.now;
        fields::Kernel::id.set(rec.add(Ev::KernelEnd, 1 + rng() % 1000), id);
        kernels[{name, static_cast<int>(kind), space}].add(rec.now - start);
      } else {
        const std::uint32_t name = 50 + static_cast<std::uint32_t>(rng() % 2);
        const std::uint64_t id = next_id++;
        Record& b = rec.add(Ev::FenceBegin, 1 + rng() % 30);
        fields::Fence::name.set(b, name);
        fields::Fence::id.set(b, id);
        const std::uint64_t start = rec.now;
        fields::Fence::id.set(rec.add(Ev::FenceEnd, 1 + rng() % 100), id);
        ++fences[name].first;
        fences[name].second += rec.now - start;
      }
    }
    while (!open_regions.empty()) {  // every region popped: the fold keeps only ended ones
      rec.add(Ev::RegionPop, 1);
      std::vector<std::uint32_t> path;
      for (const auto& r : open_regions) path.push_back(r.first);
      ++regions[path].first;
      regions[path].second += rec.now - open_regions.back().second;
      region_calls[path].push_back(rec.now - open_regions.back().second);
      open_regions.pop_back();
    }
    const std::size_t chunk = 1 + rng() % 64;
    CAPTURE(round);
    const bool keep_calls = round % 2 == 1;  // kob diff's every call's time
    CAPTURE(chunk);
    CAPTURE(keep_calls);
    const ThreadFold f = fold_records(rec.recs, chunk, keep_calls);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.host_records == rec.recs.size());
    CHECK(f.t_min == rec.recs.front().tick);
    CHECK(f.t_max == rec.recs.back().tick);

    REQUIRE(f.kernels.size() == kernels.size());
    for (const kob::engine::KernelPart& p : f.kernels) {
      const auto it = kernels.find({p.name, static_cast<int>(p.kind), p.space});
      REQUIRE(it != kernels.end());
      CHECK(p.calls == it->second.calls);
      CHECK(p.total == it->second.total);
      CHECK(p.min == it->second.min);
      CHECK(p.max == it->second.max);
      const std::size_t i = static_cast<std::size_t>(&p - f.kernels.data());
      if (keep_calls) {
        REQUIRE(i < f.kernel_calls.size());
        CHECK(f.kernel_calls[i] == it->second.durations);
      }
    }
    if (!keep_calls) CHECK(f.kernel_calls.empty());

    REQUIRE(f.regions.size() == regions.size());
    for (const kob::engine::RegionNode& n : f.regions) {
      std::vector<std::uint32_t> path;
      for (std::uint32_t x = static_cast<std::uint32_t>(&n - f.regions.data()); x != kob::engine::kNone; x = f.regions[x].parent)
        path.insert(path.begin(), f.regions[x].name);
      CHECK(n.depth + 1 == path.size());
      const auto it = regions.find(path);
      REQUIRE(it != regions.end());
      CHECK(n.calls == it->second.first);
      CHECK(n.inclusive == it->second.second);
      CHECK(n.exclusive <= n.inclusive);
      const std::size_t i = static_cast<std::size_t>(&n - f.regions.data());
      if (keep_calls) {
        REQUIRE(i < f.region_calls.size());
        CHECK(f.region_calls[i] == region_calls.at(path));
      }
    }
    if (!keep_calls) CHECK(f.region_calls.empty());

    REQUIRE(f.fences.size() == fences.size());
    for (const auto& [name, want] : fences) {
      REQUIRE(f.fences.count(name) == 1);
      CHECK(f.fences.at(name).calls == want.first);
      CHECK(f.fences.at(name).total == want.second);
    }
  }
}

TEST_CASE("thread fold: a region's exclusive time leaves out its children's") {
  Recorder rec;
  fields::Named::name.set(rec.add(Ev::RegionPush, 1), 7);   // outer at 1001
  fields::Named::name.set(rec.add(Ev::RegionPush, 10), 8);  // inner at 1011
  rec.add(Ev::RegionPop, 30);                                // inner ends 1041: 30
  rec.add(Ev::RegionPop, 5);                                 // outer ends 1046: 45
  const ThreadFold f = fold_records(rec.recs, 3);
  REQUIRE(f.regions.size() == 2);
  CHECK(f.regions[0].name == 7);
  CHECK(f.regions[0].inclusive == 45);
  CHECK(f.regions[0].exclusive == 15);
  CHECK(f.regions[1].name == 8);
  CHECK(f.regions[1].parent == 0);
  CHECK(f.regions[1].inclusive == 30);
  CHECK(f.regions[1].exclusive == 30);
}

TEST_CASE("thread fold: names left out by --include/--exclude: counted only, their kept regions held by the kept one above") {
  // Name 1 and 3 kept, 2 left out: regions 1 > 2 > 3, a kernel of name 2 inside.
  const std::vector<std::uint8_t> keep = {0, 1, 0, 1};
  Recorder rec;
  fields::Named::name.set(rec.add(Ev::RegionPush, 1), 1);
  fields::Named::name.set(rec.add(Ev::RegionPush, 10), 2);
  fields::Named::name.set(rec.add(Ev::RegionPush, 10), 3);
  Record& kb = rec.add(Ev::KernelBegin, 1);
  fields::Kernel::name.set(kb, 2);
  fields::Kernel::id.set(kb, 5);
  fields::Kernel::id.set(rec.add(Ev::KernelEnd, 4), 5);
  rec.add(Ev::RegionPop, 5);   // 3: 10 ns
  rec.add(Ev::RegionPop, 10);  // 2: 30 ns, left out
  rec.add(Ev::RegionPop, 10);  // 1: 50 ns, of which 3's 10 are its kept child's
  ThreadFold f(0, 0, kob::CodeRange{}, false, &keep);
  feed(f, rec.recs, rec.recs.size());
  REQUIRE_MESSAGE(!f.declined(), f.why());
  REQUIRE(f.regions.size() == 3);
  CHECK(f.regions[0].kept);
  CHECK(f.regions[0].inclusive == 50);
  CHECK(f.regions[0].exclusive == 40);
  CHECK(!f.regions[1].kept);
  CHECK(f.regions[1].calls == 1);
  CHECK(f.regions[1].inclusive == 0);
  CHECK(f.regions[2].kept);
  CHECK(f.regions[2].exclusive == 10);
  REQUIRE(f.kernels.size() == 1);
  CHECK(!f.kernels[0].kept);
  CHECK(f.kernels[0].calls == 1);
  CHECK(f.kernel_times.empty());  // a kernel left out ran during no region, as far as the constructs table knows
}

TEST_CASE("thread fold: Kokkos spans and MPI calls still open at the end: a cut ends them at the thread's last event, a clean end at the run's") {
  Recorder rec;
  fields::Named::name.set(rec.add(Ev::RegionPush, 1), 7);  // 1001
  fields::Named::name.set(rec.add(Ev::RegionPush, 9), 8);  // 1010
  Record& k = rec.add(Ev::KernelBegin, 10);                  // 1020
  fields::Kernel::name.set(k, 3);
  fields::Kernel::id.set(k, 41);
  Record& fb = rec.add(Ev::FenceBegin, 5);  // 1025
  fields::Fence::name.set(fb, 4);
  fields::Fence::id.set(fb, 42);
  Record& c = rec.add(Ev::DeepCopyBegin, 5);  // 1030
  fields::DeepCopy::id.set(c, 43);
  fields::DeepCopy::bytes.set(c, 800);
  fields::Mpi::call.set(rec.add(Ev::MpiBegin, 10), 2);  // 1040
  rec.add(Ev::ProfileEvent, 60);                       // 1100: the thread's last event

  SUBCASE("cut: each ends at 1100, counted as cut and by kind") {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 3, true);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.last_ns == 1100);
    REQUIRE(f.kernels.size() == 1);
    CHECK(f.kernels[0].calls == 1);
    CHECK(f.kernels[0].total == 80);
    REQUIRE(f.kernel_times.size() == 1);
    CHECK(f.kernel_times[0].end == UINT64_MAX);  // handed on after every span that ended
    CHECK(f.kernel_times[0].start == 1020);
    REQUIRE(f.fences.count(4) == 1);
    CHECK(f.fences.at(4).calls == 1);
    CHECK(f.fences.at(4).total == 75);
    REQUIRE(f.copies.size() == 1);
    CHECK(f.copies.begin()->second.calls == 1);
    CHECK(f.copies.begin()->second.time == 70);
    CHECK(f.copies.begin()->second.bytes == 800);
    REQUIRE(f.mpi_calls.count(2) == 1);
    CHECK(f.mpi_calls.at(2).total == 60);
    REQUIRE(f.regions.size() == 2);
    CHECK(f.regions[0].inclusive == 99);
    CHECK(f.regions[0].exclusive == 9);  // the inner region's 90 left out
    CHECK(f.regions[1].inclusive == 90);
    CHECK(f.cut_spans == 6);
    CHECK(f.unended.kernels == 1);
    CHECK(f.unended.fences == 1);
    CHECK(f.unended.copies == 1);
    CHECK(f.unended.mpi == 1);
    CHECK(f.unended.regions == 2);
  }
  SUBCASE("events dropped in the run (ends may be lost): the kernel, fence, copy and MPI call discarded, the regions cut") {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 3, true, true);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.kernels[0].calls == 0);
    CHECK(f.kernel_times.empty());
    CHECK(f.fences.empty());
    CHECK(f.copies.empty());
    CHECK(f.mpi_calls.empty());
    CHECK(f.discarded.kernels == 1);
    CHECK(f.discarded.fences == 1);
    CHECK(f.discarded.copies == 1);
    CHECK(f.discarded.mpi == 1);
    CHECK(f.regions[1].inclusive == 90);
    CHECK(f.unended.regions == 2);
    CHECK(f.unended.kernels == 0);
    CHECK(f.cut_spans == 2);
  }
  SUBCASE("a clean end: each ends at the end of the run, which the engine gives once every thread is folded") {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 3, false);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    REQUIRE(f.kernel_times.size() == 1);  // given with the last epoch's rows
    CHECK(f.kernel_times[0].end == UINT64_MAX);
    CHECK(f.kernels[0].calls == 0);
    f.close_open(1500, false);
    CHECK(f.kernels[0].calls == 1);
    CHECK(f.kernels[0].total == 480);
    CHECK(f.kernel_times.size() == 1);
    CHECK(f.fences.at(4).total == 475);
    CHECK(f.copies.begin()->second.time == 470);
    CHECK(f.mpi_calls.at(2).total == 460);
    CHECK(f.regions[0].inclusive == 499);
    CHECK(f.regions[0].exclusive == 9);
    CHECK(f.regions[1].inclusive == 490);
    CHECK(f.cut_spans == 0);
    CHECK(f.unended.kernels == 1);
    CHECK(f.unended.regions == 2);
  }
}

TEST_CASE("thread fold: a parallel region open at the end ends at the thread's last event in a run cut short, its tasks with it") {
  // The region's own thread, killed inside it: the region, its implicit task and a barrier (with
  // its wait) open, the thread's last event at 1100.
  Recorder rec;
  Record& p = rec.add(Ev::OmpParallelBegin, 10);  // 1010
  fields::OmpParallel::parallel_id.set(p, 5);
  fields::OmpParallel::requested_team_size.set(p, 2);
  Record& i = rec.add(Ev::OmpImplicitTaskBegin, 10);  // 1020
  fields::OmpImplicitTask::parallel_id.set(i, 5);
  fields::OmpImplicitTask::team_size.set(i, 2);
  fields::OmpImplicitTask::flags.set(i, 2);
  Record& y = rec.add(Ev::OmpSyncBegin, 30);  // 1050, its wait from 1060
  fields::OmpSync::kind.set(y, 9);
  fields::OmpSync::parallel_id.set(y, 5);
  fields::OmpSync::wait_begin_step.set(y, kob::fold::step(1060, 1050));
  rec.add(Ev::ProfileEvent, 50);  // 1100

  SUBCASE("cut: the region a row that ends at 1100, marked cut open; the task open, to end at 1100 with its barrier") {
    ThreadFold f(0, 1, kob::CodeRange{}, false);
    feed(f, rec.recs, 2, true);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.parallels.empty());
    REQUIRE(f.unended_parallels.size() == 1);
    CHECK(f.unended_parallels[0].id == 5);
    CHECK(f.unended_parallels[0].start == 1010);
    CHECK(f.unended_parallels[0].end == 1100);
    CHECK(f.unended_parallels[0].unended());
    CHECK_FALSE(f.unended_parallels[0].own_task);
    REQUIRE(f.implicits.size() == 1);
    const kob::engine::ImplicitRow& r = f.implicits[0];
    CHECK(r.open);
    CHECK(r.parallel_id == 5);
    CHECK(r.start == 1020);
    CHECK(r.end == 1100);
    CHECK(r.team_size == 2);
    REQUIRE(r.open_sync_count == 1);
    CHECK(f.open_syncs[r.open_syncs].kind == 9);
    CHECK(f.open_syncs[r.open_syncs].start == 1050);
    REQUIRE(r.open_wait_count == 1);
    CHECK(f.open_waits[r.open_waits].start == 1060);
    CHECK(f.cut_spans == 0);  // the join counts the OpenMP spans it closes
  }
  SUBCASE("a clean end (exit() inside the region): the same rows, their end the run's (0 here: the join's)") {
    ThreadFold f(0, 1, kob::CodeRange{}, false);
    feed(f, rec.recs, 2, false);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.parallels.empty());
    REQUIRE(f.unended_parallels.size() == 1);
    CHECK(f.unended_parallels[0].unended());
    CHECK(f.unended_parallels[0].end == 0);
    REQUIRE(f.implicits.size() == 1);
    CHECK(f.implicits[0].open);
    CHECK(f.implicits[0].end == 0);
    CHECK(f.implicits[0].open_sync_count == 1);
  }
  SUBCASE("events lost (the region's end may be among them): declined, the builder's path") {
    ThreadFold f(0, 1, kob::CodeRange{}, false);
    feed(f, rec.recs, 2, true, true);
    CHECK(f.why() == "an OpenMP parallel region never ended");
  }
}

TEST_CASE("thread fold: a nested parallel region on the thread that opens it: its own row, level 1; its task in it") {
  // A worker's implicit task of region 1 (level 0) opens region 2 (a team of one: nesting off),
  // whose task (level 1) waits 10 ns in its barrier; then region 1's task ends.
  Recorder rec;
  const auto task = [&](Ev type, std::uint64_t step, std::uint64_t pid) {
    Record& r = rec.add(type, step);
    fields::OmpImplicitTask::parallel_id.set(r, pid);
    fields::OmpImplicitTask::team_size.set(r, pid == 1 ? 2 : 1);
    fields::OmpImplicitTask::thread_num.set(r, pid == 1 ? 1 : 0);
    fields::OmpImplicitTask::flags.set(r, 2);
  };
  task(Ev::OmpImplicitTaskBegin, 10, 1);  // 1010
  Record& p = rec.add(Ev::OmpParallelBegin, 10);  // 1020
  fields::OmpParallel::parallel_id.set(p, 2);
  fields::OmpParallel::requested_team_size.set(p, 2);
  task(Ev::OmpImplicitTaskBegin, 10, 2);  // 1030
  Record& y = rec.add(Ev::OmpSyncBegin, 10);  // 1040: waits 1045-1055, ends 1060
  fields::OmpSync::kind.set(y, 9);
  fields::OmpSync::parallel_id.set(y, 2);
  fields::OmpSync::wait_begin_step.set(y, kob::fold::step(1045, 1040));
  fields::OmpSync::wait_end_step.set(y, kob::fold::step(1055, 1045));
  fields::OmpSync::end_step.set(y, kob::fold::step(1060, 1055));
  task(Ev::OmpImplicitTaskEnd, 30, 2);  // 1070
  fields::OmpParallel::parallel_id.set(rec.add(Ev::OmpParallelEnd, 10), 2);  // 1080
  task(Ev::OmpImplicitTaskEnd, 20, 1);  // 1100

  for (const std::size_t chunk : {1, 3, 64}) {
    CAPTURE(chunk);
    ThreadFold f(1, 2, kob::CodeRange{}, false);
    feed(f, rec.recs, chunk);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    REQUIRE(f.parallels.size() == 1);
    const kob::engine::ParallelRow& r = f.parallels[0];
    CHECK(r.id == 2);
    CHECK(r.level == 1);
    CHECK(r.start == 1020);
    CHECK(r.end == 1080);
    CHECK(r.own_task);
    CHECK(r.own_team_size == 1);
    CHECK(r.own_dur == 40);
    CHECK(r.own_wait == 10);
    CHECK(f.busy == 0);  // a nested task's busy time is not the thread's
    CHECK(f.sync[9].count == 1);  // folded on the thread: region 2's own task
    CHECK(f.sync[9].total == 20);
    REQUIRE(f.implicits.size() == 1);  // region 1's task, which holds it: its wait too
    CHECK(f.implicits[0].parallel_id == 1);
    CHECK(f.implicits[0].level == 0);
    CHECK(f.implicits[0].start == 1010);
    CHECK(f.implicits[0].end == 1100);
    CHECK(f.implicits[0].wait == 10);
    CHECK(f.implicits[0].piece_count == 0);
  }
}

TEST_CASE("thread fold: device tracing records are taken apart from the thread's host events") {
  // A kernel, with device records before, inside and after it: one whose device times reach before
  // and after every host event, one with no device times (start 0), one delivered after the
  // kernel's end (its own time later than every host record's).
  Recorder rec;
  using D = fields::OmpDeviceRecord;
  Record& d0 = rec.add(Ev::OmpDeviceRecord, 5);
  D::start.set(d0, 100);
  D::end.set(d0, 5000);
  D::host_op_id.set(d0, 7);
  fields::Kernel::id.set(rec.add(Ev::KernelBegin, 10), 1);
  rec.add(Ev::OmpDeviceRecord, 10);  // start 0: no device times
  fields::Kernel::id.set(rec.add(Ev::KernelEnd, 30), 1);
  Record& d2 = rec.add(Ev::OmpDeviceRecord, 40);
  D::start.set(d2, 1200);
  D::end.set(d2, 1300);
  const std::uint64_t kernel_begin = rec.recs[1].tick, kernel_end = rec.recs[3].tick;
  // Each device record's place among the thread's cells (seq: the cells before it, plus one).
  std::vector<std::uint64_t> seqs;
  std::uint64_t cells = 0;
  for (const Record& r : rec.recs) {
    if (r.type == Ev::OmpDeviceRecord) seqs.push_back(cells + 1);
    cells += 1 + kob::kWideEvent[static_cast<unsigned>(r.type)];
  }
  for (std::size_t chunk : {1, 2, 3, 8}) {
    CAPTURE(chunk);
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    kob::clock::Line line;
    kob::EventDecoder decoder(line, kob::EventDecoder::SyncSteps::InBegin);
    kob::EventChunk events;
    for (std::size_t i = 0; i < rec.recs.size(); i += chunk) {
      events.clear();
      decoder.append(rec.recs.data() + i, std::min(chunk, rec.recs.size() - i), events);
      if (events.device_records == 0) f.events(events.begin(), events.end());
      else f.events_with_devices(events.begin(), events.end());
    }
    f.finish();
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.host_records == 2);  // the kernel's begin and end
    CHECK(f.device_records == 3);
    CHECK(f.target_records == 0);
    CHECK(f.last_ns == kernel_end);  // the later delivery moves no host time
    CHECK(f.t_min == 100);           // the device's times count for the run
    CHECK(f.t_max == 5000);
    REQUIRE(f.kernels.size() == 1);
    CHECK(f.kernels[0].calls == 1);
    CHECK(f.kernels[0].total == kernel_end - kernel_begin);
    REQUIRE(f.ordered.size() == 3);
    for (std::size_t k = 0; k < 3; ++k) {
      const kob::engine::OrderedRow& m = f.ordered[k];
      CHECK(m.kind == kob::engine::OrderedRow::Target);
      CHECK(m.event[0].type == Ev::OmpDeviceRecord);
      CHECK(m.seq == seqs[k]);
    }
    CHECK(f.ordered[0].time == rec.recs[0].tick);
    CHECK(D::host_op_id.get(f.ordered[0].event[0]) == 7);
    CHECK(D::start.get(f.ordered[2].event[0]) == 1200);
    CHECK(f.ordered[2].time == rec.recs[4].tick);
  }
}

TEST_CASE("thread fold: explicit tasks still running at the end are stretches the join ends") {
  // Task 4 runs and ends; tasks 5 and 6 start and are still running when the thread's events end.
  Recorder rec;
  using S = fields::OmpTaskSchedule;
  S::next_task_id.set(rec.add(Ev::OmpTaskSchedule, 10), 4);
  Record& e = rec.add(Ev::OmpTaskSchedule, 20);
  S::prior_task_id.set(e, 4);
  S::prior_status.set(e, 1);  // ompt_task_complete
  S::next_task_id.set(rec.add(Ev::OmpTaskSchedule, 30), 5);
  S::next_task_id.set(rec.add(Ev::OmpTaskSchedule, 40), 6);
  fields::Kernel::id.set(rec.add(Ev::KernelBegin, 50), 1);  // the thread's last event: a kernel begun
  const std::uint64_t start5 = rec.recs[2].tick, start6 = rec.recs[3].tick, last = rec.recs[4].tick;
  for (const bool cut : {false, true}) {
    CAPTURE(cut);
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 2, cut);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.task_stretch_count == 3);
    CHECK(f.tasks_completed == 1);
    CHECK(f.unended_tasks == 2);
    REQUIRE(f.task_stretches.size() == 3);
    const kob::engine::TaskStretchRow& a = f.task_stretches[1];
    const kob::engine::TaskStretchRow& b = f.task_stretches[2];
    CHECK(a.task_id == 5);
    CHECK(b.task_id == 6);
    CHECK(a.start == start5);
    CHECK(b.start == start6);
    CHECK(a.status == 0);  // not completed
    const std::uint64_t end = cut ? last : kob::engine::TaskStretchRow::kEndOfRun;
    CHECK(a.end == end);
    CHECK(b.end == end);
    CHECK(a.seq < b.seq);
    CHECK(a.seq > f.task_stretches[0].seq);
  }
  // Events lost: their ends may be among them (the builder's path).
  ThreadFold f(0, 0, kob::CodeRange{}, false);
  feed(f, rec.recs, 2, false, true);
  CHECK(f.declined());
  CHECK(f.why() == "an OpenMP explicit task never ended");
}

TEST_CASE("thread fold: odd hook orders and records it does not cover make it decline") {
  struct Case {
    const char* why;  // nullptr: any reason
    void (*record)(Recorder&);
  };
  const Case cases[] = {
      {"a kernel end with no begin on its thread", [](Recorder& r) { fields::Kernel::id.set(r.add(Ev::KernelEnd, 1), 5); }},
      {"a fence end with no begin on its thread", [](Recorder& r) { fields::Fence::id.set(r.add(Ev::FenceEnd, 1), 5); }},
      {"a kernel begun with the id of one still open",
       [](Recorder& r) {
         fields::Kernel::id.set(r.add(Ev::KernelBegin, 1), 9);
         fields::Kernel::id.set(r.add(Ev::KernelBegin, 1), 9);
       }},
      {"a device tracing record among host events", [](Recorder& r) { r.add(Ev::OmpDeviceRecord, 1); }},  // events_with_devices takes them
      {"a mutex released that its thread did not hold",  // as by another thread (an untied task moved)
       [](Recorder& r) { fields::OmpMutex::kind.set(r.add(Ev::OmpMutexReleased, 1), 1); }},
      {"an early-fulfilled task that did not complete on its thread",  // its complete would be another thread's
       [](Recorder& r) {
         fields::OmpTaskSchedule::next_task_id.set(r.add(Ev::OmpTaskSchedule, 1), 4);
         Record& e = r.add(Ev::OmpTaskSchedule, 1);
         fields::OmpTaskSchedule::prior_task_id.set(e, 4);
         fields::OmpTaskSchedule::prior_status.set(e, 5);  // ompt_task_early_fulfill
         Record& d = r.add(Ev::OmpTaskSchedule, 1);
         fields::OmpTaskSchedule::prior_task_id.set(d, 4);
         fields::OmpTaskSchedule::prior_status.set(d, 4);  // ompt_task_detach: the body ends, not completed
       }},
      {"a task_schedule names as prior a task not running on its thread",
       [](Recorder& r) {
         Record& e = r.add(Ev::OmpTaskSchedule, 1);
         fields::OmpTaskSchedule::prior_task_id.set(e, 4);
         fields::OmpTaskSchedule::prior_status.set(e, 1);
       }},
      {"an unknown mutex kind",  // a damaged file's acquired with no acquire: the hold it makes would index no family
       [](Recorder& r) { fields::OmpMutex::kind.set(r.add(Ev::OmpMutexAcquired, 1), 999); }},
      {"a task_schedule starts a task already running on its thread",
       [](Recorder& r) {
         fields::OmpTaskSchedule::next_task_id.set(r.add(Ev::OmpTaskSchedule, 1), 4);
         fields::OmpTaskSchedule::next_task_id.set(r.add(Ev::OmpTaskSchedule, 1), 4);
       }},
  };
  for (const Case& c : cases) {
    Recorder rec;
    c.record(rec);
    const ThreadFold f = fold_records(rec.recs, 8);
    CAPTURE(f.why());
    CHECK(f.declined());
    if (c.why != nullptr) CHECK(f.why() == c.why);
  }
}

TEST_CASE("thread fold: odd orders the builder ignores are ignored and counted, as its problem lines count them") {
  // Each: an end whose begin is not on the thread (lost with a damaged file's blocks, or a tool
  // loaded late), or a mutex asked for twice. The rest of the thread's events fold as before.
  Recorder rec;
  rec.add(Ev::RegionPop, 1);
  fields::OmpImplicitTask::parallel_id.set(rec.add(Ev::OmpImplicitTaskEnd, 1), 7);
  fields::OmpParallel::parallel_id.set(rec.add(Ev::OmpParallelEnd, 1), 7);
  const auto mutex = [&](Ev type, std::uint64_t step) {
    Record& m = rec.add(type, step);
    fields::OmpMutex::kind.set(m, 5);  // ompt_mutex_critical
    fields::OmpMutex::wait_id.set(m, 3);
  };
  mutex(Ev::OmpMutexAcquired, 10);  // a hold with no wait
  mutex(Ev::OmpMutexReleased, 20);
  mutex(Ev::OmpMutexAcquire, 10);   // the first ignored
  mutex(Ev::OmpMutexAcquire, 10);
  mutex(Ev::OmpMutexAcquired, 5);   // a wait of 5
  mutex(Ev::OmpMutexReleased, 30);
  Record& k = rec.add(Ev::KernelBegin, 1);
  fields::Kernel::id.set(k, 1);
  fields::Kernel::id.set(rec.add(Ev::KernelEnd, 4), 1);
  const ThreadFold f = fold_records(rec.recs, 3);
  CAPTURE(f.why());
  REQUIRE_FALSE(f.declined());
  CHECK(f.region_pops_unpushed == 1);
  CHECK(f.implicit_ends_unbegun == 1);
  CHECK(f.parallel_ends_unbegun == 1);
  CHECK(f.unbegun_parallel_ends == std::vector<std::uint64_t>{7});  // the join tells one open on another thread
  CHECK(f.mutex_acquired_unasked == 1);
  CHECK(f.mutex_asked_twice == 1);
  CHECK(f.mutex[5].holds == 2);
  CHECK(f.mutex[5].hold == 20 + 30);
  CHECK(f.mutex[5].wait == 5);
  CHECK(f.parallels.empty());
  CHECK(f.implicits.empty());
  REQUIRE(f.kernels.size() == 1);
  CHECK(f.kernels[0].calls == 1);
  CHECK(f.kernels[0].total == 4);
}

TEST_CASE("thread fold: a mutex still held at the end is cut at the thread's last event, discarded after a loss, ended at the run's end after a clean end") {
  // A critical section asked for at 1010, acquired at 1020 and held; the thread's last event (a
  // kernel's end) at 1070.
  Recorder rec;
  for (Ev type : {Ev::OmpMutexAcquire, Ev::OmpMutexAcquired}) {
    Record& m = rec.add(type, 10);
    fields::OmpMutex::kind.set(m, 5);  // ompt_mutex_critical
    fields::OmpMutex::wait_id.set(m, 3);
  }
  fields::Kernel::id.set(rec.add(Ev::KernelBegin, 20), 1);
  fields::Kernel::id.set(rec.add(Ev::KernelEnd, 30), 1);
  {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 8, /*cut=*/true);
    CAPTURE(f.why());
    REQUIRE_FALSE(f.declined());
    CHECK(f.holds_cut == 1);
    CHECK(f.holds_discarded == 0);
    CHECK(f.cut_spans == 1);
    CHECK(f.mutex[5].holds == 1);
    CHECK(f.mutex[5].hold == 1070 - 1020);
    CHECK(f.mutex[5].wait == 10);
  }
  {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 8, /*cut=*/true, /*lost_ends=*/true);
    REQUIRE_FALSE(f.declined());
    CHECK(f.holds_discarded == 1);
    CHECK(f.holds_cut == 0);
    CHECK(f.mutex[5].holds == 0);
  }
  {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 8);
    REQUIRE_FALSE(f.declined());
    CHECK(f.holds_cut == 1);  // a problem line (shown until the end of the run)
    CHECK(f.cut_spans == 0);
    CHECK(f.mutex[5].holds == 0);  // not until the end of the run is known
    f.close_open_mutexes(2000);
    CHECK(f.mutex[5].holds == 1);
    CHECK(f.mutex[5].hold == 2000 - 1020);
    CHECK(f.mutex[5].wait == 10);
  }
}

TEST_CASE("thread fold: a mutex acquire still waiting at the end ends as a hold does") {
  // Thread asks for a lock at 1010 (never acquired: another holds it); its last event at 1040.
  Recorder rec;
  Record& m = rec.add(Ev::OmpMutexAcquire, 10);
  fields::OmpMutex::kind.set(m, 1);  // ompt_mutex_lock
  fields::OmpMutex::wait_id.set(m, 7);
  fields::Kernel::id.set(rec.add(Ev::KernelBegin, 10), 1);
  fields::Kernel::id.set(rec.add(Ev::KernelEnd, 20), 1);
  const std::uint16_t family = kob::omp_names::mutex_family(1);
  for (const int how : {0, 1, 2}) {  // a clean end, a run cut short, events lost
    CAPTURE(how);
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    feed(f, rec.recs, 2, how == 1, how == 2);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.acquires_unended == (how == 2 ? 0u : 1u));
    CHECK(f.acquires_discarded == (how == 2 ? 1u : 0u));
    CHECK(f.cut_spans == (how == 1 ? 1u : 0u));
    if (how == 0) {
      CHECK(f.mutex[family].wait == 0);
      f.close_open_mutexes(1100);
    }
    CHECK(f.mutex[family].holds == 0);
    CHECK(f.mutex[family].wait == (how == 0 ? 1100 - 1010 : how == 1 ? 1040 - 1010 : 0));
  }
}

TEST_CASE("thread fold: in a damaged file, a thread that goes on past a kernel's lost end declines") {
  // Kernel 1 never ends on the thread; a region of kernel 2 (whose begin was lost too) follows.
  // The builder's figures of kernel 1's regions expire at kernel 2's (SummaryFold::expire_waits):
  // the engine does not follow that, and leaves such a file to the builder (not for that reason
  // when the file is whole).
  Recorder rec;
  fields::Kernel::id.set(rec.add(Ev::KernelBegin, 1), 1);
  Record& p = rec.add(Ev::OmpParallelBegin, 10);
  fields::OmpParallel::parallel_id.set(p, 4);
  fields::OmpParallel::kernel.set(p, 2);
  for (const bool damaged : {true, false}) {
    ThreadFold f(0, 0, kob::CodeRange{}, false);
    f.set_damaged(damaged);
    feed(f, rec.recs, 8);
    CAPTURE(f.why());
    if (damaged) CHECK(f.why() == "a damaged file's thread goes on past a kernel's lost end");
    else CHECK(f.why() != "a damaged file's thread goes on past a kernel's lost end");
  }
}

TEST_CASE("thread fold: a nested region's implicit task keeps its own work pieces apart from its parent's") {
  // A worker's task (region 1) runs a loop, then a nested region's task (2) with a loop of its own,
  // then a second loop: the nested row (in nested_implicits) has its one part in nested_parts, the
  // parent's row its two in parts.
  Recorder rec;
  const auto task = [&](Ev type, std::uint64_t pid) {
    Record& t = rec.add(type, 10);
    fields::OmpImplicitTask::parallel_id.set(t, pid);
    fields::OmpImplicitTask::flags.set(t, 2);
    fields::OmpImplicitTask::team_size.set(t, 2);
  };
  const auto loop = [&](std::uint64_t pid, std::uint64_t codeptr, std::uint64_t len) {
    Record& b = rec.add(Ev::OmpWorkBegin, 10);
    fields::OmpWork::parallel_id.set(b, pid);
    fields::OmpWork::work_type.set(b, 1);
    fields::OmpWork::codeptr.set(b, codeptr);
    Record& e = rec.add(Ev::OmpWorkEnd, len);
    fields::OmpWork::parallel_id.set(e, pid);
    fields::OmpWork::work_type.set(e, 1);
  };
  task(Ev::OmpImplicitTaskBegin, 1);
  loop(1, 0x100, 50);
  task(Ev::OmpImplicitTaskBegin, 2);
  loop(2, 0x200, 70);
  task(Ev::OmpImplicitTaskEnd, 2);
  loop(1, 0x300, 90);
  task(Ev::OmpImplicitTaskEnd, 1);
  for (const std::size_t chunk : {1, 3, 100}) {
    CAPTURE(chunk);
    ThreadFold f(0, 0, kob::CodeRange{}, true);
    feed(f, rec.recs, chunk);
    CAPTURE(f.why());
    REQUIRE_FALSE(f.declined());
    REQUIRE(f.nested_implicits.size() == 1);
    REQUIRE(f.implicits.size() == 1);
    const kob::engine::ImplicitRow& nested = f.nested_implicits[0];
    const kob::engine::ImplicitRow& parent = f.implicits[0];
    CHECK(nested.parallel_id == 2);
    CHECK(nested.level == 1);
    CHECK(nested.end - nested.start == 10 + 70 + 10);
    REQUIRE(nested.part_count == 1);
    REQUIRE(nested.parts + 1 <= f.nested_parts.size());
    CHECK(f.nested_parts[nested.parts].busy == 70);
    CHECK(parent.parallel_id == 1);
    CHECK(parent.level == 0);
    REQUIRE(parent.part_count == 2);
    REQUIRE(parent.parts + 2 <= f.parts.size());
    CHECK(f.parts[parent.parts].busy == 50);
    CHECK(f.parts[parent.parts + 1].busy == 90);
  }
}

TEST_CASE("thread fold: target records and deep copy ends go to the time-ordered rows whole") {
  // In a kernel: a deep copy with a data op, then a target region; the target begin names the
  // kernel's part (its league's regions on other threads find the kernel by it).
  Recorder rec;
  Record& k = rec.add(Ev::KernelBegin, 10);
  fields::Kernel::id.set(k, 7);
  fields::Kernel::name.set(k, 3);
  Record& c = rec.add(Ev::DeepCopyBegin, 10);
  fields::DeepCopy::id.set(c, 5);
  fields::DeepCopy::bytes.set(c, 4096);
  Record& op = rec.add(Ev::OmpDataOpBegin, 10);
  fields::OmpDataOp::host_op_id.set(op, 11);
  fields::OmpDataOp::bytes.set(op, 4096);
  fields::OmpDataOp::deep_copy.set(op, 5);
  fields::OmpDataOp::host_op_id.set(rec.add(Ev::OmpDataOpEnd, 20), 11);
  fields::DeepCopy::id.set(rec.add(Ev::DeepCopyEnd, 10), 5);
  Record& t = rec.add(Ev::OmpTargetBegin, 10);
  fields::OmpTarget::target_id.set(t, 9);
  fields::OmpTarget::kernel.set(t, 7);
  fields::OmpTarget::codeptr.set(t, 0x400);
  fields::OmpTarget::target_id.set(rec.add(Ev::OmpTargetEnd, 30), 9);
  fields::Kernel::id.set(rec.add(Ev::KernelEnd, 10), 7);
  for (const std::size_t chunk : {1, 100}) {
    CAPTURE(chunk);
    const ThreadFold f = fold_records(rec.recs, chunk);
    CAPTURE(f.why());
    REQUIRE_FALSE(f.declined());
    CHECK(f.target_records == 4);
    using kob::engine::OrderedRow;
    REQUIRE(f.ordered.size() == 5);
    const Ev types[] = {Ev::OmpDataOpBegin, Ev::OmpDataOpEnd, Ev::OmpTargetBegin, Ev::OmpTargetEnd};
    std::size_t n = 0;
    std::uint64_t last = 0;
    for (const OrderedRow& r : f.ordered) {
      CHECK(r.seq > last);  // the thread's order
      last = r.seq;
      if (r.kind == OrderedRow::DeepCopy) {
        CHECK(r.ptr == 5);
        CHECK(r.bytes == 4096);
        CHECK(r.time - r.start == 40);
        CHECK(n == 2);  // after its data op's end, before the target
        continue;
      }
      REQUIRE(r.kind == OrderedRow::Target);
      REQUIRE(n < 4);
      CHECK(r.event[0].type == types[n]);
      CHECK(r.time == r.event[0].ns);
      if (types[n] == Ev::OmpDataOpBegin) CHECK(fields::OmpDataOp::deep_copy.get(r.event[0]) == 5);  // a wide field, in the second cell
      if (types[n] == Ev::OmpTargetBegin) {
        CHECK(r.kernel_part == 0);  // its kernel's part, open on this thread
        CHECK(fields::OmpTarget::codeptr.get(r.event[0]) == 0x400);
      }
      ++n;
    }
    CHECK(n == 4);
  }
}

TEST_CASE("thread fold: detached and cancelled tasks end as the builder ends them") {
  // Task 4: fulfilled early inside its body, then complete (completed once). Task 5: its body ends
  // with detach, fulfilled late (completed once, no second stretch). Task 6: cancelled while
  // running (a stretch). Task 7: cancelled where it never ran (no stretch: a discard row).
  using S = fields::OmpTaskSchedule;
  Recorder rec;
  const auto sched = [&](std::uint64_t prior, std::uint32_t status, std::uint64_t next, std::uint64_t step) {
    Record& e = rec.add(Ev::OmpTaskSchedule, step);
    S::prior_task_id.set(e, prior);
    S::prior_status.set(e, status);
    S::next_task_id.set(e, next);
  };
  sched(0, 0, 4, 10);
  sched(4, 5, 0, 20);  // early_fulfill
  sched(4, 1, 5, 30);  // complete; task 5 starts
  sched(5, 4, 6, 40);  // detach; task 6 starts
  sched(5, 6, 0, 5);   // late_fulfill (its stretch ended at the detach)
  sched(6, 3, 0, 15);  // cancel, running
  sched(7, 3, 0, 25);  // cancel, never ran here
  for (const std::size_t chunk : {1, 100}) {
    CAPTURE(chunk);
    const ThreadFold f = fold_records(rec.recs, chunk);
    CAPTURE(f.why());
    REQUIRE_FALSE(f.declined());
    CHECK(f.tasks_completed == 2);
    CHECK(f.task_stretch_count == 3);
    REQUIRE(f.task_stretches.size() == 4);
    const auto& k = f.task_stretches;
    CHECK((k[0].task_id == 4 && k[0].status == 1 && k[0].end - k[0].start == 50 && !k[0].discard));
    CHECK((k[1].task_id == 5 && k[1].status == 4 && k[1].end - k[1].start == 40 && !k[1].discard));
    CHECK((k[2].task_id == 6 && k[2].status == 3 && k[2].end - k[2].start == 20 && !k[2].discard));
    CHECK((k[3].task_id == 7 && k[3].status == 3 && k[3].discard && k[3].start == k[3].end));
  }
}

TEST_CASE("thread fold: locks are waits and holds, tries that failed and nest locks set again, by family and by site") {
  using M = fields::OmpMutex;
  using N = fields::OmpNestLock;
  constexpr std::uint16_t kLock = 1, kTestLock = 2, kNestLock = 3, kCritical = 5;
  Recorder rec;
  const auto mutex = [&](Ev type, std::uint64_t step, std::uint16_t kind, std::uint64_t wait_id, std::uint64_t codeptr,
                         std::uint64_t kernel = 0) {
    Record& r = rec.add(type, step);
    M::kind.set(r, kind);
    M::wait_id.set(r, wait_id);
    M::codeptr.set(r, codeptr);
    M::kernel.set(r, kernel);
  };
  const auto nest = [&](std::uint64_t step, std::uint16_t endpoint, std::uint64_t wait_id) {
    Record& r = rec.add(Ev::OmpNestLock, step);
    N::endpoint.set(r, endpoint);
    N::wait_id.set(r, wait_id);
  };
  // A lock at site 0x100: waited 10, held 20.
  mutex(Ev::OmpMutexAcquire, 1, kLock, 7, 0x100);
  mutex(Ev::OmpMutexAcquired, 10, kLock, 7, 0x100);
  mutex(Ev::OmpMutexReleased, 20, kLock, 7, 0x100);
  // A test that failed (known at the next acquire of the lock), then waited 4, held 6.
  mutex(Ev::OmpMutexAcquire, 5, kTestLock, 7, 0x100);
  mutex(Ev::OmpMutexAcquire, 3, kLock, 7, 0x100);
  mutex(Ev::OmpMutexAcquired, 4, kLock, 7, 0x100);
  mutex(Ev::OmpMutexReleased, 6, kLock, 7, 0x100);
  // A nest lock at 0x200: waited 2, set again (waited 1) and unset, held 1 + 1 + 5 + 7 = 14.
  mutex(Ev::OmpMutexAcquire, 1, kNestLock, 9, 0x200);
  mutex(Ev::OmpMutexAcquired, 2, kNestLock, 9, 0x200);
  mutex(Ev::OmpMutexAcquire, 1, kNestLock, 9, 0x200);
  nest(1, 1, 9);
  nest(5, 2, 9);
  mutex(Ev::OmpMutexReleased, 7, kNestLock, 9, 0x200);
  // A critical section in a Kokkos kernel (no site row): waited 3, held 8.
  mutex(Ev::OmpMutexAcquire, 1, kCritical, 11, 0x300, 42);
  mutex(Ev::OmpMutexAcquired, 3, kCritical, 11, 0x300, 42);
  mutex(Ev::OmpMutexReleased, 8, kCritical, 11, 0x300, 42);
  // A test never followed by another acquire: failed, known at the end.
  mutex(Ev::OmpMutexAcquire, 2, kTestLock, 7, 0x100);

  for (const std::size_t chunk : {std::size_t{1}, std::size_t{4}, std::size_t{64}}) {
    CAPTURE(chunk);
    ThreadFold f(0, 0, kob::CodeRange{}, true);
    f.keep_calls();
    feed(f, rec.recs, chunk);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    const kob::engine::MutexFigure& lock = f.mutex[kLock];
    CHECK(lock.holds == 2);
    CHECK(lock.wait == 14);
    CHECK(lock.hold == 26);
    CHECK(lock.failed_tries == 2);
    CHECK(lock.nested_holds == 0);
    const kob::engine::MutexFigure& nl = f.mutex[kNestLock];
    CHECK(nl.holds == 1);
    CHECK(nl.nested_holds == 1);
    CHECK(nl.wait == 3);
    CHECK(nl.hold == 14);
    const kob::engine::MutexFigure& crit = f.mutex[kCritical];
    CHECK(crit.holds == 1);
    CHECK(crit.wait == 3);
    CHECK(crit.hold == 8);
    CHECK(!f.mutex[kTestLock].seen);  // a test counts as its family
    // The sites outside kernels, in the order their first span ended; a call is an outer hold with
    // the waits before it on the thread.
    REQUIRE(f.hits.size() == 2);
    const kob::engine::ConstructHit& a = f.hits[0];
    CHECK(a.codeptr == 0x100);
    CHECK(a.calls == 2);
    CHECK(a.wait == 14);
    CHECK(a.hold == 26);
    CHECK(a.failed_tries == 2);
    CHECK(a.first_end == 1011);  // the first wait's end
    const kob::engine::ConstructHit& b = f.hits[1];
    CHECK(b.codeptr == 0x200);
    CHECK(b.calls == 1);
    CHECK(b.nested_holds == 1);
    CHECK(b.wait == 3);
    CHECK(b.hold == 14);
    REQUIRE(f.hit_calls.size() == 2);
    CHECK(f.hit_calls[0] == std::vector<std::uint64_t>{30, 10});
    CHECK(f.hit_calls[1] == std::vector<std::uint64_t>{17});
  }
}

TEST_CASE("thread fold: explicit tasks are stretches between schedules, their creates the rows the join needs") {
  using T = fields::OmpTaskSchedule;
  using C = fields::OmpTaskCreate;
  constexpr std::uint32_t kComplete = 1, kYield = 2;
  Recorder rec;
  const auto create = [&](std::uint64_t step, std::uint64_t id, std::uint64_t codeptr) {
    Record& r = rec.add(Ev::OmpTaskCreate, step);
    C::task_id.set(r, id);
    C::codeptr.set(r, codeptr);
  };
  const auto schedule = [&](std::uint64_t step, std::uint64_t prior, std::uint32_t status, std::uint64_t next) {
    Record& r = rec.add(Ev::OmpTaskSchedule, step);
    T::prior_task_id.set(r, prior);
    T::prior_status.set(r, status);
    T::next_task_id.set(r, next);
  };
  // A team of one: the region's own implicit task creates three tasks at one site and runs two.
  Record& p = rec.add(Ev::OmpParallelBegin, 1);
  fields::OmpParallel::parallel_id.set(p, 1);
  fields::OmpParallel::requested_team_size.set(p, 1);
  Record& i = rec.add(Ev::OmpImplicitTaskBegin, 1);
  fields::OmpImplicitTask::parallel_id.set(i, 1);
  fields::OmpImplicitTask::team_size.set(i, 1);
  fields::OmpImplicitTask::flags.set(i, 2);
  create(10, 11, 0x500);
  create(7, 12, 0x500);        // 7 ns after the first, no task run between: a creation gap
  schedule(3, 0, 0, 11);       // task 11 runs 20 ns
  schedule(20, 11, kComplete, 0);
  create(4, 13, 0x500);        // a task ran since the last create: no gap
  schedule(2, 0, 0, 13);       // task 13: 5 ns, switched away, then 6 ns
  schedule(5, 13, kYield, 0);
  schedule(1, 0, 0, 13);
  schedule(6, 13, kComplete, 0);
  Record& ie = rec.add(Ev::OmpImplicitTaskEnd, 2);
  fields::OmpImplicitTask::parallel_id.set(ie, 1);
  fields::OmpParallel::parallel_id.set(rec.add(Ev::OmpParallelEnd, 1), 1);

  for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
    CAPTURE(chunk);
    ThreadFold f(0, 0, kob::CodeRange{}, true);
    feed(f, rec.recs, chunk);
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.tasks_created == 3);
    CHECK(f.task_stretch_count == 3);
    CHECK(f.tasks_completed == 2);
    REQUIRE(f.task_creates.size() == 3);
    CHECK(f.task_creates[0].prev_codeptr == 0);
    CHECK(f.task_creates[1].prev_codeptr == 0x500);
    CHECK(f.task_creates[1].gap == 7);
    CHECK(f.task_creates[2].prev_codeptr == 0);
    REQUIRE(f.task_stretches.size() == 3);
    CHECK(f.task_stretches[0].task_id == 11);
    CHECK(f.task_stretches[0].end - f.task_stretches[0].start == 20);
    CHECK(f.task_stretches[1].status == kYield);
    CHECK(f.task_stretches[1].end - f.task_stretches[1].start == 5);
    CHECK(f.task_stretches[2].end - f.task_stretches[2].start == 6);
    // The implicit task that ran them is a row of its own (its region's figures count its task
    // work), not folded into its region's row here.
    REQUIRE(f.implicits.size() == 1);
    CHECK(f.implicits[0].task_work == 31);
    CHECK(f.implicits[0].created_tasks);
    REQUIRE(f.hits.size() == 1);
    CHECK(f.hits[0].calls == 3);
  }
}

TEST_CASE("thread fold: a sync region the hot path folded counts as the events it stands for, whole or cut short") {
  using S = fields::OmpSync;
  constexpr std::uint16_t kBarrier = 1;  // ompt_sync_region_barrier (explicit)
  // begin at 1010, wait 1013..1020, end 1024; `steps` of them folded into the begin (0: four
  // records of their own, as when another record came between).
  struct Case {
    int steps;      // 3: all; 1: the end alone (no wait); -1: wait begin only; -2: wait begin and end; 0: separate
    bool whole;     // the region ended: counted, no decline
    std::uint64_t records, wait;
  };
  const Case cases[] = {{3, true, 4, 7}, {1, true, 2, 0}, {-1, false, 2, 0}, {-2, false, 3, 7}, {0, true, 4, 7}};
  for (const Case& c : cases) {
    CAPTURE(c.steps);
    Recorder rec;
    rec.now = 1000;
    Record& b = rec.add(Ev::OmpSyncBegin, 10);
    S::kind.set(b, kBarrier);
    S::codeptr.set(b, 0x4000);
    if (c.steps == 3) {
      S::wait_begin_step.set(b, kob::fold::step(1013, 1010));
      S::wait_end_step.set(b, kob::fold::step(1020, 1013));
      S::end_step.set(b, kob::fold::step(1024, 1020));
    } else if (c.steps == 1) {
      S::end_step.set(b, kob::fold::step(1024, 1010));
    } else if (c.steps < 0) {
      S::wait_begin_step.set(b, kob::fold::step(1013, 1010));
      if (c.steps == -2) S::wait_end_step.set(b, kob::fold::step(1020, 1013));
    } else {
      S::kind.set(rec.add(Ev::OmpSyncWaitBegin, 3), kBarrier);
      S::kind.set(rec.add(Ev::OmpSyncWaitEnd, 7), kBarrier);
      S::kind.set(rec.add(Ev::OmpSyncEnd, 4), kBarrier);
    }
    const ThreadFold f = fold_records(rec.recs, 8);
    CHECK(f.host_records == c.records);
    CHECK(f.omp_records == c.records);
    CHECK(f.wait_total == c.wait);
    if (!c.whole) {
      CHECK(f.why() == "an OpenMP sync region or wait never ended");
      continue;
    }
    REQUIRE_MESSAGE(!f.declined(), f.why());
    CHECK(f.sync[kBarrier].count == 1);
    CHECK(f.sync[kBarrier].total == 14);
    CHECK(f.sync[kBarrier].wait == c.wait);
    CHECK(f.t_min == 1010);
    CHECK(f.last_ns == 1024);
  }
}

TEST_CASE("thread fold: a folded step whose tick ran backwards still counts for the thread's first and last times") {
  using S = fields::OmpSync;
  // begin at 1010; (wait begin, wait end, end): the wait begin before the begin (the thread moved
  // to a core whose TSC is behind), or the end before the wait's end.
  struct Case {
    std::uint64_t ws, we, ye, t_min, last;
  };
  for (const Case& c : {Case{1005, 1020, 1024, 1005, 1024}, Case{1013, 1020, 1008, 1008, 1020}, Case{1013, 1020, 1024, 1010, 1024}}) {
    CAPTURE(c.ws);
    CAPTURE(c.ye);
    Recorder rec;
    rec.now = 1000;
    Record& b = rec.add(Ev::OmpSyncBegin, 10);
    S::kind.set(b, 1);
    S::wait_begin_step.set(b, kob::fold::step(c.ws, 1010));
    S::wait_end_step.set(b, kob::fold::step(c.we, c.ws));
    S::end_step.set(b, kob::fold::step(c.ye, c.we));
    const ThreadFold f = fold_records(rec.recs, 8);
    CHECK(f.host_records == 4);
    CHECK(f.t_min == c.t_min);
    CHECK(f.last_ns == c.last);
  }
}

TEST_CASE("thread fold: an implicit task that is one barrier, taken whole or event by event, gives the same figures and rows") {
  // A region of 2 threads: its own thread (region 7 begun and ended there) and a worker. Each task
  // holds one barrier folded whole (begin 30 ns into the task, its wait 5..15 ns into the barrier,
  // its end 20 ns in). In chunks of 1 event the fold takes each event alone; in one chunk it
  // takes the task (and the region around it) whole. Variants: a record between the task's end
  // and the region's end, the barrier's end before its wait's end (a tick that ran backwards),
  // and the barrier that ends a work construct (kind 8): these take the general handlers.
  using S = fields::OmpSync;
  using T = fields::OmpImplicitTask;
  struct Variant {
    const char* name;
    bool between;      // a profile event between the task's end and the region's end
    bool backwards;    // the barrier's end step before its wait's end
    std::uint16_t kind;
    bool work = false;  // a loop (begin, two dispatches, end) before the barrier: a `parallel for`
    std::uint16_t dispatch_kind = 3;
  };
  for (const Variant v : {Variant{"whole", false, false, 9}, Variant{"a record between", true, false, 9},
                          Variant{"end before the wait's end", false, true, 9}, Variant{"workshare barrier", false, false, 8},
                          Variant{"a loop", false, false, 9, true}, Variant{"a loop, a record between", true, false, 9, true},
                          Variant{"a loop with an unknown dispatch kind", false, false, 9, true, 40}}) {
    const std::string name = v.name;
    CAPTURE(name);
    const auto task = [&](Recorder& rec, bool own) {
      const std::uint64_t t0 = rec.now + 10;
      Record& b = rec.add(Ev::OmpImplicitTaskBegin, 10);
      T::parallel_id.set(b, 7);
      T::team_size.set(b, 2);
      T::thread_num.set(b, own ? 0 : 1);
      T::flags.set(b, 2);
      std::uint64_t step = 30;
      if (v.work) {  // the loop from t0 + 2 to t0 + 22, dispatches at 5 and 12
        Record& wb = rec.add(Ev::OmpWorkBegin, 2);
        fields::OmpWork::work_type.set(wb, 10);  // ompt_work_loop_static
        fields::OmpWork::parallel_id.set(wb, 7);
        fields::OmpWork::codeptr.set(wb, 0x6000);
        for (const std::uint64_t at : {3, 7}) {
          Record& d = rec.add(Ev::OmpDispatch, at);
          fields::OmpDispatch::kind.set(d, v.dispatch_kind);
          fields::OmpDispatch::parallel_id.set(d, 7);
        }
        Record& wx = rec.add(Ev::OmpWorkEnd, 10);
        fields::OmpWork::work_type.set(wx, 10);
        fields::OmpWork::parallel_id.set(wx, 7);
        step = 8;
      }
      Record& y = rec.add(Ev::OmpSyncBegin, step);
      S::kind.set(y, v.kind);
      S::parallel_id.set(y, 7);
      S::kernel.set(y, 3);
      S::codeptr.set(y, 0x4000);
      S::wait_begin_step.set(y, kob::fold::step(t0 + 35, t0 + 30));
      S::wait_end_step.set(y, kob::fold::step(t0 + 45, t0 + 35));
      S::end_step.set(y, kob::fold::step(v.backwards ? t0 + 40 : t0 + 50, t0 + 45));
      Record& x = rec.add(Ev::OmpImplicitTaskEnd, 60);  // t0 + 90
      T::parallel_id.set(x, 7);
      T::thread_num.set(x, own ? 0 : 1);
    };
    Recorder owner;
    Record& p = owner.add(Ev::OmpParallelBegin, 10);  // 1010
    fields::OmpParallel::parallel_id.set(p, 7);
    fields::OmpParallel::requested_team_size.set(p, 2);
    fields::OmpParallel::codeptr.set(p, 0x5000);
    task(owner, true);  // 1020 .. 1110
    if (v.between) owner.add(Ev::ProfileEvent, 5);
    fields::OmpParallel::parallel_id.set(owner.add(Ev::OmpParallelEnd, 10), 7);
    Recorder worker;
    task(worker, false);  // 1010 .. 1100
    const std::uint64_t barrier = v.backwards ? 10 : 20, wait = 10;

    for (const bool own : {true, false}) {
      CAPTURE(own);
      const std::vector<Record>& recs = own ? owner.recs : worker.recs;
      ThreadFold one(own ? 0 : 1, 0, kob::CodeRange{}, false);
      ThreadFold whole(own ? 0 : 1, 0, kob::CodeRange{}, false);
      feed(one, recs, 1);
      feed(whole, recs, 64);
      if (v.dispatch_kind >= kob::engine::kKinds) {  // the general handler's decline, whichever way
        CHECK(one.why() == "an unknown dispatch kind");
        CHECK(whole.why() == "an unknown dispatch kind");
        continue;
      }
      for (const ThreadFold* f : {&one, &whole}) {
        REQUIRE_MESSAGE(!f->declined(), f->why());
        // What the test wrote: one barrier, its wait, the events it stands for.
        CHECK(f->sync[v.kind].count == (own ? 1 : 0));  // a worker's barrier is a piece for its region's join
        CHECK(f->sync[v.kind].total == (own ? barrier : 0));
        CHECK(f->wait_total == wait);
        CHECK(f->host_records == recs.size() + 3);  // the barrier's three steps
        CHECK(f->omp_records == recs.size() + 3 - (own && v.between ? 1 : 0));
        CHECK(f->t_min == 1010);
        CHECK(f->last_ns == recs.back().tick);
        CHECK(f->work[10].count == (v.work ? 1 : 0));
        CHECK(f->work[10].total == (v.work ? 20 : 0));
        CHECK(f->dispatch[3].count == (v.work ? 2 : 0));
      }
      if (v.work && own) {  // the region's own task with its loop goes with the region's row, loop and all
        for (const ThreadFold* f : {&one, &whole}) {
          CHECK(f->implicits.empty());
          REQUIRE(f->parallels.size() == 1);
          const kob::engine::ParallelRow& r = f->parallels[0];
          CHECK(r.end == recs.back().tick);
          CHECK(r.own_task);
          CHECK(r.own_team_size == 2);
          CHECK(r.own_dur == 90);
          CHECK(r.own_wait == wait);
          CHECK(r.own_work);
          CHECK(r.own_work_type == 10);
          CHECK(r.own_work_loop);
          CHECK(r.own_work_busy == 20);
          CHECK_FALSE(r.own_work_row);  // rows: with_rows (the constructs table) only
          CHECK(r.own_work_codeptr == 0);
          CHECK(f->implicit_tasks == 1);
          CHECK(f->busy == 80);
        }
        CHECK(one.parallels[0].seq == whole.parallels[0].seq);
        continue;
      }
      if (v.work) {  // a worker's task that ran a work construct is a row for the join
        for (const ThreadFold* f : {&one, &whole}) {
          REQUIRE(f->implicits.size() == 1);
          const kob::engine::ImplicitRow& r = f->implicits[0];
          CHECK(r.start == 1010);
          CHECK(r.end == r.start + 90);
          CHECK(r.wait == wait);
          CHECK(r.piece_count == 1);
          REQUIRE(r.part_count == 1);
          const kob::engine::WorkPiece& w = f->parts[r.parts];
          CHECK(w.type == 10);
          CHECK(w.loop);
          CHECK(w.busy == 20);
          CHECK_FALSE(w.has_row);  // rows: with_rows (the constructs table) only
        }
        continue;
      }
      if (own) {
        for (const ThreadFold* f : {&one, &whole}) {
          REQUIRE(f->parallels.size() == 1);
          const kob::engine::ParallelRow& r = f->parallels[0];
          CHECK(r.id == 7);
          CHECK(r.start == 1010);
          CHECK(r.end == recs.back().tick);
          CHECK(r.codeptr == 0x5000);
          CHECK(r.own_task);
          CHECK(r.own_team_size == 2);
          CHECK(r.own_dur == 90);
          CHECK(r.own_wait == wait);
          CHECK(f->implicit_tasks == 1);
          CHECK(f->busy == 80);
          CHECK(f->implicits.empty());
          CHECK(f->pieces.empty());
        }
        CHECK(one.parallels[0].seq == whole.parallels[0].seq);
      } else {
        for (const ThreadFold* f : {&one, &whole}) {
          CHECK(f->parallels.empty());
          REQUIRE(f->implicits.size() == 1);
          const kob::engine::ImplicitRow& r = f->implicits[0];
          CHECK(r.parallel_id == 7);
          CHECK(r.start == 1010);
          CHECK(r.end == 1100);
          CHECK(r.wait == wait);
          CHECK(r.last_start == 1045);
          CHECK(r.last_end == 1055);
          CHECK(r.team_size == 2);
          CHECK(r.level == 0);
          CHECK(r.track == 1);
          CHECK(r.part_count == 0);
          CHECK_FALSE(r.open);
          REQUIRE(r.piece_count == 1);
          const kob::engine::SyncPiece& y = f->pieces[r.pieces];
          CHECK(y.kind == v.kind);
          CHECK(y.in_kernel);
          CHECK(y.codeptr == 0x4000);
          CHECK(y.start == 1040);
          CHECK(y.end == 1040 + barrier);
          CHECK(y.wait == wait);
          CHECK(y.last_start == 1045);
          CHECK(y.last_end == 1055);
        }
      }
    }
  }
}

TEST_CASE("thread fold: a second task of a region on its own thread, with a loop, leaves a row, taken whole or event by event") {
  // Region 7 on one thread: its task A (one barrier) goes with the region's row; a task B of the
  // same region after it, with a loop, cannot (the row holds one task): it leaves a row of its
  // own, as a task with a work construct did before own tasks could hold one. Not a decline.
  using S = fields::OmpSync;
  using T = fields::OmpImplicitTask;
  Recorder rec;
  Record& p = rec.add(Ev::OmpParallelBegin, 10);  // 1010
  fields::OmpParallel::parallel_id.set(p, 7);
  fields::OmpParallel::requested_team_size.set(p, 2);
  fields::OmpParallel::codeptr.set(p, 0x5000);
  const auto task = [&](bool loop) {
    const std::uint64_t t0 = rec.now + 10;
    Record& b = rec.add(Ev::OmpImplicitTaskBegin, 10);
    T::parallel_id.set(b, 7);
    T::team_size.set(b, 2);
    T::flags.set(b, 2);
    std::uint64_t step = 30;
    if (loop) {  // the loop from t0 + 2 to t0 + 22
      Record& wb = rec.add(Ev::OmpWorkBegin, 2);
      fields::OmpWork::work_type.set(wb, 10);
      fields::OmpWork::parallel_id.set(wb, 7);
      fields::OmpWork::codeptr.set(wb, 0x6000);
      Record& d = rec.add(Ev::OmpDispatch, 5);
      fields::OmpDispatch::kind.set(d, 3);
      fields::OmpDispatch::parallel_id.set(d, 7);
      Record& wx = rec.add(Ev::OmpWorkEnd, 15);
      fields::OmpWork::work_type.set(wx, 10);
      fields::OmpWork::parallel_id.set(wx, 7);
      step = 8;
    }
    Record& y = rec.add(Ev::OmpSyncBegin, step);  // t0 + 30
    S::kind.set(y, 9);
    S::parallel_id.set(y, 7);
    S::codeptr.set(y, 0x4000);
    S::wait_begin_step.set(y, kob::fold::step(t0 + 35, t0 + 30));
    S::wait_end_step.set(y, kob::fold::step(t0 + 45, t0 + 35));
    S::end_step.set(y, kob::fold::step(t0 + 50, t0 + 45));
    Record& x = rec.add(Ev::OmpImplicitTaskEnd, 60);  // t0 + 90
    T::parallel_id.set(x, 7);
  };
  task(false);  // A: 1020 .. 1110
  task(true);   // B: 1120 .. 1210
  fields::OmpParallel::parallel_id.set(rec.add(Ev::OmpParallelEnd, 10), 7);
  ThreadFold one(0, 0, kob::CodeRange{}, false);
  ThreadFold whole(0, 0, kob::CodeRange{}, false);
  feed(one, rec.recs, 1);
  feed(whole, rec.recs, 64);
  for (const ThreadFold* f : {&one, &whole}) {
    REQUIRE_MESSAGE(!f->declined(), f->why());
    REQUIRE(f->parallels.size() == 1);
    const kob::engine::ParallelRow& r = f->parallels[0];
    CHECK(r.own_task);
    CHECK(r.own_dur == 90);  // task A's
    CHECK_FALSE(r.own_work);
    CHECK(f->implicit_tasks == 1);
    REQUIRE(f->implicits.size() == 1);
    const kob::engine::ImplicitRow& b = f->implicits[0];
    CHECK(b.start == 1120);
    CHECK(b.end == 1210);
    CHECK(b.piece_count == 0);  // its barrier folded at once, on its region's thread
    REQUIRE(b.part_count == 1);
    CHECK(f->parts[b.parts].busy == 20);
    CHECK(f->sync[9].count == 2);
    CHECK(f->work[10].count == 1);
  }
}
