#include "common/timeline/target_matcher.hpp"

#include <algorithm>
#include <string>

#include "common/record/intern.hpp"
#include "common/record/record_fields.hpp"

namespace kob::builder {

void AllocLinker::memory(MemoryEvent& m) {
  if (m.alloc) {
    m.id = ++next_id_;
    auto it = blocks_.emplace(m.ptr, Block{m.ptr, m.ptr + m.bytes + kHeader, m.time, kNever, m.id});
    live_[m.ptr].push_back(it);
    for (Waiting& w : waiting_) ++w.allocs_seen;
    // Alloc ops waiting for this block (or waiting too long) go now, in their order.
    while (!waiting_.empty()) {
      bool wait = false;
      const std::uint64_t id = pick(waiting_.front().op, wait);
      if (wait && waiting_.front().allocs_seen < kWaitAllocs) break;
      give(waiting_.front().op, id);
      waiting_.pop_front();
    }
    return;
  }
  auto l = live_.find(m.ptr);
  if (l == live_.end() || l->second.empty()) return;
  auto it = l->second.back();
  l->second.pop_back();
  if (l->second.empty()) live_.erase(l);
  it->second.free = m.time;
  freed_.push_back(it);
  if (freed_.size() > kKeepFreed) {
    blocks_.erase(freed_.front());
    freed_.pop_front();
  }
}

std::uint64_t AllocLinker::pick(const OmpDataOpSpan& d, bool& wait) const {
  wait = false;
  if (d.address == 0 || next_id_ == 0) {
    wait = d.address != 0 && (d.optype == 1 || d.optype == 17);
    return 0;
  }
  const std::uint64_t at = d.start;
  const bool is_alloc = d.optype == 1 || d.optype == 17, is_delete = d.optype == 4 || d.optype == 20;
  const Block *live = nullptr, *next = nullptr, *freed = nullptr;
  auto it = blocks_.upper_bound(d.address);
  for (int n = 0; it != blocks_.begin() && n < 64; ++n) {
    const Block& b = (--it)->second;
    if (d.address >= b.end) continue;
    if (b.alloc <= at && b.free >= at) {
      if (!live || b.alloc > live->alloc) live = &b;
    } else if (b.alloc > at) {
      if (!next || b.alloc < next->alloc) next = &b;
    } else if (!freed || b.free > freed->free) {
      freed = &b;
    }
  }
  const Block* p = live ? live : is_alloc ? next : is_delete ? freed : nullptr;
  wait = p == nullptr && is_alloc;
  return p ? p->id : 0;
}

void AllocLinker::give(OmpDataOpSpan d, std::uint64_t id) {
  d.kokkos_alloc = id;
  out_.omp_data_op(d);
}

void AllocLinker::data_op(const OmpDataOpSpan& d) {
  bool wait = false;
  const std::uint64_t id = pick(d, wait);
  if (wait || !waiting_.empty()) {  // keep the order of ops behind one that waits
    waiting_.push_back({d, 0});
    return;
  }
  give(d, id);
}

void AllocLinker::finish() {
  for (Waiting& w : waiting_) {
    bool wait = false;
    give(w.op, pick(w.op, wait));
  }
  waiting_.clear();
}

OmpDevice& TargetMatcher::device(int num) {
  OmpDevice& d = devices_[num];
  d.num = num;
  return d;
}

void TargetMatcher::normalise(int& dev) const {
  if (host_device(dev, initial_device_num_, initialised_)) dev = kHostDevice;
}

void TargetMatcher::give_target(OmpTargetSpan x) {
  normalise(x.device);
  c_.out.omp_target(x);
}

void TargetMatcher::give_data_op(OmpDataOpSpan d) {
  normalise(d.src_device);
  normalise(d.dst_device);
  linker_.data_op(d);
}

void TargetMatcher::record(const Event& r, std::uint64_t ns, std::uint32_t track) {
  ++c_.rest.omp_target_records;
  switch (r.type) {
    case Ev::OmpTargetBegin:
    case Ev::OmpTargetEnd: target_record(r, ns, track); break;
    case Ev::OmpDataOpBegin:
    case Ev::OmpDataOp:
    case Ev::OmpDataOpEnd: data_op_record(r, ns, track); break;
    case Ev::OmpSubmitBegin:
    case Ev::OmpSubmit:
    case Ev::OmpSubmitEnd: submit_record(r, ns, track); break;
    case Ev::OmpDeviceInit:
    case Ev::OmpDeviceFinalize:
    case Ev::OmpDeviceLoad:
    case Ev::OmpDeviceUnload:
    case Ev::OmpDeviceRecord: device_record(r, ns, track); break;
    default: break;
  }
}

void TargetMatcher::target_record(const Event& r, std::uint64_t ns, std::uint32_t track) {
  switch (r.type) {
    case Ev::OmpTargetBegin: {
      OmpTargetSpan x;
      x.start = ns;
      x.track = track;
      using F = fields::OmpTarget;
      x.kind = F::kind.get(r);
      x.device = F::device.get(r);
      x.id = F::target_id.get(r);
      x.kernel = F::kernel.get(r);
      x.deep_copy = F::deep_copy.get(r);
      x.codeptr = F::codeptr.get(r);
      if (!open_targets_.emplace(x.id, x).second) c_.problems.add("OMPT target begin with a target id already open: ignored");
      break;
    }
    case Ev::OmpTargetEnd: {
      auto it = open_targets_.find(fields::OmpTarget::target_id.get(r));
      if (it == open_targets_.end()) {
        c_.problems.add("OMPT target end with no target begin: ignored");
        break;
      }
      it->second.end = ns;
      give_target(it->second);
      open_targets_.erase(it);
      break;
    }
    default:
      break;
  }
}

void TargetMatcher::data_op_record(const Event& r, std::uint64_t ns, std::uint32_t track) {
  switch (r.type) {
    case Ev::OmpDataOpBegin:
    case Ev::OmpDataOp: {
      OmpDataOpSpan d;
      d.start = d.end = ns;
      d.track = track;
      using F = fields::OmpDataOp;
      d.optype = F::optype.get(r);
      d.src_device = F::src_device(r);
      d.dst_device = F::dst_device(r);
      d.host_op_id = F::host_op_id.get(r);
      d.kernel = F::kernel.get(r);
      d.bytes = F::bytes.get(r);
      d.target_id = F::target_id.get(r);
      d.deep_copy = F::deep_copy.get(r);
      d.address = F::address.get(r);
      if (r.type == Ev::OmpDataOp) {
        d.point = true;
        give_data_op(d);
      } else if (!open_ops_.emplace(d.host_op_id, d).second) {
        c_.problems.add("OMPT target data op begin with a host op id already open: ignored");
      }
      break;
    }
    case Ev::OmpDataOpEnd: {
      auto it = open_ops_.find(fields::OmpDataOp::host_op_id.get(r));
      if (it == open_ops_.end()) {
        c_.problems.add("OMPT target data op end with no begin: ignored");
        break;
      }
      OmpDataOpSpan& d = it->second;
      d.end = ns;
      if (d.address == 0) d.address = fields::OmpDataOp::address.get(r);  // an alloc knows its address only at the end
      if (d.bytes == 0) d.bytes = fields::OmpDataOp::bytes.get(r);
      give_data_op(d);
      open_ops_.erase(it);
      break;
    }
    default:
      break;
  }
}

void TargetMatcher::submit_record(const Event& r, std::uint64_t ns, std::uint32_t track) {
  switch (r.type) {
    case Ev::OmpSubmitBegin:
    case Ev::OmpSubmit: {
      OmpSubmitSpan x;
      x.start = x.end = ns;
      x.track = track;
      using F = fields::OmpSubmit;
      x.requested_teams = F::requested_teams.get(r);
      x.host_op_id = F::host_op_id.get(r);
      x.kernel = F::kernel.get(r);
      x.target_id = F::target_id.get(r);
      if (r.type == Ev::OmpSubmit) {
        x.point = true;
        c_.out.omp_submit(x);
      } else if (!open_submits_.emplace(x.host_op_id, x).second) {
        c_.problems.add("OMPT target submit begin with a host op id already open: ignored");
      }
      break;
    }
    case Ev::OmpSubmitEnd: {
      auto it = open_submits_.find(fields::OmpSubmit::host_op_id.get(r));
      if (it == open_submits_.end()) {
        c_.problems.add("OMPT target submit end with no begin: ignored");
        break;
      }
      it->second.end = ns;
      c_.out.omp_submit(it->second);
      open_submits_.erase(it);
      break;
    }
    default:
      break;
  }
}

void TargetMatcher::device_record(const Event& r, std::uint64_t ns, std::uint32_t track) {
  switch (r.type) {
    case Ev::OmpDeviceInit: {
      using F = fields::OmpDeviceInit;
      OmpDevice& d = device(F::device.get(r));
      if (d.initialised) c_.problems.add("OMPT device_initialize twice for one device: the last one kept");
      if (!d.initialised) initialised_.push_back(d.num);
      d.initialised = true;
      d.type = F::type_name.get(r);
      d.traced = F::traced.get(r);
      d.init_time = ns;
      break;
    }
    case Ev::OmpDeviceFinalize:
      device(fields::OnDevice::device.get(r)).finalize_time = ns;
      break;
    case Ev::OmpDeviceLoad:
    case Ev::OmpDeviceUnload: {
      OmpDeviceLoad l;
      l.time = ns;
      l.track = track;
      using F = fields::OmpDeviceLoad;
      l.device = F::device.get(r);
      l.unload = r.type == Ev::OmpDeviceUnload;
      l.file = l.unload ? InternTable::kNullName : F::file.get(r);
      if (!l.unload) {
        l.host_addr = F::host_addr.get(r);
        l.device_addr = F::device_addr.get(r);
        l.bytes = F::bytes.get(r);
      }
      l.module_id = F::module_id.get(r);
      device(l.device);
      c_.out.omp_device_load(l);
      break;
    }
    case Ev::OmpDeviceRecord: {
      OmpDeviceOp o;
      using F = fields::OmpDeviceRecord;
      o.record_type = F::record_type.get(r);
      o.device = F::device.get(r);
      o.host_op_id = F::host_op_id.get(r);
      o.target_id = F::target_id.get(r);
      o.start = F::start.get(r);
      o.point = F::end.get(r) == 0;
      o.end = o.point ? o.start : std::max(F::end.get(r), F::start.get(r));
      o.value = F::value.get(r);
      o.op_kind = F::op_kind.get(r);
      device(o.device);
      c_.out.omp_device_op(o);
      break;
    }
    default:
      break;
  }
}

void TargetMatcher::finish(bool lost_ends, const OpenEnd& open_end) {
  close_unended(open_targets_, [&](const OmpTargetSpan& x) { give_target(x); }, "an OpenMP target region", lost_ends, open_end, c_.problems);
  close_unended(open_ops_, [&](const OmpDataOpSpan& d) { give_data_op(d); }, "an OpenMP target data operation", lost_ends, open_end,
                c_.problems);
  close_unended(open_submits_, [&](const OmpSubmitSpan& x) { c_.out.omp_submit(x); }, "an OpenMP target submit", lost_ends, open_end,
                c_.problems);
  linker_.finish();
  devices(c_.rest.omp_devices);
}

void TargetMatcher::devices(std::vector<OmpDevice>& out) const {
  out.clear();
  for (const auto& [num, d] : devices_) out.push_back(d);
}

bool TargetMatcher::can_cut() const {
  if (!open_targets_.empty() || !open_ops_.empty() || !open_submits_.empty() || linker_.waiting()) return false;
  for (const auto& [num, d] : devices_)
    if (d.traced) return false;
  return true;
}

}  // namespace kob::builder
