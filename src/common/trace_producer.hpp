// Walks the Timeline once and hands every trace event, in a fixed order, to a format sink.
#pragma once

#include <cstdint>
#include <string>

#include "common/timeline.hpp"
#include "common/trace_events.hpp"

namespace kob {

struct TraceInfo {
  std::uint64_t pid = 0;
  std::string process_name;
  std::string other_data_json;  // a JSON object
};

// Feeds sink the process, its tracks (threads, devices, mutex-hold lanes), the events and the
// flows, then finishes it; returns what sink.finish returned. Complete events on one track are
// made to nest: a child that outlives its parent is cut at the parent's end and counted in
// *clipped.
bool produce_trace(const Timeline& t, const TraceInfo& info, trace::TraceSink& sink, std::uint64_t* clipped = nullptr);

}  // namespace kob
