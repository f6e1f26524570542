// --format=sqlite: the run as a SQLite database (PREFIX.sqlite), a table per kind of span, every
// span the trace holds, for queries from SQL, Python and notebooks (docs/sqlite.md has the schema).
// A SpanSink: rows are streamed in as the spans become final (prepared statements, a transaction
// per 65536 rows), indexes are made at the end, and the file is written under a temporary name
// and renamed once complete, so that a reader never sees half a database.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/analysis/summary.hpp"
#include "common/timeline/span_sink.hpp"

namespace kob {

class SourceResolver;

namespace sqlite {

// The run's row in `runs`.
struct RunFacts {
  std::int64_t rank = -1;
  std::uint64_t pid = 0;
  std::string host, program, options, clock, start_time;
  // The run's time line against the wall clock, read together at the start: row times are ns
  // from start_monotonic_raw_ns (0 when unknown: times are then CLOCK_MONOTONIC_RAW ns).
  std::uint64_t start_monotonic_raw_ns = 0, start_realtime_ns = 0;
  // kob merge: how its times were put on the first run's time line ("reference", "mpi", "wall
  // clock", "none"), the offsets at the start and end and the ping-pong's round trip. "": one run.
  std::string alignment;
  std::int64_t offset_start_ns = 0, offset_end_ns = 0;
  std::uint64_t rtt_ns = 0;
};

// The tables, views and indexes of a run's database, as SQL (kob sql --schema).
std::string schema();

class DatabaseSink : public SpanSink {
 public:
  DatabaseSink();
  ~DatabaseSink() override;
  DatabaseSink(const DatabaseSink&) = delete;
  DatabaseSink& operator=(const DatabaseSink&) = delete;

  // Makes the database under a temporary name beside `path`. False with error set (one line).
  bool open(const std::string& path, std::string& error);
  // The spans given next are the run's (its rank in every row; sources resolves its code
  // addresses), their times moved by align (none: as they are) onto the database's time line,
  // whose zero is the first run's start.
  void begin_run(const RunFacts& run, SourceResolver* sources, std::function<std::uint64_t(std::uint64_t)> align = {});
  // kob merge, before a run's begin_run: how it is aligned (RunFacts::alignment and the rest).
  void next_alignment(const std::string& how, std::int64_t offset_start_ns, std::int64_t offset_end_ns, std::uint64_t rtt_ns);
  // After the run's spans: its threads, code addresses, runs row and findings.
  void end_run(const Summary& sum);

  void kernel(const KernelSpan& s) override;
  void fence(const FenceSpan& s) override;
  void region(const RegionSpan& s) override;
  void section(const SectionSpan& s) override;
  void deep_copy(const DeepCopySpan& s) override;
  void memory(const MemoryEvent& e) override;
  void omp_parallel(const OmpParallelSpan& s) override;
  void omp_implicit_task(const OmpImplicitTaskSpan& s) override;
  void omp_work(const OmpWorkSpan& s) override;
  void omp_sync(const OmpSyncSpan& s) override;
  void omp_task_create(const OmpTaskCreate& c) override;
  void omp_task(const OmpTaskSpan& s) override;
  void omp_mutex(const OmpMutexSpan& s) override;
  void omp_target(const OmpTargetSpan& s) override;
  void omp_data_op(const OmpDataOpSpan& s) override;
  void omp_submit(const OmpSubmitSpan& s) override;
  void omp_device_op(const OmpDeviceOp& s) override;
  void mpi(const MpiSpan& s) override;
  void tool_flush(const ToolFlushSpan& s) override;
  void instant(const InstantEvent& e) override;
  void dual_view(const DualViewEvent& e) override;
  void omp_instant(const OmpInstant& e) override;
  void finish(const Timeline& rest) override;

  // After the last run: the indexes, then the file under its name. False with error set; nothing
  // is left under the final name then.
  bool commit(std::string& error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sqlite
}  // namespace kob
