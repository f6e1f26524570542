// OTF2 archives (`PREFIX.otf2/`, anchor file `traces.otf2`), the format of Score-P, Vampir and
// the tools that read it: the same events as the Chrome and Perfetto traces, as Enter/Leave pairs
// on one location per thread, device and lane, a location group per process (per rank when
// merged), regions per (category, name) with their paradigm and role, memory per space as
// metrics, and the events' arguments (our correlation ids among them) as attributes.
//
// OTF2 wants each location's events in time order, and a trace window may still bring a span that
// began before spans already given (the initial task, a Kokkos region open across a window's end).
// The sink therefore keeps the run's events, compactly (about 40 bytes per span plus 16 per
// argument), and orders them when the archive is written: unlike the other traces its memory
// follows the run length.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/formats/trace_events.hpp"

namespace kob::otf2 {

// True when this build can write OTF2 (the OTF2 library was found at build time).
bool available();

// A TraceSink that collects one or more processes (one process() call each, then its tracks,
// events and finish) and writes them as one archive.
class ArchiveSink : public trace::TraceSink {
 public:
  ArchiveSink();
  ~ArchiveSink() override;
  ArchiveSink(const ArchiveSink&) = delete;
  ArchiveSink& operator=(const ArchiveSink&) = delete;

  // Describes the process the next process() call starts: its host (the system tree node its
  // location group hangs under) and its MPI rank (-1: none).
  void next_process(const std::string& host, int rank);
  // The wall-clock time (ns since 1970) of a given trace time, for the archive's clock properties.
  void set_realtime_reference(std::uint64_t trace_ns, std::uint64_t realtime_ns);

  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override;
  void track(const trace::TrackDesc& t) override;
  void event(const trace::Event& e) override;
  void flow(const trace::Flow& f) override;  // OTF2 has no arrows: the attributes carry the ids
  bool finish(const std::string& other_data_json) override;  // records; write() makes the archive

  // Writes the archive into the directory `dir` (PREFIX.otf2), whole or not at all: made under a
  // temporary name beside it, then put in place of any older one. False with error set (one line).
  bool write(const std::string& dir, std::string& error);

  // Events collected (Enter, Leave and Metric records the archive will hold).
  std::uint64_t records() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kob::otf2
