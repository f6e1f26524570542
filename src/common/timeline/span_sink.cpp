#include "common/timeline/span_sink.hpp"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace kob {

namespace {

// Spans of equal extent come inner kind first, as they usually nest: a mutex or sync inside an
// implicit task inside a parallel region, data ops inside a target region, all of these inside a
// Kokkos kernel, kernels inside deep copies (the host copy kernel) and regions.
enum class Kind : std::uint8_t {
  ToolFlush, Mutex, Sync, Work, Task, ImplicitTask, Parallel, DataOp, Submit, DeviceOp, Target, Fence, Kernel, Mpi, DeepCopy, Region, Section,
  Memory, Instant, DualView, TaskCreate, OmpInstant, DeviceLoad
};

// 32 bytes: two million spans sort in a fraction of a second.
struct Item {
  std::uint64_t at = 0;     // when it is final: a span's end, an instant's time
  std::uint64_t start = 0;  // later start first: what is nested comes before what holds it
  std::uint32_t depth = 0;  // regions: deeper first
  std::uint32_t index = 0;  // in its vector (a Timeline never holds 2^32 of one kind)
  Kind kind = Kind::Kernel;
  bool late = false;        // a worker's implicit task: after everything else final at the same time
  bool point = false;       // a span with no length comes after the spans that end when it happens
};

Item item(const Interval& x, Kind kind, std::size_t index, std::uint32_t depth = 0) {
  Item i;
  i.at = x.end;
  i.point = x.start == x.end;
  i.start = x.start;
  i.depth = depth;
  i.kind = kind;
  i.index = static_cast<std::uint32_t>(index);
  return i;
}

// A worker's implicit task is final only when libomp reports its end: after its region and the
// kernel that opened it.
void add_implicit_tasks(const Timeline& t, std::vector<Item>& items) {
  std::unordered_map<std::uint64_t, const OmpParallelSpan*> parallel_of;
  std::unordered_map<std::uint64_t, const KernelSpan*> kernel_of;
  parallel_of.reserve(t.omp_parallels.size());
  kernel_of.reserve(t.kernels.size());
  for (const OmpParallelSpan& p : t.omp_parallels) parallel_of.emplace(p.id, &p);
  for (const KernelSpan& k : t.kernels) kernel_of.emplace(k.id, &k);
  for (std::size_t i = 0; i < t.omp_implicit_tasks.size(); ++i) {
    const OmpImplicitTaskSpan& x = t.omp_implicit_tasks[i];
    items.push_back(item(x, Kind::ImplicitTask, i));
    if (x.initial) continue;
    auto p = parallel_of.find(x.parallel_id);
    if (p == parallel_of.end() || p->second->track == x.track) continue;
    Item& it = items.back();
    it.at = std::max(it.at, p->second->end);
    auto k = kernel_of.find(p->second->kernel);
    if (p->second->kernel != 0 && k != kernel_of.end()) it.at = std::max(it.at, k->second->end);
    it.late = true;
  }
}

// Every span and instant of the timeline, with the time it became final.
std::vector<Item> collect_items(const Timeline& t) {
  std::vector<Item> items;
  items.reserve(t.kernels.size() + t.fences.size() + t.regions.size() + t.sections.size() + t.deep_copies.size() + t.memory.size() +
                t.events.size() + t.dual_views.size() + t.omp_parallels.size() + t.omp_implicit_tasks.size() + t.omp_works.size() +
                t.omp_syncs.size() + t.omp_task_creates.size() + t.omp_tasks.size() + t.omp_mutexes.size() + t.omp_instants.size() +
                t.omp_targets.size() + t.omp_data_ops.size() + t.omp_submits.size() + t.omp_device_loads.size() + t.omp_device_ops.size() +
                t.mpi_calls.size() + t.tool_flushes.size());
  auto span = [&](const Interval& x, Kind kind, std::size_t index, std::uint32_t depth = 0) {
    items.push_back(item(x, kind, index, depth));
  };
  // Instants keep their vector's order (task creates are numbered by it): a time never goes back.
  auto points = [&](const auto& v, Kind kind) {
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      at = std::max(at, v[i].time);
      Item it;
      it.at = at;
      it.point = true;
      it.start = at;
      it.kind = kind;
      it.index = static_cast<std::uint32_t>(i);
      items.push_back(it);
    }
  };
  for (std::size_t i = 0; i < t.kernels.size(); ++i) span(t.kernels[i], Kind::Kernel, i);
  for (std::size_t i = 0; i < t.fences.size(); ++i) span(t.fences[i], Kind::Fence, i);
  for (std::size_t i = 0; i < t.regions.size(); ++i) span(t.regions[i], Kind::Region, i, t.regions[i].depth);
  for (std::size_t i = 0; i < t.sections.size(); ++i) span(t.sections[i], Kind::Section, i);
  for (std::size_t i = 0; i < t.deep_copies.size(); ++i) span(t.deep_copies[i], Kind::DeepCopy, i);
  points(t.memory, Kind::Memory);
  points(t.events, Kind::Instant);
  points(t.dual_views, Kind::DualView);
  for (std::size_t i = 0; i < t.omp_parallels.size(); ++i) span(t.omp_parallels[i], Kind::Parallel, i);
  add_implicit_tasks(t, items);
  for (std::size_t i = 0; i < t.omp_works.size(); ++i) span(t.omp_works[i], Kind::Work, i);
  for (std::size_t i = 0; i < t.omp_syncs.size(); ++i) span(t.omp_syncs[i], Kind::Sync, i);
  points(t.omp_task_creates, Kind::TaskCreate);
  for (std::size_t i = 0; i < t.omp_tasks.size(); ++i) span(t.omp_tasks[i], Kind::Task, i);
  for (std::size_t i = 0; i < t.omp_mutexes.size(); ++i) span(t.omp_mutexes[i], Kind::Mutex, i);
  points(t.omp_instants, Kind::OmpInstant);
  for (std::size_t i = 0; i < t.omp_targets.size(); ++i) span(t.omp_targets[i], Kind::Target, i);
  for (std::size_t i = 0; i < t.omp_data_ops.size(); ++i) span(t.omp_data_ops[i], Kind::DataOp, i);
  for (std::size_t i = 0; i < t.omp_submits.size(); ++i) span(t.omp_submits[i], Kind::Submit, i);
  points(t.omp_device_loads, Kind::DeviceLoad);
  for (std::size_t i = 0; i < t.omp_device_ops.size(); ++i) span(t.omp_device_ops[i], Kind::DeviceOp, i);
  for (std::size_t i = 0; i < t.mpi_calls.size(); ++i) span(t.mpi_calls[i], Kind::Mpi, i);
  for (std::size_t i = 0; i < t.tool_flushes.size(); ++i) span(t.tool_flushes[i], Kind::ToolFlush, i);

