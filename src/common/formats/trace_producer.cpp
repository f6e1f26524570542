#include "common/formats/trace_producer.hpp"

#include <algorithm>
#include <deque>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <unordered_map>

#include "common/timeline/devid.hpp"
#include "common/record/intern.hpp"
#include "common/record/mpi_calls.hpp"
#include "common/record/record_fields.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/analysis/summary.hpp"
#include "common/formats/trace_flows.hpp"
#include "common/support/worker_pool.hpp"

namespace kob {

namespace {

using trace::Args;
using trace::Event;
using trace::Phase;
using trace::SpanKind;

constexpr std::uint64_t ompt_scope_begin_value = 1;  // ompt_scope_endpoint_t

// Device tracks: id kDeviceIdBase + device number, after the host threads.
constexpr std::uint64_t kDeviceIdBase = 1000000;
// libomp's hidden-helper threads sort as a group of their own after the program's threads.
constexpr std::uint64_t kHiddenHelperSortBase = 500000;

// 32 bytes: one per complete event of the run, so its size counts. An index fits 32 bits (a
// Timeline vector of 2^32 spans would need hundreds of GiB).
struct XRef {
  std::uint32_t track;
  std::uint32_t index;
  std::uint64_t start, end;
  SpanKind kind;
};

// What a thread making events needs of its own: the producer's thread (the sink itself), or a
// worker feeding one of its shards (TraceSink::split).
struct Ctx {
  explicit Ctx(trace::TraceSink* s) : sink(s) {}
  trace::TraceSink* sink;
  Args args;
  std::string s1;                          // a composed name or value, valid during one event
  std::span<const std::uint64_t> out, in;  // the event's flow ids
  std::string label;                       // the device label of label_devid
  std::uint32_t label_devid = 0;
  bool label_made = false;
};

// Where an OpenMP construct is: its name before its location, its code address, its kernel.
struct Site {
  std::string_view construct;
  std::uint64_t codeptr = 0, kernel = 0;
};

class Producer {
 public:
  Producer(trace::TraceSink& sink, const TraceInfo& info) : sink_(sink), info_(info), sources_(info.sources) {}

  void begin(std::uint64_t t0) {
    if (begun_) return;
    begun_ = true;
    // Several threads make the complete events when the sink can take them so (before process()).
    if (info_.jobs > 1 && sink_.split(info_.jobs)) {
      for (unsigned i = 0; i < info_.jobs; ++i) shards_.push_back(std::make_unique<Ctx>(&sink_.shard(i)));
      pool_.start(info_.jobs - 1);
    }
    sink_.process(info_.pid, info_.process_name, t0);
  }

  void window(const Timeline& w) {
    t_ = &w;
    refresh_names();
    if (!begun_) begin(w.t0);
    if (host_tracks_ == UINT32_MAX) host_tracks_ = static_cast<std::uint32_t>(w.tracks.size());
    add_devices(w);
    trace::TraceFlows& flows = flows_store_;
    flows.build(w, device_tracks_, flow_base_);
    flows_ = &flows;
    complete_events();
    sections();
    memory();
    kokkos_instants();
    omp_instants();
    device_loads();
    for (const trace::Flow& f : flows.flows()) sink_.flow(f);
    flow_base_ += flows.flows().size();
    flows_ = nullptr;
    sink_.window_end();
    t_ = nullptr;
  }

  bool end(const Timeline& rest, const std::string& other_data_json) {
    t_ = &rest;
    refresh_names();
    if (!begun_) begin(rest.t0);
    if (host_tracks_ == UINT32_MAX) host_tracks_ = static_cast<std::uint32_t>(rest.tracks.size());
    add_devices(rest);
    // Tracks no event used still belong to the run: every thread and device is listed.
    for (std::uint32_t i = 0; i < host_tracks_ && i < rest.tracks.size(); ++i) thread_track(i);
    for (std::uint32_t i = 0; i < rest.omp_devices.size(); ++i) device_track_at(i);
    device_instants();
    t_ = nullptr;
    return sink_.finish(other_data_json);
  }

  std::uint64_t clipped() const { return clipped_; }

 private:
  std::string track_name(std::uint32_t i) const {
    const Track& tr = t_->tracks[i];
    if (tr.hidden_helper) return "hidden helper " + std::to_string(tr.hidden_helper_num);
    const bool omp = tr.omp_thread_type == 1 || tr.omp_thread_type == 2;
    return (omp ? "omp thread " : "thread ") + std::to_string(tr.index);
  }
  std::uint64_t track_sort_index(std::uint32_t i) const {
    const Track& tr = t_->tracks[i];
    return tr.hidden_helper ? kHiddenHelperSortBase + tr.hidden_helper_num : tr.index;
  }

  // Tracks are declared when first used (a window at a time, the rest at the end). Indices:
  // host threads 0..host_tracks_-1, then device i at host_tracks_ + 2i and lane n at
  // host_tracks_ + 2n + 1, so that neither needs to know how many of the other will come.
  std::uint32_t thread_track(std::uint32_t i) {
    if (i < declared_.size() && declared_[i]) return i;
    const Track& tr = t_->tracks[i];
    // The OS may reuse a thread id after a thread ends: a later track with it gets an id of its own.
    std::uint64_t n = 0;
    for (std::uint32_t j = 0; j < i; ++j) n += t_->tracks[j].os_tid == tr.os_tid ? 1 : 0;
    trace::TrackDesc d;
    d.index = i;
    d.id = n == 0 ? tr.os_tid : tr.os_tid + (n << 32);
    d.kind = trace::TrackKind::Thread;
    d.os_tid = tr.os_tid;
    d.os_tid_first = n == 0;
    d.listed = !tr.device_only();  // a runtime thread that only delivered device buffers
    d.name = track_name(i);
    d.sort_index = track_sort_index(i);
    declare(d);
    return i;
  }

