// Folded sync regions (common/record/record_fold.hpp): what a reader makes of them, and that the
// codec stores a 2-thread OpenMP kernel's folded records in a few bytes each.
#include <doctest/doctest.h>

#include <vector>

#include "common/record/record_codec.hpp"
#include "common/record/record_fold.hpp"
#include "helpers.hpp"

using kob::Ev;
using kob::Record;
using kob_test::rec;
using Sync = kob::fields::OmpSync;

namespace {
// A barrier folded up to `steps` steps (0: begin only): begin at 1000, wait from 1010 to 1500,
// end at 1520; parallel 7, kernel 3, task 0.
Record barrier(unsigned steps) {
  Record r = rec(1000, Ev::OmpSyncBegin, 0, {7, 3, 0}, 1);
  if (steps >= 1) Sync::wait_begin_step.set(r, kob::fold::step(1010, 1000));
  if (steps >= 2) Sync::wait_end_step.set(r, kob::fold::step(1500, 1010));
  if (steps >= 3) Sync::end_step.set(r, kob::fold::step(1520, 1500));
  return r;
}
}  // namespace

TEST_CASE("fold: a folded barrier unfolds into its begin, wait begin, wait end and end, in place among others") {
  std::vector<Record> recs = {rec(900, Ev::OmpImplicitTaskBegin, 0, {7, 3}), barrier(3), rec(1600, Ev::OmpImplicitTaskEnd, 0, {7, 3})};
  CHECK(kob::fold::count(recs[1]) == 4);
  const std::size_t n = kob::fold::unfold_all(recs, recs.size());
  REQUIRE(n == 6);
  REQUIRE(recs.size() == 6);
  const Ev types[] = {Ev::OmpImplicitTaskBegin, Ev::OmpSyncBegin, Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd, Ev::OmpSyncEnd,
                      Ev::OmpImplicitTaskEnd};
  const std::uint64_t ticks[] = {900, 1000, 1010, 1500, 1520, 1600};
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(recs[i].type == types[i]);
    CHECK(recs[i].tick == ticks[i]);
    CHECK(Sync::parallel_id.get(recs[i]) == 7);
    CHECK(Sync::kernel.get(recs[i]) == 3);
    CHECK(Sync::wait_begin_step.get(recs[i]) == 0);  // no step fields left over
    CHECK(Sync::wait_end_step.get(recs[i]) == 0);
    CHECK(Sync::end_step.get(recs[i]) == 0);
  }
  CHECK(Sync::kind.get(recs[1]) == 1);
  CHECK(Sync::kind.get(recs[4]) == 1);
}

TEST_CASE("fold: a region cut off after any step gives the steps done; a reduction folds its end without a wait") {
  for (unsigned steps = 0; steps <= 3; ++steps) {
    std::vector<Record> recs = {barrier(steps)};
    CHECK(kob::fold::unfold_all(recs, 1) == 1 + steps);
    CHECK(recs.size() == 1 + steps);
    CHECK(recs.back().tick == (steps == 0 ? 1000u : steps == 1 ? 1010u : steps == 2 ? 1500u : 1520u));
  }
  Record reduction = rec(2000, Ev::OmpSyncBegin, 0, {7, 3, 0}, 6);
  Sync::end_step.set(reduction, kob::fold::step(2040, 2000));
  std::vector<Record> recs = {reduction};
  REQUIRE(kob::fold::unfold_all(recs, 1) == 2);
  CHECK(recs[1].type == Ev::OmpSyncEnd);
  CHECK(recs[1].tick == 2040);
  CHECK(Sync::kind.get(recs[1]) == 6);
}

TEST_CASE("fold: damaged step values unfold without trouble; nothing else is touched") {
  Record bad = rec(5, Ev::OmpSyncBegin, 0, {1, 2, 3, ~0ull, 0, ~0ull});
  std::vector<Record> recs = {rec(1, Ev::KernelBegin, 0, {9, 0, 0, 4, 4, 4}), bad};
  REQUIRE(kob::fold::unfold_all(recs, 2) == 4);
  CHECK(recs[0].u[3] == 4);  // other types keep u[3..5]
  CHECK(recs[2].type == Ev::OmpSyncWaitBegin);
  CHECK(recs[2].tick == 5 + ~0ull - 1);  // wraps, as unsigned
  CHECK(recs[3].type == Ev::OmpSyncEnd);
  std::vector<Record> none = {rec(1, Ev::KernelBegin, 0, {9})};
  CHECK(kob::fold::unfold_all(none, 1) == 1);
}

