#include "common/formats/otf2_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#ifdef KOB_HAVE_OTF2
#include <otf2/otf2.h>
#endif

#include "common/formats/fixed_text_cache.hpp"

namespace kob::otf2 {

#ifdef KOB_HAVE_OTF2
bool available() { return true; }
#else
bool available() { return false; }
#endif

namespace {

enum class Paradigm : std::uint8_t { Kokkos, OpenMP, Mpi, Other };

// OTF2's region roles, by number (OTF2_Definitions.h), so that this file needs no OTF2 header to
// classify.
enum Role : std::uint8_t {
  kFunction = 1, kLoop = 3, kCode = 4, kParallel = 5, kSections = 6, kWorkshare = 8, kSingle = 9, kMaster = 11,
  kCritical = 12, kAtomic = 14, kBarrier = 15, kImplicitBarrier = 16, kFlushRole = 17, kOrdered = 18, kTask = 20,
  kTaskCreate = 21, kTaskWait = 22, kCollOne2All = 23, kCollAll2One = 24, kCollAll2All = 25, kPoint2Point = 28,
  kDataTransfer = 30, kArtificial = 31, kAllocate = 35, kDeallocate = 36,
};

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

Paradigm paradigm_of(std::string_view cat) {
  if (starts(cat, "kokkos")) return Paradigm::Kokkos;
  if (starts(cat, "omp")) return Paradigm::OpenMP;
  if (starts(cat, "mpi")) return Paradigm::Mpi;
  return Paradigm::Other;
}

std::uint8_t role_of(std::string_view cat, std::string_view name) {
  if (cat == "kokkos.kernel") return kFunction;
  if (cat == "kokkos.region" || cat == "kokkos.section") return kCode;
  if (cat == "kokkos.fence") return kTaskWait;
  if (cat == "kokkos.deep_copy" || cat == "omp.target_data") return kDataTransfer;
  if (cat == "kokkos.alloc") return kAllocate;
  if (cat == "kokkos.dealloc") return kDeallocate;
  if (cat == "omp.parallel" || cat == "omp.implicit_task") return kParallel;
  if (cat == "omp.task") return kTask;
  if (cat == "omp.task_create") return kTaskCreate;
  if (cat == "omp.flush") return kFlushRole;
  if (cat == "omp.target" || cat == "omp.target_submit") return kFunction;
  if (cat == "omp.device") return starts(name, "submit") || starts(name, "kernel") ? kFunction : kDataTransfer;
  if (cat == "omp.work") {
    if (starts(name, "loop") || name == "distribute" || name == "taskloop") return kLoop;
    if (name == "sections") return kSections;
    if (starts(name, "single")) return kSingle;
    if (name == "workshare") return kWorkshare;
    if (name == "masked") return kMaster;
    return kCode;
  }
  if (cat == "omp.sync") {
    if (starts(name, "barrier_implicit")) return kImplicitBarrier;
    if (starts(name, "barrier")) return kBarrier;
    if (name == "taskwait" || name == "taskgroup") return kTaskWait;
    return kCode;
  }
  if (cat == "omp.mutex") {
    if (starts(name, "critical")) return kCritical;
    if (starts(name, "atomic")) return kAtomic;
    if (starts(name, "ordered")) return kOrdered;
    return kCode;
  }
  if (cat == "mpi") {
    if (name == "MPI_Send" || name == "MPI_Recv" || name == "MPI_Sendrecv") return kPoint2Point;
    if (name == "MPI_Barrier") return kBarrier;
    if (name == "MPI_Reduce_scatter" || name == "MPI_Scan" || starts(name, "MPI_All")) return kCollAll2All;
    if (name == "MPI_Bcast" || starts(name, "MPI_Scatter")) return kCollOne2All;
    if (name == "MPI_Reduce" || starts(name, "MPI_Gather")) return kCollAll2One;
    return kFunction;
  }
  return kArtificial;  // instants: markers, not code
}

struct Span {
  std::uint64_t start, end;
  std::uint32_t region, nargs;
  std::uint64_t args_at;  // into Impl::args
};

struct MetricPoint {
  std::uint64_t time;
  std::uint32_t metric;
  std::uint64_t value;
};

struct AttrValue {
  std::uint32_t attr;
  std::uint64_t value;  // UINT64 / INT64 bits / string ref
};

enum class LocKind : std::uint8_t { Thread, Device, Section };

struct Location {
  std::uint32_t group;  // index into Impl::groups
  std::string name;
  LocKind kind;
  std::vector<Span> spans;
  std::vector<MetricPoint> metrics;
};

struct Group {
  std::string name;
  std::uint32_t host;      // index into Impl::hosts
  int rank;
  std::int64_t parent = -1;  // device groups: the process group that created them
};

struct Region {
  std::uint32_t name, canonical;  // string refs
  Paradigm paradigm;
  std::uint8_t role;
};

struct Attribute {
  std::uint32_t name;  // string ref
  std::uint8_t type;   // 0 uint64, 1 int64, 2 string
};

}  // namespace

// Looked up by text without making a std::string per event.
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
using TextIds = std::unordered_map<std::string, std::uint32_t, TextHash, std::equal_to<>>;

struct ArchiveSink::Impl {
  std::vector<std::string> strings;
  TextIds string_ids;
  std::vector<Region> regions;
  // Regions by category, then name. Categories and argument keys are the producer's literals
  // (trace_events.hpp), so each is found by its address first, by its text only the first time.
  std::unordered_map<std::string, TextIds, TextHash, std::equal_to<>> region_ids;
  std::unordered_map<const char*, TextIds*> region_ids_by_cat;
  std::vector<Attribute> attrs;
  std::map<std::pair<std::string, std::uint8_t>, std::uint32_t> attr_ids;
  std::vector<std::uint32_t> metric_names;  // string ref per metric (one member each)
  std::map<std::string, std::uint32_t> metric_ids;
  std::vector<std::string> hosts;
  std::vector<Group> groups;
  std::vector<Location> locations;
  std::vector<AttrValue> args;
  // The process being fed: its tracks' locations, its sections' open begins.
  std::vector<std::int64_t> track_loc;
  std::map<std::uint64_t, std::uint32_t> section_loc;  // section id -> location
  struct Open {
    std::uint64_t start;
    std::uint32_t region, nargs;
    std::uint64_t args_at;
  };
  std::map<std::uint64_t, Open> open_sections;
  std::string next_host;
  int next_rank = -1;
  std::uint64_t ref_trace_ns = 0, ref_realtime_ns = 0;
  bool have_realtime = false;
  std::uint64_t t_min = UINT64_MAX, t_max = 0;
  std::uint64_t records = 0;
  // Ids of texts that never change at their address (Event::name_fixed, Arg::fixed), found
  // without hashing the text (names and source locations are long); a region's by its category too.
  trace::FixedTextCache<std::uint32_t, 10> fixed;
  struct AttrSlot {
    const char* key = nullptr;
    std::uint8_t type = 0;
    std::uint32_t id = 0;
  };
  static constexpr std::size_t kAttrSlots = 256;  // attr's hash: its top 8 bits
  AttrSlot attr_slots[kAttrSlots];

