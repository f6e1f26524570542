#include "common/formats/trace_flows.hpp"

#include <algorithm>

namespace kob::trace {

namespace {

constexpr std::size_t kNone = SIZE_MAX;

// Ids to positions in a vector of the Timeline: sorted (id, position) pairs, the first position
// of an id that occurs twice. Sorted arrays, not hash maps: the ids come mostly in order already.
class IdIndex {
 public:
  explicit IdIndex(std::vector<TraceFlows::IdEntry>& storage) : e_(storage) { e_.clear(); }
  void add(std::uint64_t id, std::size_t at) { e_.push_back({id, at}); }
  void reserve(std::size_t n) { e_.reserve(n); }
  void seal() {
    auto by_id = [](const E& a, const E& b) { return a.id < b.id; };
    if (!std::is_sorted(e_.begin(), e_.end(), by_id)) std::stable_sort(e_.begin(), e_.end(), by_id);
  }
  // The position of id, kNone when absent. Lookups come mostly in id order: the last entry
  // found and the one after it are tried before a search.
  std::size_t find(std::uint64_t id) const {
    if (next_ > 0 && first_of(next_ - 1, id)) return e_[next_ - 1].at;
    if (next_ < e_.size() && first_of(next_, id)) return e_[next_++].at;
    auto it = std::lower_bound(e_.begin(), e_.end(), id, [](const E& e, std::uint64_t v) { return e.id < v; });
    if (it == e_.end() || it->id != id) return kNone;
    next_ = static_cast<std::size_t>(it - e_.begin()) + 1;
    return it->at;
  }

 private:
  using E = TraceFlows::IdEntry;
  // Whether entry i is the first one of id.
  bool first_of(std::size_t i, std::uint64_t id) const { return e_[i].id == id && (i == 0 || e_[i - 1].id != id); }
  std::vector<E>& e_;
  mutable std::size_t next_ = 0;
};

template <class V, class Id>
void index_by(IdIndex& ix, const V& v, Id id_of) {
  ix.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) ix.add(id_of(v[i]), i);
  ix.seal();
}

}  // namespace

void TraceFlows::add(const char* name, SpanKind from_kind, std::size_t from, std::uint32_t from_track, std::uint64_t from_ts,
                     SpanKind to_kind, std::size_t to, std::uint32_t to_track, std::uint64_t to_ts) {
  const std::uint64_t id = base_ + flows_.size() + 1;
  flows_.push_back({name, id, from_track, to_track, from_ts, to_ts});
  from_slot_.push_back(slot(from_kind, from));
  to_slot_.push_back(slot(to_kind, to));
}

