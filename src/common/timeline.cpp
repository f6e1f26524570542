#include "common/timeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/clock.hpp"
#include "common/intern.hpp"
#include "common/name_filter.hpp"
#include "common/omp_names.hpp"

namespace kob {

namespace {

struct SectionMark {
  std::uint64_t time;
  std::uint32_t track;
  std::uint32_t section;
  bool start;
};

// Counts one kind of problem and turns it into one line at the end.
struct ProblemCounter {
  std::map<std::string, std::uint64_t> counts;
  void add(const std::string& what) { ++counts[what]; }
  void flush(std::vector<std::string>& out) {
    for (const auto& [what, n] : counts) out.push_back(what + " (" + std::to_string(n) + (n == 1 ? " time)" : " times)"));
  }
};

std::string join_path(const std::vector<std::uint32_t>& stack, const InternTable& names) {
  std::string p;
  for (std::uint32_t n : stack) {
    if (!p.empty()) p += '/';
    p += names.str(n);
  }
  return p;
}

// Where spans still open at the end of the records end. After a clean end: the end of the run.
// After a run cut short (no END in the raw trace: crash, signal, _exit): their own thread's last
// event, and they are marked as cut and counted.
class OpenEnd {
 public:
  OpenEnd(Timeline& t, bool cut) : t_(t), cut_(cut) {}
  bool cut() const { return cut_; }
  std::uint64_t time(std::uint32_t track, std::uint64_t start) const {
    const std::uint64_t end = cut_ && track < t_.tracks.size() ? t_.tracks[track].last_ns : t_.t_end;
    return std::max(end, start);
  }
  void close(Interval& s) const {
    s.end = time(s.track, s.start);
    if (cut_) {
      s.cut = true;
      ++t_.cut_spans;
    }
  }
  // The problem line for something of this kind left open.
  std::string never_ended(const std::string& what) const {
    return what + (cut_ ? " never ended: cut at its thread's last event (the run did not end cleanly)"
                        : " never ended: shown until the end of the run");
  }

 private:
  Timeline& t_;
  bool cut_;
};

bool is_barrier(std::uint16_t kind) { return kind <= 4 || (kind >= 8 && kind <= 10); }
bool is_loop(std::uint16_t type) { return type == 1 || (type >= 10 && type <= 13); }

// Finds the innermost element of a stack that `exact` accepts, else the innermost that `loose`
// accepts. Returns the index or -1.
template <class V, class Exact, class Loose>
long find_top(const V& stack, Exact&& exact, Loose&& loose) {
  for (std::size_t i = stack.size(); i-- > 0;)
    if (exact(stack[i])) return static_cast<long>(i);
  for (std::size_t i = stack.size(); i-- > 0;)
    if (loose(stack[i])) return static_cast<long>(i);
  return -1;
}

// Matches the OpenMP records of each thread into spans. Begin/end pairs are matched per thread
// (OMPT reports both on the thread where the construct runs); the few cross-thread links (task
// creation, parallel regions' team sizes, a mutex released by another thread) at the end.
class OmpBuilder {
 public:
  OmpBuilder(Timeline& t, ProblemCounter& problems) : t_(t), problems_(problems) {}

  void begin_thread(std::uint32_t track) {
    threads_.emplace_back();
    cur_ = &threads_.back();
    cur_->track = track;
  }

