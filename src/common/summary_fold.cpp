#include "common/summary_fold.hpp"

#include <algorithm>
#include <array>

#include "common/devid.hpp"
#include "common/intern.hpp"
#include "common/omp_names.hpp"

namespace kob {

namespace {

using KernelKey = std::pair<std::uint32_t, KernelKind>;
using CopyKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;  // dst name, src name, dst space, src space

// The tracks a row's spans ran on: which of them dropped events is known only at finish.
void add_track(std::vector<std::uint32_t>& v, std::uint32_t track) {
  if (std::find(v.begin(), v.end(), track) == v.end()) v.push_back(track);
}

struct KernelAcc {
  std::uint64_t calls = 0, total = 0, min = 0, max = 0;
  std::uint64_t first_start = 0;  // the device is the earliest call's, as in a Timeline sorted by start
  std::uint32_t devid = 0;
  std::vector<std::uint32_t> tracks;
};

struct RegionAcc {
  RegionStats st;
  std::vector<std::uint32_t> tracks;
};

// Additive OpenMP figures of one Kokkos kernel (or of one kernel id still to come).
struct OmpAcc {
  std::uint64_t parallel_regions = 0, team_size_sum = 0, task_time = 0, wait_time = 0, imbalance_regions = 0;
  double imbalance_sum = 0;
  void add(const OmpAcc& o) {
    parallel_regions += o.parallel_regions;
    team_size_sum += o.team_size_sum;
    task_time += o.task_time;
    wait_time += o.wait_time;
    imbalance_regions += o.imbalance_regions;
    imbalance_sum += o.imbalance_sum;
  }
};

// A parallel region whose implicit tasks have not all arrived (or whose tasks came first).
struct ParallelJoin {
  bool have_parallel = false;
  bool counted = false;  // in the figures: not the hidden-helper team's, inside a kernel
  std::uint64_t kernel = 0;
  std::uint32_t team_size = 0, track = 0, tasks = 0;
  std::uint64_t end = 0;
  std::uint64_t max_busy = 0, sum_busy = 0, task_time = 0, wait_time = 0;
};

// Figures for a kernel id not seen yet. Its parallel regions ran on `track` and the last ended at
// `after`: a later span on that track from another kernel (or from none) means the kernel was
// closed by then, so if it has not come it never will (dropped by --include/--exclude).
struct KernelWait {
  OmpAcc acc;
  std::uint32_t track = 0;
  std::uint64_t after = 0;
};

// Kernels that arrived while some of their parallel regions still wait for implicit tasks.
struct KernelRef {
  std::uint32_t open = 0;  // joins with their parallel region in, tasks missing
  bool known = false;
  KernelKey key{};
};

// Kept regions not yet taken by the region that holds them. Regions of one path waiting at the
// same time share their fate (see region()), so they wait as one entry.
struct RegionWait {
  std::uint64_t end = 0;   // the first one's
  std::uint32_t depth = 0;
  std::uint64_t sum = 0;   // their time
  const std::string* path = nullptr;  // its key in by_path
};

struct TrackRegions {
  std::multimap<std::uint64_t, RegionWait> by_start;  // by the first one's start
  std::map<std::string, std::multimap<std::uint64_t, RegionWait>::iterator> by_path;
};

struct OmpTrackAcc {
  std::uint64_t initial_tasks = 0, implicit_tasks = 0, busy = 0;
  std::map<std::uint16_t, OmpCountStats> work, sync;
};

struct TargetOps {
  std::map<std::uint16_t, TargetOpStats> ops;
  std::uint64_t first_start = 0;
};

// A few recent id -> value pairs, for the rare span that arrives after the one it names.
template <class V, std::size_t N = 64>
struct Recent {
  std::array<std::pair<std::uint64_t, V>, N> items{};
  std::size_t next = 0, size = 0;
  void put(std::uint64_t id, const V& v) {
    items[next] = {id, v};
    next = (next + 1) % N;
    size = std::min(size + 1, N);
  }
  V* find(std::uint64_t id) {
    for (std::size_t i = 0; i < size; ++i)
      if (items[i].first == id) return &items[i].second;
    return nullptr;
  }
};

struct RecentCopy {
  CopyKey key{};
  std::uint64_t bytes = 0;
  bool counted = false;  // its call is in the deep-copy row
};

}  // namespace

struct SummaryFold::State {
  // Kokkos.
  std::map<KernelKey, KernelAcc> kernels;
  std::map<std::string, RegionAcc> regions;
  std::vector<TrackRegions> region_tracks;
  std::map<std::uint32_t, MemoryStats> memory;
  std::map<std::pair<std::uint32_t, std::uint32_t>, CopyStats> copies;
  std::map<std::uint32_t, NamedStats> fences, sections;
  std::uint64_t profile_events = 0, dual_view_syncs = 0, dual_view_modifies = 0;

