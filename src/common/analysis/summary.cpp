#include "common/analysis/summary.hpp"

#include <algorithm>

#include "common/timeline/devid.hpp"
#include "common/record/intern.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/analysis/summary_constructs.hpp"
#include "common/analysis/summary_fold.hpp"
#include "common/support/fixed_text.hpp"
#include "common/support/text_safe.hpp"
#include "common/support/text_table.hpp"

namespace kob {

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
    case KernelKind::ParallelFor: return "parallel_for";
    case KernelKind::ParallelReduce: return "parallel_reduce";
    case KernelKind::ParallelScan: return "parallel_scan";
  }
  return "unknown";
}

namespace {

std::string device_name(int device) { return device == kHostDevice ? "host" : std::to_string(device); }

}  // namespace

Summary summarize(const Timeline& t, SourceResolver* sources) {
  SummaryFold fold;
  fold.set_sources(sources);
  replay_timeline(t, fold);
  return fold.result();
}

namespace {

std::string fmt_time(std::uint64_t ns) {
  if (ns < 10'000) return std::to_string(ns) + " ns";
  if (ns < 10'000'000) return text::fixed(double(ns) / 1e3, 1, " us");
  if (ns < 10'000'000'000ull) return text::fixed(double(ns) / 1e6, 1, " ms");
  return text::fixed(double(ns) / 1e9, 2, " s");
}

std::string fmt_bytes(std::uint64_t b) {
  if (b < 10 * 1024) return std::to_string(b) + " B";
  if (b < 10ull * 1024 * 1024) return text::fixed(double(b) / 1024, 1, " KiB");
  if (b < 10ull * 1024 * 1024 * 1024) return text::fixed(double(b) / (1024.0 * 1024), 1, " MiB");
  return text::fixed(double(b) / (1024.0 * 1024 * 1024), 2, " GiB");
}

// A name from the program (kernel, region, view, space...) as a text table shows it: control
// characters escaped, cut in the middle past text::kNameColumns. JSON and the trace keep it whole.
std::string shown(std::string_view name) { return text::shorten(name, text_table::name_columns()); }

// Region tree indentation: two columns a level, at most 8 levels, then the depth in brackets.
std::string indented(std::uint32_t depth, std::string_view name) {
  constexpr std::uint32_t kMaxIndent = 8;
  std::string out(2 * std::min(depth, kMaxIndent), ' ');
  if (depth > kMaxIndent) out += "[" + std::to_string(depth) + "] ";
  return out + shown(name);
}

// The mark of a row that may miss events (see Coverage); explained under the summary's header.
constexpr const char* kPartialMark = " *";

using text_table::time_cell;

std::string table(const std::vector<std::vector<std::string>>& rows) { return text_table::render(rows); }

std::string omp_text(const OmpSummary& o) {
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  std::string out = "\nOpenMP\n";
  out += "  parallel regions: " + n(o.parallel_regions) + ", implicit tasks: " + n(o.implicit_tasks) +
         ", initial tasks: " + n(o.initial_tasks) + "\n";
  out += "  outside any Kokkos kernel: " + n(o.outside_regions) + " parallel regions, " + fmt_time(o.outside_time) + "\n";
  out += "  threads: " + n(o.threads_initial) + " initial, " + n(o.threads_worker) + " worker";
  if (o.threads_other) out += ", " + n(o.threads_other) + " other";
  if (o.threads_unknown) out += ", " + n(o.threads_unknown) + " unknown";
  out += "\n";
  if (o.tasks_created || o.task_stretches || o.dependences || o.task_dependences) {
    out += "  explicit tasks: " + n(o.tasks_created) + " created, " + n(o.task_stretches) + " stretches run, " +
           n(o.tasks_completed) + " completed";
    if (o.tasks_cancelled) out += ", " + n(o.tasks_cancelled) + " cancelled (" + n(o.tasks_discarded) + " before they started)";
    out += "\n  dependences: " + n(o.dependences) + " declared by " + n(o.tasks_with_dependences) +
           " tasks, " + n(o.task_dependences) + " task-to-task links\n";
  }
  auto counts = [&](const char* what, const std::vector<OmpCountStats>& v) {
    if (v.empty()) return;
    out += std::string("  ") + what + ":";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : " ") + v[i].name + " " + n(v[i].count);
    out += "\n";
  };
  if (o.hidden_helper_threads)
    out += "  hidden-helper team (libomp's, runs target nowait tasks): " + n(o.hidden_helper_threads) +
           " threads, left out of the figures above and below\n";
  if (o.errors_warning || o.errors_fatal)
    out += "  error directives: " + n(o.errors_warning) + " warning, " + n(o.errors_fatal) + " fatal\n";
  counts("work constructs", o.work);
  counts("dispatches", o.dispatch);
  if (o.lock_inits || o.lock_destroys || o.cancels || o.flushes) {
    out += "  lock inits: " + n(o.lock_inits) + ", lock destroys: " + n(o.lock_destroys) + ", cancels: " + n(o.cancels) +
           ", flushes: " + n(o.flushes) + "\n";
  }
  if (!o.sync.empty()) {
    out += "\nOpenMP sync regions\n";
    std::vector<std::vector<std::string>> rows{{"kind", "count", "total", "wait"}};
    for (const auto& c : o.sync) rows.push_back({c.name, n(c.count), time_cell(c.total), time_cell(c.wait)});
    out += table(rows);
  }
  if (!o.mutex.empty()) {
    out += "\nOpenMP mutexes\n";
    std::vector<std::vector<std::string>> rows{{"kind", "holds", "nested holds", "failed tries", "wait", "hold"}};
    for (const auto& m : o.mutex)
      rows.push_back({m.kind, n(m.holds), n(m.nested_holds), n(m.failed_tries), time_cell(m.wait), time_cell(m.hold)});
    out += table(rows);
  }
  if (!o.threads.empty()) {
    out += "\nOpenMP threads (busy = implicit-task time minus sync waits)\n";
    std::vector<std::vector<std::string>> rows{{"thread", "os tid", "type", "cpu", "implicit tasks", "busy", "wait"}};
    for (const auto& th : o.threads)
      rows.push_back({"omp thread " + n(th.index), n(th.os_tid), th.type, th.proc >= 0 ? std::to_string(th.proc) : "?",
                      n(th.implicit_tasks), time_cell(th.busy), time_cell(th.wait)});
    out += table(rows);
  }
  if (!o.kernels.empty()) {
    out += "\nOpenMP per Kokkos kernel (imbalance: mean of (max - mean) / max busy time per region)\n";
    std::vector<std::vector<std::string>> rows{
        {"name", "kind", "calls", "regions", "regions/call", "mean team", "load imbalance", "barrier wait"}};
    for (const auto& k : o.kernels)
      rows.push_back({shown(k.name) + (k.partial ? kPartialMark : ""), k.kind, n(k.calls), n(k.parallel_regions),
                      text::fixed(k.regions_per_call(), 2),
                      text::fixed(k.mean_team_size(), 1), text::fixed(100.0 * k.load_imbalance(), 1, "%"),
                      text::fixed(100.0 * k.barrier_wait_share(), 1, "%")});
    out += table(rows);
  }
  out += summary_constructs::text(o.constructs);
  return out;
}

std::string fmt_bw(const TargetOpStats& c) {
  return c.time ? text::fixed(c.gb_per_s(), 2, " GB/s") : "-";
}

std::string target_text(const TargetSummary& o) {
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  std::string out = "\nOpenMP target\n";
  out += "  target regions: " + n(o.regions_in_kernels + o.regions_outside) + " (" + n(o.regions_in_kernels) +
         " inside Kokkos kernels, " + n(o.regions_outside) + " outside)\n";
  std::string unused;
  for (const TargetDeviceStats& d : o.devices) {
    const std::string type = d.type.empty() ? std::string() : " (" + shown(d.type) + ", " + d.path + ")";
    const std::string label = "device " + device_name(d.device) + type;
    if (!d.used()) {
      unused += (unused.empty() ? "" : ", ") + device_name(d.device) + type;
      continue;
    }
    out += "  " + label + "\n";
    out += "    target regions:";
    if (d.regions.empty()) out += " none";
    for (std::size_t i = 0; i < d.regions.size(); ++i)
      out += (i ? ", " : " ") + d.regions[i].name + " " + n(d.regions[i].count) + " (" + fmt_time(d.regions[i].total) + ")";
    out += "\n    submits (kernels launched): " + n(d.submits) + ", " + fmt_time(d.submit_time) + "\n";
    if (!d.data_ops.empty()) {
      std::vector<std::vector<std::string>> rows{{"  data op", "count", "bytes", "time"}};
      for (const auto& c : d.data_ops) rows.push_back({"  " + c.name, n(c.count), fmt_bytes(c.bytes), time_cell(c.time)});
      out += table(rows);
    }
    if (!d.transfers.empty()) {
      std::vector<std::vector<std::string>> rows{{"  transfers", "count", "bytes", "time", "bandwidth"}};
      for (const auto& c : d.transfers) rows.push_back({"  " + c.name, n(c.count), fmt_bytes(c.bytes), time_cell(c.time), fmt_bw(c)});
      out += table(rows);
    }
    if (d.allocations || d.deletes) {
      out += "    device memory: " + n(d.allocations) + " allocations (" + fmt_bytes(d.alloc_bytes) + "), " + n(d.deletes) +
             " deletes, high-water " + fmt_bytes(d.alloc_high_water) + ", at end " + fmt_bytes(d.alloc_final) + "\n";
    }
    if (d.device_records) out += "    device tracing records: " + n(d.device_records) + "\n";
  }
  if (!unused.empty()) out += "  devices not used: " + unused + "\n";
  if (!o.deep_copies.empty()) {
    out += "  Kokkos deep copies that moved data (data ops: count, bytes)\n";
    for (const auto& c : o.deep_copies) {
      out += "    " + shown(c.name) + " (" + shown(c.dst_space) + " <- " + shown(c.src_space) + "): " + n(c.calls) +
             (c.calls == 1 ? " call, " : " calls, ") +
             fmt_bytes(c.bytes) + ":";
      for (std::size_t i = 0; i < c.ops.size(); ++i)
        out += (i ? ", " : " ") + c.ops[i].name + " " + n(c.ops[i].count) + " (" + fmt_bytes(c.ops[i].bytes) + ")";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

// The header's account of dropped events: what the figures cover, and what * on a row means.
std::string coverage_text(const Summary& s) {
  const Coverage& c = s.coverage;
  if (c.complete()) return "";
  if (!c.lost.empty()) {
    std::string out = "INCOMPLETE: " + std::to_string(s.dropped) + " events lost; the figures hold every event only until " +
                      fmt_time(c.complete_until) + " of " + fmt_time(c.run_end) + " and miss these stretches:\n";
    for (const Coverage::Lost& l : c.lost)
      out += "  thread " + std::to_string(l.index) + " (os tid " + std::to_string(l.os_tid) + "): " + std::to_string(l.events) +
             " events lost from " + fmt_time(l.from) + " to " + fmt_time(l.to) + " (" + l.reason + ")\n";
    for (const Coverage::Thread& th : c.threads) {
      std::uint64_t located = 0;
      for (const Coverage::Lost& l : c.lost) located += l.index == th.index ? l.events : 0;
      if (th.dropped > located)
        out += "  thread " + std::to_string(th.index) + " (os tid " + std::to_string(th.os_tid) + "): recorded until " +
               fmt_time(th.recorded_until) + ", then " + std::to_string(th.dropped - located) + " events dropped\n";
    }
    out += "  rows marked * miss events: kernel and region rows recorded on such a thread, OpenMP per-kernel\n"
           "  rows when such a thread was in the teams\n";
    return out;
  }
  std::string out = "INCOMPLETE: " + std::to_string(s.dropped) +
                    " events dropped past the memory cap (--memory-limit); the figures hold every event only until " +
                    fmt_time(c.complete_until) + " of " + fmt_time(c.run_end) + "\n";
  for (const Coverage::Thread& th : c.threads)
    out += "  thread " + std::to_string(th.index) + " (os tid " + std::to_string(th.os_tid) + "): recorded until " +
           fmt_time(th.recorded_until) + ", then " + std::to_string(th.dropped) + " events dropped\n";
  out += "  rows marked * miss events: kernel and region rows recorded on such a thread (its calls after\n"
         "  its cut), OpenMP per-kernel rows when such a thread was in the teams; kernels and regions\n"
         "  that ran only later are not listed at all\n";
  return out;
}

// Words of `text` on lines of at most kWrap columns, each after `indent` (the first after `first`).
std::string wrapped(const std::string& first, const std::string& indent, const std::string& text) {
  constexpr std::size_t kWrap = 110;
  std::string out = first;
  std::size_t col = first.size();
  bool line_empty = true;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view word(text.data() + at, end - at);
    at = end + 1;
    if (!line_empty && col + 1 + word.size() > kWrap) {
      out += "\n" + indent;
      col = indent.size();
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    line_empty = false;
  }
  return out + "\n";
}

// Ranked advice (findings.hpp), right under the run time: what to change first.
std::string findings_text(const Summary& s) {
  if (s.findings.empty()) return "findings: none (no rule fired; see the README, \"Findings\")\n";
  std::string out = "\nFindings (ranked by time at stake; rules in the README, \"Findings\")\n";
  for (std::size_t i = 0; i < s.findings.size(); ++i) {
    const Finding& f = s.findings[i];
    const std::string share = text::fixed(100.0 * f.share_of_run, 1, "%");
    const std::string head = "  " + std::to_string(i + 1) + ". ";
    out += wrapped(head, "     ", f.title + " [" + f.id + "]: " + fmt_time(f.time_at_stake) + " at stake (" + share + " of the run)");
    out += wrapped("     evidence: ", "       ", f.evidence);
    out += wrapped("     fix: ", "       ", f.fix);
  }
  return out;
}

std::string summary_text(const Summary& s, const std::string& title) {
  std::string out = "== kokkos-ompt-bridge summary: " + text::shorten(title, 2 * text::kNameColumns) + " ==\n";
  out += s.coverage.complete() ? "run time (first to last event): " + fmt_time(s.run_time) + "\n"
                               : "run time (first event to the end of the run): " + fmt_time(s.run_time) + "\n";
  out += coverage_text(s);
  out += findings_text(s);
  if (!s.kernels.empty()) {
    out += "\nKokkos kernels\n";
    std::vector<std::vector<std::string>> rows{{"name", "kind", "device", "calls", "total", "mean", "min", "max"}};
    for (const auto& k : s.kernels)
      rows.push_back({shown(k.name) + (k.partial ? kPartialMark : ""), k.kind, k.device, std::to_string(k.calls),
                      time_cell(k.total), time_cell(k.mean()), time_cell(k.min), time_cell(k.max)});
    out += table(rows);
  }
  if (!s.regions.empty()) {
    out += "\nKokkos regions (exclusive = inclusive minus child regions)\n";
    std::vector<std::vector<std::string>> rows{{"region", "calls", "inclusive", "exclusive"}};
    for (const auto& r : s.regions)
      rows.push_back({indented(r.depth, r.name) + (r.partial ? kPartialMark : ""), std::to_string(r.calls),
                      time_cell(r.inclusive), time_cell(r.exclusive)});
    out += table(rows);
  }
  if (!s.fences.empty()) {
    out += "\nKokkos fences\n";
    std::vector<std::vector<std::string>> rows{{"name", "calls", "total"}};
    for (const auto& f : s.fences) rows.push_back({shown(f.name), std::to_string(f.calls), time_cell(f.total)});
    out += table(rows);
  }
  if (!s.mpi_calls.empty()) {
    out += "\nMPI calls\n";
    std::vector<std::vector<std::string>> rows{{"function", "calls", "total"}};
    for (const auto& m : s.mpi_calls) rows.push_back({m.name, std::to_string(m.calls), time_cell(m.total)});
    out += table(rows);
  }
  if (!s.sections.empty()) {
    out += "\nKokkos profile sections\n";
    std::vector<std::vector<std::string>> rows{{"name", "intervals", "total"}};
    for (const auto& f : s.sections) rows.push_back({shown(f.name), std::to_string(f.calls), time_cell(f.total)});
    out += table(rows);
  }
  if (!s.memory.empty()) {
    out += "\nMemory spaces\n";
    std::vector<std::vector<std::string>> rows{{"space", "allocations", "deallocations", "allocated", "high-water", "at end"}};
    for (const auto& m : s.memory)
      rows.push_back({shown(m.space), std::to_string(m.allocations), std::to_string(m.deallocations), fmt_bytes(m.bytes_allocated),
                      fmt_bytes(m.high_water), fmt_bytes(m.final_level)});
    out += table(rows);
    for (const auto& m : s.memory)
      if (m.unmatched_frees != 0)
        out += "  " + shown(m.space) + ": " + std::to_string(m.unmatched_frees) + " frees beyond their recorded allocations (" +
               fmt_bytes(m.unmatched_bytes) + " not counted; the problems below say whose)\n";
  }
  if (!s.copies.empty()) {
    out += "\nDeep copies\n";
    std::vector<std::vector<std::string>> rows{{"dst <- src", "calls", "bytes", "time", "bandwidth"}};
    for (const auto& c : s.copies) {
      rows.push_back({shown(c.dst_space) + " <- " + shown(c.src_space), std::to_string(c.calls), fmt_bytes(c.bytes), time_cell(c.time),
                      text::fixed(c.gb_per_s(), 2, " GB/s")});
    }
    out += table(rows);
  }
  if (s.openmp.present()) out += omp_text(s.openmp);
  if (s.target.present()) out += target_text(s.target);
  if (s.profile_events || s.dual_view_syncs || s.dual_view_modifies) {
    out += "\nprofile events: " + std::to_string(s.profile_events) + ", dual view syncs: " + std::to_string(s.dual_view_syncs) +
           ", dual view modifies: " + std::to_string(s.dual_view_modifies) + "\n";
  }
  if (s.filtered_kernels || s.filtered_regions) {
    out += "left out by --include/--exclude: " + std::to_string(s.filtered_kernels) + " kernel calls, " +
           std::to_string(s.filtered_regions) + " region entries\n";
  }
  out += "\ndropped events: " + std::to_string(s.dropped) +
         (s.dropped && s.coverage.lost.empty() ? " (raise --memory-limit)" : "") + "\n";
  if (s.tool.flushes)
    out += "tool flushes: " + std::to_string(s.tool.flushes) + " on " + std::to_string(s.tool.threads.size()) +
           " threads, " + fmt_time(s.tool.flush_ns) +
           " in all (the writer thread had no free core: each thread copied its own full buffers; 'tool: flush' on its track)\n";
  if (s.cut_short)
    out += "cut short: the run ended without a clean exit; " + std::to_string(s.cut_spans) +
           " spans still open then end at their thread's last event (\"cut\": true in the trace)\n";
  for (const auto& p : s.problems) out += "note: " + text::escape(p) + "\n";
  return out;
}

// Findings, ranked; always present (an empty list when no rule fired).
std::string dropped_line(const Summary& s, std::uint64_t memory_limit_mib) {
  const Coverage& c = s.coverage;
  if (!c.lost.empty())
    return std::to_string(s.dropped) + " events lost in " + std::to_string(c.lost.size()) + " stretches (first: thread " +
           std::to_string(c.lost[0].index) + ", " + fmt_time(c.lost[0].from) + " to " + fmt_time(c.lost[0].to) + ", " +
           c.lost[0].reason + "); the summary lists them";
  return std::to_string(s.dropped) + " events dropped past --memory-limit=" + std::to_string(memory_limit_mib) +
         " (MiB); the figures hold every event only until " + fmt_time(c.complete_until) + " of the " +
         fmt_time(c.run_end) + " run (raise --memory-limit)";
}

namespace summary_format {
std::string time(std::uint64_t ns) { return fmt_time(ns); }
std::string bytes(std::uint64_t b) { return fmt_bytes(b); }
std::string name(std::string_view n) { return shown(n); }
std::string location(std::string_view label, std::size_t max_columns) {
  // " file:LINE" at the end (SourceLocation::label with a line); anything else is cut as a name.
  const std::size_t space = label.rfind(' '), colon = label.rfind(':');
  const bool has_line = space != std::string_view::npos && colon != std::string_view::npos && colon > space + 1 &&
                        colon + 1 < label.size() && label.find_first_not_of("0123456789", colon + 1) == std::string_view::npos &&
                        label.find_first_of("()", space) == std::string_view::npos;
  if (!has_line) return text::shorten(label, std::min(max_columns, text_table::name_columns()));
  const std::string tail = text::escape(label.substr(space));  // " file.cpp:12"
  constexpr std::size_t kMinFunction = 8;
  max_columns = std::min(max_columns, text_table::name_columns());
  // Too narrow for some of the function: file and line alone tell the place.
  if (max_columns < text::columns(tail) + kMinFunction) return text::shorten(label.substr(space + 1), max_columns);
  return text::shorten(label.substr(0, space), max_columns - text::columns(tail)) + tail;
}
std::string table(const std::vector<std::vector<std::string>>& rows) { return kob::table(rows); }
}  // namespace summary_format

}  // namespace kob