  void record(const Record& r, std::uint64_t ns) {
    ++t_.omp_records;
    ThreadState& s = *cur_;
    const std::uint32_t track = s.track;
    switch (r.type) {
      case Ev::OmpThreadBegin:
      case Ev::OmpThreadEnd:
        break;
      case Ev::OmpParallelBegin: {
        OmpParallelSpan p;
        p.start = ns;
        p.track = track;
        p.id = r.u[0];
        p.kernel = r.u[1];
        p.requested_team_size = r.a;
        p.flags = static_cast<std::uint32_t>(r.u[2]);
        p.level = s.open_implicit();
        p.codeptr = r.u[3];
        if (!open_parallels_.emplace(p.id, p).second) problems_.add("OMPT parallel_begin with a parallel id already open: ignored");
        break;
      }
      case Ev::OmpParallelEnd: {
        auto it = open_parallels_.find(r.u[0]);
        if (it == open_parallels_.end()) {
          problems_.add("OMPT parallel_end with no parallel_begin: ignored");
          break;
        }
        it->second.end = ns;
        t_.omp_parallels.push_back(it->second);
        open_parallels_.erase(it);
        break;
      }
      case Ev::OmpImplicitTaskBegin: {
        OmpImplicitTaskSpan i;
        i.start = ns;
        i.track = track;
        i.parallel_id = r.u[0];
        i.kernel = r.u[1];
        i.thread_num = r.a;
        i.team_size = static_cast<std::uint32_t>(r.u[2]);
        i.initial = (r.sub & 1) != 0;
        i.level = s.open_implicit();
        if (!i.initial) ++team_sizes_[i.parallel_id];
        s.implicit.push_back({i, {}});
        break;
      }
      case Ev::OmpImplicitTaskEnd: {
        const long i = find_top(
            s.implicit, [&](const ImplicitRec& x) { return x.span.parallel_id == r.u[0] && x.span.thread_num == r.a; },
            [&](const ImplicitRec& x) { return x.span.parallel_id == r.u[0]; });
        if (i < 0) {
          problems_.add("OMPT implicit_task end with no begin on that thread: ignored");
          break;
        }
        s.implicit[std::size_t(i)].span.end = ns;
        implicit_done_.push_back(s.implicit[std::size_t(i)]);
        s.implicit.erase(s.implicit.begin() + i);
        break;
      }
      case Ev::OmpWorkBegin:
      case Ev::OmpMaskedBegin: {
        OmpWorkSpan w;
        w.start = ns;
        w.track = track;
        w.type = r.type == Ev::OmpMaskedBegin ? omp_names::kMasked : r.sub;
        w.parallel_id = r.u[0];
        w.kernel = r.u[1];
        w.count = r.type == Ev::OmpMaskedBegin ? 0 : r.u[2];
        s.work.push_back(w);
        break;
      }
      case Ev::OmpWorkEnd:
      case Ev::OmpMaskedEnd: {
        const std::uint16_t type = r.type == Ev::OmpMaskedEnd ? omp_names::kMasked : r.sub;
        const long i = find_top(
            s.work, [&](const OmpWorkSpan& x) { return x.type == type; },
            [&](const OmpWorkSpan& x) { return is_loop(type) && is_loop(x.type); });
        if (i < 0) {
          problems_.add(type == omp_names::kMasked ? "OMPT masked end with no begin on that thread: ignored"
                                                   : "OMPT work end with no begin of that type on that thread: ignored");
          break;
        }
        OmpWorkSpan& w = s.work[std::size_t(i)];
        w.end = ns;
        if (w.count == 0 && type != omp_names::kMasked) w.count = r.u[2];
        t_.omp_works.push_back(w);
        s.work.erase(s.work.begin() + i);
        break;
      }
      case Ev::OmpDispatch:
      case Ev::OmpDependences:
      case Ev::OmpTaskDependence:
      case Ev::OmpLockInit:
      case Ev::OmpLockDestroy:
      case Ev::OmpCancel:
      case Ev::OmpFlush:
      case Ev::OmpControlTool:
      case Ev::OmpError: {
        OmpInstant e;
        e.time = ns;
        e.track = track;
        e.type = r.type;
        e.sub = r.sub;
        e.a = r.a;
        e.u0 = r.u[0];
        e.u2 = r.u[2];
        e.kernel = r.type == Ev::OmpControlTool || r.type == Ev::OmpLockInit || r.type == Ev::OmpLockDestroy ||
                           r.type == Ev::OmpDependences || r.type == Ev::OmpTaskDependence
                       ? 0
                       : r.u[1];
        t_.omp_instants.push_back(e);
        break;
      }
      case Ev::OmpSyncBegin: {
        OmpSyncSpan y;
        y.start = ns;
        y.track = track;
        y.kind = r.sub;
        y.parallel_id = r.u[0];
        y.kernel = r.u[1];
        y.task_id = r.u[2];
        s.sync.push_back({y, {}});
        break;
      }
      case Ev::OmpSyncEnd: {
        const long i = find_top(
            s.sync, [&](const SyncRec& x) { return x.span.kind == r.sub; },
            [&](const SyncRec& x) { return is_barrier(r.sub) && is_barrier(x.span.kind); });
        if (i < 0) {
          problems_.add("OMPT sync_region end with no begin of that kind on that thread: ignored");
          break;
        }
        s.sync[std::size_t(i)].span.end = ns;
        sync_done_.push_back(s.sync[std::size_t(i)]);
        s.sync.erase(s.sync.begin() + i);
        break;
      }
      case Ev::OmpSyncWaitBegin:
        s.waits.push_back({r.sub, ns});
        break;
      case Ev::OmpSyncWaitEnd: {
        const long i = find_top(
            s.waits, [&](const Wait& x) { return x.kind == r.sub; },
            [&](const Wait& x) { return is_barrier(r.sub) && is_barrier(x.kind); });
        if (i < 0) {
          problems_.add("OMPT sync_region_wait end with no begin of that kind on that thread: ignored");
          break;
        }
        const Wait w = s.waits[std::size_t(i)];
        s.waits.erase(s.waits.begin() + i);
        s.add_wait(w.kind, w.start, ns);
        break;
      }
      case Ev::OmpTaskCreate: {
        OmpTaskCreate c;
        c.time = ns;
        c.track = track;
        c.task_id = r.u[0];
        c.kernel = r.u[1];
        c.flags = r.a;
        c.has_dependences = r.sub != 0;
        t_.omp_task_creates.push_back(c);
        if (c.flags & kTaskwaitFlag) s.taskwait_creates[c.task_id] = ns;
        break;
      }
      case Ev::OmpTaskSchedule: {
        const std::uint64_t prior = r.u[0], next = r.u[2];
        const std::uint32_t status = r.a;
        if (prior != 0) schedule_prior(s, ns, prior, status, next);
        if (next != 0) {
          started_.insert(next);
          OmpTaskSpan k;
          k.start = ns;
          k.track = track;
          k.task_id = next;
          k.kernel = r.u[1];
          if (!s.running.emplace(next, k).second)
            problems_.add("OMPT task_schedule starts a task already running on that thread: ignored");
        }
        break;
      }
      case Ev::OmpMutexAcquire: {
        const std::uint16_t fam = omp_names::mutex_family(r.sub);
        const long i = s.find_mutex(s.acquiring, fam, r.u[0]);
        if (i >= 0) {
          if (s.acquiring[std::size_t(i)].test) {
            failed_try(s.acquiring[std::size_t(i)].span);
          } else {
            problems_.add("OMPT mutex_acquire twice without mutex_acquired: the first ignored");
          }
          s.acquiring.erase(s.acquiring.begin() + i);
        }
        Acquire a;
        a.span.start = ns;
        a.span.track = track;
        a.span.kind = fam;
        a.span.wait_id = r.u[0];
        a.span.kernel = r.u[1];
        a.test = omp_names::is_test_mutex(r.sub);
        s.acquiring.push_back(a);
        break;
      }
      case Ev::OmpMutexAcquired: {
        const std::uint16_t fam = omp_names::mutex_family(r.sub);
        const long i = s.find_mutex(s.acquiring, fam, r.u[0]);
        if (i >= 0) {
          OmpMutexSpan w = s.acquiring[std::size_t(i)].span;
          s.acquiring.erase(s.acquiring.begin() + i);
          w.end = ns;
          t_.omp_mutexes.push_back(w);
        } else {
          problems_.add("OMPT mutex_acquired with no mutex_acquire on that thread: hold shown without a wait");
        }
        OmpMutexSpan h;
        h.start = ns;
        h.track = track;
        h.kind = fam;
        h.hold = true;
        h.wait_id = r.u[0];
        h.kernel = r.u[1];
        s.holds.push_back(h);
        break;
      }
      case Ev::OmpMutexReleased: {
        const std::uint16_t fam = omp_names::mutex_family(r.sub);
        long i = -1;
        for (std::size_t j = s.holds.size(); j-- > 0;)
          if (!s.holds[j].nested && s.holds[j].kind == fam && s.holds[j].wait_id == r.u[0]) {
            i = static_cast<long>(j);
            break;
          }
        if (i < 0) {
          foreign_releases_.push_back({ns, track, fam, r.u[0]});
          break;
        }
        s.holds[std::size_t(i)].end = ns;
        t_.omp_mutexes.push_back(s.holds[std::size_t(i)]);
        s.holds.erase(s.holds.begin() + i);
        break;
      }
      case Ev::OmpNestLock: {
        constexpr std::uint16_t kNest = 3;
        if (r.sub == 1) {  // begin: the thread sets a nest lock it already holds
          const long i = s.find_mutex(s.acquiring, kNest, r.u[0]);
          if (i >= 0) {
            OmpMutexSpan w = s.acquiring[std::size_t(i)].span;
            s.acquiring.erase(s.acquiring.begin() + i);
            w.end = ns;  // the wait of the nested set (nested marks holds only)
            t_.omp_mutexes.push_back(w);
          }
          OmpMutexSpan h;
          h.start = ns;
          h.track = track;
          h.kind = kNest;
          h.hold = true;
          h.nested = true;
          h.wait_id = r.u[0];
          h.kernel = r.u[1];
          s.holds.push_back(h);
        } else {
          long i = -1;
          for (std::size_t j = s.holds.size(); j-- > 0;)
            if (s.holds[j].nested && s.holds[j].wait_id == r.u[0]) {
              i = static_cast<long>(j);
              break;
            }
          if (i < 0) {
            problems_.add("OMPT nest_lock end with no nest_lock begin on that thread: ignored");
            break;
          }
          s.holds[std::size_t(i)].end = ns;
          t_.omp_mutexes.push_back(s.holds[std::size_t(i)]);
          s.holds.erase(s.holds.begin() + i);
        }
        break;
      }
      default:
        break;
    }
  }

