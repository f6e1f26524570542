#include "common/timeline/timeline_builder.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "common/timeline/builder_parts.hpp"
#include "common/timeline/memory_levels.hpp"
#include "common/record/clock.hpp"
#include "common/record/intern.hpp"
#include "common/record/record_fields.hpp"
#include "common/timeline/omp_matcher.hpp"
#include "common/timeline/target_matcher.hpp"

namespace kob {

using builder::OpenEnd;

namespace {

// A thread's Kokkos profile regions: the stack of those open, and its path ("a/b/c").
struct RegionStack {
  std::vector<std::uint32_t> names;
  std::vector<std::uint64_t> starts;
  std::string path;
  void rebuild(const InternTable& interned) {
    path.clear();
    for (std::uint32_t n : names) {
      if (!path.empty()) path += '/';
      path += interned.str(n);
    }
  }
};

struct OpenSection {
  std::uint64_t time;
  std::uint32_t track;
};

// The Kokkos kernels begun and not yet ended, by id. A kernel mostly ends before the next one
// begins: the latest begun is kept apart from the map, so that most begin/end pairs touch no hash
// table and allocate nothing (its region string keeps its capacity too).
class OpenKernels {
 public:
  // The span of a kernel begun now, to fill; a kernel still open with the same id is replaced.
  KernelSpan& begin(std::uint64_t id) {
    if (has_latest_ && latest_.id != id) map_[latest_.id] = std::move(latest_);
    if (!map_.empty()) map_.erase(id);
    has_latest_ = true;
    std::string region = std::move(latest_.region);
    latest_ = KernelSpan();
    latest_.region = std::move(region);
    latest_.region.clear();
    latest_.id = id;
    return latest_;
  }
  KernelSpan* find(std::uint64_t id) {
    if (has_latest_ && latest_.id == id) return &latest_;
    auto it = map_.find(id);
    return it == map_.end() ? nullptr : &it->second;
  }
  void erase(KernelSpan* k) {
    if (k == &latest_) has_latest_ = false;
    else map_.erase(k->id);
  }
  bool empty() const { return !has_latest_ && map_.empty(); }
  std::size_t size() const { return map_.size() + (has_latest_ ? 1 : 0); }
  // All of them in one map (for closing them at the end).
  std::unordered_map<std::uint64_t, KernelSpan>& all() {
    if (has_latest_) map_[latest_.id] = std::move(latest_);
    has_latest_ = false;
    return map_;
  }

 private:
  KernelSpan latest_;
  bool has_latest_ = false;
  std::unordered_map<std::uint64_t, KernelSpan> map_;
};

}  // namespace

struct TimelineBuilder::Impl {
  Impl(SpanSink& s, int initial_device_num, CodeRange omp_runtime_code)
      : sink(s), ctx{s, rest, problems}, omp(ctx, omp_runtime_code), target(ctx, initial_device_num), names(kob::names()) {}