  return items;
}

// By time final; then later start, inner kind first, deeper region first, so that nested spans
// come before what holds them; then each vector's own order.
void sort_items(std::vector<Item>& items) {
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.at != b.at) return a.at < b.at;
    if (a.late != b.late) return b.late;
    if (a.point != b.point) return b.point;
    if (a.start != b.start) return a.start > b.start;
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.depth != b.depth) return a.depth > b.depth;
    return a.index < b.index;
  });
}

void hand_over(const Item& i, const Timeline& t, SpanSink& sink) {
  switch (i.kind) {
    case Kind::Kernel: sink.kernel(t.kernels[i.index]); break;
    case Kind::Fence: sink.fence(t.fences[i.index]); break;
    case Kind::Region: sink.region(t.regions[i.index]); break;
    case Kind::Section: sink.section(t.sections[i.index]); break;
    case Kind::DeepCopy: sink.deep_copy(t.deep_copies[i.index]); break;
    case Kind::Memory: sink.memory(t.memory[i.index]); break;
    case Kind::Instant: sink.instant(t.events[i.index]); break;
    case Kind::DualView: sink.dual_view(t.dual_views[i.index]); break;
    case Kind::Parallel: sink.omp_parallel(t.omp_parallels[i.index]); break;
    case Kind::ImplicitTask: sink.omp_implicit_task(t.omp_implicit_tasks[i.index]); break;
    case Kind::Work: sink.omp_work(t.omp_works[i.index]); break;
    case Kind::Sync: sink.omp_sync(t.omp_syncs[i.index]); break;
    case Kind::TaskCreate: sink.omp_task_create(t.omp_task_creates[i.index]); break;
    case Kind::Task: sink.omp_task(t.omp_tasks[i.index]); break;
    case Kind::Mutex: sink.omp_mutex(t.omp_mutexes[i.index]); break;
    case Kind::OmpInstant: sink.omp_instant(t.omp_instants[i.index]); break;
    case Kind::Target: sink.omp_target(t.omp_targets[i.index]); break;
    case Kind::DataOp: sink.omp_data_op(t.omp_data_ops[i.index]); break;
    case Kind::Submit: sink.omp_submit(t.omp_submits[i.index]); break;
    case Kind::DeviceLoad: sink.omp_device_load(t.omp_device_loads[i.index]); break;
    case Kind::DeviceOp: sink.omp_device_op(t.omp_device_ops[i.index]); break;
    case Kind::Mpi: sink.mpi(t.mpi_calls[i.index]); break;
    case Kind::ToolFlush: sink.tool_flush(t.tool_flushes[i.index]); break;
  }
}

// Everything but the spans and instants.
Timeline rest_of(const Timeline& t) {
  Timeline rest;
  rest.tracks = t.tracks;
  rest.omp_devices = t.omp_devices;
  rest.omp_target_records = t.omp_target_records;
  rest.omp_records = t.omp_records;
  rest.omp_tasks_completed = t.omp_tasks_completed;
  rest.omp_tasks_cancelled = t.omp_tasks_cancelled;
  rest.omp_tasks_discarded = t.omp_tasks_discarded;
  rest.t0 = t.t0;
  rest.t_end = t.t_end;
  rest.dropped = t.dropped;
  rest.lost = t.lost;
  rest.run_end = t.run_end;
  rest.cut_short = t.cut_short;
  rest.cut_spans = t.cut_spans;
  rest.problems = t.problems;
  rest.filtered_kernels = t.filtered_kernels;
  rest.filtered_regions = t.filtered_regions;
  return rest;
}

}  // namespace

void replay_timeline(const Timeline& t, SpanSink& sink) {
  std::vector<Item> items = collect_items(t);
  sort_items(items);
  for (const Item& i : items) hand_over(i, t, sink);
  sink.finish(rest_of(t));
}

}  // namespace kob
