#include "report/html_report.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "common/support/json_doc.hpp"
#include "report/report_page.hpp"  // generated from report.html, report.css and report.js (embed.py)
#include "common/support/version.hpp"

namespace kob::report {

namespace {

struct Span {
  std::uint64_t start = 0, dur = 0;
  std::uint32_t track = 0, cat = 0, name = 0;
};

// The order in which spans are worth keeping: longer first; ties broken on everything else, so
// that the same run keeps the same spans whatever order its events came in.
bool kept_before(const Span& a, const Span& b) {
  return std::tie(b.dur, a.start, a.track, a.cat, a.name) < std::tie(a.dur, b.start, b.track, b.cat, b.name);
}

const char* kind_name(trace::TrackKind k) {
  switch (k) {
    case trace::TrackKind::Device:
      return "device";
    case trace::TrackKind::Lane:
      return "lane";
    default:
      return "thread";
  }
}

}  // namespace

struct HtmlReport::Run {
  std::string label;
  std::uint64_t pid = 0, t0 = 0, end = 0;
  std::vector<trace::TrackDesc> tracks;
  std::vector<const char*> cats;  // string literals: known by address, compared by content once
  std::uint64_t width = 1000;     // ns per bin
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint64_t>> bins;  // (track, cat)
  std::vector<Span> heap;  // the longest spans, a heap whose front is the first to let go
  std::uint64_t spans_total = 0;
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> name_ids;
  struct Series {
    std::vector<std::uint64_t> t, v;
  };
  std::map<std::string, Series, std::less<>> memory;  // by counter name ("memory <space>")
  std::string other = "{}", summary = "null";
  std::string alignment;  // "": one run, no clock section
  std::int64_t offset_start_ns = 0, offset_end_ns = 0;

  std::uint32_t cat_id(const char* cat) {
    for (std::uint32_t i = 0; i < cats.size(); ++i)
      if (cats[i] == cat || std::strcmp(cats[i], cat) == 0) return i;
    cats.push_back(cat);
    return static_cast<std::uint32_t>(cats.size() - 1);
  }

  std::uint32_t name_id(std::string_view n) {
    auto it = name_ids.find(std::string(n));
    if (it != name_ids.end()) return it->second;
    names.emplace_back(n);
    name_ids.emplace(names.back(), static_cast<std::uint32_t>(names.size() - 1));
    return static_cast<std::uint32_t>(names.size() - 1);
  }

  // Doubles the bin width until [0, t) fits. Compared as width <= (t - 1) / kBins, not
  // t > width * kBins: near 2^64 (a damaged file's times) the product wraps and the loop never ends.
  void fit(std::uint64_t t) {
    while (t > 0 && width <= (t - 1) / kBins) {
      width *= 2;
      for (auto& [key, v] : bins) {
        for (std::size_t i = 0; i < kBins / 2; ++i) v[i] = v[2 * i] + v[2 * i + 1];
        std::fill(v.begin() + kBins / 2, v.end(), 0);
      }
    }
  }

  void cover(std::uint32_t track, std::uint32_t cat, std::uint64_t start, std::uint64_t stop) {
    fit(stop);
    auto& v = bins[{track, cat}];
    if (v.empty()) v.assign(kBins, 0);
    for (std::uint64_t b = start / width; b * width < stop && b < kBins; ++b)
      v[b] += std::min(stop, (b + 1) * width) - std::max(start, b * width);
  }

  void keep(const Span& s, std::string_view name, std::size_t max_spans) {
    if (max_spans == 0) return;
    Span k = s;
    if (heap.size() >= max_spans) {
      k.name = 0;  // compared with the name unknown: a tie on all else keeps the one already there
      if (!kept_before(k, heap.front())) return;
      std::pop_heap(heap.begin(), heap.end(), kept_before);
      heap.pop_back();
    }
    k.name = name_id(name);
    heap.push_back(k);
    std::push_heap(heap.begin(), heap.end(), kept_before);
    if (names.size() > 2 * max_spans + 1024) forget_names();
  }

