// SummaryFold, OpenMP: parallel regions joined with their implicit tasks and their Kokkos kernel.
#include "common/record/intern.hpp"
#include "common/record/record_fields.hpp"
#include "common/analysis/summary_fold_state.hpp"

namespace kob {

using namespace summary_fold_detail;  // the state's helper types

void SummaryFold::omp_parallel(const OmpParallelSpan& p) {
  State& s = *s_;
  s.expire_waits(p.track, p.start, p.kernel);
  ParallelJoin& j = s.joins[p.id];
  j.have_parallel = true;
  j.requested = p.requested_team_size;
  j.level = p.level;
  j.kernel = p.kernel;
  j.team_size = p.team_size;
  j.track = p.track;
  j.end = p.end;
  // libomp's hidden-helper team is the runtime's own machinery (it runs `target nowait` tasks):
  // its region, implicit tasks, barriers and idle waits stay out of the parallel figures.
  if (!p.hidden_helper) {
    ++s.parallel_regions;
    if (p.kernel == 0) {
      ++s.outside_regions;
      if (p.level == 0) s.outside_time += p.dur();
      j.construct = s.constructs.parallel(p, s.kernel_seen && s.latest_kernel_start >= p.start);
    } else {
      j.counted = true;
      ++s.refs[p.kernel].open;
      OmpAcc acc;
      acc.parallel_regions = 1;
      acc.team_size_sum = p.team_size;
      s.credit(p.kernel, acc, p.track, p.end);
    }
  }
  if (j.tasks >= j.team_size) s.complete(p.id, j);
}

void SummaryFold::omp_implicit_task(const OmpImplicitTaskSpan& i) {
  State& s = *s_;
  OmpTrackAcc& th = s.omp_track(i.track);
  if (i.initial) {
    ++th.initial_tasks;
    return;
  }
  ++th.implicit_tasks;
  if (i.level == 0) th.busy += i.busy();
  ParallelJoin& j = s.joins[i.parallel_id];
  // This thread's part of the work: its worksharing constructs and the explicit tasks it ran (most
  // regions, a Kokkos 3 kernel's, have neither).
  std::uint64_t work = 0;
  if ((th.task_run | th.tasks_created) != 0) {
    work = th.task_run_end > i.start ? th.task_run : 0;
    j.tasks_ran = j.tasks_ran || work != 0;
    j.constructs = j.constructs || work != 0;
    j.creators += th.tasks_created != 0 ? 1 : 0;
    th.task_run = th.tasks_created = th.recent_run = 0;
  }
  for (const ConstructRows::WorkPart& part : j.work)
    if (part.track == i.track) {
      work += part.busy;
      j.constructs = true;
      j.loop = j.loop || part.loop;
    }
  j.max_work = std::max(j.max_work, work);
  j.sum_work += work;
  ++j.tasks;
  j.max_busy = std::max(j.max_busy, i.busy());
  j.sum_busy += i.busy();
  j.task_time += i.dur();
  j.wait_time += std::min(i.wait_ns, i.dur());
  if (j.have_parallel && j.tasks >= j.team_size) s.complete(i.parallel_id, j);
}

void SummaryFold::omp_work(const OmpWorkSpan& w) {
  OmpTrackAcc& th = s_->omp_track(w.track);
  if (th.recent_run != 0 && th.recent_end > w.start) th.task_run -= std::min(th.task_run, th.recent_run);
  th.recent_run = 0;
  OmpCountStats& c = th.work[w.type];
  ++c.count;
  c.total += w.dur();
  const std::uint32_t row = s_->constructs.work(w);
  if (w.parallel_id == 0) return;
  // Nested in its thread's implicit task, so in before the region's join completes.
  ConstructRows::WorkPart& part = ConstructRows::part(s_->joins[w.parallel_id].work, row, w.track);
  part.busy += w.dur();
  part.loop = part.loop || omp_names::is_loop(w.type);
  if (row != ConstructRows::kNoRow) s_->constructs.last_work(w.track) = {row, w.parallel_id, w.end};
}

void SummaryFold::omp_sync(const OmpSyncSpan& y) {
  OmpCountStats& c = s_->omp_track(y.track).sync[y.kind];
  ++c.count;
  c.total += y.dur();
  c.wait += y.wait_ns;
  s_->constructs.sync(y);
  // The implicit barrier that ends a work construct on this thread: its wait is the construct's.
  constexpr std::uint16_t kBarrierImplicitWorkshare = 8;
  if (y.kind != kBarrierImplicitWorkshare) return;
  const ConstructRows::LastWork last = s_->constructs.last_work(y.track);
  if (last.row == ConstructRows::kNoRow || last.parallel_id != y.parallel_id || y.start < last.end) return;
  auto j = s_->joins.find(y.parallel_id);
  if (j == s_->joins.end()) return;
  ConstructRows::WorkPart& part = ConstructRows::part(j->second.work, last.row, y.track);
  part.barrier += y.dur();
  part.wait += std::min(y.wait_ns, y.dur());
  s_->constructs.last_work(y.track).row = ConstructRows::kNoRow;  // one barrier ends it
}

void SummaryFold::omp_task_create(const OmpTaskCreate& c) {
  ++s_->counts.tasks_created;
  OmpTrackAcc& th = s_->omp_track(c.track);
  ++th.tasks_created;
  const std::uint32_t row = s_->constructs.task_create(c);
  if (row != ConstructRows::kNoRow && row == th.last_create_row && c.time >= th.last_create_time)
    s_->constructs.create_gap(row, c.time - th.last_create_time);
  th.last_create_row = row;
  th.last_create_time = c.time;
}

void SummaryFold::omp_task(const OmpTaskSpan& k) {
  // A taskwait-depend task (flag ompt_task_taskwait) never runs: its span is a wait, no stretch.
  if ((k.flags & 0x10) == 0) {
    ++s_->counts.task_stretches;
    OmpTrackAcc& th = s_->omp_track(k.track);
    th.task_run += k.dur();
    th.task_run_end = std::max(th.task_run_end, k.end);
    th.recent_run += k.dur();
    th.recent_end = std::max(th.recent_end, k.end);
    th.last_create_row = ConstructRows::kNoRow;  // a task ran: the next creation's gap holds it
  }
  s_->constructs.task(k);
}

void SummaryFold::omp_mutex(const OmpMutexSpan& m) {
  s_->constructs.mutex(m);
  OmpMutexStats& st = s_->mutex[m.kind];
  count_mutex(st, st.holds, m);
}

void SummaryFold::omp_instant(const OmpInstant& e) {
  OmpSummary& o = s_->counts;
  const Record r = e.record();
  switch (e.type) {
    case Ev::OmpDispatch: ++s_->dispatch[fields::OmpDispatch::kind.get(r)].count; break;
    case Ev::OmpDependences:
      ++o.tasks_with_dependences;
      o.dependences += fields::OmpDependences::count.get(r);
      break;
    case Ev::OmpTaskDependence: ++o.task_dependences; break;
    case Ev::OmpLockInit: ++o.lock_inits; break;
    case Ev::OmpLockDestroy: ++o.lock_destroys; break;
    case Ev::OmpCancel: ++o.cancels; break;
    case Ev::OmpFlush: ++o.flushes; break;
    case Ev::OmpError: ++(fields::OmpError::severity.get(r) == 2 ? o.errors_fatal : o.errors_warning); break;  // ompt_fatal
    default: break;
  }
}

void SummaryFold::finish_omp(const Timeline& t, Summary& s) {
  State& st = *s_;
  const InternTable& names = kob::names();
  const auto helper = [&](std::size_t track) { return track < t.tracks.size() && t.tracks[track].hidden_helper; };
  OmpSummary& o = s.openmp;
  o.records = t.omp_records;
  if (!o.present()) return;
  const OmpSummary& c = st.counts;
  for (const Track& tr : t.tracks) o.hidden_helper_threads += tr.hidden_helper ? 1 : 0;
  std::map<std::uint16_t, OmpCountStats> work, sync;
  const auto merge = [](std::map<std::uint16_t, OmpCountStats>& into, const std::map<std::uint16_t, OmpCountStats>& from) {
    for (const auto& [k, x] : from) {
      OmpCountStats& y = into[k];
      y.count += x.count;
      y.total += x.total;
      y.wait += x.wait;
    }
  };
  for (std::size_t i = 0; i < st.omp_tracks.size(); ++i) {
    if (helper(i)) continue;
    o.initial_tasks += st.omp_tracks[i].initial_tasks;
    o.implicit_tasks += st.omp_tracks[i].implicit_tasks;
    merge(work, st.omp_tracks[i].work);
    merge(sync, st.omp_tracks[i].sync);
  }
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    const Track& tr = t.tracks[i];
    if (tr.hidden_helper) continue;
    switch (tr.omp_thread_type) {
      case 0: break;
      case 1: ++o.threads_initial; break;
      case 2: ++o.threads_worker; break;
      case 3: ++o.threads_other; break;
      default: ++o.threads_unknown; break;
    }
    OmpThreadStats th;
    if (i < st.omp_tracks.size()) {
      th.implicit_tasks = st.omp_tracks[i].implicit_tasks;
      th.busy = st.omp_tracks[i].busy;
    }
    th.index = tr.index;
    th.os_tid = tr.os_tid;
    th.type = omp_names::thread_type(tr.omp_thread_type);
    th.proc = tr.omp_proc;
    th.place = tr.omp_place;
    th.wait = tr.omp_wait_ns;
    if (tr.omp_thread_type != 0 || th.implicit_tasks != 0 || th.wait != 0) o.threads.push_back(th);
  }
  o.parallel_regions = st.parallel_regions;
  o.outside_regions = st.outside_regions;
  o.outside_time = st.outside_time;
  // A team's events come from all its threads: one that dropped events leaves every row short.
  bool lossy_team = false;
  for (const Track& tr : t.tracks) lossy_team = lossy_team || (tr.dropped != 0 && tr.omp_thread_type != 0);
  for (const KernelStats& ks : s.kernels)
    for (const auto& [key, a] : st.omp_kernels) {
      if (names.str(key.name) != ks.name || kernel_kind_name(key.kind) != ks.kind || key.space != ks.space) continue;
      OmpKernelStats k;
      k.name = ks.name;
      k.kind = ks.kind;
      k.device = ks.device;
      auto calls = st.kernels.find(key);
      k.calls = calls == st.kernels.end() ? 0 : calls->second.calls;
      static_cast<OmpTeamStats&>(k) = a;
      k.partial = ks.partial || lossy_team;
      o.kernels.push_back(k);
    }
  o.constructs = st.constructs.result(lossy_team);
  for (auto& [k, x] : work) {
    o.work.push_back(x);
    o.work.back().name = omp_names::work(k);
  }
  for (auto& [k, x] : sync) {
    o.sync.push_back(x);
    o.sync.back().name = omp_names::sync(k);
  }
  for (auto& [k, x] : st.dispatch) {
    o.dispatch.push_back(x);
    o.dispatch.back().name = omp_names::dispatch(k);
  }
  o.tasks_created = c.tasks_created;
  o.task_stretches = c.task_stretches;
  o.tasks_completed = t.omp_tasks_completed;
  o.tasks_cancelled = t.omp_tasks_cancelled;
  o.tasks_discarded = t.omp_tasks_discarded;
  o.errors_warning = c.errors_warning;
  o.errors_fatal = c.errors_fatal;
  o.dependences = c.dependences;
  o.tasks_with_dependences = c.tasks_with_dependences;
  o.task_dependences = c.task_dependences;
  o.lock_inits = c.lock_inits;
  o.lock_destroys = c.lock_destroys;
  o.cancels = c.cancels;
  o.flushes = c.flushes;
  for (auto& [k, m] : st.mutex) {
    o.mutex.push_back(m);
    o.mutex.back().kind = omp_names::mutex(k);
  }
}

}  // namespace kob