  // After all threads: close what is still open, resolve the cross-thread links, sort.
  void finish(std::uint64_t t_max, bool lost_ends, const OpenEnd& open_end) {
    end_ = &open_end;
    mark_hidden_helper_team();
    // A mutex released by another thread than the one that acquired it (an untied task moved).
    for (const ForeignRelease& f : foreign_releases_) {
      OmpMutexSpan* best = nullptr;
      ThreadState* owner = nullptr;
      for (ThreadState& s : threads_)
        for (OmpMutexSpan& h : s.holds)
          if (!h.nested && h.kind == f.kind && h.wait_id == f.wait_id && h.start <= f.time && (!best || h.start > best->start)) {
            best = &h;
            owner = &s;
          }
      if (!best) {
        problems_.add("OMPT mutex_released with no mutex_acquired: ignored");
        continue;
      }
      best->end = f.time;
      t_.omp_mutexes.push_back(*best);
      owner->holds.erase(owner->holds.begin() + (best - owner->holds.data()));
    }

    // libomp reports the end of a worker's implicit task (and of the implicit barrier it waits
    // in) only when the next parallel region releases the thread, or never for the last one.
    // The region is over for the worker when the region ends: cut there, waits included.
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>> region_end;  // id -> end, track
    for (const OmpParallelSpan& p : t_.omp_parallels) region_end.emplace(p.id, std::make_pair(p.end, p.track));
    auto cut_of = [&](const OmpImplicitTaskSpan& i, std::uint64_t end) -> std::uint64_t {
      if (i.initial) return 0;
      auto it = region_end.find(i.parallel_id);
      if (it == region_end.end() || it->second.second == i.track) return 0;
      const std::uint64_t cut = it->second.first;
      return cut >= i.start && cut < end ? cut : 0;
    };
    for (ThreadState& s : threads_) {
      while (!s.implicit.empty()) {
        const OmpImplicitTaskSpan& top = s.implicit.back().span;
        const std::uint64_t cut = cut_of(top, t_max + 1);
        if (cut == 0) break;
        for (std::size_t w = s.waits.size(); w-- > 0 && s.waits[w].start >= top.start;) {
          s.add_wait(s.waits[w].kind, s.waits[w].start, std::max(cut, s.waits[w].start));
          s.waits.erase(s.waits.begin() + long(w));
        }
        while (!s.sync.empty() && s.sync.back().span.start >= top.start) {
          sync_done_.push_back(close(s.sync.back(), cut));
          s.sync.pop_back();
        }
        implicit_done_.push_back(close(s.implicit.back(), cut));
        s.implicit.pop_back();
      }
    }
    std::vector<Cut> cuts;
    for (ImplicitRec& r : implicit_done_) {
      const std::uint64_t cut = cut_of(r.span, r.span.end);
      if (cut == 0) continue;
      const std::uint64_t less = overlap(r.last, cut, r.span.end);
      r.span.wait_ns -= std::min(less, r.span.wait_ns);
      std::uint64_t& total = threads_[r.span.track].wait_total;
      total -= std::min(less, total);
      cuts.push_back({r.span.track, r.span.start, cut, r.span.end});
      r.span.end = cut;
    }
    std::sort(cuts.begin(), cuts.end(), [](const Cut& a, const Cut& b) { return std::tie(a.track, a.start) < std::tie(b.track, b.start); });
    for (SyncRec& y : sync_done_) {
      auto it = std::upper_bound(cuts.begin(), cuts.end(), std::make_pair(y.span.track, y.span.start),
                                 [](const auto& k, const Cut& c) { return std::tie(k.first, k.second) < std::tie(c.track, c.start); });
      if (it == cuts.begin()) continue;
      const Cut& c = *--it;
      if (c.track != y.span.track || y.span.start > c.cut || y.span.end <= c.cut || y.span.end > c.old_end) continue;
      const std::uint64_t less = overlap(y.last, c.cut, y.span.end);
      y.span.wait_ns -= std::min(less, y.span.wait_ns);
      y.span.end = c.cut;
    }

    auto unended = [&](const char* what) {
      problems_.add(lost_ends ? std::string(what) + " without an end, discarded (events were dropped)"
                              : end_->never_ended(what));
    };
    for (ThreadState& s : threads_) {
      if (t_.tracks[s.track].hidden_helper) {  // the team outlives the write: open until the end, silently
        close_all_quietly(s, lost_ends);
        continue;
      }
      // Waits first: they count into the syncs and implicit tasks still open around them.
      // A worker's last implicit barrier (or a league's teams barrier) is reported ended only
      // when the next parallel region starts: it runs to the end of the run, silently.
      auto worker_barrier = [&](std::uint16_t kind) {
        return (kind == 2 || kind == 9 || kind == 10) && t_.tracks[s.track].omp_thread_type == 2;
      };
      for (const Wait& w : s.waits) {
        if (!worker_barrier(w.kind)) unended("an OpenMP sync-region wait");
        if (!lost_ends) s.add_wait(w.kind, w.start, end_->time(s.track, w.start));
      }
      for (SyncRec& y : s.sync) {
        if (!worker_barrier(y.span.kind)) unended("an OpenMP sync region");
        if (!lost_ends) sync_done_.push_back(close_open(y));
      }
      for (OmpWorkSpan& w : s.work) {
        unended(w.type == omp_names::kMasked ? "an OpenMP masked region" : "an OpenMP work construct");
        if (!lost_ends) t_.omp_works.push_back(close_open(w));
      }
      for (ImplicitRec& i : s.implicit) {
        if (i.span.initial) {  // lives as long as the program: silently until the end
          implicit_done_.push_back(close_open(i));
          continue;
        }
        unended("an OpenMP implicit task");
        if (!lost_ends) implicit_done_.push_back(close_open(i));
      }
      for (auto& [id, k] : s.running) {
        unended("an OpenMP explicit task");
        if (!lost_ends) t_.omp_tasks.push_back(close_open(k));
      }
      for (Acquire& a : s.acquiring) {
        if (a.test) {
          failed_try(a.span);
          continue;
        }
        unended("an OpenMP mutex acquire");
        if (!lost_ends) t_.omp_mutexes.push_back(close_open(a.span));
      }
      for (OmpMutexSpan& h : s.holds) {
        unended("an OpenMP mutex hold");
        if (!lost_ends) t_.omp_mutexes.push_back(close_open(h));
      }
      t_.tracks[s.track].omp_wait_ns = s.wait_total;
    }
    for (auto& [id, p] : open_parallels_) {
      if (p.hidden_helper) {
        if (!lost_ends) t_.omp_parallels.push_back(close_open(p));
        continue;
      }
      unended("an OpenMP parallel region");
      if (!lost_ends) t_.omp_parallels.push_back(close_open(p));
    }

    for (ImplicitRec& r : implicit_done_) t_.omp_implicit_tasks.push_back(r.span);
    for (SyncRec& r : sync_done_) t_.omp_syncs.push_back(r.span);
    for (OmpParallelSpan& p : t_.omp_parallels) {
      auto it = team_sizes_.find(p.id);
      p.team_size = it == team_sizes_.end() ? 0 : it->second;
    }

    auto by_start = [](const auto& a, const auto& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); };
    auto by_time = [](const auto& a, const auto& b) { return a.time < b.time; };
    std::stable_sort(t_.omp_parallels.begin(), t_.omp_parallels.end(), by_start);
    std::stable_sort(t_.omp_implicit_tasks.begin(), t_.omp_implicit_tasks.end(), by_start);
    std::stable_sort(t_.omp_works.begin(), t_.omp_works.end(), by_start);
    std::stable_sort(t_.omp_syncs.begin(), t_.omp_syncs.end(), by_start);
    std::stable_sort(t_.omp_tasks.begin(), t_.omp_tasks.end(), by_start);
    std::stable_sort(t_.omp_mutexes.begin(), t_.omp_mutexes.end(), by_start);
    std::stable_sort(t_.omp_task_creates.begin(), t_.omp_task_creates.end(), by_time);
    std::stable_sort(t_.omp_instants.begin(), t_.omp_instants.end(), by_time);