  // Names of spans let go are dropped, so that a run of ever new names keeps only those in use.
  void forget_names() {
    std::vector<std::uint32_t> renum(names.size(), UINT32_MAX);
    std::vector<std::string> used;
    for (Span& s : heap) {
      if (renum[s.name] == UINT32_MAX) {
        renum[s.name] = static_cast<std::uint32_t>(used.size());
        used.push_back(std::move(names[s.name]));
      }
      s.name = renum[s.name];
    }
    names = std::move(used);
    name_ids.clear();
    for (std::uint32_t i = 0; i < names.size(); ++i) name_ids.emplace(names[i], i);
  }

  void level(std::string_view counter, std::uint64_t t, std::uint64_t bytes) {
    auto it = memory.find(counter);
    if (it == memory.end()) it = memory.emplace(std::string(counter), Series{}).first;
    Series& s = it->second;
    s.t.push_back(t);
    s.v.push_back(bytes);
    if (s.t.size() < 2 * kMaxPoints) return;
    // Halve: of each pair the higher level stays, so the peaks (the high-water mark) survive.
    for (std::size_t i = 0; i < kMaxPoints; ++i) {
      const std::size_t j = s.v[2 * i + 1] > s.v[2 * i] ? 2 * i + 1 : 2 * i;
      s.t[i] = s.t[j];
      s.v[i] = s.v[j];
    }
    s.t.resize(kMaxPoints);
    s.v.resize(kMaxPoints);
  }

  // The run as the page's data: tracks, categories, bins, the spans kept and their names, memory.
  json::Doc to_json(std::uint64_t axis_zero) const;
  json::Doc bins_json() const;
  void spans_json(json::Doc& o) const;
  json::Doc memory_json() const;
};

// Per bin, the share of it covered, in thousandths (more than 1000 where spans of one category nest).
json::Doc HtmlReport::Run::bins_json() const {
  json::Doc out = json::Doc::array();
  const std::size_t used = std::min<std::uint64_t>(kBins, end / width + 1);
  for (const auto& [key, v] : bins) {
    std::size_t n = used;
    while (n > 0 && v[n - 1] == 0) --n;
    json::Doc pm = json::Doc::array();
    for (std::size_t i = 0; i < n; ++i) pm.push_back((v[i] * 1000 + width / 2) / width);
    out.push_back({{"track", key.first}, {"cat", key.second}, {"pm", std::move(pm)}});
  }
  return out;
}

// The spans kept, by track and start: [track, cat, name, start, dur] flattened; names renumbered
// to those still used.
void HtmlReport::Run::spans_json(json::Doc& o) const {
  std::vector<Span> spans = heap;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.track, a.start, b.dur, a.cat, a.name) < std::tie(b.track, b.start, a.dur, b.cat, b.name);
  });
  std::vector<std::uint32_t> renum(names.size(), UINT32_MAX);
  json::Doc& used_names = o["names"] = json::Doc::array();
  for (Span& s : spans) {
    if (renum[s.name] == UINT32_MAX) {
      renum[s.name] = static_cast<std::uint32_t>(used_names.size());
      used_names.push_back(names[s.name]);
    }
    s.name = renum[s.name];
  }
  json::Doc& flat = o["spans"] = json::Doc::array();
  for (const Span& s : spans)
    for (const std::uint64_t v : {std::uint64_t{s.track}, std::uint64_t{s.cat}, std::uint64_t{s.name}, s.start, s.dur}) flat.push_back(v);
}

json::Doc HtmlReport::Run::memory_json() const {
  json::Doc out = json::Doc::array();
  for (const auto& [name, s] : memory) out.push_back({{"name", name}, {"t", s.t}, {"v", s.v}});
  return out;
}

