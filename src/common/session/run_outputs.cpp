#include "common/session/run_outputs.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "common/support/atomic_file.hpp"
#include "common/support/json_doc.hpp"
#include "common/support/log.hpp"
#include "common/formats/otf2_writer.hpp"
#include "common/formats/perfetto_writer.hpp"
#include "common/formats/sqlite_writer.hpp"
#include "common/timeline/filter_sink.hpp"
#include "common/analysis/summary_engine.hpp"
#include "common/analysis/summary_fold.hpp"
#include "common/timeline/tee_sink.hpp"
#include "common/timeline/timeline.hpp"
#include "common/timeline/thread_merge.hpp"
#include "common/timeline/timeline_builder.hpp"
#include "common/formats/trace_tee.hpp"
#include "common/formats/trace_window.hpp"
#include "common/support/idle_cores.hpp"
#include "common/formats/trace_writer.hpp"
#include "report/html_report.hpp"

namespace kob {

namespace {

// The pairs of one section, each key once (its last value), in order of first appearance.
std::vector<std::pair<std::string, std::string>> section_pairs(const Facts& facts, std::string_view section) {
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, std::size_t, std::less<>> at;
  for (const raw::Kv& kv : facts) {
    if (kv.section != section) continue;
    auto it = at.find(kv.key);
    if (it != at.end()) {
      out[it->second].second = kv.value;
    } else {
      at.emplace(kv.key, out.size());
      out.emplace_back(kv.key, kv.value);
    }
  }
  return out;
}

// A fact that is a number, written as is when it is one (else 0).
std::string number(const Facts& facts, std::string_view key, const char* fallback = "0") {
  std::string v = fact_value(facts, fact::kSection, key, fallback);
  bool ok = !v.empty();
  for (std::size_t i = 0; i < v.size(); ++i) ok = ok && ((v[i] >= '0' && v[i] <= '9') || (i == 0 && v[i] == '-' && v.size() > 1));
  return ok ? v : fallback;
}

// A number fact as a T; fallback when it is none or does not fit (a damaged or foreign file's
// rank or pid must not throw out of the conversion).
template <class T>
T number_as(const Facts& facts, std::string_view key, T fallback) {
  const std::string v = number(facts, key, "");
  T out{};
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return !v.empty() && ec == std::errc() && end == v.data() + v.size() ? out : fallback;
}

// The PMPI layer's facts: {"rank", "size", "clock_start": {...}, "clock_end": {...}}, or null.
json::Doc mpi_json(const Facts& facts) {
  if (number(facts, fact::kMpiRank, "").empty()) return {};
  json::Doc o = {{"rank", number_as<std::int64_t>(facts, fact::kMpiRank, 0)}, {"size", number_as<std::int64_t>(facts, fact::kMpiSize, 0)}};
  for (const auto& [key, name] : {std::pair{fact::kMpiClockStart, "clock_start"}, std::pair{fact::kMpiClockEnd, "clock_end"}}) {
    long long local = 0, offset = 0, rtt = 0;
    if (std::sscanf(fact_value(facts, fact::kSection, key).c_str(), "%lld %lld %lld", &local, &offset, &rtt) != 3) continue;
    o[name] = {{"local_ns", local}, {"offset_ns", offset}, {"rtt_ns", rtt}};
  }
  return o;
}

// Which code is the OpenMP runtime's (its hidden-helper team), as the recording process knew it.
// The OpenMP threads the program could have had: OMP_NUM_THREADS's first level, else the
// runtime's processors; 0 when the run says neither.
std::uint32_t available_omp_threads(const Facts& facts) {
  unsigned n = 0;
  if (std::sscanf(fact_value(facts, "other:ompt", "OMP_NUM_THREADS").c_str(), " %u", &n) == 1 && n != 0) return n;
  if (std::sscanf(fact_value(facts, "other:ompt", "num_procs").c_str(), " %u", &n) == 1) return n;
  return 0;
}

CodeRange omp_runtime_code(const Facts& facts) {
  return parse_code_range(fact_value(facts, fact::kSection, fact::kOmpRuntimeCode));
}

// The run's time line against the wall clock (CLOCK_MONOTONIC_RAW and CLOCK_REALTIME ns read
// together at its start); false when the facts have none.
bool wall_reference(const Facts& facts, std::uint64_t& monotonic_raw_ns, std::uint64_t& realtime_ns) {
  unsigned long long raw = 0, real = 0;
  if (std::sscanf(fact_value(facts, fact::kSection, fact::kWallReference).c_str(), "%llu %llu", &raw, &real) != 2) return false;
  monotonic_raw_ns = raw;
  realtime_ns = real;
  return true;
}

// The run's row of the database.
sqlite::RunFacts database_facts(const Facts& facts) {
  sqlite::RunFacts r;
  r.rank = number_as<std::int64_t>(facts, fact::kRank, -1);
  r.pid = number_as<std::uint64_t>(facts, fact::kPid, 0);
  r.host = fact_value(facts, fact::kSection, fact::kHost);
  r.program = fact_value(facts, fact::kSection, fact::kExe, "program");
  r.clock = fact_value(facts, fact::kSection, fact::kClock);
  r.start_time = fact_value(facts, fact::kSection, fact::kStartTime);
  // The tool options as given (environment, then command line), one per line in the facts.
  r.options = fact_value(facts, fact::kSection, fact::kArgs);
  std::replace(r.options.begin(), r.options.end(), '\n', ' ');
  while (!r.options.empty() && r.options.back() == ' ') r.options.pop_back();
  wall_reference(facts, r.start_monotonic_raw_ns, r.start_realtime_ns);
  return r;
}

}  // namespace

std::string fact_value(const Facts& facts, std::string_view section, std::string_view key, const std::string& fallback) {
  for (auto it = facts.rbegin(); it != facts.rend(); ++it)
    if (it->section == section && it->key == key) return it->value;
  return fallback;
}

void add_config_facts(const Config& c, Facts& out) {
  const std::string s(fact::kSection);
  out.push_back({s, std::string(fact::kFormats), format_names(c.formats)});
  out.push_back({s, std::string(fact::kInclude), c.include});
  out.push_back({s, std::string(fact::kExclude), c.exclude});
  out.push_back({s, std::string(fact::kMemoryLimit), std::to_string(c.memory_limit_mib)});
  out.push_back({s, std::string(fact::kEvents), group_names(c.events)});
}

Config config_from_facts(const Facts& facts) {
  Config c;
  std::vector<std::string> args;
  // `args`: the tool options as given (environment, then command line), one per line.
  const std::string given = fact_value(facts, fact::kSection, fact::kArgs);
  for (std::size_t at = 0; at < given.size();) {
    const std::size_t nl = std::min(given.find('\n', at), given.size());
    if (nl > at) args.push_back(given.substr(at, nl - at));
    at = nl + 1;
  }
  // The last value of a `kob` fact, or none: any string may be a value (no sentinel).
  auto last = [&](std::string_view key) -> const std::string* {
    for (auto it = facts.rbegin(); it != facts.rend(); ++it)
      if (it->section == fact::kSection && it->key == key) return &it->value;
    return nullptr;
  };
  auto arg = [&](const char* option, std::string_view key) {
    const std::string* v = last(key);
    if (v != nullptr && !v->empty()) args.push_back(std::string("--") + option + "=" + *v);
  };
  arg("format", fact::kFormats);
  arg("include", fact::kInclude);
  arg("exclude", fact::kExclude);
  arg("memory-limit", fact::kMemoryLimit);
  std::vector<std::string> errors;  // a value this version does not know keeps its default
  c.apply(args, errors);
  if (const std::string* events = last(fact::kEvents)) {
    c.events = 0;
    if (!events->empty()) c.apply({"--events=" + *events}, errors);
  }
  return c;
}

std::string process_name(const Facts& facts) {
  std::string name = fact_value(facts, fact::kSection, fact::kExe, "program");
  const std::string rank = number(facts, fact::kRank, "-1");
  if (rank != "-1") name += " rank " + rank;
  return name;
}

std::string other_data_json(const Facts& facts, const Summary& sum) {
  auto str = [&](std::string_view key) { return fact_value(facts, fact::kSection, key); };
  json::Doc o = {{"tool", "kokkos-ompt-bridge"},
                 {"tool_version", str(fact::kToolVersion)},
                 {"kokkos_interface_version", number_as<std::int64_t>(facts, fact::kKokkosInterface, 0)},
                 {"kokkos_load_sequence", number_as<std::int64_t>(facts, fact::kKokkosLoadSequence, 0)}};
  json::Doc& devices = o["kokkos_devices"] = json::Doc::array();  // numbers, comma separated
  const std::string device_list = str(fact::kKokkosDevices);
  if (device_list.find_first_not_of("0123456789,") == std::string::npos)
    for (std::size_t at = 0; at < device_list.size();) {
      const std::size_t comma = std::min(device_list.find(',', at), device_list.size());
      std::uint64_t d = 0;
      if (std::from_chars(device_list.data() + at, device_list.data() + comma, d).ec == std::errc()) devices.push_back(d);
      at = comma + 1;
    }
  o["openmp_runtime"] = str(fact::kOmpRuntime);
  o["host"] = str(fact::kHost);
  o["pid"] = number_as<std::uint64_t>(facts, fact::kPid, 0);
  if (number(facts, fact::kRank, "-1") != "-1") o["rank"] = number_as<std::int64_t>(facts, fact::kRank, -1);
  o["start_time"] = str(fact::kStartTime);
  o["clock"] = str(fact::kClock);
  // The run's time line against the wall clock: {"monotonic_raw_ns", "realtime_ns"} read together.
  std::uint64_t raw_ns = 0, real_ns = 0;
  if (wall_reference(facts, raw_ns, real_ns))
    o["wall_reference"] = {{"monotonic_raw_ns", raw_ns}, {"realtime_ns", real_ns}};
  if (json::Doc mpi = mpi_json(facts); !mpi.is_null()) o["mpi"] = mpi;
  const std::string events = fact_value(facts, fact::kSection, fact::kEvents, "\x01");
  o["events"] = events != "\x01" ? events : group_names(config_from_facts(facts).events);
  o["dropped_events"] = sum.dropped;
  json::Doc& meta = o["metadata"] = json::Doc::object();
  for (const auto& [key, value] : section_pairs(facts, "meta")) meta[key] = value;
  std::map<std::string, bool> sections;  // otherData sections, by name
  for (const raw::Kv& kv : facts)
    if (kv.section.rfind("other:", 0) == 0) sections[kv.section] = true;
  for (const auto& [section, unused] : sections) {
    json::Doc& d = o[section.substr(6)] = json::Doc::object();
    for (const auto& [key, value] : section_pairs(facts, section)) d[key] = value;
  }
  o["problems"] = sum.problems;
  return json::dump(o);
}

Summary stream_run(const RunData& run, const Facts& facts, trace::TraceSink& sink, const TraceInfo& given, sqlite::DatabaseSink* db,
                   std::function<std::uint64_t(std::uint64_t)> align) {
  const Config c = config_from_facts(facts);
  const CodeRange omp_code = omp_runtime_code(facts);
  SourceResolver sources(SourceResolver::modules_from(facts));
  TraceInfo info = given;
  info.sources = &sources;
  TraceProducer producer(sink, info);
  TraceWindow window(producer, TraceWindow::kDefaultSpans, true);
  SummaryFold fold;
  fold.set_sources(&sources);
  fold.set_available_threads(available_omp_threads(facts));
  if (db != nullptr) db->begin_run(database_facts(facts), &sources, std::move(align));
  TeeSink with_db(fold, db != nullptr ? static_cast<SpanSink&>(*db) : fold);
  TeeSink both(db != nullptr ? static_cast<SpanSink&>(with_db) : fold, window);
  FilterSink filtered(both, c.include, c.exclude);
  {
    TimelineBuilder builder(filtered, run.initial_device_num, omp_code);
    builder.set_poller(&window);
    read_threads(run.threads, builder, info.jobs > 1 ? info.jobs - 1 : 0);
    builder.finish(run.ended_cleanly, run.run_end);
  }
  Summary sum = fold.result();
  if (db != nullptr) db->end_run(sum);
  window.end(other_data_json(facts, sum));
  return sum;
}

namespace {

// The summary by the per-thread engine (summary_engine.hpp) where it covers the run; else
// nothing, and the caller builds it.
std::optional<Summary> per_thread_summary(const RunData& run, const Facts& facts, const Config& c, SourceResolver& sources,
                                          CallTimes* calls, unsigned jobs = 1) {
  const EngineChoice choice = engine_choice();
  if (choice == EngineChoice::Builder) return std::nullopt;
  EngineRun e;
  e.threads = run.threads;
  e.ended_cleanly = run.ended_cleanly;
  e.run_end = run.run_end;
  e.omp_runtime_code = omp_runtime_code(facts);
  e.sources = &sources;
  e.available_threads = available_omp_threads(facts);
  e.jobs = jobs;
  e.calls = calls;
  NameFilter filter(c.include, c.exclude);
  e.filter = &filter;
  e.initial_device_num = run.initial_device_num;
  e.damaged = !run.intact;
  if (const char* chunks = std::getenv("KOB_EPOCH_CHUNKS")) e.epoch_chunks = std::strtoul(chunks, nullptr, 10);  // tests: small epochs
  std::string why;
  std::optional<Summary> s = summarize_per_thread(e, &why);
  if (!s && choice == EngineChoice::PerThread) log::warn("the per-thread engine declined: " + why);
  return s;
}

}  // namespace

Summary summarize_run(const RunData& run, const Facts& facts, CallTimes* calls) {
  const Config c = config_from_facts(facts);
  const CodeRange omp_code = omp_runtime_code(facts);
  SourceResolver sources(SourceResolver::modules_from(facts));
  if (std::optional<Summary> s = per_thread_summary(run, facts, c, sources, calls)) return std::move(*s);
  SummaryFold fold;
  fold.set_sources(&sources);
  fold.set_available_threads(available_omp_threads(facts));
  fold.set_call_times(calls);
  FilterSink filtered(fold, c.include, c.exclude);
  {
    TimelineBuilder builder(filtered, run.initial_device_num, omp_code);
    read_threads(run.threads, builder);
    builder.finish(run.ended_cleanly, run.run_end);
  }
  return fold.result();
}

namespace {

// The files the pass writes into as it goes: the trace files (open during the pass: the trace is
// written a window at a time as the records are read, trace_window.hpp, so that its memory follows
// the window, not the run), the OTF2 archive and the HTML report (both written after the pass).
struct PassSinks {
  struct TraceFile {
    std::uint32_t format;
    std::string path;
    atomic_file::File file;
    std::unique_ptr<trace::TraceSink> sink;
    std::size_t at = 0;  // its position in the tee
  };
  TraceFile trace_files[2];
  trace::TeeTraceSink tee;
  std::size_t sinks = 0;
  std::unique_ptr<otf2::ArchiveSink> otf2_sink;
  std::unique_ptr<report::HtmlReport> html_sink;