    std::unordered_map<std::uint64_t, std::size_t> creates;
    for (std::size_t i = 0; i < t_.omp_task_creates.size(); ++i)
      if (!creates.emplace(t_.omp_task_creates[i].task_id, i).second) problems_.add("OMPT task_create with a task id already used");
    bool unknown = false;
    for (OmpTaskSpan& k : t_.omp_tasks) {
      auto it = creates.find(k.task_id);
      if (it == creates.end()) {
        unknown = true;
        continue;
      }
      const OmpTaskCreate& c = t_.omp_task_creates[it->second];
      k.create = it->second;
      k.flags = c.flags;
      k.kernel = c.kernel;
    }
    if (unknown && !t_.omp_task_creates.empty()) problems_.add("an OpenMP explicit task ran without a task_create");
    t_.omp_tasks_completed = completed_.size();
    t_.omp_tasks_cancelled = cancelled_.size();
    for (std::uint64_t id : cancelled_) t_.omp_tasks_discarded += started_.count(id) ? 0 : 1;
  }

 private:
  static constexpr std::uint32_t kTaskwaitFlag = 0x10;  // ompt_task_taskwait

  struct Wait {
    std::uint16_t kind;
    std::uint64_t start;
  };
  struct Acquire {
    OmpMutexSpan span;
    bool test = false;  // test_lock / test_nest_lock: may fail, then no acquired follows
  };
  struct LastWait {
    std::uint64_t start = 0, end = 0;
  };
  struct ImplicitRec {
    OmpImplicitTaskSpan span;
    LastWait last;  // its last wait (the barrier at its end, for a worker)
  };
  struct SyncRec {
    OmpSyncSpan span;
    LastWait last;
  };
  struct Cut {
    std::uint32_t track;
    std::uint64_t start, cut, old_end;  // an implicit task's start, new and old end
  };
  static std::uint64_t overlap(const LastWait& w, std::uint64_t from, std::uint64_t to) {
    const std::uint64_t a = std::max(w.start, from), b = std::min(w.end, to);
    return b > a ? b - a : 0;
  }
  struct ForeignRelease {
    std::uint64_t time;
    std::uint32_t track;
    std::uint16_t kind;
    std::uint64_t wait_id;
  };
  struct ThreadState {
    std::uint32_t track = 0;
    std::vector<ImplicitRec> implicit;
    std::vector<OmpWorkSpan> work;
    std::vector<SyncRec> sync;
    std::vector<Wait> waits;
    std::unordered_map<std::uint64_t, OmpTaskSpan> running;
    std::vector<Acquire> acquiring;
    std::vector<OmpMutexSpan> holds;  // outer holds and nested nest-lock holds
    std::unordered_map<std::uint64_t, std::uint64_t> taskwait_creates;  // taskwait-depend task id -> creation
    std::uint64_t wait_total = 0;

    std::uint32_t open_implicit() const {
      std::uint32_t n = 0;
      for (const auto& i : implicit) n += i.span.initial ? 0 : 1;
      return n;
    }
    long find_mutex(const std::vector<Acquire>& v, std::uint16_t fam, std::uint64_t wait_id) const {
      for (std::size_t j = v.size(); j-- > 0;)
        if (v[j].span.kind == fam && v[j].span.wait_id == wait_id) return static_cast<long>(j);
      return -1;
    }
    // A wait ended: it counts for the thread, for each implicit task open on it, and for the
    // innermost sync region of the same kind.
    void add_wait(std::uint16_t kind, std::uint64_t start, std::uint64_t end) {
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
  };

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
  void schedule_prior(ThreadState& s, std::uint64_t ns, std::uint64_t prior, std::uint32_t status, std::uint64_t next) {
    if (omp_names::task_status_completes(status)) completed_.insert(prior);
    if (status == kCancel) cancelled_.insert(prior);
    if (status == kEarlyFulfill || status == kLateFulfill) {
      OmpInstant e;
      e.time = ns;
      e.track = s.track;
      e.type = Ev::OmpTaskSchedule;
      e.a = status;
      e.u0 = prior;
      t_.omp_instants.push_back(e);
      return;
    }
    auto it = s.running.find(prior);
    if (it != s.running.end()) {
      it->second.end = ns;
      it->second.status = status;
      t_.omp_tasks.push_back(it->second);
      s.running.erase(it);
      return;
    }
    if (status == kTaskwaitComplete) {  // shown from its creation to the moment it is met
      auto c = s.taskwait_creates.find(prior);
      if (c == s.taskwait_creates.end()) return;
      OmpTaskSpan k;
      k.start = c->second;
      k.end = std::max(ns, c->second);
      k.track = s.track;
      k.task_id = prior;
      k.status = status;
      t_.omp_tasks.push_back(k);
      s.taskwait_creates.erase(c);
      return;
    }
    if (status == kCancel) return;                      // discarded before it started
    if (status == kSwitch && next == prior) return;     // an untied task's next part
    problems_.add("OMPT task_schedule names as prior a task not running on that thread: ignored");
  }

  // An omp_test_lock / omp_test_nest_lock that did not get the lock: a wait with no hold,
  // shown as a point at the try (the runtime reports no end for it).
  void failed_try(const OmpMutexSpan& acquire) {
    OmpMutexSpan w = acquire;
    w.end = w.start;
    w.failed = true;
    t_.omp_mutexes.push_back(w);
  }

  // libomp's hidden-helper team (it runs `target nowait` and other hidden-helper tasks): its
  // main thread, an initial thread of its own, opens one outermost team region from inside the
  // runtime itself, so the region's code address lies in the runtime's own object. (libomp 19
  // also reports its own address for nested regions, hence outermost only.) Its threads become
  // tracks of their own; the team only ends after the tool has written its files.
  void mark_hidden_helper_team() {
    constexpr std::uint32_t kTeamFlag = 0x80000000;  // ompt_parallel_team
    std::unordered_set<std::uint64_t> ids;
    auto consider = [&](const OmpParallelSpan& p) {
      if (p.level == 0 && (p.flags & kTeamFlag) && p.codeptr != 0 && omp_runtime_code(p.codeptr)) {
        ids.insert(p.id);
        Track& tr = t_.tracks[p.track];
        tr.hidden_helper = true;
      }
    };
    for (const OmpParallelSpan& p : t_.omp_parallels) consider(p);
    for (const auto& [id, p] : open_parallels_) consider(p);
    if (ids.empty()) return;
    auto mark = [&](const OmpImplicitTaskSpan& i) {
      if (i.initial || !ids.count(i.parallel_id)) return;
      t_.tracks[i.track].hidden_helper = true;
      t_.tracks[i.track].hidden_helper_num = i.thread_num;
    };
    for (const ImplicitRec& r : implicit_done_) mark(r.span);
    for (const ThreadState& s : threads_)
      for (const ImplicitRec& r : s.implicit) mark(r.span);
    for (OmpParallelSpan& p : t_.omp_parallels) p.hidden_helper = ids.count(p.id) != 0;
    for (auto& [id, p] : open_parallels_) p.hidden_helper = ids.count(p.id) != 0;
  }

