#include "report/html_report.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "common/support/json.hpp"
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

  void append_json(std::string& o) const;
};

void HtmlReport::Run::append_json(std::string& o) const {
  using json::append_string;
  using json::append_uint;
  o += "{\"label\":";
  append_string(o, label);
  o += ",\"pid\":";
  append_uint(o, pid);
  o += ",\"end_ns\":";
  append_uint(o, end);
  o += ",\"bin_ns\":";
  append_uint(o, width);
  o += ",\"tracks\":[";
  std::vector<const trace::TrackDesc*> ts;
  for (const auto& t : tracks) ts.push_back(&t);
  std::stable_sort(ts.begin(), ts.end(), [](auto* a, auto* b) { return a->sort_index < b->sort_index; });
  for (std::size_t i = 0; i < ts.size(); ++i) {
    o += i ? "," : "";
    o += "{\"index\":";
    append_uint(o, ts[i]->index);
    o += ",\"name\":";
    append_string(o, ts[i]->name);
    o += ",\"kind\":\"";
    o += kind_name(ts[i]->kind);
    o += "\"}";
  }
  o += "],\"cats\":[";
  for (std::size_t i = 0; i < cats.size(); ++i) {
    o += i ? "," : "";
    append_string(o, cats[i]);
  }
  // Per bin, the share of it covered, in thousandths (more than 1000 where spans of one category nest).
  o += "],\"bins\":[";
  const std::size_t used = std::min<std::uint64_t>(kBins, end / width + 1);
  bool first = true;
  for (const auto& [key, v] : bins) {
    o += first ? "" : ",";
    first = false;
    o += "{\"track\":";
    append_uint(o, key.first);
    o += ",\"cat\":";
    append_uint(o, key.second);
    o += ",\"pm\":[";
    std::size_t n = used;
    while (n > 0 && v[n - 1] == 0) --n;
    for (std::size_t i = 0; i < n; ++i) {
      o += i ? "," : "";
      append_uint(o, (v[i] * 1000 + width / 2) / width);
    }
    o += "]}";
  }
  // The spans kept, by track and start: [track, cat, name, start, dur] flattened; names renumbered
  // to those still used.
  std::vector<Span> spans = heap;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.track, a.start, b.dur, a.cat, a.name) < std::tie(b.track, b.start, a.dur, b.cat, b.name);
  });
  std::vector<std::uint32_t> renum(names.size(), UINT32_MAX);
  std::vector<std::uint32_t> order;
  for (Span& s : spans) {
    if (renum[s.name] == UINT32_MAX) {
      renum[s.name] = static_cast<std::uint32_t>(order.size());
      order.push_back(s.name);
    }
    s.name = renum[s.name];
  }
  o += "],\"names\":[";
  for (std::size_t i = 0; i < order.size(); ++i) {
    o += i ? "," : "";
    append_string(o, names[order[i]]);
  }
  o += "],\"spans\":[";
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    o += i ? ",\n" : "";
    const std::uint64_t row[] = {s.track, s.cat, s.name, s.start, s.dur};
    for (std::size_t j = 0; j < 5; ++j) {
      o += j ? "," : "";
      append_uint(o, row[j]);
    }
  }
  o += "],\"spans_total\":";
  append_uint(o, spans_total);
  o += ",\"memory\":[";
  first = true;
  for (const auto& [name, s] : memory) {
    o += first ? "" : ",";
    first = false;
    o += "{\"name\":";
    append_string(o, name);
    o += ",\"t\":[";
    for (std::size_t i = 0; i < s.t.size(); ++i) {
      o += i ? "," : "";
      append_uint(o, s.t[i]);
    }
    o += "],\"v\":[";
    for (std::size_t i = 0; i < s.v.size(); ++i) {
      o += i ? "," : "";
      append_uint(o, s.v[i]);
    }
    o += "]}";
  }
  o += "],\"summary\":";
  o += summary;
  o += "}";
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

std::string HtmlReport::data_json() const {
  std::string o = "{\"tool\":\"kokkos-ompt-bridge\",\"tool_version\":";
  json::append_string(o, KOB_VERSION);
  o += ",\"runs\":[";
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    o += i ? ",\n" : "";
    runs_[i]->append_json(o);
  }
  o += "]}";
  return o;
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
