// kob: the command-line companion of the library (CLI11). Subcommands: run, convert, summary, merge, report, diff, sql.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/session/config.hpp"
#include "common/formats/trace_window.hpp"
#include "kob/convert.hpp"
#include "kob/diff.hpp"
#include "kob/merge.hpp"
#include "common/support/log.hpp"
#include "common/support/text_table.hpp"
#include "kob/report.hpp"
#include "kob/run.hpp"
#include "kob/sql.hpp"
#include "common/support/version.hpp"

namespace {

constexpr const char* kCommands[] = {"run", "convert", "summary", "merge", "report", "diff", "sql"};

bool known_command(const std::string& c) {
  for (const char* k : kCommands)
    if (c == k) return true;
  return false;
}

const char* kDescription =
    "kob: the command-line companion of kokkos-ompt-bridge, the Kokkos Tools library and OpenMP OMPT\n"
    "tool that puts Kokkos and OpenMP events on one timeline.";

const char* kFooter =
    "kob COMMAND --help describes a command. Exit status: 2 a usage error; see each command for the rest.";

// A subcommand: its CLI11 app and what to run once the command line is parsed (the exit status).
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// kob convert: its options, and the conversion once they are parsed.
Command add_convert(CLI::App& app) {
  struct State {
    kob::cli::ConvertRequest conv;
    std::string to, trace_window, jobs;
  };
  auto s = std::make_shared<State>();
  CLI::App* convert = app.add_subcommand(
      "convert", "write the output files of runs from their raw traces: kob convert RUN... [--to=LIST] [--output=PREFIX]");
  convert->footer(
      "RUN is a raw trace PREFIX.kob or its PREFIX; the files are PREFIX.pftrace, PREFIX.summary.txt, ...\n"
      "next to it. A run that did not end cleanly (crash, signal, _exit) converts too: spans still open at\n"
      "its end are cut at their thread's last event and marked \"cut\": true. A progress line is shown on a\n"
      "terminal for conversions longer than a second.\n"
      "Exit status: 0 every RUN converted, 1 a RUN could not be read or a file could not be written,\n"
      "2 a usage error.");
  convert->add_option("RUN", s->conv.runs, "raw traces (PREFIX.kob or PREFIX)");
  convert->add_option("--to", s->to,
                      "formats to write, as the tool's --format takes them (" + kob::format_names(kob::kFormatAll) +
                          ", all, none); default: the formats the run was recorded with")
      ->option_text("LIST");
  convert->add_option("-o,--output", s->conv.output, "prefix of the files written (one RUN only)")->option_text("PREFIX");
  convert->add_flag("-q,--quiet", s->conv.quiet, "no line naming the files written");
  convert->add_option("--trace-window", s->trace_window,
                      "spans the trace writers collect before they write them out (default " +
                          std::to_string(kob::TraceWindow::kDefaultSpans) + "); memory follows it, the files are the same")
      ->option_text("SPANS");
  convert->add_option("-j,--jobs", s->jobs,
                      "threads making the trace events besides the one reading the records, N - 1 more decoding them ahead "
                      "of it (default: the cores this "
                      "process may use, shared among the MPI ranks of the node, less one; at most 16); the events are the "
                      "same, their order in the file is not")
      ->option_text("N");
  return {convert, [s, convert] {
    if (!s->to.empty()) {
      if (!kob::cli::parse_formats(s->to, s->conv.formats)) return 2;
      s->conv.formats_given = true;
    } else if (convert->count("--to") > 0) {
      std::fprintf(stderr, "kob: --to: an empty list (kob convert --help)\n");
      return 2;
    }
    if (convert->count("--trace-window") > 0 && !kob::cli::parse_trace_window(s->trace_window, s->conv.trace_window)) return 2;
    if (convert->count("--jobs") > 0 && !kob::cli::parse_jobs(s->jobs, s->conv.jobs)) return 2;
    return kob::cli::convert_runs(s->conv);
  }};
}

Command add_summary(CLI::App& app) {
  auto runs = std::make_shared<std::vector<std::string>>();
  CLI::App* summary = app.add_subcommand("summary", "print the text summary of runs from their raw traces: kob summary RUN...");
  summary->footer(
      "The summary kob convert --to=summary writes to PREFIX.summary.txt, printed on stdout instead; no file\n"
      "is written. Exit status: 0 every RUN read, 1 a RUN could not be read, 2 a usage error.");
  summary->add_option("RUN", *runs, "raw traces (PREFIX.kob or PREFIX)");
  auto wide = std::make_shared<bool>(false);
  summary->add_flag("--wide", *wide, "tables as wide as their names (default: 120 columns)");
  return {summary, [runs, wide] {
    if (*wide) kob::text_table::set_width(0);
    return kob::cli::summary_runs(*runs);
  }};
}

Command add_merge(CLI::App& app) {
  struct State {
    kob::cli::MergeRequest req;
    std::string to;
  };
  auto s = std::make_shared<State>();
  CLI::App* merge = app.add_subcommand(
      "merge", "put the runs of several processes (MPI ranks) on one timeline: kob merge RUN... -o OUT [--to=LIST]");
  merge->footer(
      "Writes OUT.pftrace (a process per run, named by rank and host), OUT.otf2/ (an OTF2 archive, a location\n"
      "group per run), OUT.sqlite (every span, a rank column in every table), OUT.summary.txt and\n"
      "OUT.summary.json (per kernel and region: min / mean / max of the total time over the ranks, the\n"
      "imbalance (max - mean) / max and the slowest rank; how each clock was aligned). Runs are ordered by rank and put on rank 0's time line with the clock offsets the MPI layer\n"
      "measured (kob run --mpi: ping-pong at MPI_Init and MPI_Finalize, linear drift between), else by each\n"
      "run's wall-clock reading at its start, with a warning. A progress line is shown on a terminal.\n"
      "Exit status: 0 merged, 1 a RUN could not be read or a file could not be written, 2 a usage error.");
  merge->add_option("RUN", s->req.runs, "raw traces (PREFIX.kob or PREFIX), one per process")->required();
  merge->add_option("-o,--output", s->req.output, "prefix of the merged files")->option_text("OUT")->required();
  merge->add_option("--to", s->to, "formats to write: perfetto, otf2, sqlite, summary, json (default: all five)")->option_text("LIST");
  merge->add_flag("-q,--quiet", s->req.quiet, "no line naming the files written");
  return {merge, [s, merge] {
    if (merge->count("--to") > 0) {
      if (s->to.empty()) {
        std::fprintf(stderr, "kob: --to: an empty list (kob merge --help)\n");
        return 2;
      }
      if (!kob::cli::parse_formats(s->to, s->req.formats)) return 2;
      if (s->req.formats == 0) {
        std::fprintf(stderr, "kob: --to=none: nothing to write (kob merge --help)\n");
        return 2;
      }
    }
    return kob::cli::merge_runs(s->req);
  }};
}

Command add_report(CLI::App& app) {
  auto req = std::make_shared<kob::cli::ReportRequest>();
  CLI::App* report = app.add_subcommand(
      "report", "write a self-contained HTML report of runs from their raw traces: kob report RUN... [-o FILE.html]");
  report->footer(
      "One HTML file that opens in any browser, offline (script and style inline, the data in the page):\n"
      "the findings first, then a zoomable timeline of the threads and devices (wheel or +/- to zoom, drag\n"
      "or arrows to pan), the kernel table (click a column to sort), the region tree as a flame graph, the\n"
      "memory of each space over time, deep copies and target transfers, and each thread's busy and wait time.\n"
      "Several RUNs (the ranks of an MPI job) give one report with a row per rank, ordered by rank, on one\n"
      "time axis: rank 0's clock, the others aligned as kob merge aligns them (the MPI layer's offsets when\n"
      "every run has them, else each run's wall-clock reading at its start). The page holds the same data as --format=html (or kob convert\n"
      "--to=html) writes to PREFIX.html. A long run is boiled down as it is read: per track and category the\n"
      "time covered in 4096 bins, and the 20000 longest spans for the detail; memory follows that, not the\n"
      "run's length. A progress line is shown on a terminal.\n"
      "Exit status: 0 written, 1 a RUN could not be read or the file could not be written, 2 a usage error.");
  report->add_option("RUN", req->runs, "raw traces (PREFIX.kob or PREFIX); several: a row per rank")->required();
  report->add_option("-o,--output", req->output, "the file to write (default: the first RUN's PREFIX.html)")->option_text("FILE.html");
  report->add_flag("-q,--quiet", req->quiet, "no line naming the file written");
  return {report, [req] { return kob::cli::report_runs(*req); }};
}

Command add_diff(CLI::App& app) {
  struct State {
    kob::cli::DiffRequest req;
    std::string fail_above;
    bool wide = false;
  };
  auto s = std::make_shared<State>();
  CLI::App* diff = app.add_subcommand(
      "diff", "compare runs per Kokkos kernel, region and OpenMP construct, beyond noise: kob diff A B, kob diff A1 A2... --vs B1 B2...");
  diff->footer(
      "Per kernel (name and kind), region (path) and OpenMP construct outside kernels (kind and source\n"
      "location): calls and total time per run, the median time of a call in A and B and its change with a 95%\n"
      "confidence interval (a bootstrap over the runs of a side, then the calls of each run), largest time\n"
      "at stake |total B - total A| first. status: slower / faster where the change is beyond the noise (its\n"
      "interval at a 5% error rate over all the rows compared leaves out 0), within noise, same (the very\n"
      "same calls), few calls (under 3 on a side: run it more often, or give more runs), new, gone. Several\n"
      "runs a side bring the noise between runs (load, placement) into the interval; with one, only the\n"
      "noise between calls. Patterns (runs/a*.kob) are expanded. Kokkos' own start-up and finalize are the\n"
      "\"Kokkos runtime\" rows, listed last.\n"
      "--fail-above=PCT: a regression is a row on both sides whose median grew by more than PCT percent,\n"
      "beyond noise, with at least 1% of A's run time at stake, not Kokkos runtime (unless\n"
      "--include-runtime); each is one line on stderr (new rows are not).\n"
      "Exit status: 0 compared (no regression), 1 a run could not be read or FILE not written, 2 a usage\n"
      "error, 3 a regression over --fail-above.");
  diff->add_option("A", s->req.a, "the runs before (raw traces PREFIX.kob or PREFIX); without --vs: A B, one run each")->required();
  diff->add_option("--vs", s->req.b, "the runs after")->option_text("B...");
  diff->add_option("--fail-above", s->fail_above, "exit 3 when a row that matters got slower beyond noise by more than PCT % (median per call)")
      ->option_text("PCT");
  diff->add_flag("--include-runtime", s->req.include_runtime, "Kokkos' own start-up and finalize may be regressions too");
  diff->add_flag("--wide", s->wide, "tables as wide as their names, every column (default: 120 columns)");
  diff->add_flag("--json", s->req.json, "print JSON instead of the text tables (schema in README)");
  diff->add_option("-o,--output", s->req.output, "write the report to FILE instead of stdout")->option_text("FILE");
  return {diff, [s, diff] {
    if (diff->count("--fail-above") > 0) {
      if (!kob::cli::parse_fail_above(s->fail_above, s->req.fail_above)) return 2;
      s->req.fail_given = true;
    }
    if (diff->count("--vs") == 0) {
      if (s->req.a.size() != 2) {
        std::fprintf(stderr, "kob: diff: give two runs (kob diff A B) or the runs of each side (kob diff A1 A2 --vs B1 B2); got %zu (kob diff --help)\n",
                     s->req.a.size());
        return 2;
      }
      s->req.b = {s->req.a[1]};
      s->req.a.resize(1);
    }
    if (s->wide) kob::text_table::set_width(0);
    return kob::cli::diff_command(s->req);
  }};
}

Command add_sql(CLI::App& app) {
  auto req = std::make_shared<kob::cli::SqlRequest>();
  CLI::App* sql = app.add_subcommand(
      "sql", "SQL over a run's database: kob sql RUN [\"SELECT ...\" | --report NAME] [--csv | --json], kob sql --schema");
  sql->footer(
      "RUN is a raw trace PREFIX.kob or its PREFIX (its database PREFIX.sqlite is made first, as kob convert\n"
      "--to=sqlite makes it, when it is missing or older than the raw trace), or a .sqlite file (kob merge\n"
      "--to=sqlite, --format=sqlite). The rows print as an aligned table, or as CSV or JSON; with no query,\n"
      "sqlite3 opens the database. The tables and their columns: kob sql --schema, and docs/sqlite.md.\n"
      "--report NAME runs a canned report (kernels, barriers, locks, memory); without RUN it prints its SQL.\n"
      "Exit status: 0 the query ran, 1 the run could not be read or the query failed (SQLite's message), 2 a\n"
      "usage error.");
  sql->add_option("RUN", req->run, "a raw trace (PREFIX.kob or PREFIX) or a .sqlite database");
  sql->add_option("QUERY", req->query, "SQL; none: open sqlite3");
  auto* csv = sql->add_flag("--csv", req->csv, "rows as CSV (a header line first)");
  sql->add_flag("--json", req->json, "rows as a JSON list of objects")->excludes(csv);
  sql->add_flag("--schema", req->schema, "print the tables, views and indexes of a run's database");
  sql->add_option("--report", req->report, "a canned report instead of a query: kernels, barriers, locks, memory (docs/sqlite.md)")
      ->option_text("NAME");
  return {sql, [req] { return kob::cli::sql_main(*req); }};
}

// A CLI11 parse error as one line, as every kob error: which command, what, where to look.
int usage_error(const CLI::App& app, const CLI::ParseError& e) {
  std::string where = "kob";
  for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
  std::string what = e.what();
  if (what.empty()) what = e.get_name();
  std::fprintf(stderr, "kob: %s (%s --help)\n", what.c_str(), where.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  kob::log::set_program("kob");  // one prefix for all kob says, its own lines and the core's
  // `kob run` parses its own command line: what follows the program is the program's.
  if (argc >= 2 && std::strcmp(argv[1], "run") == 0) return kob::cli::run_main(argc - 2, argv + 2);
  if (argc >= 2 && argv[1][0] != '-' && !known_command(argv[1])) {
    std::fprintf(stderr, "kob: unknown command '%s' (kob --help lists the commands)\n", argv[1]);
    return 2;
  }

  CLI::App app(kDescription, "kob");
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("kob (kokkos-ompt-bridge) ") + KOB_VERSION);
  app.require_subcommand(1);
  // Listed for --help; handled above.
  app.add_subcommand("run", "run PROGRAM with the library loaded: kob run [--mpi] [TOOL OPTIONS] [--] PROGRAM [ARGS...]")
      ->allow_extras()
      ->prefix_command();
  // A command named first is the only one set up: CLI11 builds every option's parser as it is
  // added (0.4 M instructions for all the commands, a tenth of converting a small run), and after
  // the command's name every word is that command's. Without one (kob --help, kob): all, for the
  // list of commands.
  struct Adder {
    const char* name;
    Command (*add)(CLI::App&);
  };
  constexpr Adder kAdders[] = {{"convert", add_convert}, {"summary", add_summary}, {"merge", add_merge},
                               {"report", add_report},   {"diff", add_diff},       {"sql", add_sql}};
  const bool named = argc >= 2 && known_command(argv[1]);
  std::vector<Command> commands;
  for (const Adder& a : kAdders)
    if (!named || std::strcmp(argv[1], a.name) == 0) commands.push_back(a.add(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e);
  }
  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  return 2;
}
