#include "kob/run_source.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <string_view>
#include <utility>

#include "common/record/clock.hpp"

namespace kob::cli {

std::string raw_path(const std::string& run) {
  if (run.ends_with(".kob")) return run;
  struct stat st{};
  if (::stat(run.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return run;
  return run + ".kob";
}

std::string run_prefix(const std::string& path) { return path.ends_with(".kob") ? path.substr(0, path.size() - 4) : path; }

bool open_run(raw::Reader& reader, const std::string& run, std::string& path, std::string& error) {
  static constexpr std::pair<std::string_view, std::string_view> kOther[] = {
      {".summary.json", "a summary"}, {".summary.txt", "a summary"}, {".pftrace", "a Perfetto trace"},
      {".trace.json", "a Chrome trace"}, {".html", "a report"},        {".sqlite", "a SQL database"},
      {".otf2", "an OTF2 archive"},     {".otf2/", "an OTF2 archive"}, {".otf2/traces.otf2", "an OTF2 archive"}};
  for (const auto& [suffix, what] : kOther) {
    if (run.size() <= suffix.size() || !run.ends_with(suffix)) continue;
    const std::string prefix = run.substr(0, run.size() - suffix.size());
    path = run;
    error = run + " is " + std::string(what) + " of a run: give its raw trace, " + prefix + ".kob (or " + prefix + ")";
    return false;
  }
  path = raw_path(run);
  return reader.open(path, error);
}

Facts run_facts(const raw::Reader& reader) {
  Facts facts{{std::string(fact::kSection), std::string(fact::kPid), std::to_string(reader.header().pid)},
              {std::string(fact::kSection), std::string(fact::kRank), std::to_string(reader.header().rank)}};
  facts.insert(facts.end(), reader.kv().begin(), reader.kv().end());
  return facts;
}

RunData prepare_run(const raw::Reader& reader, const Facts& facts, bool quiet) {
  if (!reader.complete() && !quiet)
    std::fprintf(stderr, "kob: %s: the run did not end cleanly; spans still open at its end are cut at their thread's last event\n",
                 reader.path().c_str());
  std::uint64_t tick0 = 0, ns0 = 0;
  double rate = 1.0;
  if (!reader.clock_line(tick0, ns0, rate))
    std::fprintf(stderr, "kob: %s: no clock calibration point in the file; times use this machine's clock rate\n",
                 reader.path().c_str());
  reader.apply_clock();
  reader.load_names();
  RunData data;
  data.threads = reader.threads();
  data.ended_cleanly = reader.complete();
  data.run_end = reader.complete() ? clock::to_ns(reader.end_tick()) : 0;
  data.intact = reader.damage().offset == raw::Reader::kNoDamage && reader.cut_tail_bytes() == 0;
  try {
    data.initial_device_num = std::stoi(fact_value(facts, fact::kSection, fact::kOmpInitialDevice, "-1"));
  } catch (...) {
    data.initial_device_num = -1;
  }
  return data;
}

}  // namespace kob::cli
