#include "common/formats/sqlite_writer.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>
#include <vector>

#include "common/formats/sqlite_rows.hpp"
#include "common/record/intern.hpp"
#include "common/record/mpi_calls.hpp"
#include "common/timeline/devid.hpp"
#include "common/timeline/omp_names.hpp"
#include "common/timeline/source_resolver.hpp"

namespace kob::sqlite {

namespace {

// The schema (docs/sqlite.md): times are integer ns from the run's start (RunFacts), `track` is
// threads.track, `source` is sources.address (the code address the runtime reported), kernel_id
// is kernels.id (0: none). Indexes are made once the rows are in (commit).
constexpr const char* kSchema = R"SQL(
CREATE TABLE runs(rank INTEGER, pid INTEGER, host TEXT, program TEXT, options TEXT, clock TEXT, start_time TEXT,
  start_monotonic_raw_ns INTEGER, start_realtime_ns INTEGER, run_time_ns INTEGER, dropped_events INTEGER, cut_short INTEGER,
  alignment TEXT, offset_start_ns INTEGER, offset_end_ns INTEGER, rtt_ns INTEGER);
CREATE TABLE threads(rank INTEGER, track INTEGER, os_tid INTEGER, omp_thread_type TEXT, proc INTEGER, place INTEGER,
  hidden_helper INTEGER, dropped_events INTEGER,
  PRIMARY KEY(rank, track));
CREATE TABLE sources(rank INTEGER, address INTEGER, module TEXT, offset INTEGER, function TEXT, file TEXT, line INTEGER,
  inlined_in TEXT, label TEXT,
  PRIMARY KEY(rank, address));
CREATE TABLE kernels(rank INTEGER, id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER,
  name TEXT, kind TEXT, space TEXT, devid INTEGER, region TEXT, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE regions(rank INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, name TEXT,
  path TEXT, parent TEXT, depth INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE fences(rank INTEGER, id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER,
  name TEXT, space TEXT, devid INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE sections(rank INTEGER, section INTEGER, track INTEGER, end_track INTEGER,
  start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, name TEXT, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, end_track) REFERENCES threads(rank, track));
CREATE TABLE deep_copies(rank INTEGER, id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER,
  dst_space TEXT, dst_name TEXT, src_space TEXT, src_name TEXT, bytes INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE memory(rank INTEGER, id INTEGER, track INTEGER, time_ns INTEGER, event TEXT, space TEXT, name TEXT,
  ptr INTEGER, bytes INTEGER, space_bytes INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE omp_parallel(rank INTEGER, id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER,
  kernel_id INTEGER, team_size INTEGER, requested_team_size INTEGER, flags INTEGER, level INTEGER, hidden_helper INTEGER,
  source INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE omp_implicit_tasks(rank INTEGER, parallel_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, thread_num INTEGER, team_size INTEGER, initial INTEGER, level INTEGER, wait_ns INTEGER,
  cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE omp_work(rank INTEGER, parallel_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, type TEXT, count INTEGER, source INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE omp_sync(rank INTEGER, parallel_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, kind TEXT, task_id INTEGER, wait_ns INTEGER, source INTEGER,
  cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE omp_task_creates(rank INTEGER, task_id INTEGER, track INTEGER, time_ns INTEGER, kernel_id INTEGER,
  flags INTEGER, has_dependences INTEGER, source INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE omp_tasks(rank INTEGER, task_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, flags INTEGER, status TEXT, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE omp_mutex(rank INTEGER, wait_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, kind TEXT, phase TEXT, nested INTEGER, acquired INTEGER,
  source INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE omp_target(rank INTEGER, id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER,
  kernel_id INTEGER, deep_copy_id INTEGER, kind TEXT, device INTEGER, source INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE omp_data_ops(rank INTEGER, host_op_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, target_id INTEGER, deep_copy_id INTEGER, kokkos_alloc_id INTEGER, op TEXT,
  src_device INTEGER, dst_device INTEGER, bytes INTEGER, point INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE omp_submits(rank INTEGER, host_op_id INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, kernel_id INTEGER, target_id INTEGER, requested_teams INTEGER, point INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE omp_device_ops(rank INTEGER, host_op_id INTEGER, target_id INTEGER, device INTEGER, start_ns INTEGER, end_ns INTEGER,
  dur_ns INTEGER, record_type TEXT, value INTEGER, op_kind INTEGER, point INTEGER);
CREATE TABLE mpi_calls(rank INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, call TEXT,
  bytes INTEGER, peer INTEGER, cut INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE tool_flushes(rank INTEGER, track INTEGER, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, records INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE kokkos_events(rank INTEGER, track INTEGER, time_ns INTEGER, kind TEXT, name TEXT, modify INTEGER,
  on_device INTEGER, ptr INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track));
CREATE TABLE omp_instants(rank INTEGER, track INTEGER, time_ns INTEGER, kind TEXT, name TEXT, kernel_id INTEGER, id INTEGER,
  value INTEGER, detail TEXT, source INTEGER,
  FOREIGN KEY(rank, track) REFERENCES threads(rank, track), FOREIGN KEY(rank, source) REFERENCES sources(rank, address));
CREATE TABLE findings(rank INTEGER, position INTEGER, id TEXT, title TEXT, subject TEXT, location TEXT, evidence TEXT, fix TEXT, threshold TEXT,
  time_at_stake_ns INTEGER, share_of_run REAL);
CREATE VIEW flows AS
  SELECT rank, kernel_id, 'omp_parallel' AS kind, rowid AS row FROM omp_parallel WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_implicit_tasks', rowid FROM omp_implicit_tasks WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_work', rowid FROM omp_work WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_sync', rowid FROM omp_sync WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_tasks', rowid FROM omp_tasks WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_mutex', rowid FROM omp_mutex WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_target', rowid FROM omp_target WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_data_ops', rowid FROM omp_data_ops WHERE kernel_id != 0
  UNION ALL SELECT rank, kernel_id, 'omp_submits', rowid FROM omp_submits WHERE kernel_id != 0;
)SQL";

constexpr const char* kIndexes = R"SQL(
CREATE INDEX kernels_by_start ON kernels(start_ns);
CREATE INDEX kernels_by_name ON kernels(name);
CREATE INDEX kernels_by_id ON kernels(id);
CREATE INDEX regions_by_start ON regions(start_ns);
CREATE INDEX regions_by_name ON regions(name);
CREATE INDEX fences_by_start ON fences(start_ns);
CREATE INDEX deep_copies_by_start ON deep_copies(start_ns);
CREATE INDEX memory_by_time ON memory(time_ns);
CREATE INDEX omp_parallel_by_start ON omp_parallel(start_ns);
CREATE INDEX omp_parallel_by_kernel ON omp_parallel(kernel_id);
CREATE INDEX omp_parallel_by_id ON omp_parallel(id);
CREATE INDEX omp_implicit_tasks_by_start ON omp_implicit_tasks(start_ns);
CREATE INDEX omp_implicit_tasks_by_kernel ON omp_implicit_tasks(kernel_id);
CREATE INDEX omp_implicit_tasks_by_parallel ON omp_implicit_tasks(parallel_id);
CREATE INDEX omp_work_by_start ON omp_work(start_ns);
CREATE INDEX omp_work_by_kernel ON omp_work(kernel_id);
CREATE INDEX omp_sync_by_start ON omp_sync(start_ns);
CREATE INDEX omp_sync_by_kernel ON omp_sync(kernel_id);
CREATE INDEX omp_tasks_by_start ON omp_tasks(start_ns);
CREATE INDEX omp_tasks_by_kernel ON omp_tasks(kernel_id);
CREATE INDEX omp_mutex_by_start ON omp_mutex(start_ns);
CREATE INDEX omp_mutex_by_kernel ON omp_mutex(kernel_id);
CREATE INDEX omp_target_by_start ON omp_target(start_ns);
CREATE INDEX omp_data_ops_by_start ON omp_data_ops(start_ns);
CREATE INDEX mpi_calls_by_start ON mpi_calls(start_ns);
)SQL";

// The tables rows are streamed into, in the order of Impl::stmts.
enum TableId {
  kKernels, kRegions, kFences, kSections, kDeepCopies, kMemory, kParallel, kImplicit, kWork, kSync, kTaskCreates,
  kTasks, kMutex, kTarget, kDataOps, kSubmits, kDeviceOps, kMpi, kToolFlushes, kKokkosEvents, kOmpInstants, kThreads, kSources, kRuns,
  kFindings, kTableCount
};
constexpr const char* kInserts[kTableCount] = {
    "INSERT INTO kernels VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO regions VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO fences VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO sections VALUES(?,?,?,?,?,?,?,?,?)",
    "INSERT INTO deep_copies VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO memory VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_parallel VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_implicit_tasks VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_work VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_sync VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_task_creates VALUES(?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_tasks VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_mutex VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_target VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_data_ops VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_submits VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_device_ops VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO mpi_calls VALUES(?,?,?,?,?,?,?,?,?)",
    "INSERT INTO tool_flushes VALUES(?,?,?,?,?,?)",
    "INSERT INTO kokkos_events VALUES(?,?,?,?,?,?,?,?)",
    "INSERT INTO omp_instants VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO threads VALUES(?,?,?,?,?,?,?,?)",
    "INSERT INTO sources VALUES(?,?,?,?,?,?,?,?,?)",
    "INSERT INTO runs VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO findings VALUES(?,?,?,?,?,?,?,?,?,?,?)",
};

constexpr std::uint64_t kRowsPerTransaction = 65536;

}  // namespace

struct DatabaseSink::Impl {
  SourceResolver* sources = nullptr;
  sqlite3* db = nullptr;
  RowBatch tables[kTableCount];
  std::string path, tmp, error;  // error: the first failure, reported at commit
  std::uint64_t start = 0;       // ns of the (first) run's start on the trace's time line
  bool started = false;
  RunFacts run;
  RunFacts alignment;  // for the next run (next_alignment)
  std::int64_t rank = -1;        // the rank column of the run being written
  std::function<std::uint64_t(std::uint64_t)> align;  // its times onto the database's time line
  std::uint64_t rows = 0;
  std::set<std::uint64_t> addresses;  // code addresses met, for `sources`
  std::vector<std::string_view> names;
  std::vector<Track> tracks;

  ~Impl() { close(); }

  void close() {
    for (RowBatch& b : tables) b.finalize();
    if (db != nullptr) sqlite3_close(db);
    db = nullptr;
  }

  bool exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
    fail(message != nullptr ? message : sqlite3_errmsg(db));
    sqlite3_free(message);
    return false;
  }
  // Closes the database and removes its temporary file: nothing is left when it was not committed.
  void discard() {
    close();
    if (!tmp.empty()) ::unlink(tmp.c_str());
    tmp.clear();
  }
  void fail(const std::string& what) {
    if (error.empty()) error = "could not write " + path + ": " + what;
  }

  std::string_view name(std::uint32_t id) {
    if (id >= names.size()) names = kob::names().snapshot();
    return id < names.size() ? names[id] : std::string_view();
  }
  std::int64_t t(std::uint64_t ns) const { return static_cast<std::int64_t>((align ? align(ns) : ns) - start); }
  Value source(std::uint64_t codeptr) {
    if (codeptr == 0) return Value::null();
    addresses.insert(codeptr);
    return Value(codeptr);
  }

  void insert(TableId table, std::initializer_list<Value> values) {
    if (!error.empty()) return;
    std::string message;
    if (!tables[table].add(rank, table != kRuns, values, message)) fail(message);
    if (++rows % kRowsPerTransaction == 0) exec("COMMIT; BEGIN");
  }
  bool flush() {
    std::string message;
    for (RowBatch& b : tables)
      if (error.empty() && !b.flush(message)) fail(message);
    return error.empty();
  }
};

std::string schema() { return std::string(kSchema).substr(1) + std::string(kIndexes).substr(1); }

DatabaseSink::DatabaseSink() : impl_(std::make_unique<Impl>()) {}
DatabaseSink::~DatabaseSink() {
  impl_->discard();  // never committed
}

bool DatabaseSink::open(const std::string& path, std::string& error) {
  Impl& m = *impl_;
  m.path = path;
  m.tmp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(m.tmp.c_str());
  if (sqlite3_open_v2(m.tmp.c_str(), &m.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    error = "could not write " + path + ": " + (m.db != nullptr ? sqlite3_errmsg(m.db) : "out of memory");
    m.discard();
    return false;
  }
  // A file made once and renamed when complete: no journal, no waiting for the disk per commit.
  bool ok = m.exec("PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE") && m.exec(kSchema) && m.exec("BEGIN");
  std::string message;
  for (int i = 0; ok && i < kTableCount; ++i) ok = m.tables[i].prepare(m.db, kInserts[i], message);
  if (!ok) {
    m.fail(message.empty() ? sqlite3_errmsg(m.db) : message);
    error = m.error;
    m.discard();
    return false;
  }
  return true;
}

void DatabaseSink::next_alignment(const std::string& how, std::int64_t offset_start_ns, std::int64_t offset_end_ns,
                                  std::uint64_t rtt_ns) {
  RunFacts& a = impl_->alignment;
  a.alignment = how;
  a.offset_start_ns = offset_start_ns;
  a.offset_end_ns = offset_end_ns;
  a.rtt_ns = rtt_ns;
}

void DatabaseSink::begin_run(const RunFacts& run, SourceResolver* sources, std::function<std::uint64_t(std::uint64_t)> align) {
  Impl& m = *impl_;
  m.run = run;
  if (!m.alignment.alignment.empty()) {
    m.run.alignment = m.alignment.alignment;
    m.run.offset_start_ns = m.alignment.offset_start_ns;
    m.run.offset_end_ns = m.alignment.offset_end_ns;
    m.run.rtt_ns = m.alignment.rtt_ns;
    m.alignment = RunFacts();
  }
  m.rank = run.rank;
  m.sources = sources;
  m.align = std::move(align);
  m.addresses.clear();
  m.tracks.clear();
  if (!m.started) {  // the first run's start is the database's zero
    m.started = true;
    m.start = m.align ? m.align(run.start_monotonic_raw_ns) : run.start_monotonic_raw_ns;
  }
}

void DatabaseSink::kernel(const KernelSpan& s) {
  Impl& m = *impl_;
  m.insert(kKernels, {s.id, s.track, m.t(s.start), m.t(s.end), s.dur(), m.name(s.name), kernel_kind_name(s.kind),
                      device_label(s.devid), s.devid, s.region, s.cut});
}

void DatabaseSink::fence(const FenceSpan& s) {
  Impl& m = *impl_;
  m.insert(kFences, {s.id, s.track, m.t(s.start), m.t(s.end), s.dur(), m.name(s.name), device_label(s.devid), s.devid, s.cut});
}

void DatabaseSink::region(const RegionSpan& s) {
  Impl& m = *impl_;
  const std::size_t slash = s.path.rfind('/');
  const std::string_view parent = slash == std::string::npos ? std::string_view() : std::string_view(s.path).substr(0, slash);
  m.insert(kRegions, {s.track, m.t(s.start), m.t(s.end), s.dur(), m.name(s.name), s.path,
                      slash == std::string::npos ? Value::null() : Value(parent), s.depth, s.cut});
}

void DatabaseSink::section(const SectionSpan& s) {
  Impl& m = *impl_;
  m.insert(kSections, {s.section, s.track, s.end_track, m.t(s.start), m.t(s.end), s.dur(), m.name(s.name), s.cut});
}

void DatabaseSink::deep_copy(const DeepCopySpan& s) {
  Impl& m = *impl_;
  m.insert(kDeepCopies, {s.id, s.track, m.t(s.start), m.t(s.end), s.dur(), m.name(s.dst_space), m.name(s.dst_name),
                         m.name(s.src_space), m.name(s.src_name), s.bytes, s.cut});
}

void DatabaseSink::memory(const MemoryEvent& e) {
  Impl& m = *impl_;
  m.insert(kMemory, {e.id, e.track, m.t(e.time), e.alloc ? "alloc" : "dealloc", m.name(e.space), m.name(e.name), e.ptr, e.bytes,
                     e.space_level});
}

void DatabaseSink::omp_parallel(const OmpParallelSpan& s) {
  Impl& m = *impl_;
  m.insert(kParallel, {s.id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, s.team_size, s.requested_team_size, s.flags,
                       s.level, s.hidden_helper, m.source(s.codeptr), s.cut});
}

void DatabaseSink::omp_implicit_task(const OmpImplicitTaskSpan& s) {
  Impl& m = *impl_;
  m.insert(kImplicit, {s.parallel_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, s.thread_num, s.team_size, s.initial,
                       s.level, s.wait_ns, s.cut});
}

void DatabaseSink::omp_work(const OmpWorkSpan& s) {
  Impl& m = *impl_;
  m.insert(kWork, {s.parallel_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, omp_names::work(s.type), s.count,
                   m.source(s.codeptr), s.cut});
}

void DatabaseSink::omp_sync(const OmpSyncSpan& s) {
  Impl& m = *impl_;
  m.insert(kSync, {s.parallel_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, omp_names::sync(s.kind), s.task_id,
                   s.wait_ns, m.source(s.codeptr), s.cut});
}

void DatabaseSink::omp_task_create(const OmpTaskCreate& c) {
  Impl& m = *impl_;
  m.insert(kTaskCreates, {c.task_id, c.track, m.t(c.time), c.kernel, c.flags, c.has_dependences, m.source(c.codeptr)});
}

void DatabaseSink::omp_task(const OmpTaskSpan& s) {
  Impl& m = *impl_;
  m.insert(kTasks, {s.task_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, s.flags,
                    s.status == 0 ? "none" : omp_names::task_status(s.status), s.cut});
}

void DatabaseSink::omp_mutex(const OmpMutexSpan& s) {
  Impl& m = *impl_;
  m.insert(kMutex, {s.wait_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, omp_names::mutex(s.kind),
                    s.hold ? "hold" : "wait", s.nested, !s.failed, m.source(s.codeptr), s.cut});
}

void DatabaseSink::omp_target(const OmpTargetSpan& s) {
  Impl& m = *impl_;
  m.insert(kTarget, {s.id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, s.deep_copy, omp_names::target_kind(s.kind),
                     s.device, m.source(s.codeptr), s.cut});
}

void DatabaseSink::omp_data_op(const OmpDataOpSpan& s) {
  Impl& m = *impl_;
  m.insert(kDataOps, {s.host_op_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, s.target_id, s.deep_copy, s.kokkos_alloc,
                      omp_names::data_op(s.optype), s.src_device, s.dst_device, s.bytes, s.point, s.cut});
}

void DatabaseSink::omp_submit(const OmpSubmitSpan& s) {
  Impl& m = *impl_;
  m.insert(kSubmits, {s.host_op_id, s.track, m.t(s.start), m.t(s.end), s.dur(), s.kernel, s.target_id, s.requested_teams, s.point,
                      s.cut});
}

void DatabaseSink::omp_device_op(const OmpDeviceOp& s) {
  Impl& m = *impl_;
  m.insert(kDeviceOps, {s.host_op_id, s.target_id, s.device, m.t(s.start), m.t(s.end), s.dur(), omp_names::callback(s.record_type),
                        s.value, s.op_kind, s.point});
}

void DatabaseSink::instant(const InstantEvent& e) {
  Impl& m = *impl_;
  m.insert(kKokkosEvents, {e.track, m.t(e.time), "profile_event", m.name(e.name), Value::null(), Value::null(), Value::null()});
}

void DatabaseSink::dual_view(const DualViewEvent& e) {
  Impl& m = *impl_;
  m.insert(kKokkosEvents, {e.track, m.t(e.time), "dual_view", m.name(e.name), e.modify, e.on_device, e.ptr});
}

void DatabaseSink::omp_instant(const OmpInstant& e) {
  Impl& m = *impl_;
  const Record r = e.record();
  // kind, name, id, value, detail as docs/sqlite.md lists them per kind.
  auto row = [&](const char* kind, std::string_view name, std::uint64_t id, std::uint64_t value, Value detail = Value::null()) {
    m.insert(kOmpInstants, {e.track, m.t(e.time), kind, name, e.kernel, id, value, detail, m.source(e.codeptr)});
  };
  switch (e.type) {
    case Ev::OmpDispatch: {
      using F = fields::OmpDispatch;
      row("dispatch", omp_names::dispatch(F::kind.get(r)), F::parallel_id.get(r), F::instance.get(r));
      break;
    }
    case Ev::OmpDependences: row("dependences", "", fields::OmpDependences::task_id.get(r), fields::OmpDependences::count.get(r)); break;
    case Ev::OmpTaskDependence:
      row("task_dependence", "", fields::OmpTaskDependence::src_task_id.get(r), fields::OmpTaskDependence::sink_task_id.get(r));
      break;
    case Ev::OmpLockInit:
    case Ev::OmpLockDestroy: {
      using F = fields::OmpMutex;
      row(e.type == Ev::OmpLockInit ? "lock_init" : "lock_destroy", omp_names::mutex(F::kind.get(r)), F::wait_id.get(r),
          e.type == Ev::OmpLockInit ? F::implementation.get(r) : 0);
      break;
    }
    case Ev::OmpCancel: row("cancel", "", 0, fields::OmpCancel::flags.get(r)); break;
    case Ev::OmpFlush: row("flush", "", 0, 0); break;
    case Ev::OmpControlTool:
      row("control_tool", "", fields::OmpControlTool::command.get(r), fields::OmpControlTool::modifier.get(r));
      break;
    case Ev::OmpError: {
      const std::uint32_t message = fields::OmpError::message.get(r);
      row("error", omp_names::severity(fields::OmpError::severity.get(r)), 0, 0,
          message == InternTable::kNullName ? Value::null() : Value(m.name(message)));
      break;
    }
    case Ev::OmpTaskSchedule:  // a detached task's event fulfilled
      row("task_fulfill", omp_names::task_status(fields::OmpTaskSchedule::prior_status.get(r)),
          fields::OmpTaskSchedule::prior_task_id.get(r), 0);
      break;
    default: break;
  }
}

void DatabaseSink::mpi(const MpiSpan& s) {
  Impl& m = *impl_;
  m.insert(kMpi, {s.track, m.t(s.start), m.t(s.end), s.dur(), kob_mpi_call_name(s.call), s.bytes, s.peer, s.cut});
}

void DatabaseSink::tool_flush(const ToolFlushSpan& s) {
  Impl& m = *impl_;
  m.insert(kToolFlushes, {s.track, m.t(s.start), m.t(s.end), s.dur(), s.records});
}

void DatabaseSink::finish(const Timeline& rest) { impl_->tracks = rest.tracks; }

void DatabaseSink::end_run(const Summary& sum) {
  Impl& m = *impl_;
  if (m.db == nullptr) return;
  for (const Track& tr : m.tracks)
    m.insert(kThreads, {tr.index, tr.os_tid, omp_names::thread_type(tr.omp_thread_type), tr.omp_proc, tr.omp_place, tr.hidden_helper,
                        tr.dropped});
  for (std::uint64_t a : m.addresses) {
    const SourceLocation& l = m.sources != nullptr ? m.sources->at(a) : SourceLocation();
    m.insert(kSources, {a, l.module, l.offset, l.function, l.file, l.line, l.caller, l.label});
  }
  const RunFacts& r = m.run;
  const bool aligned = !r.alignment.empty();
  m.insert(kRuns, {r.rank, r.pid, r.host, r.program, r.options, r.clock, r.start_time, r.start_monotonic_raw_ns, r.start_realtime_ns,
                   sum.run_time, sum.dropped, sum.cut_short, aligned ? Value(r.alignment) : Value::null(),
                   aligned ? Value(r.offset_start_ns) : Value::null(), aligned ? Value(r.offset_end_ns) : Value::null(),
                   aligned ? Value(r.rtt_ns) : Value::null()});
  for (std::size_t i = 0; i < sum.findings.size(); ++i) {
    const Finding& f = sum.findings[i];
    m.insert(kFindings, {static_cast<std::uint64_t>(i + 1), f.id, f.title, f.subject, f.location, f.evidence, f.fix, f.threshold,
                         f.time_at_stake, f.share_of_run});
  }
}

bool DatabaseSink::commit(std::string& error) {
  Impl& m = *impl_;
  if (m.db == nullptr) {
    error = "could not write " + m.path + ": not open";
    return false;
  }
  m.flush() && m.exec("COMMIT") && m.exec(kIndexes);
  const std::string failed = m.error;
  m.close();
  if (failed.empty() && std::rename(m.tmp.c_str(), m.path.c_str()) == 0) {
    m.tmp.clear();
    return true;
  }
  error = failed.empty() ? "could not write " + m.path + ": " + std::strerror(errno) : failed;
  m.discard();
  return false;
}

}  // namespace kob::sqlite
