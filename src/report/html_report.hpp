// The self-contained HTML report (PREFIX.html, `kob report`): a TraceSink that boils the trace down
// as it streams by, so that its memory and the page's size do not follow the run's length, and a
// writer that puts that and each run's summary JSON into one page with its script and style inline.
//
// What is kept of a run:
// - per track and category, the time covered in each of at most kBins bins of one width; the
//   width doubles (neighbouring bins summed) whenever the run outgrows them, so the bins always
//   span the whole run;
// - the kMaxSpans longest slices, for the detail a zoomed-in timeline shows (all of a small run);
// - each memory space's level, thinned to at most 2 * kMaxPoints points keeping the peaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/formats/trace_events.hpp"

namespace kob::report {

constexpr std::size_t kBins = 4096;
constexpr std::size_t kMaxSpans = 20000;
constexpr std::size_t kMaxPoints = 4096;

// Several runs (the ranks of an MPI job) go through one report: process() begins the next one.
class HtmlReport : public trace::TraceSink {
 public:
  explicit HtmlReport(std::size_t max_spans = kMaxSpans);
  ~HtmlReport() override;

  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override;
  void track(const trace::TrackDesc& t) override;
  void event(const trace::Event& e) override;
  void flow(const trace::Flow&) override {}
  bool finish(const std::string& other_data_json) override;

  // The otherData object finish() was given for the current run (summary_json's second argument).
  const std::string& other_data() const;
  // The current run's summary JSON (summary_json), once the pass is over.
  void set_summary(std::string summary_json);
  // Several runs: how the current one's times were put on the first run's time line (kob merge's
  // alignment: "reference", "mpi", "wall clock", "none") and the offsets taken off them. Each
  // run's `start_ns` in the data is where its first event lies on that line, from the first run's.
  void set_clock(std::string alignment, std::int64_t offset_start_ns, std::int64_t offset_end_ns);

  // The report's data: {"tool_version", "runs":[...]} (docs in src/report/report.js).
  std::string data_json() const;
  // The whole page. False on a write error.
  bool write(std::FILE* f) const;

  struct Run;

 private:
  Run& cur();
  std::size_t max_spans_;
  std::vector<std::unique_ptr<Run>> runs_;
};

// The page around data (a JSON object): script and style inline, the data in a
// <script type="application/json"> element, every '<' in it escaped so that nothing ends it early.
std::string html_page(std::string_view data_json);

}  // namespace kob::report