  // A run of one track's records (TimelineBuilder::record_run), the track looked up once.
  void record_run(std::uint32_t track, const Event* begin, const Event* end) {
    if (track >= rest.tracks.size()) return;
    Track& tr = rest.tracks[track];
    // Most records are OpenMP host events: each stretch of them goes straight to the matcher in
    // one call (what record_in does with them one by one).
    for (const Event* e = begin; e < end;) {
      if (!omp_only(e->type)) {
        record_in(tr, track, *e, e->ns);
        e = e->next();
        continue;
      }
      // host_time of each, with the figures in registers (a store per field per record was 1 % of
      // a summary conversion).
      const Event* j = e;
      std::size_t n = 0;
      std::uint64_t lo = t_min, hi = t_max, last = tr.last_ns;
      for (; j < end && omp_only(j->type); j = j->next(), ++n) {
        lo = std::min(lo, j->ns);
        hi = std::max(hi, j->ns);
        last = std::max(last, j->ns);
      }
      tr.host_records += n;
      tr.last_ns = last;
      t_min = lo;
      t_max = hi;
      omp.record_run(e, j, n, track);
      e = j;
    }
  }
  // The record types record_in hands to the OpenMP matcher with nothing else to do: the OpenMP
  // host events but thread_begin (which may tell a track's thread type).
  static bool omp_only(Ev t) { return t > Ev::OmpThreadBegin && t < Ev::OmpTargetBegin; }
  // A host record of the track at ns: its count and last time, the run's first and last.
  void host_time(Track& tr, std::uint64_t ns) {
    ++tr.host_records;
    tr.last_ns = std::max(tr.last_ns, ns);
    t_min = std::min(t_min, ns);
    t_max = std::max(t_max, ns);
  }
  inline void record_in(Track& tr, std::uint32_t track, const Event& r, std::uint64_t ns);
  // record_in, by family; true when the record was theirs.
  [[gnu::always_inline]] inline bool kernel_record(std::uint32_t track, const Event& r, std::uint64_t ns);
  inline bool region_record(std::uint32_t track, const Event& r, std::uint64_t ns);
  inline bool data_record(std::uint32_t track, const Event& r, std::uint64_t ns);
  inline bool mpi_record(std::uint32_t track, const Event& r, std::uint64_t ns);
  void tool_flush(Track& tr, std::uint32_t track, const Event& r, std::uint64_t ns);
  void finish(bool ended_cleanly, std::uint64_t run_end);

  SpanSink& sink;
  Timeline rest;
  builder::ProblemCounter problems;
  builder::Context ctx;
  builder::OmpMatcher omp;
  builder::TargetMatcher target;
  const InternTable& names;
  std::uint64_t t_min = std::numeric_limits<std::uint64_t>::max(), t_max = 0;