  std::uint32_t device_track_at(std::uint32_t i) {
    const std::uint32_t index = host_tracks_ + 2 * i;
    if (index < declared_.size() && declared_[index]) return index;
    const OmpDevice& dev = devices_[i];
    trace::TrackDesc d;
    d.index = index;
    d.id = static_cast<std::uint64_t>(static_cast<std::int64_t>(kDeviceIdBase) + dev.num);
    d.kind = trace::TrackKind::Device;
    d.name = "device " + std::to_string(dev.num) + " (" + std::string(dev.type != 0 ? names_.str(dev.type) : "unknown") + ")";
    d.sort_index = d.id;
    declare(d);
    return index;
  }

  void declare(const trace::TrackDesc& d) {
    if (declared_.size() <= d.index) {
      declared_.resize(d.index + 1, false);
      ids_.resize(d.index + 1, 0);
    }
    declared_[d.index] = true;
    ids_[d.index] = d.id;
    sink_.track(d);
  }

  // The devices known so far, each at the position where it first appeared (a device's number
  // never changes; its type and times are final once it is initialised).
  void add_devices(const Timeline& w) {
    for (const OmpDevice& d : w.omp_devices) {
      auto [it, fresh] = device_tracks_.try_emplace(d.num, host_tracks_ + 2 * static_cast<std::uint32_t>(devices_.size()));
      if (fresh) {
        devices_.push_back(d);
      } else {
        devices_[(it->second - host_tracks_) / 2] = d;
      }
    }
  }

  // The track of an event: a host thread's or a device's, declared on first use.
  std::uint32_t use(std::uint32_t track) {
    if (track < declared_.size() && declared_[track]) return track;
    if (track < host_tracks_) return thread_track(track);
    return device_track_at((track - host_tracks_) / 2);
  }

  std::uint32_t device_track(int num) const {
    auto it = device_tracks_.find(num);
    return it == device_tracks_.end() ? UINT32_MAX : it->second;
  }

  void refresh_names() {
    const std::size_t n = kob::names().size();
    if (n != names_.by_id.size()) names_.by_id = kob::names().snapshot();
  }

  void emit(Phase phase, const char* cat, std::string_view name, std::uint32_t track, std::uint64_t ts, const Args* args,
            std::uint64_t end = 0, std::uint64_t id = 0, bool name_fixed = false) {
    emit_to(main_, phase, cat, name, track, ts, args, end, id, name_fixed);
  }
  void emit_to(Ctx& c, Phase phase, const char* cat, std::string_view name, std::uint32_t track, std::uint64_t ts,
               const Args* args, std::uint64_t end = 0, std::uint64_t id = 0, bool name_fixed = false) {
    Event e;
    e.phase = phase;
    e.cat = cat;
    e.name = name;
    e.name_fixed = name_fixed;
    e.track = use(track);
    e.ts = ts;
    e.end = end;
    e.id = id;
    e.args = args;
    e.flows_out = c.out;
    e.flows_in = c.in;
    c.sink->event(e);
    c.out = {};
    c.in = {};
  }
  void with_flows(Ctx& c, SpanKind kind, std::size_t index) { flows_->at(kind, index, c.out, c.in); }
  void instant(const char* cat, std::string_view name, std::uint32_t track, std::uint64_t ts, const Args* args) {
    emit(Phase::Instant, cat, name, track, ts, args);
  }