  // What a hidden-helper thread still has open when the files are written (the team ends after
  // that): shown until the end of the run, as the team really runs on.
  void close_all_quietly(ThreadState& s, bool lost_ends) {
    if (!lost_ends) {
      for (const Wait& w : s.waits) s.add_wait(w.kind, w.start, end_->time(s.track, w.start));
      for (SyncRec& y : s.sync) sync_done_.push_back(close_open(y));
      for (OmpWorkSpan& w : s.work) t_.omp_works.push_back(close_open(w));
      for (ImplicitRec& i : s.implicit) implicit_done_.push_back(close_open(i));
      for (auto& [id, k] : s.running) t_.omp_tasks.push_back(close_open(k));
      for (OmpMutexSpan& h : s.holds) t_.omp_mutexes.push_back(close_open(h));
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
    t_.tracks[s.track].omp_wait_ns = s.wait_total;
  }

  static constexpr std::uint32_t kCancel = 3, kEarlyFulfill = 5, kLateFulfill = 6, kSwitch = 7, kTaskwaitComplete = 8;

  // Closes a span left open at the end of the records (OpenEnd).
  template <class S>
  S close_open(S s) const {
    if constexpr (requires { s.span; }) {
      end_->close(s.span);
    } else {
      end_->close(s);
    }
    return s;
  }

  template <class S>
  static S close(S s, std::uint64_t t_max) {
    if constexpr (requires { s.span; }) {
      s.span.end = std::max(t_max, s.span.start);
    } else {
      s.end = std::max(t_max, s.start);
    }
    return s;
  }

  Timeline& t_;
  ProblemCounter& problems_;
  const OpenEnd* end_ = nullptr;  // set by finish
  std::deque<ThreadState> threads_;
  ThreadState* cur_ = nullptr;
  std::unordered_map<std::uint64_t, OmpParallelSpan> open_parallels_;
  std::unordered_map<std::uint64_t, std::uint32_t> team_sizes_;
  std::unordered_set<std::uint64_t> completed_;
  std::unordered_set<std::uint64_t> cancelled_;  // left a thread as ompt_task_cancel
  std::unordered_set<std::uint64_t> started_;    // named as next by some task_schedule
  std::vector<ImplicitRec> implicit_done_;
  std::vector<SyncRec> sync_done_;
  std::vector<ForeignRelease> foreign_releases_;
};

// Target offload records: targets, data ops and submits pair by id (target id, host op id)
// across threads; device records go to their device. Which device numbers are the host is
// decided at the end, when every device_initialize has been seen.
class TargetBuilder {
 public:
  TargetBuilder(Timeline& t, ProblemCounter& problems) : t_(t), problems_(problems) {}

  static bool handles(Ev type) { return type >= Ev::OmpTargetBegin && type < Ev::OmpLast; }

  void record(const Record& r, std::uint64_t ns, std::uint32_t track) {
    ++t_.omp_target_records;
    switch (r.type) {
      case Ev::OmpTargetBegin: {
        OmpTargetSpan x;
        x.start = ns;
        x.track = track;
        x.kind = r.sub;
        x.device = static_cast<std::int32_t>(r.a);
        x.id = r.u[0];
        x.kernel = r.u[1];
        x.deep_copy = r.u[2];
        if (!open_targets_.emplace(x.id, x).second) problems_.add("OMPT target begin with a target id already open: ignored");
        break;
      }
      case Ev::OmpTargetEnd: {
        auto it = open_targets_.find(r.u[0]);
        if (it == open_targets_.end()) {
          problems_.add("OMPT target end with no target begin: ignored");
          break;
        }
        it->second.end = ns;
        t_.omp_targets.push_back(it->second);
        open_targets_.erase(it);
        break;
      }
      case Ev::OmpDataOpBegin:
      case Ev::OmpDataOp: {
        OmpDataOpSpan d;
        d.start = d.end = ns;
        d.track = track;
        d.optype = r.sub;
        d.src_device = static_cast<std::int16_t>(r.a >> 16);
        d.dst_device = static_cast<std::int16_t>(r.a & 0xffff);
        d.host_op_id = r.u[0];
        d.kernel = r.u[1];
        d.bytes = r.u[2];
        d.target_id = r.u[3];
        d.deep_copy = r.u[4];
        d.address = r.u[5];
        if (r.type == Ev::OmpDataOp) {
          d.point = true;
          t_.omp_data_ops.push_back(d);
        } else if (!open_ops_.emplace(d.host_op_id, d).second) {
          problems_.add("OMPT target data op begin with a host op id already open: ignored");
        }
        break;
      }
      case Ev::OmpDataOpEnd: {
        auto it = open_ops_.find(r.u[0]);
        if (it == open_ops_.end()) {
          problems_.add("OMPT target data op end with no begin: ignored");
          break;
        }
        OmpDataOpSpan& d = it->second;
        d.end = ns;
        if (d.address == 0) d.address = r.u[5];  // an alloc knows its address only at the end
        if (d.bytes == 0) d.bytes = r.u[2];
        t_.omp_data_ops.push_back(d);
        open_ops_.erase(it);
        break;
      }
      case Ev::OmpSubmitBegin:
      case Ev::OmpSubmit: {
        OmpSubmitSpan x;
        x.start = x.end = ns;
        x.track = track;
        x.requested_teams = r.a;
        x.host_op_id = r.u[0];
        x.kernel = r.u[1];
        x.target_id = r.u[3];
        if (r.type == Ev::OmpSubmit) {
          x.point = true;
          t_.omp_submits.push_back(x);
        } else if (!open_submits_.emplace(x.host_op_id, x).second) {
          problems_.add("OMPT target submit begin with a host op id already open: ignored");
        }
        break;
      }
      case Ev::OmpSubmitEnd: {
        auto it = open_submits_.find(r.u[0]);
        if (it == open_submits_.end()) {
          problems_.add("OMPT target submit end with no begin: ignored");
          break;
        }
        it->second.end = ns;
        t_.omp_submits.push_back(it->second);
        open_submits_.erase(it);
        break;
      }
      case Ev::OmpDeviceInit: {
        OmpDevice& d = device(static_cast<std::int32_t>(r.a));
        if (d.initialised) problems_.add("OMPT device_initialize twice for one device: the last one kept");
        d.initialised = true;
        d.type = static_cast<std::uint32_t>(r.u[0]);
        d.traced = r.u[1] != 0;
        d.init_time = ns;
        break;
      }
      case Ev::OmpDeviceFinalize:
        device(static_cast<std::int32_t>(r.a)).finalize_time = ns;
        break;
      case Ev::OmpDeviceLoad:
      case Ev::OmpDeviceUnload: {
        OmpDeviceLoad l;
        l.time = ns;
        l.track = track;
        l.device = static_cast<std::int32_t>(r.a);
        l.unload = r.type == Ev::OmpDeviceUnload;
        l.file = l.unload ? InternTable::kNullName : static_cast<std::uint32_t>(r.u[0]);
        if (!l.unload) {
          l.host_addr = r.u[1];
          l.device_addr = r.u[2];
          l.bytes = r.u[3];
        }
        l.module_id = r.u[4];
        device(l.device);
        t_.omp_device_loads.push_back(l);
        break;
      }
      case Ev::OmpDeviceRecord: {
        OmpDeviceOp o;
        o.record_type = r.sub;
        o.device = static_cast<std::int32_t>(r.a);
        o.host_op_id = r.u[0];
        o.target_id = r.u[1];
        o.start = r.u[2];
        o.point = r.u[3] == 0;
        o.end = o.point ? o.start : std::max(r.u[3], r.u[2]);
        o.value = r.u[4];
        o.op_kind = r.u[5];
        device(o.device);
        t_.omp_device_ops.push_back(o);
        break;
      }
      default:
        break;
    }
  }

