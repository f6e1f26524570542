#include "kob/convert.hpp"

#include <cstdio>
#include <cstdlib>

#include "common/record/clock.hpp"
#include "common/session/config.hpp"
#include "common/support/log.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"
#include "common/formats/trace_window.hpp"
#include "kob/progress.hpp"
#include "kob/run_source.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

// Converts one raw trace; false when it cannot be read or a file cannot be written.
bool convert_one(const std::string& run, const ConvertRequest& o, std::string* summary_out) {
  raw::Reader reader;
  std::string path, error;
  if (!open_run(reader, run, path, error)) {
    say(error);
    return false;
  }
  const std::string prefix = !o.output.empty() ? o.output : run_prefix(path);
  const Facts facts = run_facts(reader);  // the header's pid and rank, unless a KV entry says otherwise
  if (fact_value(facts, fact::kSection, fact::kHelpRun) == "1") {
    if (!o.quiet) say(path + " is a --kokkos-tools-help run: nothing to convert");
    return true;
  }
  // Damage is named by the byte where it starts, so that what lies before it can be trusted.
  if (reader.damage().offset != raw::Reader::kNoDamage)
    say(path + ": damaged at byte " + std::to_string(reader.damage().offset) + ": " + reader.damage().what);
  if (reader.cut_tail_bytes() != 0)
    say(path + ": damaged at byte " + std::to_string(reader.cut_tail_offset()) + ": the last " +
        std::to_string(reader.cut_tail_bytes()) + " bytes are a write cut short; ignored");
  RunData data = prepare_run(reader, facts, o.quiet);
  OutputRequest req;
  req.prefix = prefix;
  const std::size_t slash = prefix.rfind('/');
  if (!o.output.empty() && slash != std::string::npos && slash > 0) req.directory = prefix.substr(0, slash);
  req.formats = o.formats_given ? o.formats : config_from_facts(facts).formats;
  if (!o.formats_given && req.formats == 0) req.formats = Config().formats;  // recorded with --format=none
  req.print_summary = false;
  req.print_written = !o.quiet;
  req.trace_window = o.trace_window;
  req.jobs = o.jobs;
  req.summary_text_out = summary_out;
  if (summary_out != nullptr) {  // kob summary: the text on stdout, no file
    req.formats = 0;
    req.print_written = false;
  }

  Progress progress(path);
  reader.on_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
  bool ok = true;
  write_run_outputs(data, facts, req, &ok);
  if (reader.damaged_records() != 0)
    say(path + ": damaged at byte " + std::to_string(reader.damaged_block_offset()) + ": " +
        std::to_string(reader.damaged_records()) + " records in damaged blocks could not be decoded");
  return ok;
}

}  // namespace

bool parse_formats(const std::string& list, std::uint32_t& formats) {
  Config c;
  std::vector<std::string> errors;
  c.apply({"--format=" + list}, errors);
  if (!errors.empty()) {
    say("--to: " + errors.front());
    return false;
  }
  formats = c.formats;
  return true;
}

namespace {
// A whole number from 1 to most, in decimal and nothing else; 0 when it is not one.
unsigned long long count_in(const std::string& v, unsigned long long most) {
  char* end = nullptr;
  const unsigned long long n = v.empty() || v[0] == '-' ? 0 : std::strtoull(v.c_str(), &end, 10);
  return n == 0 || n > most || end == nullptr || *end != '\0' ? 0 : n;
}
}  // namespace

bool parse_trace_window(const std::string& v, std::size_t& spans) {
  const unsigned long long n = count_in(v, ~0ull);
  if (n == 0) say("--trace-window takes a number of spans (1 or more), not '" + v + "'");
  else spans = static_cast<std::size_t>(n);
  return n != 0;
}

bool parse_jobs(const std::string& v, unsigned& jobs) {
  const unsigned long long n = count_in(v, OutputRequest::kMaxJobs);
  if (n == 0) say("-j/--jobs takes a number of threads from 1 to " + std::to_string(OutputRequest::kMaxJobs) + ", not '" + v + "'");
  else jobs = static_cast<unsigned>(n);
  return n != 0;
}

int convert_runs(const ConvertRequest& o) {
  if (o.runs.empty()) {
    say("convert needs at least one RUN (PREFIX.kob or PREFIX); kob convert --help");
    return 2;
  }
  if (!o.output.empty() && o.runs.size() > 1) {
    say("--output takes one RUN; " + std::to_string(o.runs.size()) + " were given");
    return 2;
  }
  bool ok = true;
  for (const std::string& run : o.runs) ok = convert_one(run, o, nullptr) && ok;
  return ok ? 0 : 1;
}

int summary_runs(const std::vector<std::string>& runs) {
  if (runs.empty()) {
    say("summary needs at least one RUN (PREFIX.kob or PREFIX); kob summary --help");
    return 2;
  }
  ConvertRequest o;
  o.quiet = true;
  bool ok = true;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::string text;
    if (!convert_one(runs[i], o, &text)) {
      ok = false;
      continue;
    }
    if (i > 0) std::fputs("\n", stdout);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace kob::cli