  // Complete events, made to nest per track.
  void complete_events() {
    const Timeline& t = *t_;
    // Every complete event once, grouped by track: one pass counts per track, one places.
    auto each = [&](auto&& fn) {
      auto of = [&](const auto& v, SpanKind kind) {
        for (std::size_t i = 0; i < v.size(); ++i) fn(v[i].track, v[i].start, v[i].end, kind, i);
      };
      trace::for_each_thread_spans(t, of);
      for (std::size_t i = 0; i < t.omp_device_ops.size(); ++i) {
        const OmpDeviceOp& d = t.omp_device_ops[i];
        const std::uint32_t track = device_track(d.device);
        if (track != UINT32_MAX) fn(track, d.start, d.end, SpanKind::OmpDevice, i);
      }
    };
    // Tracks by index: host threads and devices (lanes come after the nesting below).
    // The arrays below keep their storage from window to window (fresh pages each window were a
    // tenth of a conversion's time).
    std::vector<std::size_t>& at = track_at_;
    at.assign(host_tracks_ + 2 * devices_.size() + 1, 0);
    each([&](std::uint32_t track, std::uint64_t, std::uint64_t, SpanKind, std::size_t) { ++at[track + 1]; });
    for (std::size_t i = 1; i < at.size(); ++i) at[i] += at[i - 1];
    // Not a vector: every element is written below, and zeroing this (the largest array of the
    // conversion) first would cost a pass of its own.
    if (xs_capacity_ < at.back()) {
      xs_capacity_ = std::max(at.back(), 2 * xs_capacity_);
      xs_store_.reset(new XRef[xs_capacity_]);
    }
    const std::span<XRef> xs(xs_store_.get(), at.back());
    {
      std::vector<std::size_t>& next = track_next_;
      next.assign(at.begin(), at.end() - 1);
      each([&](std::uint32_t track, std::uint64_t start, std::uint64_t end, SpanKind kind, std::size_t i) {
        xs[next[track]++] = {track, static_cast<std::uint32_t>(i), start, end, kind};
      });
    }
    sort_tracks(xs, at);
    std::uint64_t clipped = 0;
    // A mutex may be held across constructs (set in one masked block, unset after a barrier in
    // another): such a hold keeps its true span on a hold lane of its thread instead of being cut.
    auto is_hold = [&](const XRef& x) { return x.kind == SpanKind::OmpMutex && t.omp_mutexes[x.index].hold; };
    std::vector<std::size_t>& moved = moved_;  // indices into xs of holds that go to a lane
    moved.clear();
    std::vector<Open>& ends = ends_;  // open parents on the current track
    ends.clear();
    std::uint32_t cur_track = UINT32_MAX;
    for (std::size_t n = 0; n < xs.size(); ++n) {
      XRef& x = xs[n];
      if (x.track != cur_track) {
        ends.clear();
        cur_track = x.track;
      }
      while (!ends.empty() && ends.back().end <= x.start) ends.pop_back();
      while (!ends.empty() && x.end > ends.back().end && is_hold(xs[ends.back().at])) {
        moved.push_back(ends.back().at);  // what it holds across began inside it and ends after it
        ends.pop_back();
      }
      if (is_hold(x) && !ends.empty() && x.end > ends.back().end) {
        moved.push_back(n);  // it outlives the construct it began in
        continue;
      }
      if (!ends.empty() && x.end > ends.back().end) {
        x.end = ends.back().end;
        // An explicit task that is switched out (at a taskwait, say) leaves what it opened running
        // past its stretch: expected, cut without counting.
        if (ends.back().kind != SpanKind::OmpTask) ++clipped;
      }
      ends.push_back({x.end, x.kind, n});
    }
    clipped_ += clipped;
    lanes(xs, moved);
    if (shards_.empty()) {
      for (const XRef& x : xs) complete_event(main_, x);
      return;
    }
    // What the threads below would change is done here, in the order one thread would: every
    // track declared, every construct located (its name and `source` kept for the event); and
    // each thread's events listed (every n-th track's, in order).
    const auto n = static_cast<unsigned>(shards_.size());
    located_at_.resize(xs.size());
    for (auto& items : shard_items_) items.clear();
    shard_items_.resize(n);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const XRef& x = xs[i];
      use(x.track);
      shard_items_[x.track % n].push_back(static_cast<std::uint32_t>(i));
      if (const Site st = site(x); !st.construct.empty()) {
        Args& a = main_.args.clear();
        Located& l = located_at_[i];
        l.name = locate(a, st.construct, st.codeptr, st.kernel);
        l.has_source = a.size() != 0;  // locate's one arg, `source`: a resolver's text, it stays
        l.source = l.has_source ? a.begin()->s : std::string_view();
      }
    }
    sink_.shards_begin();
    pool_.run(n, [&](unsigned s) {
      Ctx& c = *shards_[s];
      for (const std::uint32_t i : shard_items_[s]) complete_event(c, xs[i], &located_at_[i]);
    });
  }

  // Outer first per track: by start, longer first, then kind (equal spans: regions outside
  // kernels is as good as any fixed order), then the timeline's own order (for equal regions,
  // outer first).
  static bool before(const XRef& a, const XRef& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.index < b.index;
  }

  // Sorts each track's events (xs[at[tr]] .. xs[at[tr + 1]]) as `before` says. Each of the
  // Timeline's vectors is (nearly always) sorted by start already, so each track's runs (one per
  // vector) are sorted if they are not, then merged: no comparison sort of the whole, which took
  // most of the producer's time.
  void sort_tracks(std::span<XRef> xs, const std::vector<std::size_t>& at) {
    std::vector<std::size_t>& runs = runs_;
    for (std::size_t tr = 0; tr + 1 < at.size(); ++tr) {
      const std::size_t b = at[tr], e = at[tr + 1];
      if (e - b < 2) continue;
      runs.clear();
      for (std::size_t i = b; i < e; ++i)
        if (i == b || xs[i].kind != xs[i - 1].kind) runs.push_back(i);
      runs.push_back(e);
      for (std::size_t r = 0; r + 1 < runs.size(); ++r)
        if (!std::is_sorted(xs.begin() + runs[r], xs.begin() + runs[r + 1], before))
          std::sort(xs.begin() + runs[r], xs.begin() + runs[r + 1], before);
      while (runs.size() > 2) {  // merge neighbouring runs pairwise until one is left
        std::size_t kept = 0;
        for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
          runs[kept++] = runs[r];
          if (r + 2 < runs.size()) merge(xs, runs[r], runs[r + 1], runs[r + 2]);
        }
        runs[kept++] = e;
        runs.resize(kept);
      }
    }
  }

