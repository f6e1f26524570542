// A run as the kob commands take it: RUN is a raw trace PREFIX.kob or its PREFIX; once its raw
// trace is open, the facts it holds and the RunData the output pipeline reads (run_outputs.hpp).
#pragma once

#include <string>

#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"

namespace kob::cli {

// PREFIX or PREFIX.kob -> PREFIX.kob.
std::string raw_path(const std::string& run);

// The header's pid and rank, then the raw trace's KV entries (a later entry wins).
Facts run_facts(const raw::Reader& reader);

// Makes the reader's clock and names current (one run at a time) and returns the run to stream;
// it reads from reader, which must outlive it. Says on stderr (one `kob: ` line each) when the
// run did not end cleanly (unless quiet) and when the file has no clock calibration point.
RunData prepare_run(const raw::Reader& reader, const Facts& facts, bool quiet);

}  // namespace kob::cli
