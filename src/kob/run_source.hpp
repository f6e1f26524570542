// A run as the kob commands take it: RUN is a raw trace PREFIX.kob or its PREFIX; once its raw
// trace is open, the facts it holds and the RunData the output pipeline reads (run_outputs.hpp).
#pragma once

#include <string>

#include "common/timeline/raw_reader.hpp"
#include "common/session/run_outputs.hpp"

namespace kob::cli {

// PREFIX or PREFIX.kob -> PREFIX.kob; a file that exists under the name given is taken as it is
// (the reader then says what is wrong with it).
std::string raw_path(const std::string& run);

// A raw trace's path without ".kob": the prefix its other files share (a name without it, as it is).
std::string run_prefix(const std::string& path);

// Opens RUN's raw trace (path: the file tried). False with error: one line saying what is wrong
// with the file given, naming the raw trace to give instead when RUN is one of a run's other
// files (PREFIX.summary.json, PREFIX.pftrace, ...).
bool open_run(raw::Reader& reader, const std::string& run, std::string& path, std::string& error);

// The header's pid and rank, then the raw trace's KV entries (a later entry wins).
Facts run_facts(const raw::Reader& reader);

// Makes the reader's clock and names current (one run at a time) and returns the run to stream;
// it reads from reader, which must outlive it. Says on stderr (one `kob: ` line each) when the
// run did not end cleanly (unless quiet) and when the file has no clock calibration point.
RunData prepare_run(const raw::Reader& reader, const Facts& facts, bool quiet);

}  // namespace kob::cli
