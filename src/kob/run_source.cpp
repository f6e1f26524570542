#include "kob/run_source.hpp"

#include <cstdio>

#include "common/record/clock.hpp"

namespace kob::cli {

std::string raw_path(const std::string& run) {
  const bool has = run.size() >= 4 && run.compare(run.size() - 4, 4, ".kob") == 0;
  return has ? run : run + ".kob";
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
  try {
    data.initial_device_num = std::stoi(fact_value(facts, fact::kSection, fact::kOmpInitialDevice, "-1"));
  } catch (...) {
    data.initial_device_num = -1;
  }
  return data;
}

}  // namespace kob::cli