  std::uint32_t str_fixed(std::string_view s) {
    bool had = false;
    auto& slot = fixed.slot(s, had);
    if (!had) fixed.fill(slot, s, nullptr, str(s));
    return slot.value;
  }
  std::uint32_t region_fixed(const char* cat, std::string_view name) {
    bool had = false;
    auto& slot = fixed.slot(name, had, cat);
    if (!had) fixed.fill(slot, name, cat, region(cat, name));
    return slot.value;
  }

  std::uint32_t str(std::string_view s) {
    if (auto it = string_ids.find(s); it != string_ids.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(strings.size());
    string_ids.emplace(std::string(s), id);
    strings.emplace_back(s);
    return id;
  }
  std::uint32_t region(const char* cat, std::string_view name) {
    TextIds*& ids = region_ids_by_cat[cat];
    if (ids == nullptr) ids = &region_ids[cat];  // node-based: the address stays valid
    if (auto it = ids->find(name); it != ids->end()) return it->second;
    const std::uint32_t id = static_cast<std::uint32_t>(regions.size());
    regions.push_back({str(name), str(std::string(cat) + ":" + std::string(name)), paradigm_of(cat), role_of(cat, name)});
    ids->emplace(std::string(name), id);
    return id;
  }
  std::uint32_t attr(const char* key, std::uint8_t type) {
    // Keys are the producer's literals: a direct-mapped slot by address, then the map by text.
    AttrSlot& slot = attr_slots[((reinterpret_cast<std::uintptr_t>(key) ^ type) * 0x9E3779B97F4A7C15ull) >> 56];
    if (slot.key == key && slot.type == type) return slot.id;
    slot = {key, type, attr_slow(key, type)};
    return slot.id;
  }
  std::uint32_t attr_slow(const char* key, std::uint8_t type) {
    auto [it, fresh] = attr_ids.try_emplace(std::make_pair(std::string(key), type), static_cast<std::uint32_t>(attrs.size()));
    if (fresh) attrs.push_back({str(key), type});
    return it->second;
  }
  std::uint32_t metric(std::string_view space) {
    auto [it, fresh] = metric_ids.try_emplace(std::string(space), static_cast<std::uint32_t>(metric_names.size()));
    if (fresh) metric_names.push_back(str("Kokkos " + std::string(space)));
    return it->second;
  }
  // The event's arguments as attribute values; returns where they start.
  std::uint64_t add_args(const trace::Args* a, std::uint32_t& n) {
    const std::uint64_t at = args.size();
    n = 0;
    if (a == nullptr) return at;
    for (const trace::Arg& x : *a) {
      switch (x.type) {
        case trace::Arg::Type::Uint:
        case trace::Arg::Type::Bool: args.push_back({attr(x.key, 0), x.u}); break;
        case trace::Arg::Type::Int: args.push_back({attr(x.key, 1), static_cast<std::uint64_t>(x.i)}); break;
        case trace::Arg::Type::Str:
        case trace::Arg::Type::SharedStr: args.push_back({attr(x.key, 2), x.fixed ? str_fixed(x.s) : str(x.s)}); break;
        case trace::Arg::Type::Null: continue;
      }
      ++n;
    }
    return at;
  }
  void seen(std::uint64_t a, std::uint64_t b) {
    t_min = std::min(t_min, a);
    t_max = std::max(t_max, b);
  }
  Location* loc_of_track(std::uint32_t track) {
    if (track >= track_loc.size() || track_loc[track] < 0) return nullptr;
    return &locations[static_cast<std::size_t>(track_loc[track])];
  }

#ifdef KOB_HAVE_OTF2
  // The steps of ArchiveSink::write: each location's events (counts: the records of each), its
  // local definitions, then the global ones.
  bool write_events(OTF2_Archive* ar, std::vector<std::uint64_t>& counts);
  bool write_location(OTF2_EvtWriter* w, Location& loc, OTF2_AttributeList* list, std::uint64_t& n);
  bool write_local_definitions(OTF2_Archive* ar);
  bool write_global_definitions(OTF2_Archive* ar, const std::vector<std::uint64_t>& counts);
  bool write_system_tree(OTF2_GlobalDefWriter* g, std::uint32_t machine, std::uint32_t node);
#endif
};

ArchiveSink::ArchiveSink() : impl_(std::make_unique<Impl>()) {}
ArchiveSink::~ArchiveSink() = default;

void ArchiveSink::next_process(const std::string& host, int rank) {
  impl_->next_host = host;
  impl_->next_rank = rank;
}

void ArchiveSink::set_realtime_reference(std::uint64_t trace_ns, std::uint64_t realtime_ns) {
  if (impl_->have_realtime) return;  // the first process's: the archive has one clock
  impl_->have_realtime = true;
  impl_->ref_trace_ns = trace_ns;
  impl_->ref_realtime_ns = realtime_ns;
}

void ArchiveSink::process(std::uint64_t pid, std::string_view name, std::uint64_t t0) {
  Impl& m = *impl_;
  (void)t0;
  std::uint32_t host = 0;
  const std::string h = m.next_host.empty() ? "localhost" : m.next_host;
  auto it = std::find(m.hosts.begin(), m.hosts.end(), h);
  host = static_cast<std::uint32_t>(it - m.hosts.begin());
  if (it == m.hosts.end()) m.hosts.push_back(h);
  m.groups.push_back({std::string(name) + " (pid " + std::to_string(pid) + ")", host, m.next_rank});
  m.next_host.clear();
  m.next_rank = -1;
  m.track_loc.clear();
  m.fixed.clear();  // a later process's texts may sit at the same addresses
  m.section_loc.clear();
  m.open_sections.clear();
}

void ArchiveSink::track(const trace::TrackDesc& t) {
  Impl& m = *impl_;
  if (m.groups.empty()) return;
  if (t.index >= m.track_loc.size()) m.track_loc.resize(t.index + 1, -1);
  if (m.track_loc[t.index] >= 0) return;
  // A thread that only handed over device records: not a track of its own in the other traces either.
  if (!t.listed) return;
  std::uint32_t group = static_cast<std::uint32_t>(m.groups.size() - 1);
  LocKind kind = LocKind::Thread;
  if (t.kind == trace::TrackKind::Device) {
    // A device is a location group of its own (an accelerator), made by the process.
    const Group& proc = m.groups[group];
    Group g{proc.name + " " + t.name, proc.host, proc.rank, static_cast<std::int64_t>(group)};
    m.groups.push_back(g);
    group = static_cast<std::uint32_t>(m.groups.size() - 1);
    kind = LocKind::Device;
  }
  m.track_loc[t.index] = static_cast<std::int64_t>(m.locations.size());
  m.locations.push_back({group, t.name, kind, {}, {}});
}

void ArchiveSink::event(const trace::Event& e) {
  Impl& m = *impl_;
  switch (e.phase) {
    case trace::Phase::Slice:
    case trace::Phase::Instant: {
      Location* loc = m.loc_of_track(e.track);
      if (!loc) return;
      const std::uint64_t end = e.phase == trace::Phase::Slice ? std::max(e.end, e.ts) : e.ts;
      std::uint32_t region;
      if (std::string_view(e.cat) == "omp.mutex" && e.args) {
        // A lock's wait and hold are two regions: the time spent in each is what a viewer shows.
        std::string_view phase;
        for (const trace::Arg& a : *e.args)
          if (std::string_view(a.key) == "phase" && (a.type == trace::Arg::Type::Str || a.type == trace::Arg::Type::SharedStr)) phase = a.s;
        region = m.region(e.cat, phase.empty() ? std::string(e.name) : std::string(e.name) + " " + std::string(phase));
      } else {
        region = e.name_fixed ? m.region_fixed(e.cat, e.name) : m.region(e.cat, e.name);
      }
      std::uint32_t n = 0;
      const std::uint64_t at = m.add_args(e.args, n);
      loc->spans.push_back({e.ts, end, region, n, at});
      m.seen(e.ts, end);
      m.records += 2;
      break;
    }
    case trace::Phase::Counter: {
      Location* loc = m.loc_of_track(e.track);
      if (!loc || e.args == nullptr || e.args->empty()) return;
      const trace::Arg& v = *e.args->begin();
      loc->metrics.push_back({e.ts, m.metric(e.name), v.type == trace::Arg::Type::Int ? static_cast<std::uint64_t>(v.i) : v.u});
      m.seen(e.ts, e.ts);
      m.records += 1;
      break;
    }
    case trace::Phase::AsyncBegin: {
      std::uint32_t n = 0;
      const std::uint64_t at = m.add_args(e.args, n);
      m.open_sections[e.id] = {e.ts, m.region(e.cat, e.name), n, at};
      if (!m.section_loc.count(e.id) && !m.groups.empty()) {
        // Sections overlap freely, so each is a location of its own (as Perfetto gives each a track).
        m.section_loc[e.id] = static_cast<std::uint32_t>(m.locations.size());
        m.locations.push_back({static_cast<std::uint32_t>(m.groups.size() - 1),
                               "section " + std::string(e.name) + " (" + std::to_string(e.id) + ")", LocKind::Section, {}, {}});
      }
      break;
    }
    case trace::Phase::AsyncEnd: {
      auto open = m.open_sections.find(e.id);
      auto loc = m.section_loc.find(e.id);
      if (open == m.open_sections.end() || loc == m.section_loc.end()) return;
      const std::uint64_t end = std::max(e.ts, open->second.start);
      m.locations[loc->second].spans.push_back({open->second.start, end, open->second.region, open->second.nargs, open->second.args_at});
      m.seen(open->second.start, end);
      m.records += 2;
      m.open_sections.erase(open);
      break;
    }
  }
}

void ArchiveSink::flow(const trace::Flow&) {}

bool ArchiveSink::finish(const std::string&) { return true; }

std::uint64_t ArchiveSink::records() const { return impl_->records; }

#ifdef KOB_HAVE_OTF2

namespace {

// OTF2 reports errors through one process-wide callback; while an archive is written, the first
// message is kept for our one-line error instead of OTF2 printing its own lines.
std::string* g_first_error = nullptr;

OTF2_ErrorCode keep_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt, va_list va) {
  if (g_first_error && g_first_error->empty()) {
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt ? fmt : "", va);
    *g_first_error = std::string(OTF2_Error_GetName(code)) + (buf[0] ? std::string(": ") + buf : std::string());
  }
  return code;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
const OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, post_flush};

OTF2_Paradigm otf2_paradigm(Paradigm p) {
  switch (p) {
    case Paradigm::Kokkos: return OTF2_PARADIGM_KOKKOS;
    case Paradigm::OpenMP: return OTF2_PARADIGM_OPENMP;
    case Paradigm::Mpi: return OTF2_PARADIGM_MPI;
    case Paradigm::Other: break;
  }
  return OTF2_PARADIGM_USER;
}

struct ErrorScope {
  explicit ErrorScope(std::string& e) : prev_(OTF2_Error_RegisterCallback(keep_error, nullptr)) { g_first_error = &e; }
  ~ErrorScope() {
    OTF2_Error_RegisterCallback(prev_, nullptr);
    g_first_error = nullptr;
  }
  OTF2_ErrorCallback prev_;
};

}  // namespace

