#include "kob/convert.hpp"

#include <cstdio>
#include <cstdlib>

#include "common/clock.hpp"
#include "common/config.hpp"
#include "common/log.hpp"
#include "common/raw_reader.hpp"
#include "common/run_outputs.hpp"
#include "common/trace_window.hpp"
#include "kob/progress.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct Options {
  std::vector<std::string> runs;
  bool formats_given = false;
  std::uint32_t formats = 0;
  std::string output;
  bool quiet = false;
  std::size_t trace_window = 0;  // 0: the default
};

// Converts one raw trace; false when it cannot be read or a file cannot be written.
bool convert_one(const std::string& run, const Options& o) {
  const std::string path = ends_with(run, ".kob") ? run : run + ".kob";
  const std::string prefix = !o.output.empty() ? o.output : path.substr(0, path.size() - 4);
  raw::Reader reader;
  std::string error;
  if (!reader.open(path, error)) {
    say(error);
    return false;
  }
  // The header's pid and rank, unless a KV entry says otherwise.
  Facts facts{{std::string(fact::kSection), std::string(fact::kPid), std::to_string(reader.header().pid)},
              {std::string(fact::kSection), std::string(fact::kRank), std::to_string(reader.header().rank)}};
  facts.insert(facts.end(), reader.kv().begin(), reader.kv().end());
  if (fact_value(facts, fact::kSection, fact::kHelpRun) == "1") {
    if (!o.quiet) say(path + " is a --kokkos-tools-help run: nothing to convert");
    return true;
  }
  if (reader.cut_tail_bytes() != 0)
    say(path + ": the last " + std::to_string(reader.cut_tail_bytes()) + " bytes are a write cut short; ignored");
  if (!reader.complete() && !o.quiet)
    say(path + ": the run did not end cleanly; spans still open at its end are cut at their thread's last event");
  std::uint64_t tick0 = 0, ns0 = 0;
  double rate = 1.0;
  if (!reader.clock_line(tick0, ns0, rate))
    say(path + ": no clock calibration point in the file; times use this machine's clock rate");
  reader.apply_clock();
  reader.load_names();

  RunData data;
  data.threads = reader.threads();
  data.ended_cleanly = reader.complete();
  data.run_end = reader.complete() ? clock::to_ns(reader.end_tick()) : 0;
  try {
    data.initial_device_num = std::stoi(fact_value(facts, fact::kSection, fact::kOmpInitialDevice, "-1"));
  } catch (...) {
    data.initial_device_num = -1;
  }
  OutputRequest req;
  req.prefix = prefix;
  const std::size_t slash = prefix.rfind('/');
  if (!o.output.empty() && slash != std::string::npos && slash > 0) req.directory = prefix.substr(0, slash);
  req.formats = o.formats_given ? o.formats : config_from_facts(facts).formats;
  if (!o.formats_given && req.formats == 0) req.formats = Config().formats;  // recorded with --format=none
  req.print_summary = false;
  req.print_written = !o.quiet;
  req.trace_window = o.trace_window;

  Progress progress(path);
  reader.on_progress = [&](std::uint64_t done, std::uint64_t total) { progress.update(done, total); };
  bool ok = true;
  write_run_outputs(data, facts, req, &ok);
  if (reader.damaged_records() != 0)
    say(path + ": " + std::to_string(reader.damaged_records()) + " records in damaged blocks could not be decoded");
  return ok;
}

}  // namespace

std::string convert_help() {
  return "usage: kob convert RUN... [--to=LIST] [--output=PREFIX] [--quiet] [--trace-window=SPANS]\n"
         "\n"
         "Writes the output files of a run from its raw trace. RUN is a raw trace PREFIX.kob or its PREFIX;\n"
         "the files are PREFIX.trace.json, PREFIX.summary.txt, ... next to it.\n"
         "\n"
         "  --to=LIST        formats to write, as --format takes them (" + format_names(kFormatAll) + ", all, none);\n"
         "                   default: the formats the run was recorded with\n"
         "  --output=PREFIX  prefix of the files written (one RUN only)\n"
         "  --quiet          no line naming the files written\n"
         "  --trace-window=SPANS  spans the trace writers collect before they write them out (default " +
         std::to_string(TraceWindow::kDefaultSpans) + ");\n"
         "                   memory follows it; the files are the same whatever it is\n"
         "  --help           this text\n"
         "\n"
         "A run that did not end cleanly (crash, signal, _exit) converts too: spans still open at its end\n"
         "are cut at their thread's last event and marked \"cut\": true.\n"
         "Exit status: 0 every RUN converted, 1 a RUN could not be read or a file could not be written,\n"
         "2 a usage error.\n";
}

int convert_main(const std::vector<std::string>& args) {
  Options o;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(convert_help().c_str(), stdout);
      return 0;
    }
    if (a.rfind("--to=", 0) == 0) {
      Config c;
      std::vector<std::string> errors;
      c.apply({"--format=" + a.substr(5)}, errors);
      if (!errors.empty()) {
        say("--to: " + errors.front());
        return 2;
      }
      o.formats = c.formats;
      o.formats_given = true;
    } else if (a.rfind("--output=", 0) == 0 && a.size() > 9) {
      o.output = a.substr(9);
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a.rfind("--trace-window=", 0) == 0) {
      const std::string v = a.substr(15);
      char* end = nullptr;
      const unsigned long long n = v.empty() || v[0] == '-' ? 0 : std::strtoull(v.c_str(), &end, 10);
      if (n == 0 || end == nullptr || *end != '\0') {
        say("--trace-window takes a number of spans (1 or more), not '" + v + "'");
        return 2;
      }
      o.trace_window = static_cast<std::size_t>(n);
    } else if (a.rfind("--", 0) == 0) {
      say("unknown option " + a + " (kob convert --help lists them)");
      return 2;
    } else {
      o.runs.push_back(a);
    }
  }
  if (o.runs.empty()) {
    say("convert needs at least one RUN (PREFIX.kob or PREFIX); kob convert --help");
    return 2;
  }
  if (!o.output.empty() && o.runs.size() > 1) {
    say("--output takes one RUN; " + std::to_string(o.runs.size()) + " were given");
    return 2;
  }
  bool ok = true;
  for (const std::string& run : o.runs) ok = convert_one(run, o) && ok;
  return ok ? 0 : 1;
}

}  // namespace kob::cli