  // OpenMP.
  std::vector<OmpTrackAcc> omp_tracks;
  std::uint64_t parallel_regions = 0, outside_regions = 0, outside_time = 0;
  std::unordered_map<std::uint64_t, ParallelJoin> joins;
  std::unordered_map<std::uint64_t, KernelWait> waits;
  std::unordered_map<std::uint64_t, KernelRef> refs;
  Recent<KernelKey> recent_kernels;
  std::map<KernelKey, OmpAcc> omp_kernels;
  std::map<std::uint16_t, OmpCountStats> dispatch;
  std::map<std::uint16_t, OmpMutexStats> mutex;
  OmpSummary counts;  // the plain counters

  // Target.
  std::map<int, TargetDeviceStats> devs;
  std::uint64_t regions_in_kernels = 0, regions_outside = 0;
  std::map<int, std::map<std::uint16_t, OmpCountStats>> target_regions;
  std::map<int, std::map<std::uint16_t, TargetOpStats>> ops;
  std::map<int, std::map<int, TargetOpStats>> dirs;
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> live;  // (device, address) -> bytes allocated there
  std::map<int, std::uint64_t> level;
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> submits_waiting;  // target id -> count, ns
  Recent<int> recent_targets;
  std::unordered_map<std::uint64_t, TargetOps> copy_ops_waiting;  // deep copy id -> its data ops
  Recent<RecentCopy> recent_copies;
  std::map<CopyKey, TargetCopyStats> per_copy;
  std::map<CopyKey, TargetOps> copy_ops;
  std::vector<CopyKey> copy_order;  // first credited first; sorted by first data op at finish

  TargetDeviceStats& dev(int n) {
    TargetDeviceStats& d = devs[n];
    d.device = n;
    return d;
  }
  OmpTrackAcc& omp_track(std::uint32_t track) {
    if (track >= omp_tracks.size()) omp_tracks.resize(track + 1);
    return omp_tracks[track];
  }
  TrackRegions& region_track(std::uint32_t track) {
    if (track >= region_tracks.size()) region_tracks.resize(track + 1);
    return region_tracks[track];
  }

  const KernelKey* kernel_key(std::uint64_t id) {
    auto r = refs.find(id);
    if (r != refs.end() && r->second.known) return &r->second.key;
    return recent_kernels.find(id);
  }

  void credit(std::uint64_t kernel, const OmpAcc& acc, std::uint32_t track, std::uint64_t end) {
    if (const KernelKey* key = kernel_key(kernel)) {
      omp_kernels[*key].add(acc);
      return;
    }
    KernelWait& w = waits[kernel];
    w.acc.add(acc);
    w.track = track;
    w.after = std::max(w.after, end);
  }

  // A span on `track` from `start` that belongs to kernel id `kernel` (0: none).
  void expire_waits(std::uint32_t track, std::uint64_t start, std::uint64_t kernel) {
    for (auto it = waits.begin(); it != waits.end();) {
      if (it->first != kernel && it->second.track == track && start >= it->second.after) {
        it = waits.erase(it);
      } else {
        ++it;
      }
    }
  }

