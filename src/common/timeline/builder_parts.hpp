// Pieces the streaming timeline builder (timeline_builder.cpp) shares with its OpenMP and target
// matchers (omp_matcher.cpp, target_matcher.cpp). Internal to the builder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/timeline/span_sink.hpp"
#include "common/timeline/timeline.hpp"

namespace kob::builder {

// Counts one kind of problem and turns it into one line at the end.
// A span begun and not yet handed on: where a trace window may not cut through (trace_window.hpp).
struct OpenSpanAt {
  std::uint32_t track = 0;
  std::uint64_t start = 0;
};

// What is open at a point of the records, for a trace written a window at a time.
struct OpenState {
  // False while something is open that an arrow or a hold lane needs whole, together with what
  // it relates to: a Kokkos kernel, fence or deep copy; a target construct, data op or submit (or
  // one waiting for its allocation); an explicit task alive; and for
  // good once a device is traced (its records come whenever the runtime flushes a buffer).
  bool can_cut = true;
  std::vector<OpenSpanAt> open;              // every span begun and not handed on (sections: no)
  std::vector<std::uint64_t> waiting_teams;  // parallel regions handed on, workers' ends still to come
  std::vector<std::uint64_t> open_parallels;  // parallel regions not ended (ids)
  void clear() {
    can_cut = true;
    open.clear();
    waiting_teams.clear();
    open_parallels.clear();
  }
};

struct ProblemCounter {
  std::map<std::string, std::uint64_t> counts;
  void add(const std::string& what, std::uint64_t n = 1) {
    if (n != 0) counts[what] += n;
  }
  void flush(std::vector<std::string>& out) {
    for (const auto& [what, n] : counts) out.push_back(what + " (" + std::to_string(n) + (n == 1 ? " time)" : " times)"));
  }
};

// Where spans still open at the end of the records end. After a clean end: the end of the run.
// After a run cut short (no END in the raw trace: crash, signal, _exit): their own thread's last
// event, and they are marked as cut and counted.
class OpenEnd {
 public:
  OpenEnd(Timeline& t, bool cut) : t_(t), cut_(cut) {}
  bool cut() const { return cut_; }
  std::uint64_t time(std::uint32_t track, std::uint64_t start) const {
    const std::uint64_t end = cut_ && track < t_.tracks.size() ? t_.tracks[track].last_ns : t_.t_end;
    return std::max(end, start);
  }
  void close(Interval& s) const {
    s.end = time(s.track, s.start);
    if (cut_) {
      s.cut = true;
      ++t_.cut_spans;
    }
  }
  // The problem line for something of this kind left open.
  std::string never_ended(const std::string& what) const {
    return what + (cut_ ? " never ended: cut at its thread's last event (the run did not end cleanly)"
                        : " never ended: shown until the end of the run");
  }

 private:
  Timeline& t_;
  bool cut_;
};

// The problem line for a span still open at the end of records some of which were dropped.
inline std::string discarded_unended(const std::string& what) { return what + " without an end, discarded (events were dropped)"; }

// The problem line for a Kokkos profile region left open at the end of the records.
inline std::string region_never_popped(bool cut) {
  return cut ? "a Kokkos profile region never popped: cut at its thread's last event (the run did not end cleanly)"
             : "a Kokkos profile region never popped: shown until the end of the run";
}

// The problem line for a profile section left open at the end of the records.
inline std::string section_never_stopped(bool cut) {
  return cut ? "a profile section never stopped: cut at its thread's last event (the run did not end cleanly)"
             : "a profile section never stopped: shown until the end of the run";
}

// Hands on the spans still open at the end of the records (a map id -> span), each ended by
// open_end, with one problem line each; when events were dropped (their ends may be among them)
// they are discarded instead. Empties the map.
template <class Map, class Give>
void close_unended(Map& open, Give&& give, const char* what, bool lost_ends, const OpenEnd& open_end, ProblemCounter& problems) {
  for (auto& [id, span] : open) {
    problems.add(lost_ends ? discarded_unended(what) : open_end.never_ended(what));
    if (lost_ends) continue;
    open_end.close(span);
    give(span);
  }
  open.clear();
}

// Finds the innermost element of a stack that `exact` accepts, else the innermost that `loose`
// accepts. Returns the index or -1.
template <class V, class Exact, class Loose>
long find_top(const V& stack, Exact&& exact, Loose&& loose) {
  for (std::size_t i = stack.size(); i-- > 0;)
    if (exact(stack[i])) return static_cast<long>(i);
  for (std::size_t i = stack.size(); i-- > 0;)
    if (loose(stack[i])) return static_cast<long>(i);
  return -1;
}

// What the matchers share: the sink, the run's non-span facts (tracks, counters), the problems.
struct Context {
  SpanSink& out;
  Timeline& rest;  // everything but spans and instants (span_sink.hpp)
  ProblemCounter& problems;
};

}  // namespace kob::builder
