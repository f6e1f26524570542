// Legal but unusual OMPT sequences (as libomp 19 sends them): task statuses, failed test
// locks, holds across constructs, error events. Synthetic records, no runtime.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/formats/trace_writer.hpp"
#include "helpers.hpp"

using kob::Ev;

namespace {

constexpr std::uint32_t kComplete = 1, kCancel = 3, kDetach = 4, kEarly = 5, kLate = 6, kSwitch = 7, kTaskwaitDone = 8;

// task_schedule: prior task id (0: implicit), status, next task id (0: implicit or none).
void sched(kob_test::Synth& s, int tr, std::uint64_t t, std::uint64_t prior, std::uint32_t status, std::uint64_t next) {
  s.rec(tr, t, Ev::OmpTaskSchedule, status, {prior, 0, next});
}
void create(kob_test::Synth& s, int tr, std::uint64_t t, std::uint64_t id, std::uint32_t flags = 4) {
  s.rec(tr, t, Ev::OmpTaskCreate, flags, {id, 0});
}

}  // namespace

TEST_CASE("omp context: a task leaves the kernel stack only when it is on top") {
  kob::OmpContext c;
  c.push(10);  // implicit task of kernel 10
  // untied task 4 in a serialized team: in, away, then announced as itself to itself, complete
  c.push(11, 4);
  c.pop_task(4);
  CHECK(c.depth == 1);
  c.pop_task(4);  // not on top: a part that starts without having left
  c.push(11, 4);
  c.pop_task(4);
  CHECK(c.depth == 1);
  c.pop_task(9);  // a task discarded by cancellation never started here
  CHECK(c.depth == 1);
  CHECK(c.kernel() == 10);
}

TEST_CASE("timeline: detached, taskwait-depend, cancelled and untied tasks give no problem") {
  kob_test::RecorderReset reset;
  kob_test::Synth s(2);
  // early fulfill: the fulfill comes from inside the running body; the body ends later
  create(s, 0, 10, 1);
  sched(s, 0, 20, 0, kSwitch, 1);
  sched(s, 0, 30, 1, kEarly, 0);
  sched(s, 0, 90, 1, kComplete, 0);
  // late fulfill: the body ends detached; thread 1 fulfils later
  create(s, 0, 100, 2);
  sched(s, 0, 110, 0, kSwitch, 2);
  sched(s, 0, 120, 2, kDetach, 0);
  sched(s, 1, 200, 2, kLate, 0);
  // taskwait depend: a taskwait task that never runs; task 4 runs while it waits
  create(s, 0, 210, 4);
  create(s, 0, 220, 3, 0x48000010);
  sched(s, 0, 230, 0, kSwitch, 4);
  sched(s, 0, 240, 4, kComplete, 0);
  sched(s, 0, 250, 3, kTaskwaitDone, 0);
  // a task discarded by cancellation
  create(s, 0, 260, 5);
  sched(s, 1, 270, 5, kCancel, 0);
  // an untied task in a serialized team
  create(s, 0, 300, 6, 0x10000004);
  sched(s, 0, 310, 0, kSwitch, 6);
  sched(s, 0, 320, 6, kSwitch, 0);
  sched(s, 0, 330, 6, kSwitch, 6);
  sched(s, 0, 340, 6, kComplete, 0);
  const kob::Timeline t = s.build();
  CHECK(t.problems.empty());
  CHECK(t.omp_tasks_completed == 5);  // 1, 2, 3, 4, 6
  CHECK(t.omp_tasks_cancelled == 1);
  CHECK(t.omp_tasks_discarded == 1);
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> runs;
  for (const kob::OmpTaskSpan& k : t.omp_tasks) runs[k.task_id].push_back({k.start, k.end});
  CHECK(runs[1] == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{20, 90}});    // to the body's end
  CHECK(runs[2] == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{110, 120}});  // the body only
  CHECK(runs[3] == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{220, 250}});  // the wait
  CHECK(runs[6].size() == 2);
  CHECK(runs.count(5) == 0);
  int fulfils = 0;
  using F = kob::fields::OmpTaskSchedule;
  for (const kob::OmpInstant& e : t.omp_instants) {
    if (e.type != Ev::OmpTaskSchedule) continue;
    const kob::Record r = e.record();
    fulfils += (F::prior_task_id.get(r) == 1 && F::prior_status.get(r) == kEarly && e.time == 30) ||
               (F::prior_task_id.get(r) == 2 && F::prior_status.get(r) == kLate && e.time == 200);
  }
  CHECK(fulfils == 2);
}