  explicit PassSinks(const std::string& prefix)
      : trace_files{{kFormatPerfetto, prefix + ".pftrace", {}, {}, 0}, {kFormatChrome, prefix + ".trace.json", {}, {}, 0}} {}

  // False when a trace file cannot be made (said; the others go on).
  bool open(std::uint32_t formats, const Facts& facts) {
    bool ok = true;
    std::string error;
    for (TraceFile& tf : trace_files) {
      if ((formats & tf.format) == 0) continue;
      if (!tf.file.open(tf.path, error)) {
        log::warn(error);
        ok = false;
        continue;
      }
      tf.sink = tf.format == kFormatPerfetto ? make_perfetto_sink(tf.file.get()) : make_chrome_sink(tf.file.get());
      tf.at = sinks++;
      tee.add(tf.sink.get());
    }
    // OTF2 keeps the events until the end (otf2_writer.hpp) and writes its archive after the pass.
    if (formats & kFormatOtf2) {
      otf2_sink = std::make_unique<otf2::ArchiveSink>();
      otf2_sink->next_process(fact_value(facts, fact::kSection, fact::kHost), number_as<int>(facts, fact::kRank, -1));
      std::uint64_t raw_ns = 0, real_ns = 0;
      if (wall_reference(facts, raw_ns, real_ns)) otf2_sink->set_realtime_reference(raw_ns, real_ns);
      tee.add(otf2_sink.get());
      ++sinks;
    }
    // The HTML report boils the events down as they pass (bounded memory) and is written after.
    if (formats & kFormatHtml) {
      html_sink = std::make_unique<report::HtmlReport>();
      tee.add(html_sink.get());
      ++sinks;
    }
    return ok;
  }

