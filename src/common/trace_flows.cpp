#include "common/trace_flows.hpp"

#include <algorithm>

namespace kob::trace {

namespace {
std::uint64_t key(SpanKind kind, std::size_t index) { return std::uint64_t(kind) << 56 | index; }
}  // namespace

void TraceFlows::add(const char* name, SpanKind from_kind, std::size_t from, std::uint32_t from_track, std::uint64_t from_ts,
                     SpanKind to_kind, std::size_t to, std::uint32_t to_track, std::uint64_t to_ts) {
  const std::uint64_t id = flows_.size() + 1;
  flows_.push_back({name, id, from_track, to_track, from_ts, to_ts});
  ends_.push_back({key(from_kind, from), id, true});
  ends_.push_back({key(to_kind, to), id, false});
}

// Kokkos kernel -> the parallel regions it opened, parallel region -> its implicit tasks on other
// threads, task creation -> each stretch of the task; then target offload: Kokkos kernel -> its
// target regions, target region -> its submits and data ops on other threads, Kokkos deep copy ->
// each data op it caused, host op -> its device record on the device track.
TraceFlows::TraceFlows(const Timeline& t, const std::unordered_map<int, std::uint32_t>& device_tracks) {
  std::unordered_map<std::uint64_t, std::size_t> kernels;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) kernels.emplace(t.kernels[i].id, i);
  std::unordered_map<std::uint64_t, std::size_t> parallels;
  for (std::size_t i = 0; i < t.omp_parallels.size(); ++i) {
    const OmpParallelSpan& p = t.omp_parallels[i];
    parallels.emplace(p.id, i);
    if (p.kernel == 0) continue;
    auto k = kernels.find(p.kernel);
    if (k == kernels.end()) continue;
    const KernelSpan& ks = t.kernels[k->second];
    add("parallel", SpanKind::Kernel, k->second, ks.track, ks.start, SpanKind::OmpParallel, i, p.track, p.start);
  }
  for (std::size_t n = 0; n < t.omp_implicit_tasks.size(); ++n) {
    const OmpImplicitTaskSpan& i = t.omp_implicit_tasks[n];
    if (i.initial) continue;
    auto p = parallels.find(i.parallel_id);
    if (p == parallels.end()) continue;
    const OmpParallelSpan& ps = t.omp_parallels[p->second];
    if (ps.track != i.track)
      add("implicit task", SpanKind::OmpParallel, p->second, ps.track, ps.start, SpanKind::OmpImplicitTask, n, i.track, i.start);
  }
  for (std::size_t n = 0; n < t.omp_tasks.size(); ++n) {
    const OmpTaskSpan& k = t.omp_tasks[n];
    if (k.create == OmpTaskSpan::kNoCreate) continue;
    const OmpTaskCreate& c = t.omp_task_creates[k.create];
    add("task", SpanKind::OmpTaskCreate, k.create, c.track, c.time, SpanKind::OmpTask, n, k.track, k.start);
  }

  std::unordered_map<std::uint64_t, std::size_t> targets;
  for (std::size_t n = 0; n < t.omp_targets.size(); ++n) {
    const OmpTargetSpan& x = t.omp_targets[n];
    targets.emplace(x.id, n);
    if (x.kernel == 0) continue;
    auto k = kernels.find(x.kernel);
    if (k == kernels.end()) continue;
    const KernelSpan& ks = t.kernels[k->second];
    add("target", SpanKind::Kernel, k->second, ks.track, ks.start, SpanKind::OmpTarget, n, x.track, x.start);
  }
  struct HostOp {
    SpanKind kind;
    std::size_t index;
    const Interval* span;
  };
  std::unordered_map<std::uint64_t, HostOp> host_ops;
  for (std::size_t n = 0; n < t.omp_submits.size(); ++n) {
    const OmpSubmitSpan& x = t.omp_submits[n];
    host_ops.emplace(x.host_op_id, HostOp{SpanKind::OmpSubmit, n, &x});
    auto p = targets.find(x.target_id);
    if (x.target_id == 0 || p == targets.end()) continue;
    const OmpTargetSpan& g = t.omp_targets[p->second];
    if (g.track != x.track) add("submit", SpanKind::OmpTarget, p->second, g.track, g.start, SpanKind::OmpSubmit, n, x.track, x.start);
  }
  std::unordered_map<std::uint64_t, std::size_t> copies;
  for (std::size_t n = 0; n < t.deep_copies.size(); ++n) copies.emplace(t.deep_copies[n].id, n);
  for (std::size_t n = 0; n < t.omp_data_ops.size(); ++n) {
    const OmpDataOpSpan& x = t.omp_data_ops[n];
    host_ops.emplace(x.host_op_id, HostOp{SpanKind::OmpDataOp, n, &x});
    auto p = targets.find(x.target_id);
    if (x.target_id != 0 && p != targets.end()) {
      const OmpTargetSpan& g = t.omp_targets[p->second];
      if (g.track != x.track) add("data op", SpanKind::OmpTarget, p->second, g.track, g.start, SpanKind::OmpDataOp, n, x.track, x.start);
    }
    if (x.deep_copy == 0) continue;
    auto c = copies.find(x.deep_copy);
    if (c == copies.end()) continue;
    const DeepCopySpan& d = t.deep_copies[c->second];
    add("deep copy", SpanKind::DeepCopy, c->second, d.track, d.start, SpanKind::OmpDataOp, n, x.track, x.start);
  }
  for (std::size_t n = 0; n < t.omp_device_ops.size(); ++n) {
    const OmpDeviceOp& o = t.omp_device_ops[n];
    auto h = o.host_op_id != 0 ? host_ops.find(o.host_op_id) : host_ops.end();
    auto d = device_tracks.find(o.device);
    if (h == host_ops.end() || d == device_tracks.end()) continue;
    const HostOp& ho = h->second;
    add("device", ho.kind, ho.index, ho.span->track, ho.span->start, SpanKind::OmpDevice, n, d->second, o.start);
  }
  std::sort(ends_.begin(), ends_.end(), [](const End& a, const End& b) { return a.key != b.key ? a.key < b.key : a.id < b.id; });
}

void TraceFlows::at(SpanKind kind, std::size_t index, std::span<const std::uint64_t>& out, std::span<const std::uint64_t>& in) {
  out_.clear();
  in_.clear();
  if (!ends_.empty()) {
    const std::uint64_t k = key(kind, index);
    auto it = std::lower_bound(ends_.begin(), ends_.end(), k, [](const End& e, std::uint64_t v) { return e.key < v; });
    for (; it != ends_.end() && it->key == k; ++it) (it->out ? out_ : in_).push_back(it->id);
  }
  out = out_;
  in = in_;
}

}  // namespace kob::trace