  OpenKernels open_kernels;
  std::unordered_map<std::uint64_t, FenceSpan> open_fences;
  std::unordered_map<std::uint64_t, DeepCopySpan> open_copies;
  std::unordered_map<std::uint32_t, std::uint32_t> section_names;  // id -> interned name
  std::unordered_map<std::uint32_t, OpenSection> open_sections;
  std::vector<RegionStack> regions;  // by track
  std::vector<std::vector<MpiSpan>> open_mpi;  // by track: MPI calls begun, innermost last
  std::size_t open_mpi_count = 0;
  MemoryLevels memory_levels;
};

TimelineBuilder::TimelineBuilder(SpanSink& sink, int initial_device_num, CodeRange omp_runtime_code)
    : impl_(std::make_unique<Impl>(sink, initial_device_num, omp_runtime_code)) {}
TimelineBuilder::~TimelineBuilder() = default;

std::uint32_t TimelineBuilder::add_thread(const ThreadSource& b) {
  Impl& m = *impl_;
  const auto track = static_cast<std::uint32_t>(m.rest.tracks.size());
  m.rest.tracks.push_back(Track{b.index, b.os_tid, b.omp_thread_type});
  Track& tr = m.rest.tracks.back();
  tr.omp_proc = b.omp_proc;
  tr.omp_place = b.omp_place;
  tr.dropped = b.dropped;
  m.rest.dropped += b.dropped;
  for (const Loss& l : b.losses) {
    m.rest.lost.push_back({track, clock::to_ns(l.first_tick), clock::to_ns(l.last_tick), l.events, l.reason});
    // A stretch lost before every recorded event (or after) is still part of the run: the time
    // line starts (ends) with it, so that the summary can say when it was.
    m.t_min = std::min(m.t_min, m.rest.lost.back().start);
    m.t_max = std::max(m.t_max, m.rest.lost.back().end);
  }
  m.regions.emplace_back();
  m.open_mpi.emplace_back();
  m.omp.add_thread(track);
  return track;
}

void TimelineBuilder::record_run(std::uint32_t track, const Event* begin, const Event* end) {
  if (poller_ == nullptr) {
    impl_->record_run(track, begin, end);
    return;
  }
  // The poller is called between records, every poll_in_ records whatever the runs.
  while (begin < end) {
    const Event* stop = begin;
    std::uint32_t k = 0;
    while (stop < end && k < poll_in_) stop = stop->next(), ++k;
    impl_->record_run(track, begin, stop);
    begin = stop;
    poll_in_ -= k;
    if (poll_in_ == 0) poll_in_ = std::max<std::uint32_t>(1, poller_->poll(*this));
  }
}

void TimelineBuilder::set_poller(Poller* p) {
  poller_ = p;
  poll_in_ = 1;
}

bool TimelineBuilder::can_cut() const {
  const Impl& m = *impl_;
  return m.open_kernels.empty() && m.open_fences.empty() && m.open_copies.empty() && m.open_mpi_count == 0 && m.omp.can_cut() &&
         m.target.can_cut();
}

void TimelineBuilder::open_state(builder::OpenState& out) const {
  const Impl& m = *impl_;
  out.clear();
  out.can_cut = can_cut();
  for (std::uint32_t track = 0; track < m.regions.size(); ++track)
    for (std::uint64_t start : m.regions[track].starts) out.open.push_back({track, start});
  m.omp.open_state(out);
}

const Timeline& TimelineBuilder::so_far() {
  Impl& m = *impl_;
  m.rest.t0 = m.t_min <= m.t_max ? m.t_min : 0;
  m.target.devices(m.rest.omp_devices);
  return m.rest;
}

std::size_t TimelineBuilder::kept() const {
  const Impl& m = *impl_;
  return m.open_kernels.size() + m.open_fences.size() + m.open_copies.size() + m.open_sections.size() + m.open_mpi_count + m.omp.kept() +
         m.target.kept();
}

inline void TimelineBuilder::Impl::record_in(Track& tr, std::uint32_t track, const Event& r, std::uint64_t ns) {
  if (r.type == Ev::OmpDeviceRecord) {  // its times are in its fields, already in host ns
    using F = fields::OmpDeviceRecord;
    if (F::start.get(r) != 0) {
      t_min = std::min(t_min, F::start.get(r));
      t_max = std::max(t_max, std::max(F::start.get(r), F::end.get(r)));
    }
    target.record(r, 0, track);
    ++tr.device_records;
    return;
  }
  host_time(tr, ns);
  // A raw trace cut short may lack the thread's identity entry: its thread_begin tells the type.
  if (r.type == Ev::OmpThreadBegin && tr.omp_thread_type == 0) tr.omp_thread_type = fields::OmpThread::thread_type.get(r);
  if (r.type >= Ev::OmpFirst) {  // OpenMP: no Kokkos or MPI record type is numbered as high
    if (builder::TargetMatcher::handles(r.type)) {
      target.record(r, ns, track);
    } else if (r.type < Ev::OmpLast) {
      omp.record(r, track);
    }
    return;
  }
  if (r.type == Ev::ToolFlush) {
    tool_flush(tr, track, r, ns);
    return;
  }
  if (!kernel_record(track, r, ns) && !region_record(track, r, ns) && !data_record(track, r, ns)) mpi_record(track, r, ns);
}

// The thread copied its own slots: a span of its own, and the track's count.
void TimelineBuilder::Impl::tool_flush(Track& tr, std::uint32_t track, const Event& r, std::uint64_t ns) {
  using F = fields::ToolFlush;
  ToolFlushSpan s;
  s.start = ns;
  s.track = track;
  s.records = F::records.get(r);
  s.end = ns + F::ticks.get(r);  // made ns by the decoder (event.hpp)
  ++tr.tool_flushes;
  tr.tool_flush_ns += s.dur();
  t_max = std::max(t_max, s.end);
  sink.tool_flush(s);
}

// Kokkos kernels and fences.
inline bool TimelineBuilder::Impl::kernel_record(std::uint32_t track, const Event& r, std::uint64_t ns) {
  switch (r.type) {
    case Ev::KernelBegin: {
      using F = fields::Kernel;
      KernelSpan& k = open_kernels.begin(F::id.get(r));
      k.start = ns;
      k.track = track;
      k.name = F::name.get(r);
      k.kind = F::kind.get(r);
      k.devid = F::devid.get(r);
      k.region = regions[track].path;
      break;
    }
    case Ev::KernelEnd: {
      KernelSpan* k = open_kernels.find(fields::Kernel::id.get(r));
      if (k == nullptr) {
        problems.add("kokkosp_end_parallel_* with an id that no begin hook returned: ignored");
        break;
      }
      k->end = ns;
      sink.kernel(*k);
      open_kernels.erase(k);
      break;
    }
    case Ev::FenceBegin: {
      FenceSpan f;
      f.start = ns;
      f.track = track;
      f.id = fields::Fence::id.get(r);
      f.name = fields::Fence::name.get(r);
      f.devid = fields::Fence::devid.get(r);
      open_fences[f.id] = f;
      break;
    }
    case Ev::FenceEnd: {
      auto it = open_fences.find(fields::Fence::id.get(r));
      if (it == open_fences.end()) {
        problems.add("kokkosp_end_fence with an id that no begin hook returned: ignored");
        break;
      }
      it->second.end = ns;
      sink.fence(it->second);
      open_fences.erase(it);
      break;
    }
    default:
      return false;
  }
  return true;
}

// Kokkos profile regions and sections.
inline bool TimelineBuilder::Impl::region_record(std::uint32_t track, const Event& r, std::uint64_t ns) {
  switch (r.type) {
    case Ev::RegionPush: {
      RegionStack& st = regions[track];
      st.names.push_back(fields::Named::name.get(r));
      st.starts.push_back(ns);
      st.rebuild(names);
      break;
    }
    case Ev::RegionPop: {
      RegionStack& st = regions[track];
      if (st.names.empty()) {
        problems.add("kokkosp_pop_profile_region with no region open on that thread: ignored");
        break;
      }
      RegionSpan s;
      s.start = st.starts.back();
      s.end = ns;
      s.track = track;
      s.name = st.names.back();
      s.path = st.path;
      s.depth = static_cast<std::uint32_t>(st.names.size() - 1);
      sink.region(s);
      st.names.pop_back();
      st.starts.pop_back();
      st.rebuild(names);
      break;
    }
    case Ev::SectionCreate:
      section_names[fields::Section::id.get(r)] = fields::Section::name.get(r);
      break;
    case Ev::SectionStart: {
      const auto id = fields::Section::id.get(r);
      if (!open_sections.emplace(id, OpenSection{ns, track}).second)
        problems.add("kokkosp_start_profile_section on a section already started: ignored");
      break;
    }
    case Ev::SectionStop: {
      const auto id = fields::Section::id.get(r);
      auto it = open_sections.find(id);
      if (it == open_sections.end()) {
        problems.add("kokkosp_stop_profile_section on a section not started: ignored");
        break;
      }
      SectionSpan s;
      s.start = it->second.time;
      s.end = ns;
      s.track = it->second.track;
      s.end_track = track;
      s.section = id;
      auto n = section_names.find(id);
      s.name = n == section_names.end() ? InternTable::kNullName : n->second;
      if (n == section_names.end()) problems.add("a profile section id that kokkosp_create_profile_section never returned");
      sink.section(s);
      open_sections.erase(it);
      break;
    }
    case Ev::SectionDestroy:
      break;
    default:
      return false;
  }
  return true;
}

// Kokkos allocations, deep copies, profile events and DualView marks.
inline bool TimelineBuilder::Impl::data_record(std::uint32_t track, const Event& r, std::uint64_t ns) {
  switch (r.type) {
    case Ev::Alloc:
    case Ev::Dealloc: {
      MemoryEvent m;
      m.time = ns;
      m.track = track;
      m.alloc = r.type == Ev::Alloc;
      m.space = fields::Memory::space.get(r);
      m.name = fields::Memory::name.get(r);
      m.ptr = fields::Memory::ptr.get(r);
      m.bytes = fields::Memory::bytes.get(r);
      memory_levels.account(m, problems);
      target.memory(m);  // sets the allocation's id
      sink.memory(m);
      break;
    }
    case Ev::DeepCopyBegin: {
      DeepCopySpan d;
      d.start = ns;
      d.track = track;
      using F = fields::DeepCopy;
      d.id = F::id.get(r);
      d.dst_space = F::dst_space.get(r);
      d.dst_name = F::dst_name.get(r);
      d.src_space = F::src_space.get(r);
      d.src_name = F::src_name.get(r);
      d.bytes = F::bytes.get(r);
      open_copies[d.id] = d;
      break;
    }
    case Ev::DeepCopyEnd: {
      auto it = open_copies.find(fields::DeepCopy::id.get(r));
      if (it == open_copies.end()) {
        problems.add("kokkosp_end_deep_copy with no deep copy open on that thread: ignored");
        break;
      }
      it->second.end = ns;
      sink.deep_copy(it->second);
      open_copies.erase(it);
      break;
    }
    case Ev::ProfileEvent:
      sink.instant({ns, track, fields::Named::name.get(r)});
      break;
    case Ev::DualView: {
      DualViewEvent d;
      d.time = ns;
      d.track = track;
      d.name = fields::DualView::name.get(r);
      d.modify = fields::DualView::modify.get(r);
      d.ptr = fields::DualView::ptr.get(r);
      d.on_device = fields::DualView::on_device.get(r);
      sink.dual_view(d);
      break;
    }
    default:
      return false;
  }
  return true;
}

// MPI calls (the PMPI layer).
inline bool TimelineBuilder::Impl::mpi_record(std::uint32_t track, const Event& r, std::uint64_t ns) {
  switch (r.type) {
    case Ev::MpiBegin: {
      MpiSpan s;
      s.start = ns;
      s.track = track;
      s.call = fields::Mpi::call.get(r);
      open_mpi[track].push_back(s);
      ++open_mpi_count;
      break;
    }
    case Ev::MpiEnd: {
      // MPI calls do not nest on one thread (the layer calls PMPI only): the innermost is it.
      std::vector<MpiSpan>& st = open_mpi[track];
      if (st.empty() || st.back().call != fields::Mpi::call.get(r)) {
        problems.add("an MPI call ended that had not begun on that thread: ignored");
        break;
      }
      MpiSpan s = st.back();
      st.pop_back();
      --open_mpi_count;
      s.end = ns;
      s.bytes = fields::Mpi::bytes.get(r);
      s.peer = fields::Mpi::peer.get(r);
      sink.mpi(s);
      break;
    }
    default:
      return false;
  }
  return true;
}

void TimelineBuilder::finish(bool ended_cleanly, std::uint64_t run_end) { impl_->finish(ended_cleanly, run_end); }

void TimelineBuilder::Impl::finish(bool ended_cleanly, std::uint64_t run_end) {
  if (t_min > t_max) t_min = t_max = 0;
  rest.t0 = t_min;
  rest.t_end = t_max;
  rest.run_end = run_end;
  // Whatever is still open ran until the end of the run (or, cut short, until its thread's last
  // event), unless its end was dropped.
  rest.cut_short = !ended_cleanly;
  const OpenEnd open_end(rest, !ended_cleanly);
  const bool lost_ends = rest.dropped > 0;
  using builder::close_unended;
  close_unended(open_kernels.all(), [&](const KernelSpan& s) { sink.kernel(s); }, "a Kokkos kernel", lost_ends, open_end, problems);
  close_unended(open_fences, [&](const FenceSpan& s) { sink.fence(s); }, "a Kokkos fence", lost_ends, open_end, problems);
  close_unended(open_copies, [&](const DeepCopySpan& s) { sink.deep_copy(s); }, "a Kokkos deep copy", lost_ends, open_end, problems);
  for (std::vector<MpiSpan>& st : open_mpi) {
    while (!st.empty()) {  // innermost first
      MpiSpan s = st.back();
      st.pop_back();
      --open_mpi_count;
      problems.add(lost_ends ? builder::discarded_unended("an MPI call") : open_end.never_ended("an MPI call"));
      if (lost_ends) continue;
      open_end.close(s);
      sink.mpi(s);
    }
  }
  for (std::uint32_t track = 0; track < regions.size(); ++track) {
    RegionStack& st = regions[track];
    while (!st.names.empty()) {  // innermost first
      RegionSpan s;
      s.start = st.starts.back();
      s.track = track;
      s.name = st.names.back();
      s.path = st.path;
      s.depth = static_cast<std::uint32_t>(st.names.size() - 1);
      open_end.close(s);
      sink.region(s);
      problems.add(builder::region_never_popped(open_end.cut()));
      st.names.pop_back();
      st.starts.pop_back();
      st.rebuild(names);
    }
  }
  omp.finish(lost_ends, open_end);
  target.finish(lost_ends, open_end);
  // Sections left open, by start.
  std::vector<std::pair<std::uint32_t, OpenSection>> sections(open_sections.begin(), open_sections.end());
  std::sort(sections.begin(), sections.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.time, a.first) < std::tie(b.second.time, b.first);
  });
  for (const auto& [id, m] : sections) {
    SectionSpan s;
    s.start = m.time;
    s.track = s.end_track = m.track;
    open_end.close(s);
    s.section = id;
    auto n = section_names.find(id);
    s.name = n == section_names.end() ? InternTable::kNullName : n->second;
    sink.section(s);
    problems.add(builder::section_never_stopped(open_end.cut()));
  }
  open_sections.clear();
  std::sort(rest.lost.begin(), rest.lost.end(),
            [](const LostSpan& a, const LostSpan& b) { return std::tie(a.track, a.start) < std::tie(b.track, b.start); });
  problems.flush(rest.problems);
  sink.finish(rest);
}