TEST_CASE("codec: a 2-thread OpenMP-backend kernel's 10 records take at most 6.5 bytes each (lanes)") {
  // What the hot path records for one kernel (ticks a few hundred apart, as TSC ticks are), the
  // master thread's and the worker's records in two blocks as the writer codes them.
  std::vector<Record> master, worker;
  std::uint64_t t = 1ull << 40;
  for (std::uint64_t k = 1; k <= 1000; ++k) {
    const std::uint64_t par = 2 * k, wait = 300 + (k * 37) % 200;
    master.push_back(rec(t += 400, Ev::KernelBegin, 12, {k, 0}));
    master.push_back(rec(t += 250, Ev::OmpParallelBegin, 2, {par, k, 0, 0x7f0012345678ull}));
    master.push_back(rec(t += 120, Ev::OmpImplicitTaskBegin, 0, {par, k, 2}, 2));
    Record b = rec(t += 600, Ev::OmpSyncBegin, 0, {par, k, 0}, 1);
    Sync::wait_begin_step.set(b, kob::fold::step(t + 20, t));
    Sync::wait_end_step.set(b, kob::fold::step(t + 20 + wait, t + 20));
    Sync::end_step.set(b, kob::fold::step(t + 40 + wait, t + 20 + wait));
    master.push_back(b);
    t += 40 + wait;
    master.push_back(rec(t += 30, Ev::OmpImplicitTaskEnd, 0, {par, k}, 2));
    master.push_back(rec(t += 60, Ev::OmpParallelEnd, 0, {par, k}));
    master.push_back(rec(t += 50, Ev::KernelEnd, 0, {k}));
    worker.push_back(rec(t - 800, Ev::OmpImplicitTaskBegin, 1, {par, k, 2}, 2));
    Record w = rec(t - 200, Ev::OmpSyncBegin, 0, {par, k, 0}, 1);
    Sync::wait_begin_step.set(w, kob::fold::step(t - 180, t - 200));
    Sync::wait_end_step.set(w, kob::fold::step(t - 100, t - 180));
    Sync::end_step.set(w, kob::fold::step(t - 90, t - 100));
    worker.push_back(w);
    worker.push_back(rec(t - 80, Ev::OmpImplicitTaskEnd, 1, {par, k}, 2));
  }
  std::size_t bytes = 0;
  for (const auto* recs : {&master, &worker}) {
    std::vector<std::uint8_t> buf(recs->size() * kob::codec::kMaxRecordBytes);
    const std::size_t n = kob::codec::encode(recs->data(), recs->size(), recs->front().tick, buf.data());
    std::vector<Record> back;
    CHECK(kob::codec::decode(buf.data(), n, recs->size(), recs->front().tick, [&](const Record& r) { back.push_back(r); }) ==
          recs->size());
    REQUIRE(back.size() == recs->size());
    for (std::size_t i = 0; i < back.size(); ++i) {
      CHECK(back[i].tick == (*recs)[i].tick);
      CHECK(back[i].u[0] == (*recs)[i].u[0]);
      CHECK(back[i].u[1] == (*recs)[i].u[1]);
      CHECK(back[i].u[4] == (*recs)[i].u[4]);
    }
    bytes += n;
  }
  const std::size_t records = master.size() + worker.size();
  MESSAGE("bytes per record: ", static_cast<double>(bytes) / static_cast<double>(records));
  CHECK(records == 10 * 1000);
  // The 5-byte heads and about 12 bytes of fields a kernel; without the lanes each OpenMP record
  // would repeat its region's and kernel's ids (more than 7 bytes a record).
  CHECK(bytes * 2 <= records * 13);
}