// One location's events in time order: spans by start (the longer first, then as given: outer
// first), Leaves as the next start passes their end, metrics merged in by time.
bool ArchiveSink::Impl::write_location(OTF2_EvtWriter* w, Location& loc, OTF2_AttributeList* list, std::uint64_t& n) {
  std::vector<std::uint32_t> order(loc.spans.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Span& x = loc.spans[a];
    const Span& y = loc.spans[b];
    return x.start != y.start ? x.start < y.start : x.end > y.end;
  });
  std::stable_sort(loc.metrics.begin(), loc.metrics.end(), [](const MetricPoint& a, const MetricPoint& b) { return a.time < b.time; });
  bool ok = true;
  std::size_t next_metric = 0;
  auto metrics_until = [&](std::uint64_t t) {
    for (; ok && next_metric < loc.metrics.size() && loc.metrics[next_metric].time <= t; ++next_metric) {
      const MetricPoint& p = loc.metrics[next_metric];
      OTF2_Type type = OTF2_TYPE_UINT64;
      OTF2_MetricValue v;
      v.unsigned_int = p.value;
      ok = OTF2_EvtWriter_Metric(w, nullptr, p.time, p.metric, 1, &type, &v) == OTF2_SUCCESS;
      ++n;
    }
  };
  auto leave = [&](const Span* s) {
    metrics_until(s->end);
    ok = ok && OTF2_EvtWriter_Leave(w, nullptr, s->end, s->region) == OTF2_SUCCESS;
    ++n;
  };
  std::vector<const Span*> stack;
  for (std::uint32_t i : order) {
    const Span& s = loc.spans[i];
    while (!stack.empty() && stack.back()->end <= s.start) {
      leave(stack.back());
      stack.pop_back();
    }
    metrics_until(s.start);
    OTF2_AttributeList_RemoveAllAttributes(list);
    for (std::uint32_t k = 0; k < s.nargs; ++k) {
      const AttrValue& a = args[s.args_at + k];
      OTF2_AttributeValue v;
      OTF2_Type type;
      switch (attrs[a.attr].type) {
        case 0: type = OTF2_TYPE_UINT64; v.uint64 = a.value; break;
        case 1: type = OTF2_TYPE_INT64; v.int64 = static_cast<std::int64_t>(a.value); break;
        default: type = OTF2_TYPE_STRING; v.stringRef = static_cast<OTF2_StringRef>(a.value); break;
      }
      OTF2_AttributeList_AddAttribute(list, a.attr, type, v);
    }
    ok = ok && OTF2_EvtWriter_Enter(w, s.nargs ? list : nullptr, s.start, s.region) == OTF2_SUCCESS;
    ++n;
    stack.push_back(&s);
    if (!ok) return false;
  }
  while (ok && !stack.empty()) {
    leave(stack.back());
    stack.pop_back();
  }
  metrics_until(UINT64_MAX);
  return ok;
}