  void finish(bool lost_ends, int initial_device_num, const OpenEnd& open_end) {
    auto close_open = [&](auto& open, auto& out, const char* what) {
      for (auto& [id, span] : open) {
        problems_.add(lost_ends ? std::string(what) + " without an end, discarded (events were dropped)"
                                : open_end.never_ended(what));
        if (lost_ends) continue;
        open_end.close(span);
        out.push_back(span);
      }
      open.clear();
    };
    close_open(open_targets_, t_.omp_targets, "an OpenMP target region");
    close_open(open_ops_, t_.omp_data_ops, "an OpenMP target data operation");
    close_open(open_submits_, t_.omp_submits, "an OpenMP target submit");

    std::vector<int> initialised;
    for (const auto& [num, d] : devices_)
      if (d.initialised) initialised.push_back(num);
    auto norm = [&](int& dev) {
      if (host_device(dev, initial_device_num, initialised)) dev = kHostDevice;
    };
    for (OmpTargetSpan& x : t_.omp_targets) norm(x.device);
    for (OmpDataOpSpan& d : t_.omp_data_ops) {
      norm(d.src_device);
      norm(d.dst_device);
    }
    for (auto& [num, d] : devices_) t_.omp_devices.push_back(d);

    auto by_start = [](const auto& a, const auto& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); };
    std::stable_sort(t_.omp_targets.begin(), t_.omp_targets.end(), by_start);
    std::stable_sort(t_.omp_data_ops.begin(), t_.omp_data_ops.end(), by_start);
    std::stable_sort(t_.omp_submits.begin(), t_.omp_submits.end(), by_start);
    std::stable_sort(t_.omp_device_ops.begin(), t_.omp_device_ops.end(), by_start);
    std::stable_sort(t_.omp_device_loads.begin(), t_.omp_device_loads.end(),
                     [](const OmpDeviceLoad& a, const OmpDeviceLoad& b) { return a.time < b.time; });
  }

 private:
  OmpDevice& device(int num) {
    OmpDevice& d = devices_[num];
    d.num = num;
    return d;
  }

  Timeline& t_;
  ProblemCounter& problems_;
  std::unordered_map<std::uint64_t, OmpTargetSpan> open_targets_;
  std::unordered_map<std::uint64_t, OmpDataOpSpan> open_ops_;
  std::unordered_map<std::uint64_t, OmpSubmitSpan> open_submits_;
  std::map<int, OmpDevice> devices_;
};

// Kokkos allocations get their ids (time order). A data op names the Kokkos allocation whose
// block holds its address: Kokkos 3.x reports the block with its 128-byte SharedAllocationHeader
// in front (ptr) and the data size (bytes), so data lies at ptr + 128. Of the blocks there, the
// one live at the op's time; for an alloc op, the next one reported (Kokkos reports after
// allocating); for a delete, the one freed last before it (Kokkos reports before freeing).
void link_kokkos_allocations(Timeline& t) {
  constexpr std::uint64_t kHeader = 128, kNever = std::numeric_limits<std::uint64_t>::max();
  struct Block {
    std::uint64_t ptr = 0, end = 0, alloc = 0, free = kNever, id = 0;
  };
  std::vector<Block> blocks;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> open;  // ptr -> blocks not yet freed
  std::uint64_t next_id = 0;
  for (MemoryEvent& m : t.memory) {
    if (m.alloc) {
      m.id = ++next_id;
      open[m.ptr].push_back(blocks.size());
      blocks.push_back({m.ptr, m.ptr + m.bytes + kHeader, m.time, kNever, m.id});
    } else {
      auto it = open.find(m.ptr);
      if (it == open.end() || it->second.empty()) continue;
      blocks[it->second.back()].free = m.time;
      it->second.pop_back();
    }
  }
  if (blocks.empty() || t.omp_data_ops.empty()) return;
  std::stable_sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.ptr < b.ptr; });
  for (OmpDataOpSpan& d : t.omp_data_ops) {
    if (d.address == 0) continue;
    const std::uint64_t at = d.start;
    const bool is_alloc = d.optype == 1 || d.optype == 17, is_delete = d.optype == 4 || d.optype == 20;
    const Block *live = nullptr, *next = nullptr, *freed = nullptr;
    auto it = std::upper_bound(blocks.begin(), blocks.end(), d.address, [](std::uint64_t a, const Block& b) { return a < b.ptr; });
    for (int n = 0; it != blocks.begin() && n < 64; ++n) {
      const Block& b = *--it;
      if (d.address >= b.end) continue;
      if (b.alloc <= at && b.free >= at) {
        if (!live || b.alloc > live->alloc) live = &b;
      } else if (b.alloc > at) {
        if (!next || b.alloc < next->alloc) next = &b;
      } else if (!freed || b.free > freed->free) {
        freed = &b;
      }
    }
    const Block* pick = live ? live : is_alloc ? next : is_delete ? freed : nullptr;
    if (pick) d.kokkos_alloc = pick->id;
  }
}

}  // namespace

namespace {

// The runtime's code range [start, end); 0, 0: unknown.
std::atomic<std::uint64_t> g_omp_code_start{0}, g_omp_code_end{0};

// The range spanned by the mappings of the file mapped at `address` (every segment of the loaded
// object); false when it is no file, or the executable itself (the runtime linked into it shares
// its object with the user's code).
bool loaded_object_range(std::uint64_t address, std::uint64_t& start, std::uint64_t& end) {
  struct Map {
    std::uint64_t lo, hi, inode;
    std::string dev, path;
  };
  std::vector<Map> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, offset, dev, path;
    std::uint64_t inode = 0;
    if (!(ls >> range >> perms >> offset >> dev >> inode)) continue;
    std::getline(ls >> std::ws, path);
    const std::size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    maps.push_back({std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16),
                    inode, dev, path});
  }
  const auto at = std::find_if(maps.begin(), maps.end(), [&](const Map& m) { return m.lo <= address && address < m.hi; });
  if (at == maps.end() || at->inode == 0) return false;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0 && at->path == std::string(exe, static_cast<std::size_t>(n))) return false;
  start = at->lo;
  end = at->hi;
  for (const Map& m : maps)
    if (m.inode == at->inode && m.dev == at->dev) {
      start = std::min(start, m.lo);
      end = std::max(end, m.hi);
    }
  return true;
}

}  // namespace

void set_omp_runtime_function(const void* fn) {
  std::uint64_t start = 0, end = 0;
  try {
    if (fn == nullptr || !loaded_object_range(reinterpret_cast<std::uint64_t>(fn), start, end)) start = end = 0;
  } catch (...) {
    start = end = 0;
  }
  g_omp_code_start.store(start, std::memory_order_relaxed);
  g_omp_code_end.store(end, std::memory_order_relaxed);
}