// Kokkos kernel -> the parallel regions it opened, parallel region -> its implicit tasks on other
// threads, task creation -> each stretch of the task; then target offload: Kokkos kernel -> its
// target regions, target region -> its submits and data ops on other threads, Kokkos deep copy ->
// each data op it caused, host op -> its device record on the device track.
void TraceFlows::build(const Timeline& t, const std::unordered_map<int, std::uint32_t>& device_tracks, std::uint64_t base) {
  base_ = base;
  flows_.clear();
  from_slot_.clear();
  to_slot_.clear();
  const std::size_t sizes[kKinds] = {t.kernels.size(),       t.fences.size(),         t.regions.size(),
                                     t.deep_copies.size(),   t.mpi_calls.size(),      t.omp_targets.size(),    t.omp_data_ops.size(),
                                     t.omp_submits.size(),   t.omp_parallels.size(),  t.omp_implicit_tasks.size(),
                                     t.omp_works.size(),     t.omp_syncs.size(),      t.omp_tasks.size(),
                                     t.omp_mutexes.size(),   t.tool_flushes.size(),   t.omp_device_ops.size(),
                                     t.omp_task_creates.size()};
  for (std::size_t k = 0; k < kKinds; ++k) kind_base_[k + 1] = kind_base_[k] + sizes[k];
  // At most one arrow into each parallel region, implicit task, task stretch, target region,
  // submit and device record, two into a data op.
  const std::size_t most = t.omp_parallels.size() + t.omp_implicit_tasks.size() + t.omp_tasks.size() + t.omp_targets.size() +
                           t.omp_submits.size() + 2 * t.omp_data_ops.size() + t.omp_device_ops.size();
  flows_.reserve(most);
  from_slot_.reserve(most);
  to_slot_.reserve(most);

  IdIndex kernels(ids_[0]), parallels(ids_[1]), targets(ids_[2]), copies(ids_[3]);
  index_by(kernels, t.kernels, [](const KernelSpan& k) { return k.id; });
  index_by(parallels, t.omp_parallels, [](const OmpParallelSpan& p) { return p.id; });
  for (std::size_t i = 0; i < t.omp_parallels.size(); ++i) {
    const OmpParallelSpan& p = t.omp_parallels[i];
    if (p.kernel == 0) continue;
    const std::size_t k = kernels.find(p.kernel);
    if (k == kNone) continue;
    const KernelSpan& ks = t.kernels[k];
    add("parallel", SpanKind::Kernel, k, ks.track, ks.start, SpanKind::OmpParallel, i, p.track, p.start);
  }
  for (std::size_t n = 0; n < t.omp_implicit_tasks.size(); ++n) {
    const OmpImplicitTaskSpan& i = t.omp_implicit_tasks[n];
    if (i.initial) continue;
    const std::size_t p = parallels.find(i.parallel_id);
    if (p == kNone) continue;
    const OmpParallelSpan& ps = t.omp_parallels[p];
    if (ps.track != i.track)
      add("implicit task", SpanKind::OmpParallel, p, ps.track, ps.start, SpanKind::OmpImplicitTask, n, i.track, i.start);
  }
  for (std::size_t n = 0; n < t.omp_tasks.size(); ++n) {
    const OmpTaskSpan& k = t.omp_tasks[n];
    if (k.create == OmpTaskSpan::kNoCreate) continue;
    const OmpTaskCreate& c = t.omp_task_creates[k.create];
    add("task", SpanKind::OmpTaskCreate, k.create, c.track, c.time, SpanKind::OmpTask, n, k.track, k.start);
  }

  index_by(targets, t.omp_targets, [](const OmpTargetSpan& x) { return x.id; });
  for (std::size_t n = 0; n < t.omp_targets.size(); ++n) {
    const OmpTargetSpan& x = t.omp_targets[n];
    if (x.kernel == 0) continue;
    const std::size_t k = kernels.find(x.kernel);
    if (k == kNone) continue;
    const KernelSpan& ks = t.kernels[k];
    add("target", SpanKind::Kernel, k, ks.track, ks.start, SpanKind::OmpTarget, n, x.track, x.start);
  }
  for (std::size_t n = 0; n < t.omp_submits.size(); ++n) {
    const OmpSubmitSpan& x = t.omp_submits[n];
    const std::size_t p = x.target_id != 0 ? targets.find(x.target_id) : kNone;
    if (p == kNone) continue;
    const OmpTargetSpan& g = t.omp_targets[p];
    if (g.track != x.track) add("submit", SpanKind::OmpTarget, p, g.track, g.start, SpanKind::OmpSubmit, n, x.track, x.start);
  }
  index_by(copies, t.deep_copies, [](const DeepCopySpan& d) { return d.id; });
  for (std::size_t n = 0; n < t.omp_data_ops.size(); ++n) {
    const OmpDataOpSpan& x = t.omp_data_ops[n];
    const std::size_t p = x.target_id != 0 ? targets.find(x.target_id) : kNone;
    if (p != kNone) {
      const OmpTargetSpan& g = t.omp_targets[p];
      if (g.track != x.track) add("data op", SpanKind::OmpTarget, p, g.track, g.start, SpanKind::OmpDataOp, n, x.track, x.start);
    }
    if (x.deep_copy == 0) continue;
    const std::size_t c = copies.find(x.deep_copy);
    if (c == kNone) continue;
    const DeepCopySpan& d = t.deep_copies[c];
    add("deep copy", SpanKind::DeepCopy, c, d.track, d.start, SpanKind::OmpDataOp, n, x.track, x.start);
  }
  if (!t.omp_device_ops.empty()) {
    // Host ops by id: submits first, then data ops (the first of an id wins).
    IdIndex host_ops(ids_[4]);
    host_ops.reserve(t.omp_submits.size() + t.omp_data_ops.size());
    for (std::size_t n = 0; n < t.omp_submits.size(); ++n) host_ops.add(t.omp_submits[n].host_op_id, n);
    for (std::size_t n = 0; n < t.omp_data_ops.size(); ++n) host_ops.add(t.omp_data_ops[n].host_op_id, t.omp_submits.size() + n);
    host_ops.seal();
    for (std::size_t n = 0; n < t.omp_device_ops.size(); ++n) {
      const OmpDeviceOp& o = t.omp_device_ops[n];
      const std::size_t h = o.host_op_id != 0 ? host_ops.find(o.host_op_id) : kNone;
      auto d = device_tracks.find(o.device);
      if (h == kNone || d == device_tracks.end()) continue;
      const bool submit = h < t.omp_submits.size();
      const std::size_t at = submit ? h : h - t.omp_submits.size();
      const Interval& span = submit ? static_cast<const Interval&>(t.omp_submits[at]) : t.omp_data_ops[at];
      add("device", submit ? SpanKind::OmpSubmit : SpanKind::OmpDataOp, at, span.track, span.start, SpanKind::OmpDevice, n,
          d->second, o.start);
    }
  }
  index_ends();
}

// Counting sort of the arrow ends by slot: flows are visited by id, so each slot's ids ascend.
void TraceFlows::index_ends() {
  const std::size_t slots = kind_base_[kKinds];
  out_at_.assign(slots + 1, 0);
  in_at_.assign(slots + 1, 0);
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    ++out_at_[from_slot_[f] + 1];
    ++in_at_[to_slot_[f] + 1];
  }
  for (std::size_t s = 0; s < slots; ++s) {
    out_at_[s + 1] += out_at_[s];
    in_at_[s + 1] += in_at_[s];
  }
  out_ids_.resize(flows_.size());
  in_ids_.resize(flows_.size());
  out_next_.assign(out_at_.begin(), out_at_.end() - 1);
  in_next_.assign(in_at_.begin(), in_at_.end() - 1);
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    out_ids_[out_next_[from_slot_[f]]++] = flows_[f].id;
    in_ids_[in_next_[to_slot_[f]]++] = flows_[f].id;
  }
}

void TraceFlows::at(SpanKind kind, std::size_t index, std::span<const std::uint64_t>& out, std::span<const std::uint64_t>& in) const {
  const std::size_t s = slot(kind, index);
  out = std::span<const std::uint64_t>(out_ids_.data() + out_at_[s], out_at_[s + 1] - out_at_[s]);
  in = std::span<const std::uint64_t>(in_ids_.data() + in_at_[s], in_at_[s + 1] - in_at_[s]);
}

}  // namespace kob::trace