bool ArchiveSink::Impl::write_events(OTF2_Archive* ar, std::vector<std::uint64_t>& counts) {
  counts.assign(locations.size(), 0);
  OTF2_AttributeList* list = OTF2_AttributeList_New();
  bool ok = OTF2_Archive_OpenEvtFiles(ar) == OTF2_SUCCESS;
  for (std::size_t li = 0; ok && li < locations.size(); ++li) {
    Location& loc = locations[li];
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, li);
    if (!w) {
      ok = false;
      break;
    }
    ok = write_location(w, loc, list, counts[li]);
    ok = OTF2_Archive_CloseEvtWriter(ar, w) == OTF2_SUCCESS && ok;
    // Spans are no longer needed once written.
    std::vector<Span>().swap(loc.spans);
    std::vector<MetricPoint>().swap(loc.metrics);
  }
  OTF2_AttributeList_Delete(list);
  return OTF2_Archive_CloseEvtFiles(ar) == OTF2_SUCCESS && ok;
}

// None, but every location has its (empty) file, as readers expect.
bool ArchiveSink::Impl::write_local_definitions(OTF2_Archive* ar) {
  bool ok = OTF2_Archive_OpenDefFiles(ar) == OTF2_SUCCESS;
  for (std::size_t li = 0; ok && li < locations.size(); ++li) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(ar, li);
    ok = dw != nullptr && OTF2_Archive_CloseDefWriter(ar, dw) == OTF2_SUCCESS;
  }
  return ok && OTF2_Archive_CloseDefFiles(ar) == OTF2_SUCCESS;
}