std::string omp_runtime_code_range() {
  const std::uint64_t start = g_omp_code_start.load(std::memory_order_relaxed), end = g_omp_code_end.load(std::memory_order_relaxed);
  if (start >= end) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llx-%llx", static_cast<unsigned long long>(start), static_cast<unsigned long long>(end));
  return buf;
}

void set_omp_runtime_code_range(const std::string& range) {
  std::uint64_t start = 0, end = 0;
  const std::size_t dash = range.find('-');
  if (dash != std::string::npos && dash > 0 && dash + 1 < range.size() &&
      range.find_first_not_of("0123456789abcdefABCDEF-") == std::string::npos && range.find('-', dash + 1) == std::string::npos) {
    try {
      start = std::stoull(range.substr(0, dash), nullptr, 16);
      end = std::stoull(range.substr(dash + 1), nullptr, 16);
    } catch (...) {
      start = end = 0;
    }
  }
  if (start >= end) start = end = 0;
  g_omp_code_start.store(start, std::memory_order_relaxed);
  g_omp_code_end.store(end, std::memory_order_relaxed);
}

bool omp_runtime_code(std::uint64_t address) {
  return address != 0 && g_omp_code_start.load(std::memory_order_relaxed) <= address &&
         address < g_omp_code_end.load(std::memory_order_relaxed);
}

bool host_device(int device_num, int initial_device_num, const std::vector<int>& initialised_devices) {
  if (device_num == kHostDevice) return true;
  if (!initialised_devices.empty())
    return std::find(initialised_devices.begin(), initialised_devices.end(), device_num) == initialised_devices.end();
  return device_num == initial_device_num;
}

const char* loss_reason_name(LossReason r) {
  switch (r) {
    case LossReason::RingFull: return "ring full (the writer thread fell behind)";
    case LossReason::WriteFailed: return "write failed (disk full?)";
    case LossReason::TraceSizeCap: return "--max-trace-size reached";
    default: return "unknown";
  }
}

