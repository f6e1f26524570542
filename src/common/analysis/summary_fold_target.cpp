// SummaryFold, target offload: per-device figures, submits joined with their target region,
// data ops with the Kokkos deep copy that caused them.
#include "common/record/intern.hpp"
#include "common/analysis/summary_fold_state.hpp"

namespace kob {

using namespace summary_fold_detail;  // the state's helper types

// The target data ops a deep copy caused arrive before it (they run inside it) and wait for it.
void SummaryFold::target_copy(const DeepCopySpan& d) {
  State& s = *s_;
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

void SummaryFold::omp_target(const OmpTargetSpan& x) {
  State& s = *s_;
  s.dev(x.device);
  OmpCountStats& c = s.target_regions[x.device][x.kind];
  ++c.count;
  c.total += x.dur();
  ++(x.kernel != 0 ? s.regions_in_kernels : s.regions_outside);
  s.constructs.target(x);
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

void SummaryFold::finish_target(const Timeline& t, Summary& s) {
  State& st = *s_;
  const InternTable& names = kob::names();
  TargetSummary& g = s.target;
  g.records = t.omp_target_records;
  if (!g.present()) return;
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

}  // namespace kob
