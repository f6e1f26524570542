// The HTML report's sink: bins that double their width as the run grows, the longest spans kept,
// memory levels thinned keeping the peaks, and data that cannot end its script element early.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "common/session/config.hpp"
#include "report/html_report.hpp"

namespace {

using kob::report::HtmlReport;
using kob::trace::Event;
using kob::trace::Phase;

void slice(HtmlReport& r, std::uint32_t track, std::uint64_t ts, std::uint64_t end, const char* name = "k",
           const char* cat = "kokkos.kernel") {
  Event e;
  e.phase = Phase::Slice;
  e.cat = cat;
  e.name = name;
  e.track = track;
  e.ts = ts;
  e.end = end;
  r.event(e);
}

std::string field(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  const std::size_t from = at + key.size() + 3;
  std::size_t to = from, depth = 0;
  for (; to < json.size(); ++to) {
    const char c = json[to];
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && depth-- == 0) break;
    if (c == ',' && depth == 0) break;
  }
  return json.substr(from, to - from);
}

}  // namespace

TEST_CASE("html report: bins cover the run, their width doubling as it grows") {
  HtmlReport r;
  r.process(7, "prog", 1000);
  r.track({0, 1, kob::trace::TrackKind::Thread, 1, true, true, "thread 0", 0});
  slice(r, 0, 1000, 1000 + 2500);  // 0 .. 2.5 us: bins of 1 us, 1000 + 1000 + 500 thousandths
  std::string j = r.data_json();
  CHECK(field(j, "bin_ns") == "1000");
  CHECK(field(j, "pm") == "[1000,1000,500]");
  CHECK(field(j, "end_ns") == "2500");
  slice(r, 0, 1000 + 4096 * 1000, 1000 + 4096 * 1000 + 1000);  // past 4096 bins of 1 us: 2 us each
  j = r.data_json();
  CHECK(field(j, "bin_ns") == "2000");
  CHECK(field(j, "pm").substr(0, 12) == "[1000,250,0,");
  CHECK(field(j, "pm").substr(field(j, "pm").size() - 5) == ",500]");
  CHECK(field(j, "spans_total") == "2");
  CHECK(field(j, "cats") == "[\"kokkos.kernel\"]");
}

TEST_CASE("html report: the longest spans are kept, by track and start") {
  HtmlReport r(3);
  r.process(1, "prog", 0);
  slice(r, 0, 0, 10, "a");
  slice(r, 0, 100, 150, "b");
  slice(r, 1, 20, 40, "c");
  slice(r, 1, 200, 240, "d", "omp.sync");
  slice(r, 0, 300, 330, "e");
  slice(r, 0, 400, 430, "f");  // as long as e, later: e stays
  const std::string j = r.data_json();
  // [track, cat, name, start, dur]; names renumbered in the order they are listed.
  CHECK(field(j, "spans") == "[0,0,0,100,50,0,0,1,300,30,1,1,2,200,40]");
  CHECK(field(j, "names") == "[\"b\",\"e\",\"d\"]");
  CHECK(field(j, "spans_total") == "6");
}

TEST_CASE("html report: memory levels thinned keep the peak and the last level") {
  HtmlReport r;
  r.process(1, "prog", 0);
  kob::trace::Args a;
  Event e;
  e.phase = Phase::Counter;
  e.cat = "kokkos.memory";
  e.name = "memory Host";
  e.args = &a;
  const std::uint64_t n = 2 * kob::report::kMaxPoints + 3;
  for (std::uint64_t i = 0; i < n; ++i) {
    a.clear().u("bytes", i == 1234 ? 999999 : i % 7);
    e.ts = i;
    r.event(e);
  }
  const std::string j = r.data_json();
  const std::string v = field(j, "v");
  CHECK(v.find("999999") != std::string::npos);
  CHECK(std::count(v.begin(), v.end(), ',') + 1 == kob::report::kMaxPoints + 3);
  CHECK(v.substr(v.size() - 3) == ",4]");  // the last level, 8194 % 7
}

TEST_CASE("html report: the data cannot end its script element") {
  const std::string page = kob::report::html_page(R"({"name":"</script><!--<script>"})");
  CHECK(page.find(R"("\u003c/script>\u003c!--\u003cscript>")") != std::string::npos);
  std::size_t ends = 0;
  for (std::size_t at = page.find("</script>"); at != std::string::npos; at = page.find("</script>", at + 1)) ++ends;
  CHECK(ends == 2);  // the data's and the script's own
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
}

TEST_CASE("html report: --format=html") {
  kob::Config c;
  std::vector<std::string> errors;
  c.apply({"--format=html"}, errors);
  CHECK(errors.empty());
  CHECK(c.formats == kob::kFormatHtml);
  CHECK((kob::kFormatAll & kob::kFormatHtml) != 0);
  CHECK((kob::kFormatDefault & kob::kFormatHtml) == 0);
  CHECK(kob::format_names(kob::kFormatHtml) == "html");
}

TEST_CASE("html report: names of spans let go are forgotten") {
  HtmlReport r(2);
  r.process(1, "prog", 0);
  for (std::uint64_t i = 0; i < 5000; ++i) slice(r, 0, 10 * i, 10 * i + 1 + (i == 77 ? 5 : 0) + (i == 4321 ? 4 : 0), ("n" + std::to_string(i)).c_str());
  const std::string j = r.data_json();
  CHECK(field(j, "names") == "[\"n77\",\"n4321\"]");
  CHECK(field(j, "spans") == "[0,0,0,770,6,0,0,1,43210,5]");
}

TEST_CASE("html report: the OpenMP constructs table is drawn from the summary's openmp.constructs") {
  HtmlReport r;
  r.process(1, "prog", 0);
  const std::string summary =
      R"({"openmp": {"constructs": [{"kind": "parallel", "category": "parallel", "label": "work a.c:12", "calls": 3, "total_ns": 900}]}})";
  r.set_summary(summary);
  // The summary's document as the page's own member (parsed and written again, one line).
  CHECK(field(r.data_json(), "summary") ==
        R"({"openmp":{"constructs":[{"kind":"parallel","category":"parallel","label":"work a.c:12","calls":3,"total_ns":900}]}})");
  const std::string page = kob::report::html_page(r.data_json());
  CHECK(page.find(R"(<table id="construct-table">)") != std::string::npos);
  CHECK(page.find(R"(<a href="#constructs">)") != std::string::npos);
  CHECK(page.find("s.openmp && s.openmp.constructs") != std::string::npos);  // the script reads them
}