  // After the pass: the trace files committed and the OTF2 archive written; the paths go to written.
  bool commit(const std::string& prefix, std::vector<std::string>& written) {
    bool ok = true;
    std::string error;
    for (TraceFile& tf : trace_files) {
      if (!tf.sink) continue;
      if (tf.file.commit(tee.ok(tf.at), error)) {
        written.push_back(tf.path);
      } else {
        log::warn(error);
        ok = false;
      }
    }
    if (otf2_sink) {
      const std::string dir = prefix + ".otf2";
      if (otf2_sink->write(dir, error)) {
        written.push_back(dir);
      } else {
        log::warn(error);
        ok = false;
      }
    }
    return ok;
  }
};


// The summary and the report's page, whole or not at all; a failure is one line and the other
// files are still tried.
bool write_summary_files(const Summary& sum, const std::string& other, const std::string& text, const OutputRequest& req,
                         PassSinks& pass, std::vector<std::string>& written) {
  bool ok = true;
  std::string error;
  auto emit = [&](std::uint32_t format, const std::string& path, const std::function<bool(std::FILE*)>& write) {
    if ((req.formats & format) == 0) return;
    if (atomic_file::write(path, write, error)) {
      written.push_back(path);
    } else {
      log::warn(error);
      ok = false;
    }
  };
  emit(kFormatSummary, req.prefix + ".summary.txt",
       [&](std::FILE* f) { return std::fwrite(text.data(), 1, text.size(), f) == text.size(); });
  if (pass.html_sink) {
    pass.html_sink->set_summary(summary_json(sum, other));
    emit(kFormatHtml, req.prefix + ".html", [&](std::FILE* f) { return pass.html_sink->write(f); });
  }
  if (req.formats & kFormatJson) {
    const std::string js = summary_json(sum, other);
    emit(kFormatJson, req.prefix + ".summary.json", [&](std::FILE* f) { return std::fwrite(js.data(), 1, js.size(), f) == js.size(); });
  }
  return ok;
}

// What is said on stderr after the files: the summary (unless --quiet), odd hook orders and the
// like (in the printed summary's notes, or as warnings when none is printed), lost events, and the
// files written.
void say_after(const Summary& sum, const std::string& text, const OutputRequest& req, const Config& c,
               const std::vector<std::string>& written) {
  const bool summary_printed = req.print_summary && (req.formats & kFormatSummary);
  if (!summary_printed && req.summary_text_out == nullptr) {
    for (const auto& p : sum.problems) log::warn(p);
  }
  if (summary_printed) log::plain(text);
  if (sum.dropped) log::warn(dropped_line(sum, c.memory_limit_mib));  // under --quiet too
  if (req.print_written && !written.empty()) {
    std::string line = std::string(log::program()) + ": wrote";
    for (std::size_t i = 0; i < written.size(); ++i) line += (i ? ", " : " ") + written[i];
    std::vector<std::string> all = written;
    if (!req.raw_trace.empty()) all.push_back(req.raw_trace);
    if (req.next_step) line += next_step(all);
    if (log::level() != log::Level::Off) log::plain(line + "\n");
  }
}

}  // namespace

std::vector<std::string> write_run_outputs(const RunData& run, const Facts& facts, const OutputRequest& req, bool* ok_out) {
  const Config c = config_from_facts(facts);
  if (req.formats == 0 && req.summary_text_out == nullptr) {
    // --format=none: the raw trace is the whole output (kob convert makes the rest, with the
    // notes and figures). No timeline is built, so the exit costs nothing whatever the run length.
    std::uint64_t dropped = 0;
    for (const ThreadSource* th : run.threads) dropped += th->dropped;
    if (dropped) log::warn(std::to_string(dropped) + " events were lost; `kob convert` on the raw trace says where");
    if (ok_out) *ok_out = true;
    return {};
  }
  bool ok = true;
  std::string error;
  const bool can_write = req.directory.empty() || atomic_file::make_directories(req.directory, error);
  if (!can_write) {
    if (!req.directory_reported) log::warn(error + "; no file is written");
    ok = false;
  }
  OutputRequest to_write = req;
  if (!can_write) to_write.formats = 0;
  PassSinks pass(req.prefix);
  ok = pass.open(to_write.formats, facts) && ok;
  // Before the producer and the fold that use it, so that it outlives both.
  SourceResolver sources(SourceResolver::modules_from(facts));
  TraceInfo info;
  info.pid = number_as<std::uint64_t>(facts, fact::kPid, 0);
  info.process_name = process_name(facts);
  info.sources = &sources;
  // By default the thread reading the records keeps a core, the trace events get the others.
  info.jobs = req.jobs != 0 ? req.jobs : std::clamp(idle_cores() - 1, 1u, OutputRequest::kMaxJobs);
  TraceProducer producer(pass.tee, info);
  // The windows are written on a thread of their own while this one reads the records on.
  TraceWindow window(producer, req.trace_window != 0 ? req.trace_window : TraceWindow::kDefaultSpans, true);
  // One pass over the records: the summary folds them as they come (its memory follows what is
  // open, not the run length), and the trace windows are written as they fill.
  SummaryFold fold;
  fold.set_sources(&sources);
  fold.set_available_threads(available_omp_threads(facts));
  // The database takes every span as it becomes final, beside the summary.
  std::unique_ptr<sqlite::DatabaseSink> db;
  if (to_write.formats & kFormatSqlite) {
    db = std::make_unique<sqlite::DatabaseSink>();
    if (db->open(req.prefix + ".sqlite", error)) {
      db->begin_run(database_facts(facts), &sources);
    } else {
      log::warn(error);
      ok = false;
      db.reset();
    }
  }
  TeeSink with_db(fold, db ? static_cast<SpanSink&>(*db) : fold);
  SpanSink& folded = db ? static_cast<SpanSink&>(with_db) : fold;
  TeeSink both(folded, window);
  FilterSink filtered(pass.sinks > 0 ? static_cast<SpanSink&>(both) : folded, c.include, c.exclude);
  // The summary alone (no trace, no database): one program thread at a time where it can.
  std::optional<Summary> engine_sum;
  if (pass.sinks == 0 && !db) engine_sum = per_thread_summary(run, facts, c, sources, nullptr,
                                                                req.jobs != 0 ? req.jobs : std::clamp(idle_cores(), 1u, OutputRequest::kMaxJobs));
  if (!engine_sum) {
    TimelineBuilder builder(filtered, run.initial_device_num, omp_runtime_code(facts));
    if (pass.sinks > 0) builder.set_poller(&window);
    // With more than one thread: the threads' chunks decoded ahead on all but one of them.
    read_threads(run.threads, builder, info.jobs - 1);
    builder.finish(run.ended_cleanly, run.run_end);
  }
  const Summary sum = engine_sum ? std::move(*engine_sum) : fold.result();
  // The run's facts as JSON: for the traces, the HTML report and summary.json only (a summary.txt
  // alone does without; it costs as much as a few thousand kernels).
  const bool want_other = pass.sinks > 0 || pass.html_sink || (to_write.formats & kFormatJson) != 0;
  const std::string other = want_other ? other_data_json(facts, sum) : std::string();
  std::vector<std::string> written;
  if (pass.sinks > 0) {
    window.end(other);
    ok = pass.commit(req.prefix, written) && ok;
    // Both traces cut the same events; the note comes once.
    if (producer.clipped())
      log::warn(std::to_string(producer.clipped()) +
                " events outlived their enclosing event on the same thread (odd hook order); cut at its end in the trace");
  }
  if (db) {
    db->end_run(sum);
    if (db->commit(error)) {
      written.push_back(req.prefix + ".sqlite");
    } else {
      log::warn(error);
      ok = false;
    }
  }
  const std::string text = summary_text(sum, fact_value(facts, fact::kSection, fact::kExe, "program") + " (pid " +
                                                 number(facts, fact::kPid) + ")");
  if (req.summary_text_out != nullptr) *req.summary_text_out = text;
  ok = write_summary_files(sum, other, text, to_write, pass, written) && ok;
  say_after(sum, text, req, c, written);
  if (ok_out) *ok_out = ok;
  return written;
}

std::string next_step(const std::vector<std::string>& written) {
  std::string html, pftrace, raw;
  for (const std::string& f : written) {
    if (f.ends_with(".html")) html = f;
    if (f.ends_with(".pftrace")) pftrace = f;
    if (f.ends_with(".kob")) raw = f;
  }
  if (!html.empty()) return " (next: open " + html + " in a browser)";
  const std::string report = raw.empty() ? "" : "kob report " + raw.substr(0, raw.size() - 4) + " for the HTML report";
  const std::string perfetto = pftrace.empty() ? "" : "open " + pftrace + " at https://ui.perfetto.dev";
  if (report.empty() && perfetto.empty()) return "";
  return " (next: " + report + (report.empty() || perfetto.empty() ? "" : ", or ") + perfetto + ")";
}

}  // namespace kob