json::Doc HtmlReport::Run::to_json(std::uint64_t axis_zero) const {
  std::vector<const trace::TrackDesc*> ts;
  for (const auto& t : tracks) ts.push_back(&t);
  std::stable_sort(ts.begin(), ts.end(), [](auto* a, auto* b) { return a->sort_index < b->sort_index; });
  json::Doc track_list = json::Doc::array();
  for (const trace::TrackDesc* t : ts) track_list.push_back({{"index", t->index}, {"name", t->name}, {"kind", kind_name(t->kind)}});
  json::Doc o = {{"label", label}, {"pid", pid}, {"end_ns", end}, {"bin_ns", width}, {"tracks", track_list}, {"cats", cats}};
  o["start_ns"] = static_cast<std::int64_t>(t0 - axis_zero);  // two's complement: before the first run's, negative
  if (!alignment.empty())
    o["clock"] = {{"alignment", alignment}, {"offset_start_ns", offset_start_ns}, {"offset_end_ns", offset_end_ns}};
  o["bins"] = bins_json();
  spans_json(o);
  o["spans_total"] = spans_total;
  o["memory"] = memory_json();
  o["summary"] = json::parse_or_null(summary);
  return o;
}

HtmlReport::HtmlReport(std::size_t max_spans) : max_spans_(max_spans) {}
HtmlReport::~HtmlReport() = default;

HtmlReport::Run& HtmlReport::cur() {
  if (runs_.empty()) runs_.push_back(std::make_unique<Run>());
  return *runs_.back();
}

void HtmlReport::process(std::uint64_t pid, std::string_view name, std::uint64_t t0) {
  runs_.push_back(std::make_unique<Run>());
  Run& r = *runs_.back();
  r.label = name;
  r.pid = pid;
  r.t0 = t0;
}

void HtmlReport::track(const trace::TrackDesc& t) {
  Run& r = cur();
  for (auto& have : r.tracks)
    if (have.index == t.index) {
      have = t;
      return;
    }
  r.tracks.push_back(t);
}

void HtmlReport::event(const trace::Event& e) {
  Run& r = cur();
  const std::uint64_t ts = e.ts > r.t0 ? e.ts - r.t0 : 0;
  if (e.phase == trace::Phase::Slice) {
    const std::uint64_t end = std::max(ts, e.end > r.t0 ? e.end - r.t0 : 0);
    r.end = std::max(r.end, end);
    const std::uint32_t cat = r.cat_id(e.cat);
    ++r.spans_total;
    if (end > ts) r.cover(e.track, cat, ts, end);
    r.keep({ts, end - ts, e.track, cat, 0}, e.name, max_spans_);
  } else if (e.phase == trace::Phase::Counter && std::strcmp(e.cat, "kokkos.memory") == 0 && e.args && !e.args->empty()) {
    r.end = std::max(r.end, ts);
    r.level(e.name, ts, e.args->begin()->u);
  } else {
    r.end = std::max(r.end, ts);
  }
}

bool HtmlReport::finish(const std::string& other_data_json) {
  cur().other = other_data_json.empty() ? "{}" : other_data_json;
  return true;
}

const std::string& HtmlReport::other_data() const {
  static const std::string none = "{}";
  return runs_.empty() ? none : runs_.back()->other;
}

void HtmlReport::set_summary(std::string summary_json) { cur().summary = summary_json.empty() ? "null" : std::move(summary_json); }

void HtmlReport::set_clock(std::string alignment, std::int64_t offset_start_ns, std::int64_t offset_end_ns) {
  Run& r = cur();
  r.alignment = std::move(alignment);
  r.offset_start_ns = offset_start_ns;
  r.offset_end_ns = offset_end_ns;
}

std::string HtmlReport::data_json() const {
  json::Doc runs = json::Doc::array();
  const std::uint64_t zero = runs_.empty() ? 0 : runs_.front()->t0;
  for (const auto& r : runs_) runs.push_back(r->to_json(zero));
  return json::dump({{"tool", "kokkos-ompt-bridge"}, {"tool_version", KOB_VERSION}, {"runs", std::move(runs)}});
}

bool HtmlReport::write(std::FILE* f) const {
  const std::string page = html_page(data_json());
  return std::fwrite(page.data(), 1, page.size(), f) == page.size();
}

std::string html_page(std::string_view data_json) {
  std::string o;
  o.reserve(kPageHead.size() + data_json.size() + data_json.size() / 16 + kPageTail.size());
  o += kPageHead;
  // '<' only occurs inside JSON strings, where \u003c means the same: no "</script>" nor "<!--".
  for (char c : data_json) {
    if (c == '<')
      o += "\\u003c";
    else
      o += c;
  }
  o += kPageTail;
  return o;
}

}  // namespace kob::report