// The machine, a node per host, and the location groups under them.
bool ArchiveSink::Impl::write_system_tree(OTF2_GlobalDefWriter* g, std::uint32_t machine, std::uint32_t node) {
  bool ok = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE) == OTF2_SUCCESS;
  for (std::size_t i = 0; ok && i < hosts.size(); ++i)
    ok = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, i + 1, str(hosts[i]), node, 0) == OTF2_SUCCESS;
  for (std::size_t i = 0; ok && i < groups.size(); ++i) {
    const Group& gr = groups[i];
    const bool device = gr.parent >= 0;
    ok = OTF2_GlobalDefWriter_WriteLocationGroup(
             g, i, str(gr.name), device ? OTF2_LOCATION_GROUP_TYPE_ACCELERATOR : OTF2_LOCATION_GROUP_TYPE_PROCESS, gr.host + 1,
             device ? static_cast<OTF2_LocationGroupRef>(gr.parent) : OTF2_UNDEFINED_LOCATION_GROUP) == OTF2_SUCCESS;
  }
  return ok;
}

bool ArchiveSink::Impl::write_global_definitions(OTF2_Archive* ar, const std::vector<std::uint64_t>& counts) {
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
  if (!g) return false;
  const std::uint64_t t0 = t_min == UINT64_MAX ? 0 : t_min;
  const std::uint64_t realtime = have_realtime ? ref_realtime_ns + t0 - ref_trace_ns : OTF2_UNDEFINED_TIMESTAMP;
  bool ok = OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000ull, t0, t_max >= t0 ? t_max - t0 + 1 : 1, realtime) ==
            OTF2_SUCCESS;
  // Strings first (everything refers to them): every string the definitions use is made first.
  const std::uint32_t machine = str("machine"), node = str("node"), empty = str("");
  std::vector<std::uint32_t> loc_names;
  for (const std::string& h : hosts) str(h);
  for (const Group& gr : groups) str(gr.name);
  for (const Location& l : locations) loc_names.push_back(str(l.name));
  const std::uint32_t attr_desc = str("an argument of the event, as in the Chrome and Perfetto traces");
  const std::uint32_t bytes = str("bytes"), mem_desc = str("bytes allocated in this Kokkos memory space");
  for (std::size_t i = 0; ok && i < strings.size(); ++i) ok = OTF2_GlobalDefWriter_WriteString(g, i, strings[i].c_str()) == OTF2_SUCCESS;
  ok = ok && write_system_tree(g, machine, node);
  for (std::size_t i = 0; ok && i < locations.size(); ++i) {
    const Location& l = locations[i];
    const OTF2_LocationType type = l.kind == LocKind::Device ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM : OTF2_LOCATION_TYPE_CPU_THREAD;
    ok = OTF2_GlobalDefWriter_WriteLocation(g, i, loc_names[i], type, counts[i], l.group) == OTF2_SUCCESS;
  }
  for (std::size_t i = 0; ok && i < regions.size(); ++i) {
    const Region& r = regions[i];
    ok = OTF2_GlobalDefWriter_WriteRegion(g, i, r.name, r.canonical, empty, static_cast<OTF2_RegionRole>(r.role),
                                          otf2_paradigm(r.paradigm), OTF2_REGION_FLAG_NONE, empty, 0, 0) == OTF2_SUCCESS;
  }
  for (std::size_t i = 0; ok && i < attrs.size(); ++i) {
    const OTF2_Type type = attrs[i].type == 0 ? OTF2_TYPE_UINT64 : attrs[i].type == 1 ? OTF2_TYPE_INT64 : OTF2_TYPE_STRING;
    ok = OTF2_GlobalDefWriter_WriteAttribute(g, i, attrs[i].name, attr_desc, type) == OTF2_SUCCESS;
  }
  for (std::size_t i = 0; ok && i < metric_names.size(); ++i) {
    const OTF2_MetricMemberRef member = i;
    ok = OTF2_GlobalDefWriter_WriteMetricMember(g, member, metric_names[i], mem_desc, OTF2_METRIC_TYPE_USER, OTF2_METRIC_ABSOLUTE_POINT,
                                                OTF2_TYPE_UINT64, OTF2_BASE_BINARY, 0, bytes) == OTF2_SUCCESS &&
         OTF2_GlobalDefWriter_WriteMetricClass(g, i, 1, &member, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT) ==
             OTF2_SUCCESS;
  }
  return OTF2_Archive_CloseGlobalDefWriter(ar, g) == OTF2_SUCCESS && ok;
}

