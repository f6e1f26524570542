// Walks the Timeline once and hands every trace event, in a fixed order, to a format sink.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/timeline/source_resolver.hpp"
#include "common/timeline/timeline.hpp"
#include "common/formats/trace_events.hpp"

namespace kob {

struct TraceInfo {
  std::uint64_t pid = 0;
  std::string process_name;
  std::string other_data_json;  // a JSON object
  // Resolves the OpenMP constructs' code addresses: their `source` arg and, outside Kokkos kernels,
  // their slice names. nullptr: neither.
  SourceResolver* sources = nullptr;
  // Threads making the complete events, when the sink can be split (TraceSink::split): each
  // takes the events of every jobs-th track. 1: the producer's thread alone.
  unsigned jobs = 1;
};

// Writes a run a window at a time (trace_window.hpp), or a whole Timeline in one window. Within
// a window, complete events on one track are made to nest (a child that outlives its parent is
// cut at the parent's end and counted in clipped()); mutex holds that outlive their construct go
// to hold lanes; the correlation arrows are numbered on from the previous window's. Tracks are
// declared when first used, and at end() those that no event used.
class TraceProducer {
 public:
  TraceProducer(trace::TraceSink& sink, const TraceInfo& info);
  ~TraceProducer();
  TraceProducer(const TraceProducer&) = delete;
  TraceProducer& operator=(const TraceProducer&) = delete;
  // The process and the trace's zero (ns); else the first window's t0.
  void begin(std::uint64_t t0);
  // w: spans and instants sorted as build_timeline sorts them, task creates numbered from 0 in
  // w; its tracks and omp_devices: the run's as known so far (all the threads already).
  void window(const Timeline& w);
  // rest: the run's final tracks and devices. Calls the sink's finish and returns what it did.
  bool end(const Timeline& rest, const std::string& other_data_json);
  std::uint64_t clipped() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Feeds sink the process, its tracks (threads, devices, mutex-hold lanes), the events and the
// flows, then finishes it; returns what sink.finish returned. Complete events on one track are
// made to nest: a child that outlives its parent is cut at the parent's end and counted in
// *clipped.
bool produce_trace(const Timeline& t, const TraceInfo& info, trace::TraceSink& sink, std::uint64_t* clipped = nullptr);

}  // namespace kob
