// Chrome trace event format (JSON object form), loadable in Perfetto and chrome://tracing.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "common/timeline.hpp"

namespace kob {

struct TraceInfo {
  std::uint64_t pid = 0;
  std::string process_name;
  std::string other_data_json;  // a JSON object
};

// Writes the whole document to f. Returns false on an I/O error. Complete events on one track
// are made to nest: a child that outlives its parent is cut at the parent's end and counted in
// *clipped.
bool write_chrome_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped = nullptr);

// Takes the document in pieces, each ending between two events; the Perfetto writer reads the
// same events this way, so both files always hold the same content.
class TraceTextSink {
 public:
  virtual ~TraceTextSink() = default;
  virtual bool write(std::string_view text) = 0;  // false: give up
};
bool write_chrome_trace(TraceTextSink& sink, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped = nullptr);

}  // namespace kob