bool ArchiveSink::write(const std::string& dir, std::string& error) {
  namespace fs = std::filesystem;
  std::string otf2_error;
  ErrorScope scope(otf2_error);
  // Made beside its final place, then put there: a reader never sees half an archive.
  const fs::path final_dir(dir);
  const fs::path tmp = final_dir.string() + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  auto fail = [&](const std::string& what) {
    error = "could not write " + dir + ": " + what + (otf2_error.empty() ? "" : " (" + otf2_error + ")");
    std::error_code ignore;
    fs::remove_all(tmp, ignore);
    return false;
  };
  OTF2_Archive* ar = OTF2_Archive_Open(tmp.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar) return fail("cannot create the archive");
  bool ok = OTF2_Archive_SetFlushCallbacks(ar, &kFlushCallbacks, nullptr) == OTF2_SUCCESS &&
            OTF2_Archive_SetSerialCollectiveCallbacks(ar) == OTF2_SUCCESS;
  OTF2_Archive_SetCreator(ar, "kokkos-ompt-bridge");
  OTF2_Archive_SetDescription(ar, "Kokkos and OpenMP (OMPT) events, linked by correlation ids");
  std::vector<std::uint64_t> counts;
  ok = ok && impl_->write_events(ar, counts);
  ok = ok && impl_->write_local_definitions(ar);
  ok = ok && impl_->write_global_definitions(ar, counts);
  ok = OTF2_Archive_Close(ar) == OTF2_SUCCESS && ok;
  if (!ok) return fail("the OTF2 library failed");
  fs::remove_all(final_dir, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) return fail(ec.message());
  return true;
}

#else

bool ArchiveSink::write(const std::string& dir, std::string& error) {
  error = "could not write " + dir + ": this build has no OTF2 library (install libopen-trace-format2-dev and rebuild)";
  return false;
}

#endif

}  // namespace kob::otf2