Timeline build_timeline(const std::vector<const ThreadSource*>& threads, int initial_device_num, bool ended_cleanly) {
  Timeline t;
  InternTable& names = kob::names();
  ProblemCounter problems;
  std::uint64_t t_min = std::numeric_limits<std::uint64_t>::max(), t_max = 0;

  std::unordered_map<std::uint64_t, KernelSpan> open_kernels;
  std::unordered_map<std::uint64_t, FenceSpan> open_fences;
  std::unordered_map<std::uint64_t, DeepCopySpan> open_copies;
  std::unordered_map<std::uint32_t, std::uint32_t> section_names;
  std::vector<SectionMark> section_marks;
  std::vector<RegionSpan> open_regions_at_end;
  OmpBuilder omp(t, problems);
  TargetBuilder target(t, problems);

  for (const ThreadSource* b : threads) {
    const auto track = static_cast<std::uint32_t>(t.tracks.size());
    t.tracks.push_back(Track{b->index, b->os_tid, b->omp_thread_type});
    t.tracks.back().omp_proc = b->omp_proc;
    t.tracks.back().omp_place = b->omp_place;
    t.dropped += b->dropped;
    t.tracks.back().dropped = b->dropped;
    for (const Loss& l : b->losses) {
      t.lost.push_back({track, clock::to_ns(l.first_tick), clock::to_ns(l.last_tick), l.events, l.reason});
      // A stretch lost before every recorded event (or after) is still part of the run: the
      // time line starts (ends) with it, so that the summary can say when it was.
      t_min = std::min(t_min, t.lost.back().start);
      t_max = std::max(t_max, t.lost.back().end);
    }
    omp.begin_thread(track);

    std::vector<std::uint32_t> region_names;
    std::vector<std::uint64_t> region_starts;
    std::string path;

    b->for_each([&](const Record& r) {
      if (r.type == Ev::OmpDeviceRecord) {  // its times are in its fields, already in host ns
        if (r.u[2] != 0) {
          t_min = std::min(t_min, r.u[2]);
          t_max = std::max(t_max, std::max(r.u[2], r.u[3]));
        }
        target.record(r, 0, track);
        ++t.tracks[track].device_records;
        return;
      }
      ++t.tracks[track].host_records;
      const std::uint64_t ns = clock::to_ns(r.tick);
      t.tracks[track].last_ns = std::max(t.tracks[track].last_ns, ns);
      t_min = std::min(t_min, ns);
      t_max = std::max(t_max, ns);
      // A raw trace cut short may lack the thread's identity entry: its thread_begin tells the type.
      if (r.type == Ev::OmpThreadBegin && t.tracks[track].omp_thread_type == 0) t.tracks[track].omp_thread_type = r.sub;
      switch (r.type) {
        case Ev::KernelBegin: {
          KernelSpan k;
          k.start = ns;
          k.track = track;
          k.id = r.u[0];
          k.name = r.a;
          k.kind = static_cast<KernelKind>(r.sub);
          k.devid = static_cast<std::uint32_t>(r.u[1]);
          k.region = path;
          open_kernels[k.id] = std::move(k);
          break;
        }
        case Ev::KernelEnd: {
          auto it = open_kernels.find(r.u[0]);
          if (it == open_kernels.end()) {
            problems.add("kokkosp_end_parallel_* with an id that no begin hook returned: ignored");
            break;
          }
          it->second.end = ns;
          t.kernels.push_back(std::move(it->second));
          open_kernels.erase(it);
          break;
        }
        case Ev::FenceBegin: {
          FenceSpan f;
          f.start = ns;
          f.track = track;
          f.id = r.u[0];
          f.name = r.a;
          f.devid = static_cast<std::uint32_t>(r.u[1]);
          open_fences[f.id] = f;
          break;
        }
        case Ev::FenceEnd: {
          auto it = open_fences.find(r.u[0]);
          if (it == open_fences.end()) {
            problems.add("kokkosp_end_fence with an id that no begin hook returned: ignored");
            break;
          }
          it->second.end = ns;
          t.fences.push_back(it->second);
          open_fences.erase(it);
          break;
        }
        case Ev::RegionPush:
          region_names.push_back(r.a);
          region_starts.push_back(ns);
          path = join_path(region_names, names);
          break;
        case Ev::RegionPop: {
          if (region_names.empty()) {
            problems.add("kokkosp_pop_profile_region with no region open on that thread: ignored");
            break;
          }
          RegionSpan s;
          s.start = region_starts.back();
          s.end = ns;
          s.track = track;
          s.name = region_names.back();
          s.path = path;
          s.depth = static_cast<std::uint32_t>(region_names.size() - 1);
          t.regions.push_back(std::move(s));
          region_names.pop_back();
          region_starts.pop_back();
          path = join_path(region_names, names);
          break;
        }
        case Ev::SectionCreate:
          section_names[static_cast<std::uint32_t>(r.u[0])] = r.a;
          break;
        case Ev::SectionStart:
        case Ev::SectionStop:
          section_marks.push_back({ns, track, static_cast<std::uint32_t>(r.u[0]), r.type == Ev::SectionStart});
          break;
        case Ev::SectionDestroy:
          break;
        case Ev::Alloc:
        case Ev::Dealloc: {
          MemoryEvent m;
          m.time = ns;
          m.track = track;
          m.alloc = r.type == Ev::Alloc;
          m.space = r.a;
          m.name = static_cast<std::uint32_t>(r.u[0]);
          m.ptr = r.u[1];
          m.bytes = r.u[2];
          t.memory.push_back(m);
          break;
        }
        case Ev::DeepCopyBegin: {
          DeepCopySpan d;
          d.start = ns;
          d.track = track;
          d.id = r.u[0];
          d.dst_space = r.a;
          d.dst_name = static_cast<std::uint32_t>(r.u[1]);
          d.src_space = static_cast<std::uint32_t>(r.u[2]);
          d.src_name = static_cast<std::uint32_t>(r.u[3]);
          d.bytes = r.u[4];
          open_copies[d.id] = d;
          break;
        }
        case Ev::DeepCopyEnd: {
          auto it = open_copies.find(r.u[0]);
          if (it == open_copies.end()) {
            problems.add("kokkosp_end_deep_copy with no deep copy open on that thread: ignored");
            break;
          }
          it->second.end = ns;
          t.deep_copies.push_back(it->second);
          open_copies.erase(it);
          break;
        }
        case Ev::ProfileEvent:
          t.events.push_back({ns, track, r.a});
          break;
        case Ev::DualView: {
          DualViewEvent d;
          d.time = ns;
          d.track = track;
          d.name = r.a;
          d.modify = r.sub != 0;
          d.ptr = r.u[0];
          d.on_device = r.u[1] != 0;
          t.dual_views.push_back(d);
          break;
        }
        default:
          if (TargetBuilder::handles(r.type)) {
            target.record(r, ns, track);
          } else if (r.type >= Ev::OmpFirst && r.type < Ev::OmpLast) {
            omp.record(r, ns);
          }
          break;
      }
    });

    for (std::size_t i = region_names.size(); i-- > 0;) {
      RegionSpan s;
      s.start = region_starts[i];
      s.track = track;
      s.name = region_names[i];
      s.path = join_path(std::vector<std::uint32_t>(region_names.begin(), region_names.begin() + long(i) + 1), names);
      s.depth = static_cast<std::uint32_t>(i);
      open_regions_at_end.push_back(std::move(s));
    }
  }

  if (t_min > t_max) t_min = t_max = 0;
  t.t0 = t_min;
  t.t_end = t_max;

  // Whatever is still open ran until the end of the run (or, cut short, until its thread's last
  // event), unless its end was dropped.
  t.cut_short = !ended_cleanly;
  const OpenEnd open_end(t, !ended_cleanly);
  const bool lost_ends = t.dropped > 0;
  auto close_open = [&](auto& open, auto& out, const char* what) {
    if (open.empty()) return;
    if (lost_ends) {
      for (std::size_t i = 0; i < open.size(); ++i) problems.add(std::string(what) + " without an end, discarded (events were dropped)");
      return;
    }
    for (auto& [id, span] : open) {
      open_end.close(span);
      out.push_back(span);
      problems.add(open_end.never_ended(what));
    }
  };
  close_open(open_kernels, t.kernels, "a Kokkos kernel");
  close_open(open_fences, t.fences, "a Kokkos fence");
  close_open(open_copies, t.deep_copies, "a Kokkos deep copy");
  for (auto& r : open_regions_at_end) {
    open_end.close(r);
    t.regions.push_back(std::move(r));
    problems.add(open_end.cut() ? "a Kokkos profile region never popped: cut at its thread's last event (the run did not end cleanly)"
                                : "a Kokkos profile region never popped: shown until the end of the run");
  }

  omp.finish(t_max, lost_ends, open_end);
  target.finish(lost_ends, initial_device_num, open_end);

  std::stable_sort(section_marks.begin(), section_marks.end(),
                   [](const SectionMark& a, const SectionMark& b) { return a.time < b.time; });
  std::unordered_map<std::uint32_t, SectionMark> open_sections;
  for (const SectionMark& m : section_marks) {
    auto it = open_sections.find(m.section);
    if (m.start) {
      if (it != open_sections.end()) {
        problems.add("kokkosp_start_profile_section on a section already started: ignored");
        continue;
      }
      open_sections.emplace(m.section, m);
    } else {
      if (it == open_sections.end()) {
        problems.add("kokkosp_stop_profile_section on a section not started: ignored");
        continue;
      }
      SectionSpan s;
      s.start = it->second.time;
      s.end = m.time;
      s.track = it->second.track;
      s.end_track = m.track;
      s.section = m.section;
      auto n = section_names.find(m.section);
      s.name = n == section_names.end() ? InternTable::kNullName : n->second;
      if (n == section_names.end()) problems.add("a profile section id that kokkosp_create_profile_section never returned");
      t.sections.push_back(s);
      open_sections.erase(it);
    }
  }
  for (auto& [id, m] : open_sections) {
    SectionSpan s;
    s.start = m.time;
    s.track = s.end_track = m.track;
    open_end.close(s);
    s.section = id;
    auto n = section_names.find(id);
    s.name = n == section_names.end() ? InternTable::kNullName : n->second;
    t.sections.push_back(s);
    problems.add(open_end.cut() ? "a profile section never stopped: cut at its thread's last event (the run did not end cleanly)"
                                : "a profile section never stopped: shown until the end of the run");
  }

  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); };
  std::sort(t.kernels.begin(), t.kernels.end(), by_start);
  std::sort(t.fences.begin(), t.fences.end(), by_start);
  // A child pushed and popped on its parent's ticks has the same span: depth keeps it inside.
  std::sort(t.regions.begin(), t.regions.end(), [&](const RegionSpan& a, const RegionSpan& b) {
    return by_start(a, b) || (a.start == b.start && a.end == b.end && a.depth < b.depth);
  });
  std::sort(t.sections.begin(), t.sections.end(), by_start);
  std::sort(t.deep_copies.begin(), t.deep_copies.end(), by_start);
  std::sort(t.lost.begin(), t.lost.end(),
            [](const LostSpan& a, const LostSpan& b) { return std::tie(a.track, a.start) < std::tie(b.track, b.start); });

  std::stable_sort(t.memory.begin(), t.memory.end(), [](const MemoryEvent& a, const MemoryEvent& b) { return a.time < b.time; });
  std::unordered_map<std::uint32_t, std::uint64_t> level;
  for (MemoryEvent& m : t.memory) {
    std::uint64_t& l = level[m.space];
    if (m.alloc) {
      l += m.bytes;
    } else if (m.bytes > l) {
      problems.add("kokkosp_deallocate_data of more bytes than were allocated in that space");
      l = 0;
    } else {
      l -= m.bytes;
    }
    m.space_level = l;
  }
  link_kokkos_allocations(t);

  problems.flush(t.problems);
  return t;
}

void filter_timeline(Timeline& t, const std::string& include, const std::string& exclude) {
  NameFilter filter(include, exclude);
  if (!filter.active()) return;
  auto keep = [&](std::uint32_t name) { return filter.keep(name); };
  const auto nk = t.kernels.size(), nr = t.regions.size();
  t.kernels.erase(std::remove_if(t.kernels.begin(), t.kernels.end(), [&](const KernelSpan& k) { return !keep(k.name); }),
                  t.kernels.end());
  t.regions.erase(std::remove_if(t.regions.begin(), t.regions.end(), [&](const RegionSpan& r) { return !keep(r.name); }),
                  t.regions.end());
  t.filtered_kernels = nk - t.kernels.size();
  t.filtered_regions = nr - t.regions.size();
}

}  // namespace kob
