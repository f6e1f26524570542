// Chrome trace event format (JSON object form), loadable in Perfetto and chrome://tracing.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "common/timeline/timeline.hpp"
#include "common/formats/trace_events.hpp"
#include "common/formats/trace_producer.hpp"

namespace kob {

// Writes the whole document to f. Returns false on an I/O error. Complete events on one track
// are made to nest: a child that outlives its parent is cut at the parent's end and counted in
// *clipped.
bool write_chrome_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped = nullptr);

// The sink that writes the Chrome JSON to f, for a TraceProducer fed window by window.
std::unique_ptr<trace::TraceSink> make_chrome_sink(std::FILE* f);

}  // namespace kob