  // Merges the sorted xs[a, b) and xs[b, c) in place, stably, through a scratch copy of the first
  // run kept from window to window (std::inplace_merge takes a fresh buffer each call).
  void merge(std::span<XRef> xs, std::size_t a, std::size_t b, std::size_t c) {
    if (merge_scratch_.size() < b - a) merge_scratch_.resize(std::max(b - a, 2 * merge_scratch_.size()));
    std::copy(xs.begin() + a, xs.begin() + b, merge_scratch_.begin());
    const XRef* l = merge_scratch_.data();
    const XRef* const l_end = l + (b - a);
    std::size_t r = b, out = a;
    // The write position never passes the right run's read position: out = a + taken left + (r - b).
    while (l != l_end && r != c) xs[out++] = before(xs[r], *l) ? xs[r++] : *l++;
    while (l != l_end) xs[out++] = *l++;
  }

  // Hold lanes: per thread, the moved holds packed into as few lanes as keep them nested.
  void lanes(std::span<XRef> xs, std::vector<std::size_t>& moved) {
    if (moved.empty()) return;
    std::sort(moved.begin(), moved.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(xs[a].track, xs[a].start, xs[b].end) < std::tie(xs[b].track, xs[b].start, xs[a].end);
    });
    std::uint32_t thread = UINT32_MAX;
    std::vector<std::vector<std::uint64_t>> stacks;  // per lane of this thread: open holds' ends
    for (std::size_t m : moved) {
      XRef& x = xs[m];
      if (x.track != thread) {
        thread = x.track;
        stacks.clear();
      }
      std::size_t k = 0;
      for (; k < stacks.size(); ++k) {
        auto& st = stacks[k];
        while (!st.empty() && st.back() <= x.start) st.pop_back();
        if (st.empty() || x.end <= st.back()) break;
      }
      if (k == stacks.size()) stacks.emplace_back();
      stacks[k].push_back(x.end);
      x.track = lane(thread, static_cast<std::uint32_t>(k));
    }
  }

  // The track of a thread's lane k (the same in every window), declared on first use.
  std::uint32_t lane(std::uint32_t thread, std::uint32_t k) {
    auto [it, fresh] = lanes_.try_emplace({thread, k}, 0);
    if (!fresh) return it->second;
    it->second = host_tracks_ + 2 * static_cast<std::uint32_t>(lanes_.size() - 1) + 1;
    thread_track(thread);
    trace::TrackDesc d;
    d.index = it->second;
    d.id = ids_[thread] + (std::uint64_t(k + 1) << 40);
    d.kind = trace::TrackKind::Lane;
    d.os_tid = t_->tracks[thread].os_tid;
    d.name = track_name(thread) + " mutex holds" + (k ? " " + std::to_string(k + 1) : "");
    d.sort_index = track_sort_index(thread);
    declare(d);
    return it->second;
  }

  // Whether the span was still open when the run ended without a clean exit (Interval::cut).
  bool cut(const XRef& x) const {
    const Timeline& t = *t_;
    switch (x.kind) {
      case SpanKind::Kernel: return t.kernels[x.index].cut;
      case SpanKind::Fence: return t.fences[x.index].cut;
      case SpanKind::Region: return t.regions[x.index].cut;
      case SpanKind::DeepCopy: return t.deep_copies[x.index].cut;
      case SpanKind::Mpi: return t.mpi_calls[x.index].cut;
      case SpanKind::OmpTarget: return t.omp_targets[x.index].cut;
      case SpanKind::OmpDataOp: return t.omp_data_ops[x.index].cut;
      case SpanKind::OmpSubmit: return t.omp_submits[x.index].cut;
      case SpanKind::OmpParallel: return t.omp_parallels[x.index].cut;
      case SpanKind::OmpImplicitTask: return t.omp_implicit_tasks[x.index].cut;
      case SpanKind::OmpWork: return t.omp_works[x.index].cut;
      case SpanKind::OmpSync: return t.omp_syncs[x.index].cut;
      case SpanKind::OmpTask: return t.omp_tasks[x.index].cut;
      case SpanKind::OmpMutex: return t.omp_mutexes[x.index].cut;
      case SpanKind::ToolFlush: return t.tool_flushes[x.index].cut;
      case SpanKind::OmpDevice: return t.omp_device_ops[x.index].cut;
      case SpanKind::OmpTaskCreate: break;
    }
    return false;
  }

  // Adds the construct's `source` arg (when its address resolves) and returns its event name:
  // "CONSTRUCT LOCATION" outside a Kokkos kernel (kernel 0), else the construct alone.
  // The names are kept, one per construct and location, so that a format sees the same text at
  // the same address each time (the Perfetto writer then knows it without hashing it).
  // The producer's thread only (shards get what it found: complete_events).
  std::string_view locate(Args& a, std::string_view construct, std::uint64_t codeptr, std::uint64_t kernel) {
    if (codeptr == 0 || !sources_.enabled()) return construct;
    SourceCache::Slot& at = sources_.slot(codeptr);
    const SourceLocation& l = *at.loc;
    if (!l.known()) return construct;
    a.shared_fixed("source", l.source);
    if (kernel != 0) return construct;
    if (at.mine == 0) {
      located_.emplace_back();
      at.mine = static_cast<std::uint32_t>(located_.size());
    }
    auto& names = located_[at.mine - 1];  // (construct, name), a few per location
    for (const auto& [c, name] : names)
      if (c.data() == construct.data() || c == construct) return name;
    names.emplace_back(construct, std::string(construct) + " " + l.label);
    return names.back().second;
  }

  // The construct, code address and kernel of an OpenMP event named by its location; none (an
  // empty construct) for the other kinds.
  Site site(const XRef& x) const {
    const Timeline& t = *t_;
    switch (x.kind) {
      case SpanKind::OmpParallel: {
        const OmpParallelSpan& p = t.omp_parallels[x.index];
        return {"parallel", p.codeptr, p.kernel};
      }
      case SpanKind::OmpWork: {
        const OmpWorkSpan& w = t.omp_works[x.index];
        return {omp_names::work(w.type), w.codeptr, w.kernel};
      }
      case SpanKind::OmpSync: {
        const OmpSyncSpan& y = t.omp_syncs[x.index];
        return {omp_names::sync(y.kind), y.codeptr, y.kernel};
      }
      case SpanKind::OmpTask: {
        const OmpTaskSpan& k = t.omp_tasks[x.index];
        return {"task", k.create < t.omp_task_creates.size() ? t.omp_task_creates[k.create].codeptr : 0, k.kernel};
      }
      case SpanKind::OmpMutex: {
        const OmpMutexSpan& m = t.omp_mutexes[x.index];
        return {omp_names::mutex(m.kind), m.codeptr, m.kernel};
      }
      case SpanKind::OmpTarget: {
        const OmpTargetSpan& g = t.omp_targets[x.index];
        return {omp_names::target_kind(g.kind), g.codeptr, g.kernel | g.deep_copy};
      }
      default: return {};
    }
  }

  // located: the construct's name and `source` when a shard makes the event (found before).
  struct Located {
    std::string_view name, source;
    bool has_source = false;
  };
  // A complete event's category and name (name_fixed: its text never changes at its address,
  // Event::name_fixed; all but the names composed in a reused buffer). cat null: no event.
  struct SliceName {
    const char* cat = nullptr;
    std::string_view name;
    bool name_fixed = true;
  };
  static void nonzero(Args& a, const char* key, std::uint64_t v) {
    if (v != 0) a.u(key, v);
  }
  // An OpenMP construct's name outside a Kokkos kernel, and its `source` arg; found before when a
  // shard makes the event.
  std::string_view located(const XRef& x, Args& a, const Located* located_before) {
    if (located_before != nullptr) {
      if (located_before->has_source) a.shared_fixed("source", located_before->source);
      return located_before->name;
    }
    const Site st = site(x);
    return locate(a, st.construct, st.codeptr, st.kernel);
  }

  // The Kokkos spans and MPI calls: their args into a.
  [[gnu::always_inline]] SliceName kokkos_slice(Ctx& c, const XRef& x, Args& a) {
    const Timeline& t = *t_;
    switch (x.kind) {
      case SpanKind::Kernel: {
        const KernelSpan& k = t.kernels[x.index];
        a.u("id", k.id).shared_fixed("kind", kernel_kind_name(k.kind)).u("devid", k.devid).shared("device", label(c, k.devid)).shared("region", k.region);
        return {"kokkos.kernel", names_.str(k.name)};
      }
      case SpanKind::Fence: {
        const FenceSpan& fe = t.fences[x.index];
        a.u("id", fe.id).u("devid", fe.devid).shared("device", label(c, fe.devid));
        return {"kokkos.fence", names_.str(fe.name)};
      }
      case SpanKind::Region: {
        const RegionSpan& r = t.regions[x.index];
        a.shared("path", r.path);
        return {"kokkos.region", names_.str(r.name)};
      }
      case SpanKind::DeepCopy: {
        const DeepCopySpan& d = t.deep_copies[x.index];
        const std::string_view dst = names_.str(d.dst_name), src = names_.str(d.src_name);
        c.s1.assign(dst).append(" <- ").append(src);
        a.u("id", d.id).shared_fixed("dst_space", names_.str(d.dst_space)).shared_fixed("dst_name", dst).shared_fixed("src_space", names_.str(d.src_space));
        a.shared_fixed("src_name", src).u("bytes", d.bytes);
        return {"kokkos.deep_copy", c.s1, false};
      }
      case SpanKind::Mpi: {
        const MpiSpan& m = t.mpi_calls[x.index];
        a.u("bytes", m.bytes).i("peer", m.peer);
        return {"mpi", kob_mpi_call_name(m.call)};
      }
      case SpanKind::ToolFlush:
        a.u("records", t.tool_flushes[x.index].records);
        return {"tool", "tool: flush"};
      default: return {};
    }
  }

  // The host's OpenMP spans. An OpenMP construct: its `source` arg, and outside a Kokkos kernel
  // (which names what ran inside it) a name that says where it is.
  [[gnu::always_inline]] SliceName omp_slice(const XRef& x, Args& a, const Located* located_before) {
    const Timeline& t = *t_;
    switch (x.kind) {
      case SpanKind::OmpParallel: {
        const OmpParallelSpan& p = t.omp_parallels[x.index];
        a.u("parallel_id", p.id).u("requested_team_size", p.requested_team_size).u("flags", p.flags).u("team_size", p.team_size);
        nonzero(a, "kokkos_kernel", p.kernel);
        return {"omp.parallel", located(x, a, located_before)};
      }
      case SpanKind::OmpImplicitTask: {
        const OmpImplicitTaskSpan& i = t.omp_implicit_tasks[x.index];
        a.u("parallel_id", i.parallel_id).u("thread_num", i.thread_num).u("team_size", i.team_size).u("wait_ns", i.wait_ns);
        nonzero(a, "kokkos_kernel", i.kernel);
        return {"omp.implicit_task", i.initial ? "initial task" : "implicit task"};
      }
      case SpanKind::OmpWork: {
        const OmpWorkSpan& w = t.omp_works[x.index];
        a.u("count", w.count).u("parallel_id", w.parallel_id);
        nonzero(a, "kokkos_kernel", w.kernel);
        return {"omp.work", located(x, a, located_before)};
      }
      case SpanKind::OmpSync: {
        const OmpSyncSpan& y = t.omp_syncs[x.index];
        a.u("wait_ns", y.wait_ns).u("parallel_id", y.parallel_id);
        nonzero(a, "task_id", y.task_id);
        nonzero(a, "kokkos_kernel", y.kernel);
        return {"omp.sync", located(x, a, located_before)};
      }
      case SpanKind::OmpTask: {
        const OmpTaskSpan& k = t.omp_tasks[x.index];
        a.u("task_id", k.task_id).u("flags", k.flags).shared_fixed("status", k.status == 0 ? "none" : omp_names::task_status(k.status));
        nonzero(a, "kokkos_kernel", k.kernel);
        return {"omp.task", located(x, a, located_before)};
      }
      case SpanKind::OmpMutex: {
        const OmpMutexSpan& m = t.omp_mutexes[x.index];
        a.u("wait_id", m.wait_id).shared_fixed("phase", m.hold ? "hold" : "wait");
        if (m.nested) a.b("nested", true);
        if (m.failed) a.b("acquired", false);
        nonzero(a, "kokkos_kernel", m.kernel);
        return {"omp.mutex", located(x, a, located_before)};
      }
      default: return {};
    }
  }

  // Target offload: target regions, data ops, submits and the device's own records.
  SliceName target_slice(const XRef& x, Args& a, const Located* located_before) {
    const Timeline& t = *t_;
    switch (x.kind) {
      case SpanKind::OmpTarget: {
        const OmpTargetSpan& g = t.omp_targets[x.index];
        a.u("target_id", g.id).i("device", g.device);
        nonzero(a, "kokkos_kernel", g.kernel);
        nonzero(a, "kokkos_deep_copy", g.deep_copy);
        return {"omp.target", located(x, a, located_before)};
      }
      case SpanKind::OmpDataOp: {
        const OmpDataOpSpan& d = t.omp_data_ops[x.index];
        a.u("host_op_id", d.host_op_id).i("src_device", d.src_device).i("dst_device", d.dst_device).u("bytes", d.bytes);
        nonzero(a, "target_id", d.target_id);
        nonzero(a, "kokkos_kernel", d.kernel);
        nonzero(a, "kokkos_deep_copy", d.deep_copy);
        nonzero(a, "kokkos_alloc", d.kokkos_alloc);
        if (d.point) a.b("point", true);
        return {"omp.target_data", omp_names::data_op(d.optype)};
      }
      case SpanKind::OmpSubmit: {
        const OmpSubmitSpan& m = t.omp_submits[x.index];
        a.u("host_op_id", m.host_op_id).u("requested_teams", m.requested_teams);
        nonzero(a, "target_id", m.target_id);
        nonzero(a, "kokkos_kernel", m.kernel);
        if (m.point) a.b("point", true);
        return {"omp.target_submit", "submit"};
      }
      case SpanKind::OmpDevice: {
        const OmpDeviceOp& d = t.omp_device_ops[x.index];
        const std::uint16_t rt = d.record_type;
        const bool is_target = rt == 8 || rt == 33, is_data = rt == 9 || rt == 34, is_submit = rt == 10 || rt == 35;
        const char* name = is_target ? "target"
                           : is_data ? omp_names::data_op(static_cast<std::uint16_t>(d.op_kind))
                           : is_submit ? "submit"
                                       : omp_names::callback(rt);
        a.u("host_op_id", d.host_op_id).u("target_id", d.target_id).i("device", d.device);
        if (is_data) a.u("bytes", d.value);
        if (is_submit) a.u("requested_teams", d.value).u("granted_teams", d.op_kind);
        if (is_target) {
          a.shared_fixed("kind", omp_names::target_kind(static_cast<std::uint16_t>(d.op_kind)));
          a.shared_fixed("endpoint", d.value == ompt_scope_begin_value ? "begin" : "end");
        }
        a.shared_fixed("record_type", omp_names::callback(rt));
        if (d.point) a.b("point", true);
        return {"omp.device", name, false};
      }
      default: return {};
    }
  }

  void complete_event(Ctx& c, const XRef& x, const Located* located_before = nullptr) {
    Args& a = c.args.clear();
    SliceName n;
    switch (x.kind) {
      case SpanKind::Kernel:
      case SpanKind::Fence:
      case SpanKind::Region:
      case SpanKind::DeepCopy:
      case SpanKind::Mpi:
      case SpanKind::ToolFlush: n = kokkos_slice(c, x, a); break;
      case SpanKind::OmpParallel:
      case SpanKind::OmpImplicitTask:
      case SpanKind::OmpWork:
      case SpanKind::OmpSync:
      case SpanKind::OmpTask:
      case SpanKind::OmpMutex: n = omp_slice(x, a, located_before); break;
      case SpanKind::OmpTarget:
      case SpanKind::OmpDataOp:
      case SpanKind::OmpSubmit:
      case SpanKind::OmpDevice: n = target_slice(x, a, located_before); break;
      case SpanKind::OmpTaskCreate: return;  // an instant, never a complete event
    }
    if (n.cat == nullptr) return;
    if (cut(x)) a.b("cut", true);  // left open when the run ended without a clean exit
    with_flows(c, x.kind, x.index);
    emit_to(c, Phase::Slice, n.cat, n.name, x.track, x.start, &a, x.end, 0, n.name_fixed);
  }

  // Sections overlap freely, so they are async events keyed by section id.
  void sections() {
    for (const SectionSpan& s : t_->sections) {
      Args& a = main_.args.clear().u("section", s.section);
      emit(Phase::AsyncBegin, "kokkos.section", names_.str(s.name), s.track, s.start, &a, 0, s.section);
      if (s.cut) a.b("cut", true);
      emit(Phase::AsyncEnd, "kokkos.section", names_.str(s.name), s.end_track, s.end, &a, 0, s.section);
    }
  }

  void memory() {
    char ptr[24];
    for (const MemoryEvent& m : t_->memory) {
      std::snprintf(ptr, sizeof ptr, "0x%" PRIx64, m.ptr);
      const std::string_view space = names_.str(m.space);
      Args& a = main_.args.clear().shared_fixed("space", space).s("ptr", ptr).u("bytes", m.bytes);
      if (m.alloc && m.id != 0) a.u("id", m.id);  // 0: not numbered (a hand-made timeline)
      instant(m.alloc ? "kokkos.alloc" : "kokkos.dealloc", names_.str(m.name), m.track, m.time, &a);
      main_.s1.assign("memory ").append(space);
      emit(Phase::Counter, "kokkos.memory", main_.s1, m.track, m.time, &main_.args.clear().u("bytes", m.space_level));
    }
  }

  void kokkos_instants() {
    for (const InstantEvent& e : t_->events) instant("kokkos.event", names_.str(e.name), e.track, e.time, nullptr);
    char ptr[24];
    for (const DualViewEvent& d : t_->dual_views) {
      std::snprintf(ptr, sizeof ptr, "0x%" PRIx64, d.ptr);
      Args& a = main_.args.clear().shared_fixed("op", d.modify ? "modify" : "sync").b("on_device", d.on_device).s("ptr", ptr);
      instant("kokkos.dual_view", names_.str(d.name), d.track, d.time, &a);
    }
  }

  void omp_instants() {
    const Timeline& t = *t_;
    // kokkos_kernel only inside one (0: none), as on omp.parallel.
    auto kernel_arg = [&](Args& a, std::uint64_t k) {
      if (k != 0) a.u("kokkos_kernel", k);
    };
    for (std::size_t n = 0; n < t.omp_task_creates.size(); ++n) {
      const OmpTaskCreate& c = t.omp_task_creates[n];
      Args& a = main_.args.clear().u("task_id", c.task_id).u("flags", c.flags).b("has_dependences", c.has_dependences);
      kernel_arg(a, c.kernel);
      with_flows(main_, SpanKind::OmpTaskCreate, n);
      instant("omp.task_create", locate(a, "task create", c.codeptr, c.kernel), c.track, c.time, &a);
    }
    for (const OmpInstant& e : t.omp_instants) {
      const Record r = e.record();
      Args& a = main_.args.clear();
      if (e.codeptr != 0) locate(a, "", e.codeptr, 1);  // the arg only: instants keep their names
      switch (e.type) {
        case Ev::OmpDispatch:
          a.u("parallel_id", fields::OmpDispatch::parallel_id.get(r));
          if (fields::OmpDispatch::kind.get(r) == 1) a.u("iteration", fields::OmpDispatch::instance.get(r));
          kernel_arg(a, e.kernel);
          instant("omp.dispatch", omp_names::dispatch(fields::OmpDispatch::kind.get(r)), e.track, e.time, &a);
          break;
        case Ev::OmpDependences:
          a.u("task_id", fields::OmpDependences::task_id.get(r)).u("count", fields::OmpDependences::count.get(r));
          instant("omp.dependence", "dependences", e.track, e.time, &a);
          break;
        case Ev::OmpTaskDependence:
          a.u("src_task_id", fields::OmpTaskDependence::src_task_id.get(r))
              .u("sink_task_id", fields::OmpTaskDependence::sink_task_id.get(r));
          instant("omp.dependence", "dependence", e.track, e.time, &a);
          break;
        case Ev::OmpLockInit:
        case Ev::OmpLockDestroy:
          a.u("wait_id", fields::OmpMutex::wait_id.get(r)).shared_fixed("kind", omp_names::mutex(fields::OmpMutex::kind.get(r)));
          if (e.type == Ev::OmpLockInit) a.u("implementation", fields::OmpMutex::implementation.get(r));
          instant("omp.lock", e.type == Ev::OmpLockInit ? "lock_init" : "lock_destroy", e.track, e.time, &a);
          break;
        case Ev::OmpCancel:
          a.u("flags", fields::OmpCancel::flags.get(r));
          kernel_arg(a, e.kernel);
          instant("omp.cancel", "cancel", e.track, e.time, &a);
          break;
        case Ev::OmpFlush:
          kernel_arg(a, e.kernel);
          instant("omp.flush", "flush", e.track, e.time, &a);
          break;
        case Ev::OmpControlTool:
          a.u("command", fields::OmpControlTool::command.get(r)).u("modifier", fields::OmpControlTool::modifier.get(r));
          instant("omp.control_tool", "control_tool", e.track, e.time, &a);
          break;
        case Ev::OmpError:
          a.shared_fixed("severity", omp_names::severity(fields::OmpError::severity.get(r)));
          if (fields::OmpError::message.get(r) == InternTable::kNullName) {
            a.null("message");
          } else {
            a.s("message", names_.str(fields::OmpError::message.get(r)));
          }
          kernel_arg(a, e.kernel);
          instant("omp.error", "error", e.track, e.time, &a);
          break;
        case Ev::OmpTaskSchedule:  // a detached task's event fulfilled
          a.u("task_id", fields::OmpTaskSchedule::prior_task_id.get(r));
          instant("omp.task_fulfill", omp_names::task_status(fields::OmpTaskSchedule::prior_status.get(r)), e.track, e.time, &a);
          break;
        default: break;
      }
    }
  }

  // Device life cycle, as instants on the device tracks (at the end: the devices are final then).
  void device_instants() {
    for (std::uint32_t i = 0; i < devices_.size(); ++i) {
      const OmpDevice& d = devices_[i];
      const std::uint32_t track = host_tracks_ + 2 * i;
      if (d.initialised) {
        Args& a = main_.args.clear().i("device", d.num).s("type", names_.str(d.type)).s("path", d.traced ? "tracing" : "callbacks");
        instant("omp.device_init", "device_initialize", track, d.init_time, &a);
      }
      if (d.finalize_time != 0) instant("omp.device_finalize", "device_finalize", track, d.finalize_time, &main_.args.clear().i("device", d.num));
    }
  }

  // Code loads and unloads, as instants on the device tracks.
  void device_loads() {
    for (const OmpDeviceLoad& l : t_->omp_device_loads) {
      const std::uint32_t track = device_track(l.device);
      if (track == UINT32_MAX) continue;
      Args& a = main_.args.clear().i("device", l.device);
      if (!l.unload) {
        if (l.file == InternTable::kNullName) {
          a.null("file");
        } else {
          a.s("file", names_.str(l.file));
        }
        a.u("bytes", l.bytes);
      }
      a.u("module_id", l.module_id);
      instant(l.unload ? "omp.device_unload" : "omp.device_load", l.unload ? "device_unload" : "device_load", track, l.time, &a);
    }
  }

  // The device label of a Kokkos device id: the last one made is kept (runs use one or two).
  std::string_view label(Ctx& c, std::uint32_t devid) {
    if (!c.label_made || devid != c.label_devid) {
      c.label = device_label(devid);
      c.label_devid = devid;
      c.label_made = true;
    }
    return c.label;
  }

  // The interned names, read once: a lookup is an index, with no lock and no strlen.
  struct Names {
    std::vector<std::string_view> by_id;
    std::string_view str(std::uint32_t id) const { return id < by_id.size() ? by_id[id] : std::string_view(""); }
  };

  trace::TraceSink& sink_;
  const TraceInfo& info_;
  const Timeline* t_ = nullptr;  // the window (or, at the end, the rest) being written
  bool begun_ = false;
  Names names_;
  std::uint32_t host_tracks_ = UINT32_MAX;  // set by the first window: the run's thread count
  std::vector<bool> declared_;              // per track index
  std::vector<std::uint64_t> ids_;          // per declared track index: its id
  std::vector<OmpDevice> devices_;          // as known so far
  std::unordered_map<int, std::uint32_t> device_tracks_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> lanes_;  // (thread, k) -> track
  std::uint64_t flow_base_ = 0;
  std::uint64_t clipped_ = 0;
  trace::TraceFlows* flows_ = nullptr;
  trace::TraceFlows flows_store_;
  // complete_events' arrays, kept from window to window.
  struct Open {
    std::uint64_t end;
    SpanKind kind;
    std::size_t at;
  };
  std::unique_ptr<XRef[]> xs_store_;
  std::size_t xs_capacity_ = 0;
  std::vector<std::size_t> track_at_, track_next_, runs_, moved_;
  std::vector<Open> ends_;
  std::vector<XRef> merge_scratch_;
  Ctx main_{&sink_};  // the sink itself, in this thread
  std::vector<std::unique_ptr<Ctx>> shards_;  // one per shard of a split sink
  std::vector<std::vector<std::uint32_t>> shard_items_;  // per shard: its events, indices into the window's
  std::vector<Located> located_at_;                      // per event of the window, when located before
  WorkerPool pool_;
  SourceCache sources_;
  // The names of constructs at their locations (SourceCache::Slot::mine - 1 indexes it); deque:
  // the texts never move. The construct names are literals (omp_names.hpp).
  std::deque<std::deque<std::pair<std::string_view, std::string>>> located_;  // deques: a name never moves (Event::name_fixed)
};

}  // namespace

struct TraceProducer::Impl : Producer {
  using Producer::Producer;
};

TraceProducer::TraceProducer(trace::TraceSink& sink, const TraceInfo& info) : impl_(std::make_unique<Impl>(sink, info)) {}
TraceProducer::~TraceProducer() = default;
void TraceProducer::begin(std::uint64_t t0) { impl_->begin(t0); }
void TraceProducer::window(const Timeline& w) { impl_->window(w); }
bool TraceProducer::end(const Timeline& rest, const std::string& other_data_json) { return impl_->end(rest, other_data_json); }
std::uint64_t TraceProducer::clipped() const { return impl_->clipped(); }

bool produce_trace(const Timeline& t, const TraceInfo& info, trace::TraceSink& sink, std::uint64_t* clipped) {
  TraceProducer p(sink, info);
  p.window(t);
  const bool ok = p.end(t, info.other_data_json);
  if (clipped) *clipped = p.clipped();
  return ok;
}

}  // namespace kob
