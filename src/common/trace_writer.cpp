#include "common/trace_writer.hpp"

#include <algorithm>
#include <cinttypes>
#include <tuple>
#include <unordered_map>

#include "common/devid.hpp"
#include "common/intern.hpp"
#include "common/json.hpp"
#include "common/omp_names.hpp"
#include "common/summary.hpp"

namespace kob {

namespace {

constexpr std::uint64_t ompt_scope_begin_value = 1;  // ompt_scope_endpoint_t

class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) { buf_.reserve(kFlushAt + 4096); }
  std::string& s() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kFlushAt) flush();
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) ok_ = false;
    buf_.clear();
  }
  bool ok() const { return ok_; }

 private:
  static constexpr std::size_t kFlushAt = 1 << 22;
  std::FILE* f_;
  std::string buf_;
  bool ok_ = true;
};

// Equal spans on one track nest in this order (first outermost).
enum class XKind : std::uint8_t {
  Kernel, Fence, Region, DeepCopy, OmpTarget, OmpDataOp, OmpSubmit, OmpParallel, OmpImplicitTask, OmpWork, OmpSync, OmpTask,
  OmpMutex, OmpDevice
};

// Device tracks: tid kDeviceTidBase + device number, after the host threads.
constexpr std::uint64_t kDeviceTidBase = 1000000;

// The index in Timeline::omp_devices of each device number.
std::unordered_map<int, std::uint32_t> device_index(const Timeline& t) {
  std::unordered_map<int, std::uint32_t> m;
  for (std::size_t i = 0; i < t.omp_devices.size(); ++i) m.emplace(t.omp_devices[i].num, static_cast<std::uint32_t>(i));
  return m;
}

struct XRef {
  std::uint32_t track;
  std::uint64_t start, end;
  XKind kind;
  std::size_t index;
};

// The span a complete event shows.
const Interval& span_of(const Timeline& t, const XRef& x) {
  switch (x.kind) {
    case XKind::Kernel: return t.kernels[x.index];
    case XKind::Fence: return t.fences[x.index];
    case XKind::Region: return t.regions[x.index];
    case XKind::DeepCopy: return t.deep_copies[x.index];
    case XKind::OmpTarget: return t.omp_targets[x.index];
    case XKind::OmpDataOp: return t.omp_data_ops[x.index];
    case XKind::OmpSubmit: return t.omp_submits[x.index];
    case XKind::OmpParallel: return t.omp_parallels[x.index];
    case XKind::OmpImplicitTask: return t.omp_implicit_tasks[x.index];
    case XKind::OmpWork: return t.omp_works[x.index];
    case XKind::OmpSync: return t.omp_syncs[x.index];
    case XKind::OmpTask: return t.omp_tasks[x.index];
    case XKind::OmpMutex: return t.omp_mutexes[x.index];
    case XKind::OmpDevice: break;
  }
  return t.omp_device_ops[x.index];
}