  void complete(std::uint64_t parallel_id, ParallelJoin& j) {
    if (j.counted) {
      if (j.tasks != 0) {
        OmpAcc acc;
        acc.task_time = j.task_time;
        acc.wait_time = j.wait_time;
        const double mean = double(j.sum_busy) / double(j.tasks);
        acc.imbalance_sum = j.max_busy ? (double(j.max_busy) - mean) / double(j.max_busy) : 0.0;
        acc.imbalance_regions = 1;
        credit(j.kernel, acc, j.track, j.end);
      }
      auto r = refs.find(j.kernel);
      if (r != refs.end() && --r->second.open == 0) refs.erase(r);
    }
    joins.erase(parallel_id);
  }

  void target_op(const OmpDataOpSpan& x, TargetOps& into) {
    TargetOpStats& op = into.ops[x.optype];
    op.name = omp_names::data_op(x.optype);
    ++op.count;
    op.bytes += x.bytes;
    op.time += x.dur();
  }

  // Data ops of one deep copy into its row; new_call: the copy's first ops (its call and bytes count once).
  void credit_copy(const CopyKey& key, std::uint64_t first_start, const TargetOps& from, bool new_call, std::uint64_t bytes) {
    auto [pc, fresh] = per_copy.try_emplace(key);
    TargetOps& into = copy_ops[key];
    if (fresh) {
      copy_order.push_back(key);
      into.first_start = first_start;
    }
    into.first_start = std::min(into.first_start, first_start);
    if (new_call) {
      ++pc->second.calls;
      pc->second.bytes += bytes;
    }
    for (const auto& [type, op] : from.ops) {
      TargetOpStats& d = into.ops[type];
      d.name = op.name;
      d.count += op.count;
      d.bytes += op.bytes;
      d.time += op.time;
    }
  }
};

SummaryFold::SummaryFold() : s_(std::make_unique<State>()) {}
SummaryFold::~SummaryFold() = default;

std::size_t SummaryFold::pending() const {
  std::size_t n = s_->joins.size() + s_->waits.size() + s_->refs.size() + s_->submits_waiting.size() + s_->copy_ops_waiting.size();
  for (const TrackRegions& t : s_->region_tracks) n += t.by_path.size();
  return n;
}

void SummaryFold::kernel(const KernelSpan& k) {
  State& s = *s_;
  const KernelKey key{k.name, k.kind};
  KernelAcc& st = s.kernels[key];
  add_track(st.tracks, k.track);
  if (st.calls == 0 || k.start < st.first_start) {
    st.first_start = k.start;
    st.devid = k.devid;
  }
  if (st.calls == 0) st.min = k.dur();
  ++st.calls;
  st.total += k.dur();
  st.min = std::min(st.min, k.dur());
  st.max = std::max(st.max, k.dur());

  s.expire_waits(k.track, k.start, k.id);
  s.recent_kernels.put(k.id, key);
  auto w = s.waits.find(k.id);
  if (w != s.waits.end()) {
    s.omp_kernels[key].add(w->second.acc);
    s.waits.erase(w);
  }
  auto r = s.refs.find(k.id);
  if (r != s.refs.end()) {
    r->second.known = true;
    r->second.key = key;
  }
}

void SummaryFold::fence(const FenceSpan& f) {
  NamedStats& st = s_->fences[f.name];
  ++st.calls;
  st.total += f.dur();
}

// Exclusive time, as a walk of each track's regions in start order with a stack of open ones
// gives it: a region's children are the kept regions it holds directly. They arrive before it.
// Each kept region waits in its track's list until the region that holds it arrives; the
// arriving region takes every waiting one that starts inside it (ties as the walk decides: by
// start, then longer first, then shallower first; a region of no length at the very end of
// another is not inside it). Two waiting regions of one path with some length have the same
// ancestors by name, so (kept or dropped by name alike) the same innermost kept ancestor still
// open: they wait as one entry, and the list is bounded by the distinct paths. (A region of no
// length adds nothing to its holder and need not wait; it would break that rule when it sits at
// the very end of its parent, where the walk gives it to the next region.)
void SummaryFold::region(const RegionSpan& r) {
  State& s = *s_;
  TrackRegions& tr = s.region_track(r.track);
  std::uint64_t child = 0;
  for (auto it = tr.by_start.lower_bound(r.start); it != tr.by_start.end() && it->first < r.end;) {
    const RegionWait& e = it->second;
    const bool inside = it->first > r.start || e.end < r.end || (e.end == r.end && e.depth > r.depth);
    if (!inside) {
      ++it;
      continue;
    }
    child += e.sum;
    tr.by_path.erase(*e.path);
    it = tr.by_start.erase(it);
  }
  RegionAcc& acc = s.regions[r.path];
  RegionStats& st = acc.st;
  if (st.calls == 0) {
    st.path = r.path;
    st.name = names().str(r.name);
    st.depth = r.depth;
  }
  add_track(acc.tracks, r.track);
  ++st.calls;
  st.inclusive += r.dur();
  st.exclusive += r.dur() - std::min(child, r.dur());

  if (r.depth == 0) {
    // Nothing can hold an outermost region, nor anything before it: a region holding an earlier
    // one and ending after this one would hold this one too.
    tr.by_start.clear();
    tr.by_path.clear();
    return;
  }
  if (r.start == r.end) return;  // adds nothing to the time of the region that holds it
  auto p = tr.by_path.find(r.path);
  if (p == tr.by_path.end()) {
    RegionWait w;
    w.end = r.end;
    w.depth = r.depth;
    auto it = tr.by_start.emplace(r.start, w);
    p = tr.by_path.emplace(r.path, it).first;
    it->second.path = &p->first;
  }
  p->second->second.sum += r.dur();
}

void SummaryFold::section(const SectionSpan& sec) {
  NamedStats& st = s_->sections[sec.name];
  ++st.calls;
  st.total += sec.dur();
}

void SummaryFold::deep_copy(const DeepCopySpan& d) {
  State& s = *s_;
  CopyStats& st = s.copies[{d.dst_space, d.src_space}];
  ++st.calls;
  st.bytes += d.bytes;
  st.time += d.dur();

  RecentCopy rc;
  rc.key = std::make_tuple(d.dst_name, d.src_name, d.dst_space, d.src_space);
  rc.bytes = d.bytes;
  auto w = s.copy_ops_waiting.find(d.id);
  if (w != s.copy_ops_waiting.end()) {
    s.credit_copy(rc.key, w->second.first_start, w->second, true, d.bytes);
    s.copy_ops_waiting.erase(w);
    rc.counted = true;
  }
  s.recent_copies.put(d.id, rc);
}

void SummaryFold::memory(const MemoryEvent& m) {
  MemoryStats& st = s_->memory[m.space];
  if (m.alloc) {
    ++st.allocations;
    st.bytes_allocated += m.bytes;
  } else {
    ++st.deallocations;
  }
  st.high_water = std::max(st.high_water, m.space_level);
  st.final_level = m.space_level;
}

void SummaryFold::instant(const InstantEvent&) { ++s_->profile_events; }

void SummaryFold::dual_view(const DualViewEvent& d) { ++(d.modify ? s_->dual_view_modifies : s_->dual_view_syncs); }

void SummaryFold::omp_parallel(const OmpParallelSpan& p) {
  State& s = *s_;
  s.expire_waits(p.track, p.start, p.kernel);
  ParallelJoin& j = s.joins[p.id];
  j.have_parallel = true;
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
  ++j.tasks;
  j.max_busy = std::max(j.max_busy, i.busy());
  j.sum_busy += i.busy();
  j.task_time += i.dur();
  j.wait_time += std::min(i.wait_ns, i.dur());
  if (j.have_parallel && j.tasks >= j.team_size) s.complete(i.parallel_id, j);
}

void SummaryFold::omp_work(const OmpWorkSpan& w) {
  OmpCountStats& c = s_->omp_track(w.track).work[w.type];
  ++c.count;
  c.total += w.dur();
}

void SummaryFold::omp_sync(const OmpSyncSpan& y) {
  OmpCountStats& c = s_->omp_track(y.track).sync[y.kind];
  ++c.count;
  c.total += y.dur();
  c.wait += y.wait_ns;
}

void SummaryFold::omp_task_create(const OmpTaskCreate&) { ++s_->counts.tasks_created; }

void SummaryFold::omp_task(const OmpTaskSpan& k) {
  // A taskwait-depend task (flag ompt_task_taskwait) never runs: its span is a wait, no stretch.
  if ((k.flags & 0x10) == 0) ++s_->counts.task_stretches;
}

void SummaryFold::omp_mutex(const OmpMutexSpan& m) {
  OmpMutexStats& st = s_->mutex[m.kind];
  if (!m.hold) {
    st.wait += m.dur();
    st.failed_tries += m.failed ? 1 : 0;
  } else if (m.nested) {
    ++st.nested_holds;
  } else {
    ++st.holds;
    st.hold += m.dur();
  }
}

void SummaryFold::omp_instant(const OmpInstant& e) {
  OmpSummary& o = s_->counts;
  switch (e.type) {
    case Ev::OmpDispatch: ++s_->dispatch[e.sub].count; break;
    case Ev::OmpDependences:
      ++o.tasks_with_dependences;
      o.dependences += e.a;
      break;
    case Ev::OmpTaskDependence: ++o.task_dependences; break;
    case Ev::OmpLockInit: ++o.lock_inits; break;
    case Ev::OmpLockDestroy: ++o.lock_destroys; break;
    case Ev::OmpCancel: ++o.cancels; break;
    case Ev::OmpFlush: ++o.flushes; break;
    case Ev::OmpError: ++(e.sub == 2 ? o.errors_fatal : o.errors_warning); break;
    default: break;
  }
}

void SummaryFold::omp_target(const OmpTargetSpan& x) {
  State& s = *s_;
  s.dev(x.device);
  OmpCountStats& c = s.target_regions[x.device][x.kind];
  ++c.count;
  c.total += x.dur();
  ++(x.kernel != 0 ? s.regions_in_kernels : s.regions_outside);
  s.recent_targets.put(x.id, x.device);
  auto w = s.submits_waiting.find(x.id);
  if (w != s.submits_waiting.end()) {
    TargetDeviceStats& d = s.dev(x.device);
    d.submits += w->second.first;
    d.submit_time += w->second.second;
    s.submits_waiting.erase(w);
  }
}

void SummaryFold::omp_submit(const OmpSubmitSpan& x) {
  State& s = *s_;
  // A submit runs inside its target region, so it normally arrives first and waits for it.
  if (const int* device = s.recent_targets.find(x.target_id)) {
    TargetDeviceStats& d = s.dev(*device);
    ++d.submits;
    d.submit_time += x.dur();
    return;
  }
  auto& w = s.submits_waiting[x.target_id];
  ++w.first;
  w.second += x.dur();
}

void SummaryFold::omp_data_op(const OmpDataOpSpan& x) {
  State& s = *s_;
  const int device = x.device();
  TargetDeviceStats& d = s.dev(device);
  TargetOpStats& c = s.ops[device][x.optype];
  c.name = omp_names::data_op(x.optype);
  ++c.count;
  c.bytes += x.bytes;
  c.time += x.dur();
  const bool to = x.optype == 2 || x.optype == 18, from = x.optype == 3 || x.optype == 19;
  if (to || from) {
    const int dir = x.src_device == kHostDevice ? 0 : x.dst_device == kHostDevice ? 1 : 2;
    TargetOpStats& b = s.dirs[device][dir];
    b.name = dir == 0 ? "host_to_device" : dir == 1 ? "device_to_host" : "device_to_device";
    ++b.count;
    b.bytes += x.bytes;
    b.time += x.dur();
  } else if (x.optype == 1 || x.optype == 17) {
    ++d.allocations;
    d.alloc_bytes += x.bytes;
    std::uint64_t& l = s.level[device];
    if (x.address != 0) {
      auto [it, fresh] = s.live.emplace(std::make_pair(device, x.address), x.bytes);
      if (!fresh) {  // allocated again without a delete seen: replace
        l -= std::min(l, it->second);
        it->second = x.bytes;
      }
    }
    l += x.bytes;
    d.alloc_high_water = std::max(d.alloc_high_water, l);
  } else if (x.optype == 4 || x.optype == 20) {
    ++d.deletes;
    auto it = s.live.find({device, x.address});
    if (it != s.live.end()) {
      std::uint64_t& l = s.level[device];
      l -= std::min(l, it->second);
      s.live.erase(it);
    }
  }
  if (x.deep_copy == 0) return;
  // The deep copy that caused it ends after it (it runs inside the copy): its ops wait for it.
  if (RecentCopy* rc = s.recent_copies.find(x.deep_copy)) {
    TargetOps one;
    s.target_op(x, one);
    s.credit_copy(rc->key, x.start, one, !rc->counted, rc->bytes);
    rc->counted = true;
    return;
  }
  auto [w, fresh] = s.copy_ops_waiting.try_emplace(x.deep_copy);
  if (fresh || x.start < w->second.first_start) w->second.first_start = x.start;
  s.target_op(x, w->second);
}

void SummaryFold::omp_device_op(const OmpDeviceOp& x) { ++s_->dev(x.device).device_records; }

namespace {

void finish_coverage(const Timeline& t, Summary& s) {
  Coverage& c = s.coverage;
  const auto from_start = [&](std::uint64_t ns) { return ns > t.t0 ? ns - t.t0 : 0; };
  c.run_end = from_start(std::max(t.t_end, t.run_end));
  c.complete_until = c.run_end;
  std::vector<std::uint64_t> located(t.tracks.size(), 0);  // events lost in known stretches, by track
  for (const LostSpan& l : t.lost) {
    if (l.track >= t.tracks.size()) continue;
    const Track& tr = t.tracks[l.track];
    c.lost.push_back({tr.index, tr.os_tid, from_start(l.start), from_start(l.end), l.events, loss_reason_name(l.reason)});
    c.complete_until = std::min(c.complete_until, from_start(l.start));
    located[l.track] += l.events;
  }
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    const Track& tr = t.tracks[i];
    if (tr.dropped == 0) continue;
    const std::uint64_t until = tr.last_ns ? from_start(tr.last_ns) : 0;
    c.threads.push_back({tr.index, tr.os_tid, tr.dropped, until});
    if (tr.dropped > located[i]) c.complete_until = std::min(c.complete_until, until);  // some after its last event
  }
  if (!c.complete()) s.run_time = c.run_end;
}

}  // namespace

