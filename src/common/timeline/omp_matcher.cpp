#include "common/timeline/omp_matcher.hpp"

#include <algorithm>
#include <string>

#include "common/record/record_fields.hpp"
#include "common/timeline/omp_names.hpp"

namespace kob::builder {

namespace {

using omp_names::is_barrier;
using omp_names::is_loop;

std::uint64_t overlap(std::uint64_t ws, std::uint64_t we, std::uint64_t from, std::uint64_t to) {
  const std::uint64_t a = std::max(ws, from), b = std::min(we, to);
  return b > a ? b - a : 0;
}

// An instant's code address (0: its type has none).
std::uint64_t code_address(const Event& r) {
  switch (r.type) {
    case Ev::OmpLockInit:
    case Ev::OmpLockDestroy:
      return fields::OmpMutex::codeptr.get(r);
    case Ev::OmpError:
      return fields::OmpError::codeptr.get(r);
    case Ev::OmpCancel:
      return fields::OmpCancel::codeptr.get(r);
    case Ev::OmpFlush:
      return fields::OmpFlush::codeptr.get(r);
    case Ev::OmpControlTool:
      return fields::OmpControlTool::codeptr.get(r);
    default:
      return 0;
  }
}

// The Kokkos kernel an instant is shown with (0: none; a lock init or destroy records one, but a
// lock outlives the kernel it was made in).
std::uint64_t instant_kernel(const Event& r) {
  switch (r.type) {
    case Ev::OmpDispatch:
      return fields::OmpDispatch::kernel.get(r);
    case Ev::OmpCancel:
      return fields::OmpCancel::kernel.get(r);
    case Ev::OmpFlush:
      return fields::OmpFlush::kernel.get(r);
    case Ev::OmpError:
      return fields::OmpError::kernel.get(r);
    default:
      return 0;
  }
}

}  // namespace

std::uint32_t OmpMatcher::ThreadState::open_implicit() const {
  std::uint32_t n = 0;
  for (const auto& i : implicit) n += i.span.initial ? 0 : 1;
  return n;
}

long OmpMatcher::ThreadState::find_mutex(const std::vector<Acquire>& v, std::uint16_t fam, std::uint64_t wait_id) const {
  for (std::size_t j = v.size(); j-- > 0;)
    if (v[j].span.kind == fam && v[j].span.wait_id == wait_id) return static_cast<long>(j);
  return -1;
}

// A wait ended: it counts for the thread, for each implicit task open on it, and for the
// innermost sync region of the same kind.
void OmpMatcher::ThreadState::add_wait(std::uint16_t kind, std::uint64_t start, std::uint64_t end) {
  const std::uint64_t d = end - std::min(start, end);
  wait_total += d;
  for (auto& i : implicit) {
    i.span.wait_ns += d;
    i.last = {start, end};
  }
  const long y = find_top(
      sync, [&](const SyncRec& x) { return x.span.kind == kind; },
      [&](const SyncRec& x) { return is_barrier(kind) && is_barrier(x.span.kind); });
  if (y >= 0) {
    sync[std::size_t(y)].span.wait_ns += d;
    sync[std::size_t(y)].last = {start, end};
  }
}

void OmpMatcher::add_thread(std::uint32_t track) {
  while (threads_.size() <= track) {
    threads_.emplace_back();
    threads_.back().track = static_cast<std::uint32_t>(threads_.size() - 1);
    by_track_.push_back(&threads_.back());
  }
}

std::size_t OmpMatcher::kept() const {
  return open_parallels_.size() + teams_.size() + hidden_regions_.size() + created_.size() + started_.size() +
         early_fulfilled_.size();
}

bool OmpMatcher::can_cut() const {
  if (!created_.empty() || !started_.empty() || !early_fulfilled_.empty()) return false;
  for (const ThreadState& s : threads_)
    if (!s.running.empty()) return false;
  return true;
}

void OmpMatcher::open_state(OpenState& out) const {
  for (const ThreadState& s : threads_) {
    for (const ImplicitRec& i : s.implicit) out.open.push_back({s.track, i.span.start});
    for (const OmpWorkSpan& w : s.work) out.open.push_back({s.track, w.start});
    for (const SyncRec& y : s.sync) out.open.push_back({s.track, y.span.start});
    // A lock waited for or held goes to a later window whole; the window's own spans must nest
    // with it or lie apart (a hold that crosses a construct already written waits for a later cut).
    for (const Acquire& a : s.acquiring) out.open.push_back({s.track, a.span.start});
    for (const OmpMutexSpan& h : s.holds) out.open.push_back({s.track, h.start});
  }
  for (const auto& [id, p] : open_parallels_) {
    out.open.push_back({p.track, p.start});
    out.open_parallels.push_back(id);
  }
  for (const auto& [id, t] : teams_)
    if (t.region_ended) out.waiting_teams.push_back(id);
}

void OmpMatcher::record_run(const Event* begin, const Event* end, std::size_t n, std::uint32_t track) {
  c_.rest.omp_records += n;
  if (track >= by_track_.size()) add_thread(track);
  ThreadState& s = *by_track_[track];
  for (const Event* e = begin; e < end; e = e->next()) record_in(s, *e, e->ns, track);
}

// An implicit task begins: its team counts it; a thread of the hidden-helper team is marked so.
[[gnu::always_inline]] inline void OmpMatcher::implicit_begin(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track) {
  OmpImplicitTaskSpan i;
  i.start = ns;
  i.track = track;
  using F = fields::OmpImplicitTask;
  i.parallel_id = F::parallel_id.get(r);
  i.kernel = F::kernel.get(r);
  i.thread_num = F::thread_num.get(r);
  i.team_size = F::team_size.get(r);
  i.initial = (F::flags.get(r) & 1) != 0;
  i.level = s.open_implicit();
  if (!i.initial) {
    ++teams_[i.parallel_id].begun;
    if (!hidden_regions_.empty() && hidden_regions_.count(i.parallel_id)) {  // a thread of libomp's hidden-helper team
      c_.rest.tracks[track].hidden_helper = true;
      c_.rest.tracks[track].hidden_helper_num = i.thread_num;
    }
  }
  s.implicit.push_back({i, {}});
}

// A worksharing construct or a masked block begins.
void OmpMatcher::work_begin(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track) {
  OmpWorkSpan w;
  w.start = ns;
  w.track = track;
  const bool masked = r.type == Ev::OmpMaskedBegin;
  w.type = masked ? omp_names::kMasked : fields::OmpWork::work_type.get(r);
  w.parallel_id = fields::InParallel::parallel_id.get(r);
  w.kernel = fields::InParallel::kernel.get(r);
  w.count = masked ? 0 : fields::OmpWork::count.get(r);
  w.codeptr = masked ? fields::OmpMasked::codeptr.get(r) : fields::OmpWork::codeptr.get(r);
  s.work.push_back(w);
}

// ... and ends: the innermost open one of its type (loops of any schedule match each other).
void OmpMatcher::work_end(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint16_t type = r.type == Ev::OmpMaskedEnd ? omp_names::kMasked : fields::OmpWork::work_type.get(r);
  const long i = find_top(
      s.work, [&](const OmpWorkSpan& x) { return x.type == type; },
      [&](const OmpWorkSpan& x) { return is_loop(type) && is_loop(x.type); });
  if (i < 0) {
    c_.problems.add(type == omp_names::kMasked ? "OMPT masked end with no begin on that thread: ignored"
                                               : "OMPT work end with no begin of that type on that thread: ignored");
    return;
  }
  OmpWorkSpan& w = s.work[std::size_t(i)];
  w.end = ns;
  if (w.count == 0 && type != omp_names::kMasked) w.count = fields::OmpWork::count.get(r);
  c_.out.omp_work(w);
  s.work.erase(s.work.begin() + i);
}

// The OpenMP events with no length.
void OmpMatcher::instant(const Event& r, std::uint64_t ns, std::uint32_t track) {
  OmpInstant e;
  e.time = ns;
  e.track = track;
  e.carry(r);
  e.codeptr = code_address(r);
  e.kernel = instant_kernel(r);
  c_.out.omp_instant(e);
}

// A sync region (barrier, taskwait, taskgroup, reduction) begins.
[[gnu::always_inline]] inline void OmpMatcher::sync_begin(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track) {
  OmpSyncSpan y;
  y.start = ns;
  y.track = track;
  using F = fields::OmpSync;
  y.kind = F::kind.get(r);
  y.parallel_id = F::parallel_id.get(r);
  y.kernel = F::kernel.get(r);
  y.task_id = F::task_id.get(r);
  y.codeptr = F::codeptr.get(r);
  s.sync.push_back({y, {}});
}

// A wait inside a sync region ends: it is added to the region it waited in.
[[gnu::always_inline]] inline void OmpMatcher::sync_wait_end(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint16_t kind = fields::OmpSync::kind.get(r);
  const long i = find_top(
      s.waits, [&](const Wait& x) { return x.kind == kind; },
      [&](const Wait& x) { return is_barrier(kind) && is_barrier(x.kind); });
  if (i < 0) {
    c_.problems.add("OMPT sync_region_wait end with no begin of that kind on that thread: ignored");
    return;
  }
  const Wait w = s.waits[std::size_t(i)];
  s.waits.erase(s.waits.begin() + i);
  s.add_wait(w.kind, w.start, ns);
}

// An explicit task is created (an instant; its runs are spans of their own).
void OmpMatcher::task_create(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track) {
  OmpTaskCreate c;
  c.time = ns;
  c.track = track;
  using F = fields::OmpTaskCreate;
  c.task_id = F::task_id.get(r);
  c.kernel = F::kernel.get(r);
  c.flags = F::flags.get(r);
  c.has_dependences = F::has_dependences.get(r);
  c.codeptr = F::codeptr.get(r);
  if (!created_.emplace(c.task_id, Created{creates_, c.flags, c.kernel}).second)
    c_.problems.add("OMPT task_create with a task id already used");
  ++creates_;
  c_.out.omp_task_create(c);
  if (c.flags & kTaskwaitFlag) s.taskwait_creates[c.task_id] = ns;
}

// A thread leaves one task for another: the prior one's run ends, the next one's begins.
void OmpMatcher::task_schedule(const Event& r, std::uint64_t ns, ThreadState& s, std::uint32_t track) {
  using F = fields::OmpTaskSchedule;
  const std::uint64_t prior = F::prior_task_id.get(r), next = F::next_task_id.get(r);
  const std::uint32_t status = F::prior_status.get(r);
  if (prior != 0) schedule_prior(s, ns, prior, status, next);
  if (next != 0) {
    started_.insert(next);
    OmpTaskSpan k;
    k.start = ns;
    k.track = track;
    k.task_id = next;
    k.kernel = F::next_kernel.get(r);
    if (!s.running.emplace(next, k).second) c_.problems.add("OMPT task_schedule starts a task already running on that thread: ignored");
  }
}

// Inlined in record_run's loop: a call per record was a fifth of the matcher's cost.
[[gnu::always_inline]] inline void OmpMatcher::record_in(ThreadState& s, const Event& r, std::uint64_t ns, std::uint32_t track) {
  switch (r.type) {
    case Ev::OmpThreadBegin:
    case Ev::OmpThreadEnd: break;
    case Ev::OmpParallelBegin: parallel_begin(r, ns, s); break;
    case Ev::OmpParallelEnd: parallel_end(r, ns); break;
    case Ev::OmpImplicitTaskBegin: implicit_begin(r, ns, s, track); break;
    case Ev::OmpImplicitTaskEnd: implicit_end(r, ns, s); break;
    case Ev::OmpWorkBegin:
    case Ev::OmpMaskedBegin: work_begin(r, ns, s, track); break;
    case Ev::OmpWorkEnd:
    case Ev::OmpMaskedEnd: work_end(r, ns, s); break;
    case Ev::OmpDispatch:
    case Ev::OmpDependences:
    case Ev::OmpTaskDependence:
    case Ev::OmpLockInit:
    case Ev::OmpLockDestroy:
    case Ev::OmpCancel:
    case Ev::OmpFlush:
    case Ev::OmpControlTool:
    case Ev::OmpError: instant(r, ns, track); break;
    case Ev::OmpSyncBegin: sync_begin(r, ns, s, track); break;
    case Ev::OmpSyncEnd: sync_end(r, ns, s); break;
    case Ev::OmpSyncWaitBegin: s.waits.push_back({fields::OmpSync::kind.get(r), ns}); break;
    case Ev::OmpSyncWaitEnd: sync_wait_end(r, ns, s); break;
    case Ev::OmpTaskCreate: task_create(r, ns, s, track); break;
    case Ev::OmpTaskSchedule: task_schedule(r, ns, s, track); break;
    case Ev::OmpMutexAcquire:
    case Ev::OmpMutexAcquired:
    case Ev::OmpMutexReleased:
    case Ev::OmpNestLock: mutex_record(r, ns, s); break;
    default: break;
  }
}

// libomp's hidden-helper team (it runs `target nowait` and other hidden-helper tasks): its main
// thread, an initial thread of its own, opens one outermost team region from inside the runtime
// itself, so the region's code address lies in the runtime's own object. (libomp 19 also reports
// its own address for nested regions, hence outermost only.) Its threads become tracks of their
// own; the team only ends after the tool has written its files.
void OmpMatcher::parallel_begin(const Event& r, std::uint64_t ns, ThreadState& s) {
  constexpr std::uint32_t kTeamFlag = 0x80000000;  // ompt_parallel_team
  OmpParallelSpan p;
  p.start = ns;
  p.track = s.track;
  using F = fields::OmpParallel;
  p.id = F::parallel_id.get(r);
  p.kernel = F::kernel.get(r);
  p.requested_team_size = F::requested_team_size.get(r);
  p.flags = F::flags.get(r);
  p.level = s.open_implicit();
  p.codeptr = F::codeptr.get(r);
  if (p.level == 0 && (p.flags & kTeamFlag) && runtime_code_.contains(p.codeptr)) {
    p.hidden_helper = true;
    hidden_regions_.insert(p.id);
    c_.rest.tracks[s.track].hidden_helper = true;
  }
  if (!open_parallels_.emplace(p.id, p).second) c_.problems.add("OMPT parallel_begin with a parallel id already open: ignored");
}

void OmpMatcher::parallel_end(const Event& r, std::uint64_t ns) {
  auto it = open_parallels_.find(fields::OmpParallel::parallel_id.get(r));
  if (it == open_parallels_.end()) {
    c_.problems.add("OMPT parallel_end with no parallel_begin: ignored");
    return;
  }
  OmpParallelSpan& p = it->second;
  p.end = ns;
  auto t = teams_.find(p.id);
  p.team_size = t == teams_.end() ? 0 : t->second.begun;
  c_.out.omp_parallel(p);
  if (t != teams_.end()) {
    if (t->second.ended >= t->second.begun) {
      teams_.erase(t);
    } else {  // workers still to report their end: they need the region's end
      t->second.region_ended = true;
      t->second.region_end = ns;
      t->second.region_track = p.track;
    }
  }
  open_parallels_.erase(it);
}

std::uint64_t OmpMatcher::cut_of(const OmpImplicitTaskSpan& i, std::uint64_t end) const {
  if (i.initial) return 0;
  auto it = teams_.find(i.parallel_id);
  if (it == teams_.end() || !it->second.region_ended || it->second.region_track == i.track) return 0;
  const std::uint64_t cut = it->second.region_end;
  return cut >= i.start && cut < end ? cut : 0;
}

void OmpMatcher::team_task_ended(std::uint64_t parallel_id) {
  auto it = teams_.find(parallel_id);
  if (it == teams_.end()) return;
  ++it->second.ended;
  if (it->second.region_ended && it->second.ended >= it->second.begun) teams_.erase(it);
}

// libomp reports the end of a worker's implicit task (and of the implicit barrier it waits in)
// only when the next parallel region releases the thread, or never for the last one. The region
// is over for the worker when the region ends: cut there, the last wait shortened to match.
void OmpMatcher::implicit_end(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint64_t parallel_id = fields::OmpImplicitTask::parallel_id.get(r);
  const std::uint32_t thread_num = fields::OmpImplicitTask::thread_num.get(r);
  const long i = find_top(
      s.implicit, [&](const ImplicitRec& x) { return x.span.parallel_id == parallel_id && x.span.thread_num == thread_num; },
      [&](const ImplicitRec& x) { return x.span.parallel_id == parallel_id; });
  if (i < 0) {
    c_.problems.add("OMPT implicit_task end with no begin on that thread: ignored");
    return;
  }
  ImplicitRec rec = s.implicit[std::size_t(i)];
  s.implicit.erase(s.implicit.begin() + i);
  rec.span.end = ns;
  if (const std::uint64_t cut = cut_of(rec.span, rec.span.end)) {
    const std::uint64_t less = overlap(rec.last.start, rec.last.end, cut, rec.span.end);
    rec.span.wait_ns -= std::min(less, rec.span.wait_ns);
    s.wait_total -= std::min(less, s.wait_total);
    rec.span.end = cut;
  }
  c_.out.omp_implicit_task(rec.span);
  if (!rec.span.initial) team_task_ended(rec.span.parallel_id);
}

void OmpMatcher::sync_end(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint16_t kind = fields::OmpSync::kind.get(r);
  const long i = find_top(
      s.sync, [&](const SyncRec& x) { return x.span.kind == kind; },
      [&](const SyncRec& x) { return is_barrier(kind) && is_barrier(x.span.kind); });
  if (i < 0) {
    c_.problems.add("OMPT sync_region end with no begin of that kind on that thread: ignored");
    return;
  }
  SyncRec y = s.sync[std::size_t(i)];
  s.sync.erase(s.sync.begin() + i);
  y.span.end = ns;
  // Inside a worker's implicit task whose region already ended (reported late): cut with it.
  for (std::size_t k = s.implicit.size(); k-- > 0;) {
    const OmpImplicitTaskSpan& it = s.implicit[k].span;
    if (it.initial || it.start > y.span.start) continue;
    const std::uint64_t cut = cut_of(it, ns + 1);
    if (cut == 0) continue;
    if (y.span.start <= cut && y.span.end > cut) {
      const std::uint64_t less = overlap(y.last.start, y.last.end, cut, y.span.end);
      y.span.wait_ns -= std::min(less, y.span.wait_ns);
      y.span.end = cut;
    }
    break;
  }
  c_.out.omp_sync(y.span);
}

void OmpMatcher::task_done(std::uint64_t id) {
  created_.erase(id);
  started_.erase(id);
}

void OmpMatcher::give_task(OmpTaskSpan k) {
  auto it = created_.find(k.task_id);
  if (it == created_.end()) {
    ran_uncreated_ = true;
  } else {
    k.create = it->second.ordinal;
    k.flags = it->second.flags;
    k.kernel = it->second.kernel;
  }
  c_.out.omp_task(k);
}

// A task_schedule naming an explicit task as prior (OpenMP 5.1, ompt_task_status_t). Legal
// sequences seen with libomp 19, none of them a problem:
//  - early fulfill: `early_fulfill` (no next) comes from omp_fulfill_event inside the body,
//    which runs on; the stretch ends with `complete` at the body's end.
//  - late fulfill: the body ends with `detach`; `late_fulfill` comes later from the fulfilling
//    thread, when the task completes.
//  - `taskwait depend` and `task if(0) depend` create a task flagged ompt_task_taskwait that
//    never runs and ends with `taskwait_complete` when its dependences are met.
//  - a task discarded by cancellation ends with `cancel` without ever being started.
//  - in a serialized team an untied task's next part is announced as `switch` from itself to
//    itself after a `switch` away from it.
void OmpMatcher::schedule_prior(ThreadState& s, std::uint64_t ns, std::uint64_t prior, std::uint32_t status, std::uint64_t next) {
  const bool completes = omp_names::task_status_completes(status);
  // Counted once per task: an early-fulfilled task still reports `complete` when its body ends.
  if (completes) {
    if (status == kEarlyFulfill) {
      if (early_fulfilled_.insert(prior).second) ++c_.rest.omp_tasks_completed;
    } else if (early_fulfilled_.erase(prior) == 0) {
      ++c_.rest.omp_tasks_completed;
    }
  }
  if (status == kCancel) {
    ++c_.rest.omp_tasks_cancelled;
    if (!started_.count(prior)) ++c_.rest.omp_tasks_discarded;
  }
  if (status == kEarlyFulfill || status == kLateFulfill) {
    OmpInstant e;
    e.time = ns;
    e.track = s.track;
    Record fulfil{};
    fulfil.type = Ev::OmpTaskSchedule;
    fields::OmpTaskSchedule::prior_status.set(fulfil, status);
    fields::OmpTaskSchedule::prior_task_id.set(fulfil, prior);
    e.carry(fulfil);
    c_.out.omp_instant(e);
    if (status == kLateFulfill) task_done(prior);
    return;
  }
  const bool final_status = (completes && !early_fulfilled_.count(prior)) || status == kCancel;
  auto it = s.running.find(prior);
  if (it != s.running.end()) {
    it->second.end = ns;
    it->second.status = status;
    give_task(it->second);
    s.running.erase(it);
    if (final_status) task_done(prior);
    return;
  }
  if (status == kTaskwaitComplete) {  // shown from its creation to the moment it is met
    auto c = s.taskwait_creates.find(prior);
    if (c != s.taskwait_creates.end()) {
      OmpTaskSpan k;
      k.start = c->second;
      k.end = std::max(ns, c->second);
      k.track = s.track;
      k.task_id = prior;
      k.status = status;
      give_task(k);
      s.taskwait_creates.erase(c);
    }
    task_done(prior);
    return;
  }
  if (status == kCancel) {  // discarded before it started
    task_done(prior);
    return;
  }
  if (status == kSwitch && next == prior) return;  // an untied task's next part
  c_.problems.add("OMPT task_schedule names as prior a task not running on that thread: ignored");
}

// An omp_test_lock / omp_test_nest_lock that did not get the lock: a wait with no hold, shown as a
// point at the try (the runtime reports no end for it).
void OmpMatcher::failed_try(const OmpMutexSpan& acquire) {
  OmpMutexSpan w = acquire;
  w.end = w.start;
  w.failed = true;
  c_.out.omp_mutex(w);
}

// A mutex released by another thread than the one that acquired it (an untied task moved): the
// latest hold of it that began before, on any thread.
void OmpMatcher::foreign_release(std::uint64_t ns, std::uint16_t kind, std::uint64_t wait_id) {
  OmpMutexSpan* best = nullptr;
  ThreadState* owner = nullptr;
  for (ThreadState& s : threads_)
    for (OmpMutexSpan& h : s.holds)
      if (!h.nested && h.kind == kind && h.wait_id == wait_id && h.start <= ns && (!best || h.start > best->start)) {
        best = &h;
        owner = &s;
      }
  if (!best) {
    c_.problems.add("OMPT mutex_released with no mutex_acquired: ignored");
    return;
  }
  best->end = ns;
  c_.out.omp_mutex(*best);
  owner->holds.erase(owner->holds.begin() + (best - owner->holds.data()));
}

void OmpMatcher::mutex_record(const Event& r, std::uint64_t ns, ThreadState& s) {
  switch (r.type) {
    case Ev::OmpMutexAcquire: mutex_acquire(r, ns, s); break;
    case Ev::OmpMutexAcquired: mutex_acquired(r, ns, s); break;
    case Ev::OmpMutexReleased: mutex_released(r, ns, s); break;
    case Ev::OmpNestLock: nest_lock(r, ns, s); break;
    default: break;
  }
}

void OmpMatcher::mutex_acquire(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint32_t track = s.track;
  using M = fields::OmpMutex;
  const std::uint16_t fam = omp_names::mutex_family(M::kind.get(r));
  const long i = s.find_mutex(s.acquiring, fam, M::wait_id.get(r));
  if (i >= 0) {
    if (s.acquiring[std::size_t(i)].test) {
      failed_try(s.acquiring[std::size_t(i)].span);
    } else {
      c_.problems.add("OMPT mutex_acquire twice without mutex_acquired: the first ignored");
    }
    s.acquiring.erase(s.acquiring.begin() + i);
  }
  Acquire a;
  a.span.start = ns;
  a.span.track = track;
  a.span.kind = fam;
  a.span.wait_id = M::wait_id.get(r);
  a.span.kernel = M::kernel.get(r);
  a.span.codeptr = M::codeptr.get(r);
  a.test = omp_names::is_test_mutex(M::kind.get(r));
  s.acquiring.push_back(a);
}

void OmpMatcher::mutex_acquired(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint32_t track = s.track;
  using M = fields::OmpMutex;
  const std::uint16_t fam = omp_names::mutex_family(M::kind.get(r));
  const long i = s.find_mutex(s.acquiring, fam, M::wait_id.get(r));
  std::uint64_t codeptr = 0;
  if (i >= 0) {
    OmpMutexSpan w = s.acquiring[std::size_t(i)].span;
    s.acquiring.erase(s.acquiring.begin() + i);
    w.end = ns;
    codeptr = w.codeptr;
    c_.out.omp_mutex(w);
  } else {
    c_.problems.add("OMPT mutex_acquired with no mutex_acquire on that thread: hold shown without a wait");
  }
  OmpMutexSpan h;
  h.codeptr = codeptr;
  h.start = ns;
  h.track = track;
  h.kind = fam;
  h.hold = true;
  h.wait_id = M::wait_id.get(r);
  h.kernel = M::kernel.get(r);
  s.holds.push_back(h);
}

void OmpMatcher::mutex_released(const Event& r, std::uint64_t ns, ThreadState& s) {
  using M = fields::OmpMutex;
  const std::uint16_t fam = omp_names::mutex_family(M::kind.get(r));
  long i = -1;
  for (std::size_t j = s.holds.size(); j-- > 0;)
    if (!s.holds[j].nested && s.holds[j].kind == fam && s.holds[j].wait_id == M::wait_id.get(r)) {
      i = static_cast<long>(j);
      break;
    }
  if (i < 0) {
    foreign_release(ns, fam, M::wait_id.get(r));
    return;
  }
  s.holds[std::size_t(i)].end = ns;
  c_.out.omp_mutex(s.holds[std::size_t(i)]);
  s.holds.erase(s.holds.begin() + i);
}

void OmpMatcher::nest_lock(const Event& r, std::uint64_t ns, ThreadState& s) {
  const std::uint32_t track = s.track;
  using N = fields::OmpNestLock;
  constexpr std::uint16_t kNest = 3;
  if (N::endpoint.get(r) == 1) {  // begin: the thread sets a nest lock it already holds
    const long i = s.find_mutex(s.acquiring, kNest, N::wait_id.get(r));
    std::uint64_t codeptr = 0;
    if (i >= 0) {
      OmpMutexSpan w = s.acquiring[std::size_t(i)].span;
      s.acquiring.erase(s.acquiring.begin() + i);
      w.end = ns;  // the wait of the nested set (nested marks holds only)
      codeptr = w.codeptr;
      c_.out.omp_mutex(w);
    }
    OmpMutexSpan h;
    h.codeptr = codeptr;
    h.start = ns;
    h.track = track;
    h.kind = kNest;
    h.hold = true;
    h.nested = true;
    h.wait_id = N::wait_id.get(r);
    h.kernel = N::kernel.get(r);
    s.holds.push_back(h);
  } else {
    long i = -1;
    for (std::size_t j = s.holds.size(); j-- > 0;)
      if (s.holds[j].nested && s.holds[j].wait_id == N::wait_id.get(r)) {
        i = static_cast<long>(j);
        break;
      }
    if (i < 0) {
      c_.problems.add("OMPT nest_lock end with no nest_lock begin on that thread: ignored");
      return;
    }
    s.holds[std::size_t(i)].end = ns;
    c_.out.omp_mutex(s.holds[std::size_t(i)]);
    s.holds.erase(s.holds.begin() + i);
  }
}

template <class S>
S OmpMatcher::close_open(S s) const {
  if constexpr (requires { s.span; }) {
    end_->close(s.span);
  } else {
    end_->close(s);
  }
  return s;
}

// What a hidden-helper thread still has open when the files are written (the team ends after
// that): shown until the end of the run, as the team really runs on.
void OmpMatcher::close_all_quietly(ThreadState& s, bool lost_ends) {
  if (!lost_ends) {
    for (const Wait& w : s.waits) s.add_wait(w.kind, w.start, end_->time(s.track, w.start));
    for (SyncRec& y : s.sync) c_.out.omp_sync(close_open(y).span);
    for (OmpWorkSpan& w : s.work) c_.out.omp_work(close_open(w));
    for (ImplicitRec& i : s.implicit) c_.out.omp_implicit_task(close_open(i).span);
    for (auto& [id, k] : s.running) give_task(close_open(k));
    for (OmpMutexSpan& h : s.holds) c_.out.omp_mutex(close_open(h));
  }
  for (Acquire& a : s.acquiring)
    if (a.test) failed_try(a.span);
  s.waits.clear();
  s.sync.clear();
  s.work.clear();
  s.implicit.clear();
  s.running.clear();
  s.holds.clear();
  s.acquiring.clear();
  c_.rest.tracks[s.track].omp_wait_ns = s.wait_total;
}

void OmpMatcher::finish(bool lost_ends, const OpenEnd& open_end) {
  end_ = &open_end;
  // Workers whose last implicit task (and its barrier) libomp never reported ended: cut at the
  // end of their region, waits included.
  for (ThreadState& s : threads_) {
    while (!s.implicit.empty()) {
      const OmpImplicitTaskSpan& top = s.implicit.back().span;
      const std::uint64_t cut = cut_of(top, ~std::uint64_t(0));
      if (cut == 0) break;
      for (std::size_t w = s.waits.size(); w-- > 0 && s.waits[w].start >= top.start;) {
        s.add_wait(s.waits[w].kind, s.waits[w].start, std::max(cut, s.waits[w].start));
        s.waits.erase(s.waits.begin() + long(w));
      }
      while (!s.sync.empty() && s.sync.back().span.start >= top.start) {
        OmpSyncSpan y = s.sync.back().span;
        y.end = std::max(cut, y.start);
        c_.out.omp_sync(y);
        s.sync.pop_back();
      }
      OmpImplicitTaskSpan i = top;
      i.end = std::max(cut, i.start);
      c_.out.omp_implicit_task(i);
      s.implicit.pop_back();
    }
  }

  auto unended = [&](const char* what) {
    c_.problems.add(lost_ends ? discarded_unended(what) : end_->never_ended(what));
  };
  for (ThreadState& s : threads_) {
    if (s.track < c_.rest.tracks.size() && c_.rest.tracks[s.track].hidden_helper) {  // the team outlives the write
      close_all_quietly(s, lost_ends);
      continue;
    }
    // Waits first: they count into the syncs and implicit tasks still open around them. A
    // worker's last implicit barrier (or a league's teams barrier) is reported ended only when
    // the next parallel region starts: it runs to the end of the run, silently.
    const bool worker = s.track < c_.rest.tracks.size() && c_.rest.tracks[s.track].omp_thread_type == 2;
    auto worker_barrier = [&](std::uint16_t kind) { return worker && omp_names::worker_last_barrier(kind); };
    for (const Wait& w : s.waits) {
      if (!worker_barrier(w.kind)) unended("an OpenMP sync-region wait");
      if (!lost_ends) s.add_wait(w.kind, w.start, end_->time(s.track, w.start));
    }
    for (SyncRec& y : s.sync) {
      if (!worker_barrier(y.span.kind)) unended("an OpenMP sync region");
      if (!lost_ends) c_.out.omp_sync(close_open(y).span);
    }
    for (OmpWorkSpan& w : s.work) {
      unended(w.type == omp_names::kMasked ? "an OpenMP masked region" : "an OpenMP work construct");
      if (!lost_ends) c_.out.omp_work(close_open(w));
    }
    for (ImplicitRec& i : s.implicit) {
      if (i.span.initial) {  // lives as long as the program: silently until the end
        c_.out.omp_implicit_task(close_open(i).span);
        continue;
      }
      unended("an OpenMP implicit task");
      if (!lost_ends) c_.out.omp_implicit_task(close_open(i).span);
    }
    for (auto& [id, k] : s.running) {
      unended("an OpenMP explicit task");
      if (!lost_ends) give_task(close_open(k));
    }
    for (Acquire& a : s.acquiring) {
      if (a.test) {
        failed_try(a.span);
        continue;
      }
      unended("an OpenMP mutex acquire");
      if (!lost_ends) c_.out.omp_mutex(close_open(a.span));
    }
    for (OmpMutexSpan& h : s.holds) {
      unended("an OpenMP mutex hold");
      if (!lost_ends) c_.out.omp_mutex(close_open(h));
    }
    if (s.track < c_.rest.tracks.size()) c_.rest.tracks[s.track].omp_wait_ns = s.wait_total;
  }
  for (auto& [id, p] : open_parallels_) {
    if (!p.hidden_helper) unended("an OpenMP parallel region");
    if (lost_ends) continue;
    auto t = teams_.find(p.id);
    p.team_size = t == teams_.end() ? 0 : t->second.begun;
    c_.out.omp_parallel(close_open(p));
  }
  open_parallels_.clear();
  if (ran_uncreated_ && creates_ != 0) c_.problems.add("an OpenMP explicit task ran without a task_create");
}

}  // namespace kob::builder