template <class Head>
void write_omp_instants(const Timeline& t, Head& head, std::string& o, Out& out) {
  // kokkos_kernel only inside one (0: none), as on omp.parallel.
  auto kernel_arg = [&](std::uint64_t k) {
    if (k != 0) o += ",\"kokkos_kernel\":" + std::to_string(k);
  };
  for (const OmpTaskCreate& c : t.omp_task_creates) {
    head("i", "omp.task_create", "task create", c.track, c.time);
    o += ",\"s\":\"t\",\"args\":{\"task_id\":" + std::to_string(c.task_id) + ",\"flags\":" + std::to_string(c.flags) +
         ",\"has_dependences\":" + (c.has_dependences ? "true" : "false");
    kernel_arg(c.kernel);
    o += "}}";
    out.maybe_flush();
  }
  for (const OmpInstant& e : t.omp_instants) {
    switch (e.type) {
      case Ev::OmpDispatch:
        head("i", "omp.dispatch", omp_names::dispatch(e.sub), e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"parallel_id\":" + std::to_string(e.u0);
        if (e.sub == 1) o += ",\"iteration\":" + std::to_string(e.u2);
        kernel_arg(e.kernel);
        break;
      case Ev::OmpDependences:
        head("i", "omp.dependence", "dependences", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"task_id\":" + std::to_string(e.u0) + ",\"count\":" + std::to_string(e.a);
        break;
      case Ev::OmpTaskDependence:
        head("i", "omp.dependence", "dependence", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"src_task_id\":" + std::to_string(e.u0) + ",\"sink_task_id\":" + std::to_string(e.u2);
        break;
      case Ev::OmpLockInit:
      case Ev::OmpLockDestroy:
        head("i", "omp.lock", e.type == Ev::OmpLockInit ? "lock_init" : "lock_destroy", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"wait_id\":" + std::to_string(e.u0) + ",\"kind\":\"" + omp_names::mutex(e.sub) + "\"";
        if (e.type == Ev::OmpLockInit) o += ",\"implementation\":" + std::to_string(e.a);
        break;
      case Ev::OmpCancel:
        head("i", "omp.cancel", "cancel", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"flags\":" + std::to_string(e.a);
        kernel_arg(e.kernel);
        break;
      case Ev::OmpFlush:
        head("i", "omp.flush", "flush", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{";
        if (e.kernel != 0) o += "\"kokkos_kernel\":" + std::to_string(e.kernel);
        break;
      case Ev::OmpControlTool:
        head("i", "omp.control_tool", "control_tool", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"command\":" + std::to_string(e.a) + ",\"modifier\":" + std::to_string(e.u0);
        break;
      case Ev::OmpError:
        head("i", "omp.error", "error", e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"severity\":\"";
        o += omp_names::severity(e.sub);
        o += "\",\"message\":";
        if (e.a == InternTable::kNullName) {
          o += "null";
        } else {
          json::append_string(o, kob::names().str(e.a));
        }
        kernel_arg(e.kernel);
        break;
      case Ev::OmpTaskSchedule:  // a detached task's event fulfilled
        head("i", "omp.task_fulfill", omp_names::task_status(e.a), e.track, e.time);
        o += ",\"s\":\"t\",\"args\":{\"task_id\":" + std::to_string(e.u0);
        break;
      default:
        continue;
    }
    o += "}}";
    out.maybe_flush();
  }
}

// Flow arrows (cat "correlation"), each an "s" and an "f" with one id: Kokkos kernel -> the
// parallel regions it opened, parallel region -> its implicit tasks on other threads, task
// creation -> each stretch of the task.
template <class Head>
void write_omp_flows(const Timeline& t, Head& head, std::string& o, Out& out) {
  std::uint64_t next_id = 0;
  auto flow = [&](const char* name, std::uint32_t from_track, std::uint64_t from_ts, std::uint32_t to_track, std::uint64_t to_ts) {
    const std::string id = std::to_string(++next_id);
    head("s", "correlation", name, from_track, from_ts);
    o += ",\"id\":" + id + "}";
    head("f", "correlation", name, to_track, to_ts);
    o += ",\"bp\":\"e\",\"id\":" + id + "}";
    out.maybe_flush();
  };
  std::unordered_map<std::uint64_t, const KernelSpan*> kernels;
  for (const KernelSpan& k : t.kernels) kernels.emplace(k.id, &k);
  std::unordered_map<std::uint64_t, const OmpParallelSpan*> parallels;
  for (const OmpParallelSpan& p : t.omp_parallels) {
    parallels.emplace(p.id, &p);
    if (p.kernel == 0) continue;
    auto k = kernels.find(p.kernel);
    if (k != kernels.end()) flow("parallel", k->second->track, k->second->start, p.track, p.start);
  }
  for (const OmpImplicitTaskSpan& i : t.omp_implicit_tasks) {
    if (i.initial) continue;
    auto p = parallels.find(i.parallel_id);
    if (p != parallels.end() && p->second->track != i.track) flow("implicit task", p->second->track, p->second->start, i.track, i.start);
  }
  for (const OmpTaskSpan& k : t.omp_tasks) {
    if (k.create == OmpTaskSpan::kNoCreate) continue;
    const OmpTaskCreate& c = t.omp_task_creates[k.create];
    flow("task", c.track, c.time, k.track, k.start);
  }

  // Target offload: Kokkos kernel -> its target regions; target region -> its submits and data
  // ops on other threads; Kokkos deep copy -> each data op it caused; host op -> its device
  // record on the device track.
  std::unordered_map<std::uint64_t, const OmpTargetSpan*> targets;
  for (const OmpTargetSpan& x : t.omp_targets) {
    targets.emplace(x.id, &x);
    if (x.kernel == 0) continue;
    auto k = kernels.find(x.kernel);
    if (k != kernels.end()) flow("target", k->second->track, k->second->start, x.track, x.start);
  }
  std::unordered_map<std::uint64_t, const Interval*> host_ops;
  for (const OmpSubmitSpan& x : t.omp_submits) {
    host_ops.emplace(x.host_op_id, &x);
    auto p = targets.find(x.target_id);
    if (x.target_id != 0 && p != targets.end() && p->second->track != x.track)
      flow("submit", p->second->track, p->second->start, x.track, x.start);
  }
  std::unordered_map<std::uint64_t, const DeepCopySpan*> copies;
  for (const DeepCopySpan& d : t.deep_copies) copies.emplace(d.id, &d);
  for (const OmpDataOpSpan& x : t.omp_data_ops) {
    host_ops.emplace(x.host_op_id, &x);
    auto p = targets.find(x.target_id);
    if (x.target_id != 0 && p != targets.end() && p->second->track != x.track)
      flow("data op", p->second->track, p->second->start, x.track, x.start);
    if (x.deep_copy == 0) continue;
    auto c = copies.find(x.deep_copy);
    if (c != copies.end()) flow("deep copy", c->second->track, c->second->start, x.track, x.start);
  }
  if (!t.omp_device_ops.empty()) {
    const auto devs = device_index(t);
    for (const OmpDeviceOp& o : t.omp_device_ops) {
      auto h = o.host_op_id != 0 ? host_ops.find(o.host_op_id) : host_ops.end();
      auto d = devs.find(o.device);
      if (h == host_ops.end() || d == devs.end()) continue;
      flow("device", h->second->track, h->second->start, static_cast<std::uint32_t>(t.tracks.size()) + d->second, o.start);
    }
  }
}

}  // namespace

bool write_chrome_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped_out) {
  const InternTable& names = kob::names();
  Out out(f);
  std::string& o = out.s();
  const std::string pid = std::to_string(info.pid);
  std::vector<std::string> tids;
  // The OS may reuse a thread id after a thread ends: a second track with it gets an id of its own.
  std::unordered_map<std::uint64_t, int> tid_uses;
  for (const Track& tr : t.tracks) {
    const int n = tid_uses[tr.os_tid]++;
    tids.push_back(std::to_string(n == 0 ? tr.os_tid : tr.os_tid + (std::uint64_t(n) << 32)));
  }
  // Device tracks follow the host threads: track index tracks.size() + index in omp_devices.
  const auto host_tracks = static_cast<std::uint32_t>(t.tracks.size());
  for (const OmpDevice& d : t.omp_devices) tids.push_back(std::to_string(static_cast<std::int64_t>(kDeviceTidBase) + d.num));
  const auto devs = device_index(t);
  auto device_track = [&](int num) -> std::uint32_t {
    auto it = devs.find(num);
    return it == devs.end() ? UINT32_MAX : host_tracks + it->second;
  };
  bool first = true;

  // Common head of every event: {"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":..
  auto head = [&](const char* ph, const char* cat, std::string_view name, std::uint32_t track, std::uint64_t ts) {
    o += first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"";
    first = false;
    o += ph;
    o += "\",\"cat\":\"";
    o += cat;
    o += "\",\"name\":";
    json::append_string(o, name);
    o += ",\"pid\":" + pid + ",\"tid\":";
    o += tids[track];
    o += ",\"ts\":";
    json::append_us(o, ts - t.t0);
  };

  o += "{\"traceEvents\":[";
  o += "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":";
  json::append_string(o, info.process_name);
  o += "}}";
  first = false;
  // libomp's hidden-helper threads form a group of their own after the program's threads.
  constexpr std::uint64_t kHiddenHelperSortBase = 500000;
  auto track_name = [&](std::uint32_t i) -> std::string {
    const Track& tr = t.tracks[i];
    if (tr.hidden_helper) return "hidden helper " + std::to_string(tr.hidden_helper_num);
    const bool omp = tr.omp_thread_type == 1 || tr.omp_thread_type == 2;
    return (omp ? "omp thread " : "thread ") + std::to_string(tr.index);
  };
  auto track_sort_index = [&](std::uint32_t i) -> std::uint64_t {
    const Track& tr = t.tracks[i];
    return tr.hidden_helper ? kHiddenHelperSortBase + tr.hidden_helper_num : tr.index;
  };
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    const Track& tr = t.tracks[i];
    if (tr.device_only()) continue;  // a runtime thread that only delivered device buffers
    o += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid + ",\"tid\":" + tids[i] + ",\"args\":{\"name\":\"" +
         track_name(static_cast<std::uint32_t>(i)) + "\"}}";
    o += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + pid + ",\"tid\":" + tids[i] +
         ",\"args\":{\"sort_index\":" + std::to_string(track_sort_index(static_cast<std::uint32_t>(i))) + "}}";
  }
  for (std::size_t i = 0; i < t.omp_devices.size(); ++i) {
    const OmpDevice& d = t.omp_devices[i];
    const std::string& tid = tids[host_tracks + i];
    o += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid + ",\"tid\":" + tid + ",\"args\":{\"name\":";
    json::append_string(o, "device " + std::to_string(d.num) + " (" + (d.type != 0 ? names.str(d.type) : "unknown") + ")");
    o += "}}";
    o += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + pid + ",\"tid\":" + tid +
         ",\"args\":{\"sort_index\":" + std::to_string(static_cast<std::int64_t>(kDeviceTidBase) + d.num) + "}}";
  }

  // Complete events, made to nest per track.
  std::vector<XRef> xs;
  xs.reserve(t.kernels.size() + t.fences.size() + t.regions.size() + t.deep_copies.size() + t.omp_parallels.size() +
             t.omp_implicit_tasks.size() + t.omp_works.size() + t.omp_syncs.size() + t.omp_tasks.size() + t.omp_mutexes.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i) xs.push_back({t.kernels[i].track, t.kernels[i].start, t.kernels[i].end, XKind::Kernel, i});
  for (std::size_t i = 0; i < t.fences.size(); ++i) xs.push_back({t.fences[i].track, t.fences[i].start, t.fences[i].end, XKind::Fence, i});
  for (std::size_t i = 0; i < t.regions.size(); ++i) xs.push_back({t.regions[i].track, t.regions[i].start, t.regions[i].end, XKind::Region, i});
  for (std::size_t i = 0; i < t.deep_copies.size(); ++i)
    xs.push_back({t.deep_copies[i].track, t.deep_copies[i].start, t.deep_copies[i].end, XKind::DeepCopy, i});
  auto add_x = [&](const auto& v, XKind kind) {
    for (std::size_t i = 0; i < v.size(); ++i) xs.push_back({v[i].track, v[i].start, v[i].end, kind, i});
  };
  add_x(t.omp_parallels, XKind::OmpParallel);
  add_x(t.omp_implicit_tasks, XKind::OmpImplicitTask);
  add_x(t.omp_works, XKind::OmpWork);
  add_x(t.omp_syncs, XKind::OmpSync);
  add_x(t.omp_tasks, XKind::OmpTask);
  add_x(t.omp_mutexes, XKind::OmpMutex);
  add_x(t.omp_targets, XKind::OmpTarget);
  add_x(t.omp_data_ops, XKind::OmpDataOp);
  add_x(t.omp_submits, XKind::OmpSubmit);
  for (std::size_t i = 0; i < t.omp_device_ops.size(); ++i) {
    const OmpDeviceOp& d = t.omp_device_ops[i];
    const std::uint32_t track = device_track(d.device);
    if (track != UINT32_MAX) xs.push_back({track, d.start, d.end, XKind::OmpDevice, i});
  }
  std::sort(xs.begin(), xs.end(), [](const XRef& a, const XRef& b) {
    if (a.track != b.track) return a.track < b.track;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    if (a.kind != b.kind) return a.kind < b.kind;  // equal spans: regions outside kernels is as good as any fixed order
    return a.index < b.index;  // the timeline's own order: for equal regions, outer first
  });
  std::uint64_t clipped = 0;
  // A mutex may be held across constructs (set in one masked block, unset after a barrier in
  // another): such a hold keeps its true span on a hold lane of its thread instead of being cut.
  auto is_hold = [&](const XRef& x) { return x.kind == XKind::OmpMutex && t.omp_mutexes[x.index].hold; };
  std::vector<std::size_t> moved;  // indices into xs of holds that go to a lane
  struct Open {
    std::uint64_t end;
    XKind kind;
    std::size_t at;
  };
  std::vector<Open> ends;  // open parents on the current track
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
      if (ends.back().kind != XKind::OmpTask) ++clipped;
    }
    ends.push_back({x.end, x.kind, n});
  }
  if (clipped_out) *clipped_out = clipped;

  // Hold lanes: per thread, the moved holds packed into as few lanes as keep them nested.
  struct Lane {
    std::uint32_t thread_track, number;
  };
  std::vector<Lane> lanes;  // track index host_tracks + devices + i
  if (!moved.empty()) {
    std::sort(moved.begin(), moved.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(xs[a].track, xs[a].start, xs[b].end) < std::tie(xs[b].track, xs[b].start, xs[a].end);
    });
    const auto lane_base = static_cast<std::uint32_t>(tids.size());
    std::uint32_t thread = UINT32_MAX;
    std::size_t first_lane = 0;
    std::vector<std::vector<std::uint64_t>> stacks;  // per lane of this thread: open holds' ends
    for (std::size_t m : moved) {
      XRef& x = xs[m];
      if (x.track != thread) {
        thread = x.track;
        first_lane = lanes.size();
        stacks.clear();
      }
      std::size_t k = 0;
      for (; k < stacks.size(); ++k) {
        auto& st = stacks[k];
        while (!st.empty() && st.back() <= x.start) st.pop_back();
        if (st.empty() || x.end <= st.back()) break;
      }
      if (k == stacks.size()) {
        stacks.emplace_back();
        lanes.push_back({thread, static_cast<std::uint32_t>(k)});
        tids.push_back(std::to_string(std::stoull(tids[thread]) + (std::uint64_t(k + 1) << 40)));
      }
      stacks[k].push_back(x.end);
      x.track = lane_base + static_cast<std::uint32_t>(first_lane + k);
    }
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const std::string& tid = tids[lane_base + i];
      const Lane& l = lanes[i];
      o += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid + ",\"tid\":" + tid + ",\"args\":{\"name\":";
      json::append_string(o, track_name(l.thread_track) + " mutex holds" + (l.number ? " " + std::to_string(l.number + 1) : ""));
      o += "}}";
      o += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + pid + ",\"tid\":" + tid +
           ",\"args\":{\"sort_index\":" + std::to_string(track_sort_index(l.thread_track)) + "}}";
    }
  }

  auto kernel_arg = [&](std::uint64_t k) {
    if (k != 0) o += ",\"kokkos_kernel\":" + std::to_string(k);
  };
  auto id_arg = [&](const char* key, std::uint64_t v) {
    if (v == 0) return;
    o += ",\"";
    o += key;
    o += "\":" + std::to_string(v);
  };
  auto x_head = [&](const char* cat, std::string_view name, const XRef& x) {
    head("X", cat, name, x.track, x.start);
    o += ",\"dur\":";
    json::append_us(o, x.end - x.start);
  };
  for (const XRef& x : xs) {
    switch (x.kind) {
      case XKind::Kernel: {
        const KernelSpan& k = t.kernels[x.index];
        head("X", "kokkos.kernel", names.str(k.name), k.track, x.start);
        o += ",\"dur\":";
        json::append_us(o, x.end - x.start);
        o += ",\"args\":{\"id\":" + std::to_string(k.id) + ",\"kind\":\"" + kernel_kind_name(k.kind) +
             "\",\"devid\":" + std::to_string(k.devid) + ",\"device\":";
        json::append_string(o, device_label(k.devid));
        o += ",\"region\":";
        json::append_string(o, k.region);
        o += "}}";
        break;
      }
      case XKind::Fence: {
        const FenceSpan& fe = t.fences[x.index];
        head("X", "kokkos.fence", names.str(fe.name), fe.track, x.start);
        o += ",\"dur\":";
        json::append_us(o, x.end - x.start);
        o += ",\"args\":{\"id\":" + std::to_string(fe.id) + ",\"devid\":" + std::to_string(fe.devid) + ",\"device\":";
        json::append_string(o, device_label(fe.devid));
        o += "}}";
        break;
      }
      case XKind::Region: {
        const RegionSpan& r = t.regions[x.index];
        head("X", "kokkos.region", names.str(r.name), r.track, x.start);
        o += ",\"dur\":";
        json::append_us(o, x.end - x.start);
        o += ",\"args\":{\"path\":";
        json::append_string(o, r.path);
        o += "}}";
        break;
      }
      case XKind::DeepCopy: {
        const DeepCopySpan& d = t.deep_copies[x.index];
        const std::string dst = names.str(d.dst_name), src = names.str(d.src_name);
        head("X", "kokkos.deep_copy", dst + " <- " + src, d.track, x.start);
        o += ",\"dur\":";
        json::append_us(o, x.end - x.start);
        o += ",\"args\":{\"id\":" + std::to_string(d.id) + ",\"dst_space\":";
        json::append_string(o, names.str(d.dst_space));
        o += ",\"dst_name\":";
        json::append_string(o, dst);
        o += ",\"src_space\":";
        json::append_string(o, names.str(d.src_space));
        o += ",\"src_name\":";
        json::append_string(o, src);
        o += ",\"bytes\":" + std::to_string(d.bytes) + "}}";
        break;
      }
      case XKind::OmpParallel: {
        const OmpParallelSpan& p = t.omp_parallels[x.index];
        x_head("omp.parallel", "parallel", x);
        o += ",\"args\":{\"parallel_id\":" + std::to_string(p.id) + ",\"requested_team_size\":" +
             std::to_string(p.requested_team_size) + ",\"flags\":" + std::to_string(p.flags) +
             ",\"team_size\":" + std::to_string(p.team_size);
        kernel_arg(p.kernel);
        o += "}}";
        break;
      }
      case XKind::OmpImplicitTask: {
        const OmpImplicitTaskSpan& i = t.omp_implicit_tasks[x.index];
        x_head("omp.implicit_task", i.initial ? "initial task" : "implicit task", x);
        o += ",\"args\":{\"parallel_id\":" + std::to_string(i.parallel_id) + ",\"thread_num\":" + std::to_string(i.thread_num) +
             ",\"team_size\":" + std::to_string(i.team_size) + ",\"wait_ns\":" + std::to_string(i.wait_ns) +
             "";
        kernel_arg(i.kernel);
        o += "}}";
        break;
      }
      case XKind::OmpWork: {
        const OmpWorkSpan& w = t.omp_works[x.index];
        x_head("omp.work", omp_names::work(w.type), x);
        o += ",\"args\":{\"count\":" + std::to_string(w.count) + ",\"parallel_id\":" + std::to_string(w.parallel_id) +
             "";
        kernel_arg(w.kernel);
        o += "}}";
        break;
      }
      case XKind::OmpSync: {
        const OmpSyncSpan& y = t.omp_syncs[x.index];
        x_head("omp.sync", omp_names::sync(y.kind), x);
        o += ",\"args\":{\"wait_ns\":" + std::to_string(y.wait_ns) + ",\"parallel_id\":" + std::to_string(y.parallel_id);
        if (y.task_id != 0) o += ",\"task_id\":" + std::to_string(y.task_id);
        o += "";
        kernel_arg(y.kernel);
        o += "}}";
        break;
      }
      case XKind::OmpTask: {
        const OmpTaskSpan& k = t.omp_tasks[x.index];
        x_head("omp.task", "task", x);
        o += ",\"args\":{\"task_id\":" + std::to_string(k.task_id) + ",\"flags\":" + std::to_string(k.flags) +
             ",\"status\":\"" + (k.status == 0 ? "none" : omp_names::task_status(k.status)) + "\"";
        kernel_arg(k.kernel);
        o += "}}";
        break;
      }
      case XKind::OmpMutex: {
        const OmpMutexSpan& m = t.omp_mutexes[x.index];
        x_head("omp.mutex", omp_names::mutex(m.kind), x);
        o += ",\"args\":{\"wait_id\":" + std::to_string(m.wait_id) + ",\"phase\":\"" + (m.hold ? "hold" : "wait") + "\"";
        if (m.nested) o += ",\"nested\":true";
        if (m.failed) o += ",\"acquired\":false";
        o += "";
        kernel_arg(m.kernel);
        o += "}}";
        break;
      }
      case XKind::OmpTarget: {
        const OmpTargetSpan& g = t.omp_targets[x.index];
        x_head("omp.target", omp_names::target_kind(g.kind), x);
        o += ",\"args\":{\"target_id\":" + std::to_string(g.id) + ",\"device\":" + std::to_string(g.device);
        kernel_arg(g.kernel);
        id_arg("kokkos_deep_copy", g.deep_copy);
        o += "}}";
        break;
      }
      case XKind::OmpDataOp: {
        const OmpDataOpSpan& d = t.omp_data_ops[x.index];
        x_head("omp.target_data", omp_names::data_op(d.optype), x);
        o += ",\"args\":{\"host_op_id\":" + std::to_string(d.host_op_id) + ",\"src_device\":" + std::to_string(d.src_device) +
             ",\"dst_device\":" + std::to_string(d.dst_device) + ",\"bytes\":" + std::to_string(d.bytes);
        id_arg("target_id", d.target_id);
        kernel_arg(d.kernel);
        id_arg("kokkos_deep_copy", d.deep_copy);
        id_arg("kokkos_alloc", d.kokkos_alloc);
        if (d.point) o += ",\"point\":true";
        o += "}}";
        break;
      }
      case XKind::OmpSubmit: {
        const OmpSubmitSpan& m = t.omp_submits[x.index];
        x_head("omp.target_submit", "submit", x);
        o += ",\"args\":{\"host_op_id\":" + std::to_string(m.host_op_id) + ",\"requested_teams\":" +
             std::to_string(m.requested_teams);
        id_arg("target_id", m.target_id);
        kernel_arg(m.kernel);
        if (m.point) o += ",\"point\":true";
        o += "}}";
        break;
      }
      case XKind::OmpDevice: {
        const OmpDeviceOp& d = t.omp_device_ops[x.index];
        const std::uint16_t rt = d.record_type;
        const bool is_target = rt == 8 || rt == 33, is_data = rt == 9 || rt == 34, is_submit = rt == 10 || rt == 35;
        const char* name = is_target ? "target"
                           : is_data ? omp_names::data_op(static_cast<std::uint16_t>(d.op_kind))
                           : is_submit ? "submit"
                                       : omp_names::callback(rt);
        x_head("omp.device", name, x);
        o += ",\"args\":{\"host_op_id\":" + std::to_string(d.host_op_id) + ",\"target_id\":" + std::to_string(d.target_id) +
             ",\"device\":" + std::to_string(d.device);
        if (is_data) o += ",\"bytes\":" + std::to_string(d.value);
        if (is_submit) o += ",\"requested_teams\":" + std::to_string(d.value) + ",\"granted_teams\":" + std::to_string(d.op_kind);
        if (is_target) {
          o += ",\"kind\":\"" + std::string(omp_names::target_kind(static_cast<std::uint16_t>(d.op_kind))) + "\"";
          o += d.value == ompt_scope_begin_value ? ",\"endpoint\":\"begin\"" : ",\"endpoint\":\"end\"";
        }
        o += ",\"record_type\":\"" + std::string(omp_names::callback(rt)) + "\"";
        if (d.point) o += ",\"point\":true";
        o += "}}";
        break;
      }
    }
    if (span_of(t, x).cut) {  // left open when the run ended without a clean exit
      o.resize(o.size() - 2);
      o += ",\"cut\":true}}";
    }
    out.maybe_flush();
  }

  // Sections overlap freely, so they are async events keyed by section id.
  for (const SectionSpan& s : t.sections) {
    const std::string id = std::to_string(s.section);
    head("b", "kokkos.section", names.str(s.name), s.track, s.start);
    o += ",\"id\":" + id + ",\"args\":{\"section\":" + id + "}}";
    head("e", "kokkos.section", names.str(s.name), s.end_track, s.end);
    o += ",\"id\":" + id + ",\"args\":{\"section\":" + id + (s.cut ? ",\"cut\":true}}" : "}}");
    out.maybe_flush();
  }

  char ptr[24];
  for (const MemoryEvent& m : t.memory) {
    std::snprintf(ptr, sizeof ptr, "0x%" PRIx64, m.ptr);
    const std::string space = names.str(m.space);
    head("i", m.alloc ? "kokkos.alloc" : "kokkos.dealloc", names.str(m.name), m.track, m.time);
    o += ",\"s\":\"t\",\"args\":{\"space\":";
    json::append_string(o, space);
    o += ",\"ptr\":\"";
    o += ptr;
    o += "\",\"bytes\":" + std::to_string(m.bytes);
    if (m.alloc && m.id != 0) o += ",\"id\":" + std::to_string(m.id);  // 0: not numbered (a hand-made timeline)
    o += "}}";
    head("C", "kokkos.memory", "memory " + space, m.track, m.time);
    o += ",\"args\":{\"bytes\":" + std::to_string(m.space_level) + "}}";
    out.maybe_flush();
  }

  for (const InstantEvent& e : t.events) {
    head("i", "kokkos.event", names.str(e.name), e.track, e.time);
    o += ",\"s\":\"t\"}";
  }
  for (const DualViewEvent& d : t.dual_views) {
    std::snprintf(ptr, sizeof ptr, "0x%" PRIx64, d.ptr);
    head("i", "kokkos.dual_view", names.str(d.name), d.track, d.time);
    o += ",\"s\":\"t\",\"args\":{\"op\":\"";
    o += d.modify ? "modify" : "sync";
    o += "\",\"on_device\":";
    o += d.on_device ? "true" : "false";
    o += ",\"ptr\":\"";
    o += ptr;
    o += "\"}}";
    out.maybe_flush();
  }

  write_omp_instants(t, head, o, out);

  // Device life cycle and code loads, as instants on the device tracks.
  for (std::size_t i = 0; i < t.omp_devices.size(); ++i) {
    const OmpDevice& d = t.omp_devices[i];
    if (d.initialised) {
      head("i", "omp.device_init", "device_initialize", host_tracks + static_cast<std::uint32_t>(i), d.init_time);
      o += ",\"s\":\"t\",\"args\":{\"device\":" + std::to_string(d.num) + ",\"type\":";
      json::append_string(o, names.str(d.type));
      o += ",\"path\":\"";
      o += d.traced ? "tracing" : "callbacks";
      o += "\"}}";
    }
    if (d.finalize_time != 0) {
      head("i", "omp.device_finalize", "device_finalize", host_tracks + static_cast<std::uint32_t>(i), d.finalize_time);
      o += ",\"s\":\"t\",\"args\":{\"device\":" + std::to_string(d.num) + "}}";
    }
  }
  for (const OmpDeviceLoad& l : t.omp_device_loads) {
    const std::uint32_t track = device_track(l.device);
    if (track == UINT32_MAX) continue;
    head("i", l.unload ? "omp.device_unload" : "omp.device_load", l.unload ? "device_unload" : "device_load", track, l.time);
    o += ",\"s\":\"t\",\"args\":{\"device\":" + std::to_string(l.device);
    if (!l.unload) {
      o += ",\"file\":";
      if (l.file == InternTable::kNullName) {
        o += "null";
      } else {
        json::append_string(o, names.str(l.file));
      }
      o += ",\"bytes\":" + std::to_string(l.bytes);
    }
    o += ",\"module_id\":" + std::to_string(l.module_id) + "}}";
    out.maybe_flush();
  }
  write_omp_flows(t, head, o, out);

  o += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":";
  o += info.other_data_json;
  o += "\n}\n";
  out.flush();
  return out.ok();
}

}  // namespace kob
