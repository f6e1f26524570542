#include "common/trace_writer.hpp"

#include <algorithm>
#include <cinttypes>
#include <unordered_map>

#include "common/devid.hpp"
#include "common/intern.hpp"
#include "common/json.hpp"
#include "common/summary.hpp"

namespace kob {

namespace {

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

enum class XKind : std::uint8_t { Kernel, Fence, Region, DeepCopy };

struct XRef {
  std::uint32_t track;
  std::uint64_t start, end;
  XKind kind;
  std::size_t index;
};

}  // namespace

bool write_chrome_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped_out) {
  const InternTable& names = kob::names();
  Out out(f);
  std::string& o = out.s();
  const std::string pid = std::to_string(info.pid);
  std::vector<std::string> tids;
  for (const Track& tr : t.tracks) tids.push_back(std::to_string(tr.os_tid));
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
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    const Track& tr = t.tracks[i];
    const bool omp = tr.omp_thread_type == 1 || tr.omp_thread_type == 2;
    o += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid + ",\"tid\":" + tids[i] + ",\"args\":{\"name\":\"" +
         (omp ? "omp thread " : "thread ") + std::to_string(tr.index) + "\"}}";
    o += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + pid + ",\"tid\":" + tids[i] +
         ",\"args\":{\"sort_index\":" + std::to_string(tr.index) + "}}";
  }

  // Complete events, made to nest per track.
  std::vector<XRef> xs;
  xs.reserve(t.kernels.size() + t.fences.size() + t.regions.size() + t.deep_copies.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i) xs.push_back({t.kernels[i].track, t.kernels[i].start, t.kernels[i].end, XKind::Kernel, i});
  for (std::size_t i = 0; i < t.fences.size(); ++i) xs.push_back({t.fences[i].track, t.fences[i].start, t.fences[i].end, XKind::Fence, i});
  for (std::size_t i = 0; i < t.regions.size(); ++i) xs.push_back({t.regions[i].track, t.regions[i].start, t.regions[i].end, XKind::Region, i});
  for (std::size_t i = 0; i < t.deep_copies.size(); ++i)
    xs.push_back({t.deep_copies[i].track, t.deep_copies[i].start, t.deep_copies[i].end, XKind::DeepCopy, i});
  std::sort(xs.begin(), xs.end(), [](const XRef& a, const XRef& b) {
    if (a.track != b.track) return a.track < b.track;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.kind < b.kind;  // equal spans: regions outside kernels is as good as any fixed order
  });
  std::uint64_t clipped = 0;
  std::vector<std::uint64_t> ends;  // open parents' ends on the current track
  std::uint32_t cur_track = UINT32_MAX;
  for (XRef& x : xs) {
    if (x.track != cur_track) {
      ends.clear();
      cur_track = x.track;
    }
    while (!ends.empty() && ends.back() <= x.start) ends.pop_back();
    if (!ends.empty() && x.end > ends.back()) {
      x.end = ends.back();
      ++clipped;
    }
    ends.push_back(x.end);
  }
  if (clipped_out) *clipped_out = clipped;

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
    }
    out.maybe_flush();
  }

  // Sections overlap freely, so they are async events keyed by section id.
  for (const SectionSpan& s : t.sections) {
    const std::string id = std::to_string(s.section);
    head("b", "kokkos.section", names.str(s.name), s.track, s.start);
    o += ",\"id\":" + id + ",\"args\":{\"section\":" + id + "}}";
    head("e", "kokkos.section", names.str(s.name), s.end_track, s.end);
    o += ",\"id\":" + id + ",\"args\":{\"section\":" + id + "}}";
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
    o += "\",\"bytes\":" + std::to_string(m.bytes) + "}}";
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

  o += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":";
  o += info.other_data_json;
  o += "\n}\n";
  out.flush();
  return out.ok();
}

}  // namespace kob