TEST_CASE("timeline: a failed omp_test_lock is a wait with no hold") {
  kob_test::RecorderReset reset;
  kob_test::Synth s(1);
  s.rec(0, 10, Ev::OmpMutexAcquire, 0, {0x100}, 2);  // test_lock, fails
  s.rec(0, 20, Ev::OmpMutexAcquire, 0, {0x100}, 2);  // tried again: acquired
  s.rec(0, 21, Ev::OmpMutexAcquired, 0, {0x100}, 2);
  s.rec(0, 30, Ev::OmpMutexReleased, 0, {0x100}, 1);
  s.rec(0, 40, Ev::OmpMutexAcquire, 0, {0x200}, 4);  // test_nest_lock, fails, last event
  const kob::Timeline t = s.build();
  CHECK(t.problems.empty());
  int failed = 0, holds = 0;
  for (const kob::OmpMutexSpan& m : t.omp_mutexes) {
    if (m.failed) {
      ++failed;
      CHECK((!m.hold && m.start == m.end));
    }
    holds += m.hold ? 1 : 0;
  }
  CHECK(failed == 2);
  CHECK(holds == 1);
}

TEST_CASE("trace writer: a hold across constructs keeps its span on a hold lane") {
  kob::Timeline t;
  t.tracks = {kob::Track{0, 5, 2}};
  t.t_end = 1000;
  auto x = [](auto s, std::uint64_t a, std::uint64_t b) {
    s.track = 0;
    s.start = a;
    s.end = b;
    return s;
  };
  kob::OmpImplicitTaskSpan task = x(kob::OmpImplicitTaskSpan{}, 0, 1000);
  kob::OmpWorkSpan m1 = x(kob::OmpWorkSpan{}, 100, 200), m2 = x(kob::OmpWorkSpan{}, 600, 700);
  kob::OmpSyncSpan barrier = x(kob::OmpSyncSpan{}, 300, 500);
  kob::OmpMutexSpan hold = x(kob::OmpMutexSpan{}, 150, 650), inner = x(kob::OmpMutexSpan{}, 160, 640);
  hold.hold = inner.hold = true;
  hold.kind = 1;
  inner.kind = 3;
  kob::OmpMutexSpan contained = x(kob::OmpMutexSpan{}, 610, 620);  // nests where it is: stays
  contained.hold = true;
  t.omp_implicit_tasks = {task};
  t.omp_works = {m1, m2};
  t.omp_syncs = {barrier};
  t.omp_mutexes = {hold, inner, contained};
  std::uint64_t clipped = 99;
  const std::string json = kob_test::chrome_trace_text(t, &clipped);
  CHECK(clipped == 0);
  CHECK(kob_test::python_json_check(json, R"PY(
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
holds = [e for e in ev if e.get("cat") == "omp.mutex"]
by = {(e["ts"], e["dur"]): names[e["tid"]] for e in holds}
assert by[(0.15, 0.5)] == "omp thread 0 mutex holds", by
assert by[(0.16, 0.48)] == "omp thread 0 mutex holds", by
assert by[(0.61, 0.01)] == "omp thread 0", by
assert sorted(names.values()) == ["omp thread 0", "omp thread 0 mutex holds"], names
)PY") == 0);
}

TEST_CASE("trace writer: error directive and fulfill instants") {
  kob_test::RecorderReset reset;
  kob_test::Synth s(1);
  s.rec(0, 10, Ev::OmpError, kob_test::nm("disk \"full\""), {0, 0, 11}, 1);
  s.rec(0, 20, Ev::OmpError, kob::InternTable::kNullName, {0, 7, 0}, 2);
  const kob::Timeline t = s.build();
  std::uint64_t clipped = 0;
  CHECK(kob_test::python_json_check(kob_test::chrome_trace_text(t, &clipped), R"PY(
e = [x for x in d["traceEvents"] if x.get("cat") == "omp.error"]
assert [(x["args"]["severity"], x["args"]["message"]) for x in e] == [("warning", 'disk "full"'), ("fatal", None)], e
assert e[1]["args"]["kokkos_kernel"] == 7
)PY") == 0);
}