void TimelineCollector::finish(const Timeline& rest) {
  Timeline& t = t_;
  t.tracks = rest.tracks;
  t.omp_devices = rest.omp_devices;
  t.omp_target_records = rest.omp_target_records;
  t.omp_records = rest.omp_records;
  t.omp_tasks_completed = rest.omp_tasks_completed;
  t.omp_tasks_cancelled = rest.omp_tasks_cancelled;
  t.omp_tasks_discarded = rest.omp_tasks_discarded;
  t.t0 = rest.t0;
  t.t_end = rest.t_end;
  t.dropped = rest.dropped;
  t.lost = rest.lost;
  t.run_end = rest.run_end;
  t.cut_short = rest.cut_short;
  t.cut_spans = rest.cut_spans;
  t.problems = rest.problems;
  t.filtered_kernels = rest.filtered_kernels;
  t.filtered_regions = rest.filtered_regions;

  sort_spans(t);
}

namespace {

// A stable sort for spans, which are appended as they end and so are nearly in start order
// already: an insertion sort moves each only as far as it is out of place. Where that adds up to
// too much (many spans enclosing many others), std::stable_sort finishes the job.
template <class T, class Less>
void sort_nearly_sorted(std::vector<T>& v, Less less) {
  if (v.size() < 2 || std::is_sorted(v.begin(), v.end(), less)) return;
  std::size_t budget = 8 * v.size() + 64;  // element moves
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (!less(v[i], v[i - 1])) continue;
    T x = std::move(v[i]);
    std::size_t j = i;
    do {
      v[j] = std::move(v[j - 1]);
      --j;
    } while (j > 0 && less(x, v[j - 1]) && --budget != 0);
    v[j] = std::move(x);
    if (budget == 0) {
      std::stable_sort(v.begin(), v.end(), less);
      return;
    }
  }
}

}  // namespace

void sort_spans(Timeline& t) {
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); };
  // A child pushed and popped on its parent's ticks has the same span: depth keeps it inside.
  sort_nearly_sorted(t.regions, [&](const RegionSpan& a, const RegionSpan& b) {
    return by_start(a, b) || (a.start == b.start && a.end == b.end && a.depth < b.depth);
  });
  auto by_start_all = [&](auto&... spans) { (sort_nearly_sorted(spans, by_start), ...); };
  by_start_all(t.kernels, t.fences, t.sections, t.deep_copies, t.omp_parallels, t.omp_implicit_tasks, t.omp_works,
               t.omp_syncs, t.omp_tasks, t.omp_mutexes, t.omp_targets, t.omp_data_ops, t.omp_submits, t.omp_device_ops,
               t.mpi_calls, t.tool_flushes);
  // Instants, memory events, creates and loads come in time order already.
}

}  // namespace kob
