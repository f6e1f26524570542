// summary.json: the Summary as one JSON document (common/support/json_doc.hpp), its members in the
// order scripts have read them since the first version.
#include <string>
#include <vector>

#include "common/analysis/summary.hpp"
#include "common/support/json_doc.hpp"

namespace kob {

namespace {

using json::Doc;
using json::figure;

Doc counts(const std::vector<OmpCountStats>& v, std::uint64_t OmpCountStats::*field) {
  Doc d = Doc::object();
  for (const OmpCountStats& x : v) d[x.name] = x.*field;
  return d;
}

Doc omp_threads_json(const std::vector<OmpThreadStats>& threads) {
  Doc out = Doc::array();
  for (const OmpThreadStats& th : threads)
    out.push_back({{"track", th.index}, {"os_tid", th.os_tid}, {"type", th.type}, {"proc", th.proc}, {"place", th.place},
                   {"implicit_tasks", th.implicit_tasks}, {"busy_ns", th.busy}, {"wait_ns", th.wait}});
  return out;
}

Doc omp_kernels_json(const std::vector<OmpKernelStats>& kernels) {
  Doc out = Doc::array();
  for (const OmpKernelStats& k : kernels)
    out.push_back({{"name", k.name},
                   {"kind", k.kind},
                   {"device", k.device},
                   {"calls", k.calls},
                   {"parallel_regions", k.parallel_regions},
                   {"regions_per_call", figure(k.regions_per_call())},
                   {"mean_team_size", figure(k.mean_team_size())},
                   {"load_imbalance", figure(k.load_imbalance())},
                   {"barrier_wait_share", figure(k.barrier_wait_share())},
                   {"implicit_task_ns", k.task_time},
                   {"wait_ns", k.wait_time},
                   {"busy_max_ns", k.busy_max},
                   {"busy_mean_ns", k.busy_mean},
                   {"partial", k.partial}});
  return out;
}

// One row of openmp.constructs: where, how often, and the figures of its category.
Doc construct_json(const OmpConstructStats& r) {
  using Category = OmpConstructStats::Category;
  Doc d = {{"kind", r.kind},       {"category", r.category_name()}, {"function", r.function}, {"file", r.file},
           {"line", r.line},       {"caller", r.caller},            {"module", r.module},     {"offset", r.offset},
           {"source", r.source},   {"label", r.label},              {"calls", r.calls},       {"total_ns", r.total},
           {"mean_ns", r.mean()},  {"group", r.kokkos_runtime ? "kokkos_runtime" : "program"}};
  switch (r.category) {
    case Category::Parallel:
    case Category::Work:
      d["team_size"] = figure(r.mean_team_size());
      d["load_imbalance"] = figure(r.load_imbalance());
      d["barrier_wait"] = figure(r.barrier_wait_share());
      d["implicit_task_ns"] = r.task_time;
      d["barrier_wait_ns"] = r.wait_time;
      d["busy_max_ns"] = r.busy_max;
      d["busy_mean_ns"] = r.busy_mean;
      if (r.category == Category::Parallel) {
        d["regions_with_kokkos_kernels"] = r.regions_with_kernels;
        d["implicit_busy_max_ns"] = r.implicit_busy_max;
        d["regions_with_worksharing_or_tasks"] = r.construct_regions;
        d["regions_with_loops"] = r.loop_regions;
        d["regions_with_tasks"] = r.task_regions;
        d["regions_one_task_creator"] = r.producer_regions;
        d["regions_asking_one_thread"] = r.requested_one;
        d["nested_regions"] = r.nested_regions;
      }
      break;
    case Category::Mutex:
      d["wait_ns"] = r.wait;
      d["hold_ns"] = r.hold;
      d["nested_holds"] = r.nested_holds;
      d["failed_tries"] = r.failed_tries;
      break;
    case Category::Sync: d["wait_ns"] = r.wait; break;
    case Category::Task:
      d["created"] = r.calls;
      d["stretches"] = r.stretches;
      d["started"] = r.tasks_started;
      d["start_delay_ns"] = r.start_delay;
      d["create_gap_ns"] = r.create_gap;
      d["create_gaps"] = r.create_gaps;
      break;
    case Category::Target: break;
  }
  d["partial"] = r.partial;
  return d;
}

Doc omp_json(const OmpSummary& m) {
  Doc mutex = Doc::object();
  for (const OmpMutexStats& x : m.mutex)
    mutex[x.kind] = {{"holds", x.holds}, {"nested_holds", x.nested_holds}, {"wait_ns", x.wait}, {"hold_ns", x.hold},
                     {"failed_tries", x.failed_tries}};
  Doc constructs = Doc::array();
  for (const OmpConstructStats& r : m.constructs) constructs.push_back(construct_json(r));
  return {{"records", m.records},
          {"parallel_regions", m.parallel_regions},
          {"implicit_tasks", m.implicit_tasks},
          {"initial_tasks", m.initial_tasks},
          {"outside_kokkos", {{"parallel_regions", m.outside_regions}, {"time_ns", m.outside_time}}},
          {"work", counts(m.work, &OmpCountStats::count)},
          {"sync", counts(m.sync, &OmpCountStats::count)},
          {"sync_wait_ns", counts(m.sync, &OmpCountStats::wait)},
          {"dispatch", counts(m.dispatch, &OmpCountStats::count)},
          {"tasks",
           {{"created", m.tasks_created},
            {"stretches", m.task_stretches},
            {"completed", m.tasks_completed},
            {"cancelled", m.tasks_cancelled},
            {"discarded", m.tasks_discarded}}},
          {"dependences", m.dependences},
          {"tasks_with_dependences", m.tasks_with_dependences},
          {"task_dependences", m.task_dependences},
          {"mutex", mutex},
          {"lock_inits", m.lock_inits},
          {"lock_destroys", m.lock_destroys},
          {"cancels", m.cancels},
          {"flushes", m.flushes},
          {"errors", {{"warning", m.errors_warning}, {"fatal", m.errors_fatal}}},
          {"hidden_helper_threads", m.hidden_helper_threads},
          {"thread_types",
           {{"initial", m.threads_initial}, {"worker", m.threads_worker}, {"other", m.threads_other}, {"unknown", m.threads_unknown}}},
          {"threads", omp_threads_json(m.threads)},
          {"kernels", omp_kernels_json(m.kernels)},
          {"constructs", constructs}};
}

Doc target_ops_json(const std::vector<TargetOpStats>& v, bool bandwidth) {
  Doc d = Doc::object();
  for (const TargetOpStats& x : v) {
    Doc op = {{"count", x.count}, {"bytes", x.bytes}, {"time_ns", x.time}};
    if (bandwidth) op["bandwidth_gb_per_s"] = figure(x.gb_per_s());
    d[x.name] = op;
  }
  return d;
}

Doc target_device_json(const TargetDeviceStats& d) {
  Doc regions = Doc::object(), region_ns = Doc::object();
  for (const auto& r : d.regions) regions[r.name] = r.count;
  for (const auto& r : d.regions) region_ns[r.name] = r.total;
  return {{"device", d.device},
          {"type", d.type},
          {"path", d.path},
          {"target_regions", regions},
          {"target_region_ns", region_ns},
          {"submits", d.submits},
          {"submit_ns", d.submit_time},
          {"data_ops", target_ops_json(d.data_ops, false)},
          {"transfers", target_ops_json(d.transfers, true)},
          {"allocations", d.allocations},
          {"deletes", d.deletes},
          {"alloc_bytes", d.alloc_bytes},
          {"alloc_high_water_bytes", d.alloc_high_water},
          {"alloc_final_bytes", d.alloc_final},
          {"device_records", d.device_records}};
}

Doc target_json(const TargetSummary& m) {
  Doc devices = Doc::array(), copies = Doc::array();
  for (const TargetDeviceStats& d : m.devices) devices.push_back(target_device_json(d));
  for (const TargetCopyStats& c : m.deep_copies)
    copies.push_back({{"name", c.name},
                      {"dst_space", c.dst_space},
                      {"src_space", c.src_space},
                      {"calls", c.calls},
                      {"bytes", c.bytes},
                      {"data_ops", target_ops_json(c.ops, false)}});
  return {{"records", m.records},
          {"regions_in_kernels", m.regions_in_kernels},
          {"regions_outside_kernels", m.regions_outside},
          {"devices", devices},
          {"deep_copies", copies}};
}

Doc findings_json(const std::vector<Finding>& v) {
  Doc out = Doc::array();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Finding& f = v[i];
    Doc d = {{"id", f.id},
             {"rank", i + 1},
             {"title", f.title},
             {"subject", f.subject},
             {"evidence", f.evidence},
             {"time_at_stake_us", json::us(f.time_at_stake)},
             {"time_at_stake_ns", f.time_at_stake},
             {"share_of_run", figure(f.share_of_run)},
             {"fix", f.fix},
             {"threshold", f.threshold}};
    if (!f.location.empty()) d["location"] = f.location;  // findings about an OpenMP construct
    out.push_back(d);
  }
  return out;
}

Doc coverage_json(const Summary& s) {
  const Coverage& c = s.coverage;
  Doc threads = Doc::array(), lost = Doc::array();
  for (const Coverage::Thread& th : c.threads)
    threads.push_back({{"track", th.index}, {"os_tid", th.os_tid}, {"dropped_events", th.dropped}, {"recorded_until_ns", th.recorded_until}});
  for (const Coverage::Lost& l : c.lost)
    lost.push_back({{"track", l.index}, {"os_tid", l.os_tid}, {"from_ns", l.from}, {"to_ns", l.to}, {"events", l.events}, {"reason", l.reason}});
  return {{"complete", c.complete()},
          {"dropped_events", s.dropped},
          {"complete_until_ns", c.complete() ? s.run_time : c.complete_until},
          {"run_end_ns", c.complete() ? s.run_time : c.run_end},
          {"threads", threads},
          {"lost", lost}};
}

// What the tool cost the threads: their own flushes of full ring slots.
Doc tool_json(const ToolCost& c) {
  Doc threads = Doc::array();
  for (const ToolCost::Thread& th : c.threads)
    threads.push_back({{"track", th.index}, {"os_tid", th.os_tid}, {"flushes", th.flushes}, {"flush_ns", th.flush_ns}});
  return {{"flushes", c.flushes}, {"flush_ns", c.flush_ns}, {"threads", threads}};
}

// The Kokkos tables: kernels, regions, memory, deep copies and their sites, allocation sites.
void kokkos_json(const Summary& s, Doc& o) {
  Doc& kernels = o["kernels"] = Doc::array();
  for (const auto& k : s.kernels)
    kernels.push_back({{"name", k.name}, {"kind", k.kind}, {"device", k.device}, {"calls", k.calls}, {"total_ns", k.total},
                       {"mean_ns", k.mean()}, {"min_ns", k.min}, {"max_ns", k.max}, {"partial", k.partial}});
  Doc& regions = o["regions"] = Doc::array();
  for (const auto& r : s.regions)
    regions.push_back({{"path", r.path}, {"name", r.name}, {"depth", r.depth}, {"calls", r.calls}, {"inclusive_ns", r.inclusive},
                       {"exclusive_ns", r.exclusive}, {"partial", r.partial}});
  Doc& memory = o["memory"] = Doc::array();
  for (const auto& m : s.memory)
    memory.push_back({{"space", m.space}, {"allocations", m.allocations}, {"deallocations", m.deallocations},
                      {"bytes_allocated", m.bytes_allocated}, {"high_water_bytes", m.high_water}, {"final_bytes", m.final_level},
                      {"unmatched_frees", m.unmatched_frees}, {"unmatched_free_bytes", m.unmatched_bytes}});
  Doc& copies = o["deep_copies"] = Doc::array();
  for (const auto& c : s.copies)
    copies.push_back({{"dst_space", c.dst_space}, {"src_space", c.src_space}, {"calls", c.calls}, {"bytes", c.bytes},
                      {"time_ns", c.time}, {"bandwidth_gb_per_s", figure(c.gb_per_s())}});
  Doc& sites = o["deep_copy_sites"] = Doc::array();
  for (const auto& c : s.copy_sites)
    sites.push_back({{"dst_name", c.dst_name}, {"src_name", c.src_name}, {"dst_space", c.dst_space}, {"src_space", c.src_space},
                     {"bytes", c.bytes}, {"calls", c.calls}, {"time_ns", c.time}});
  o["sites_untracked"] = s.sites_untracked;
  Doc& allocs = o["alloc_sites"] = Doc::array();
  for (const auto& a : s.alloc_sites)
    allocs.push_back({{"name", a.name}, {"space", a.space}, {"bytes", a.bytes}, {"allocations", a.allocations}});
}

Doc named_json(const std::vector<NamedStats>& v, const char* calls_key) {
  Doc out = Doc::array();
  for (const NamedStats& x : v) out.push_back({{"name", x.name}, {calls_key, x.calls}, {"total_ns", x.total}});
  return out;
}

}  // namespace

std::string summary_json(const Summary& s, const std::string& other_data_json) {
  Doc o = Doc::object();
  o["otherData"] = json::parse_or_null(other_data_json);
  o["run_time_ns"] = s.run_time;
  o["coverage"] = coverage_json(s);
  o["cut_short"] = s.cut_short;
  o["cut_spans"] = s.cut_spans;
  o["findings"] = findings_json(s.findings);
  kokkos_json(s, o);
  o["fences"] = named_json(s.fences, "calls");
  o["sections"] = named_json(s.sections, "intervals");
  o["mpi_calls"] = named_json(s.mpi_calls, "calls");
  o["profile_events"] = s.profile_events;
  o["dual_view_syncs"] = s.dual_view_syncs;
  o["dual_view_modifies"] = s.dual_view_modifies;
  o["filtered_kernel_calls"] = s.filtered_kernels;
  o["filtered_region_entries"] = s.filtered_regions;
  o["dropped_events"] = s.dropped;
  o["tool"] = tool_json(s.tool);
  o["problems"] = s.problems;
  o["openmp"] = omp_json(s.openmp);
  o["target"] = target_json(s.target);
  return json::dump(o, 1) + "\n";
}

}  // namespace kob
