// Perfetto's native trace format (protobuf TracePacket stream, .pftrace): the same events as the
// Chrome trace, with interned names, one track per thread / device / lane, flows and debug
// annotations, incremental timestamps. The Perfetto UI loads large traces in this form far better
// than JSON.
#pragma once

#include <cstdio>
#include <memory>

#include "common/timeline/timeline.hpp"
#include "common/formats/trace_events.hpp"
#include "common/formats/trace_producer.hpp"

namespace kob {

// Writes the whole trace to f, streaming packets as it goes. Returns false on an I/O error.
// *clipped: as write_chrome_trace's (the same events are cut).
bool write_perfetto_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped = nullptr);

// The sink that writes the .pftrace to f, for a TraceProducer fed window by window.
std::unique_ptr<trace::TraceSink> make_perfetto_sink(std::FILE* f);

}  // namespace kob