void SummaryFold::finish(const Timeline& t) {
  State& st = *s_;
  const InternTable& names = kob::names();
  Summary s;
  s.run_time = t.t_end - t.t0;
  s.dropped = t.dropped;
  s.problems = t.problems;
  s.filtered_kernels = t.filtered_kernels;
  s.filtered_regions = t.filtered_regions;
  s.cut_short = t.cut_short;
  s.cut_spans = t.cut_spans;
  finish_coverage(t, s);
  const auto on_lossy = [&](const std::vector<std::uint32_t>& tracks) {
    for (std::uint32_t i : tracks)
      if (i < t.tracks.size() && t.tracks[i].dropped != 0) return true;
    return false;
  };
  const auto helper = [&](std::size_t track) { return track < t.tracks.size() && t.tracks[track].hidden_helper; };

  for (const auto& [key, k] : st.kernels) {
    KernelStats ks;
    ks.name = names.str(key.first);
    ks.kind = kernel_kind_name(key.second);
    ks.device = device_label(k.devid);
    ks.calls = k.calls;
    ks.total = k.total;
    ks.min = k.min;
    ks.max = k.max;
    ks.partial = on_lossy(k.tracks);
    s.kernels.push_back(ks);
  }
  std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const KernelStats& a, const KernelStats& b) { return a.total > b.total; });
  for (auto& [path, r] : st.regions) {
    s.regions.push_back(r.st);
    s.regions.back().partial = on_lossy(r.tracks);
  }
  for (auto& [space, m] : st.memory) {
    s.memory.push_back(m);
    s.memory.back().space = names.str(space);
  }
  for (auto& [key, c] : st.copies) {
    s.copies.push_back(c);
    s.copies.back().dst_space = names.str(key.first);
    s.copies.back().src_space = names.str(key.second);
  }
  for (auto& [n, f] : st.fences) {
    s.fences.push_back(f);
    s.fences.back().name = names.str(n);
  }
  for (auto& [n, sec] : st.sections) {
    s.sections.push_back(sec);
    s.sections.back().name = names.str(n);
  }
  s.profile_events = st.profile_events;
  s.dual_view_syncs = st.dual_view_syncs;
  s.dual_view_modifies = st.dual_view_modifies;

  OmpSummary& o = s.openmp;
  o.records = t.omp_records;
  if (o.present()) {
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
        if (names.str(key.first) != ks.name || kernel_kind_name(key.second) != ks.kind) continue;
        OmpKernelStats k;
        k.name = ks.name;
        k.kind = ks.kind;
        auto calls = st.kernels.find(key);
        k.calls = calls == st.kernels.end() ? 0 : calls->second.calls;
        k.parallel_regions = a.parallel_regions;
        k.team_size_sum = a.team_size_sum;
        k.task_time = a.task_time;
        k.wait_time = a.wait_time;
        k.imbalance_sum = a.imbalance_sum;
        k.imbalance_regions = a.imbalance_regions;
        k.partial = ks.partial || lossy_team;
        o.kernels.push_back(k);
      }
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

  TargetSummary& g = s.target;
  g.records = t.omp_target_records;
  if (g.present()) {
    for (const OmpDevice& d : t.omp_devices) {
      TargetDeviceStats& x = st.dev(d.num);
      if (d.initialised) {
        x.type = names.str(d.type);
        x.path = d.traced ? "tracing" : "callbacks";
      }
    }
    // Submits whose target region never came: the host's, as a lookup that finds no region says.
    for (const auto& [id, w] : st.submits_waiting) {
      TargetDeviceStats& d = st.dev(kHostDevice);
      d.submits += w.first;
      d.submit_time += w.second;
    }
    st.submits_waiting.clear();
    g.regions_in_kernels = st.regions_in_kernels;
    g.regions_outside = st.regions_outside;
    for (auto& [num, d] : st.devs) {
      for (auto& [k, c] : st.target_regions[num]) {
        d.regions.push_back(c);
        d.regions.back().name = omp_names::target_kind(k);
      }
      for (auto& [k, c] : st.ops[num]) d.data_ops.push_back(c);
      for (auto& [k, c] : st.dirs[num]) d.transfers.push_back(c);
      d.alloc_final = st.level[num];
      g.devices.push_back(d);
    }
    // Deep-copy rows in the order of their first data op, as a walk of the ops by start gives.
    std::stable_sort(st.copy_order.begin(), st.copy_order.end(),
                     [&](const CopyKey& a, const CopyKey& b) { return st.copy_ops[a].first_start < st.copy_ops[b].first_start; });
    for (const CopyKey& key : st.copy_order) {
      TargetCopyStats& c = st.per_copy[key];
      c.name = std::string(names.str(std::get<0>(key))) + " <- " + names.str(std::get<1>(key));
      c.dst_space = names.str(std::get<2>(key));
      c.src_space = names.str(std::get<3>(key));
      for (auto& [k, op] : st.copy_ops[key].ops) c.ops.push_back(op);
      g.deep_copies.push_back(c);
    }
  }
  // Joins that never completed (a kernel dropped by --include/--exclude, a region whose tasks were
  // lost) add nothing more: drop them.
  st.joins.clear();
  st.waits.clear();
  st.refs.clear();
  st.copy_ops_waiting.clear();
  st.region_tracks.clear();
  summary_ = std::move(s);
}

}  // namespace kob
