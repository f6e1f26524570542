// libkob_mpi_<family>.so: the optional PMPI layer, one per MPI ABI (`kob run --mpi` preloads the
// one that matches the program's MPI). It measures each rank's clock offset to rank 0 right after
// MPI_Init and right before MPI_Finalize, and hands the results to the tool library when that
// attaches (common/session/mpi_bridge.hpp). It uses its MPI's header and binds to the program's
// MPI at run time (weak_mpi.hpp), and depends on the C++ runtime only: no spdlog, no part of the
// tool; problems are one `kob: ` line on stderr, and the program always runs on as without the layer.
// The C API only (OpenMPI and MPICH would pull in their C++ bindings otherwise).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "mpi_layer/weak_mpi.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "common/session/mpi_bridge.hpp"
#include "mpi_layer/handles.hpp"
#include "mpi_layer/layer.hpp"

#define KOB_EXPORT extern "C" __attribute__((visibility("default")))

namespace kob_mpi {

namespace {

// Round trips per rank: the offset's error is at most half the best round trip, and the more
// tries, the likelier one with neither side descheduled (ranks oversubscribing their cores, the
// other ranks busy-polling while they wait for their turn). Each rank tries at least kMinTrips,
// and goes on (up to kMaxTrips) until its best round trip is under kGoodRtt: a few hundred us per
// rank on one host, usually kMinTrips on a fast network. The rank decides and tells rank 0 it is
// done with a negative time.
constexpr int kMinTrips = 50, kMaxTrips = 2000;
constexpr long long kGoodRttNs = 4000;
// On our own duplicate of MPI_COMM_WORLD, so no message of the program can ever match ours.
constexpr int kTag = 0x4b6f, kTagTurn = 0x4b70;

struct Sync {
  bool have = false;
  std::int64_t local_ns = 0, offset_ns = 0, rtt_ns = 0;
};

struct State {
  std::mutex mu;
  const kob_mpi_tool* tool = nullptr;
  int rank = -1, size = 0;
  Sync sync[2];             // start, end
  bool delivered[2] = {};   // handed to the tool
  bool finalizing = false;  // MPI_Finalize reached (after the end measurement)
  bool finalizing_told = false;
};

State& state() {
  static State* s = new State();  // never destroyed: the tool may call in from exit handlers
  return *s;
}

std::int64_t g_shift_ns = 0;

// This rank's clock: the tool's time line (CLOCK_MONOTONIC_RAW ns) with the test shift.
std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000ll + ts.tv_nsec + g_shift_ns;
}

// What is due to the tool now, taken under the lock and given outside it (the tool's functions
// take locks of their own and may be called while the tool is starting).
struct Due {
  const kob_mpi_tool* tool = nullptr;
  int rank = -1, size = 0;
  bool sync[2] = {};
  Sync values[2];
  bool finalizing = false;
};

Due take_due(State& s) {
  Due d;
  if (s.tool == nullptr) return d;
  d.tool = s.tool;
  d.rank = s.rank;
  d.size = s.size;
  for (int p = 0; p < 2; ++p) {
    if (s.sync[p].have && !s.delivered[p]) {
      d.sync[p] = true;
      d.values[p] = s.sync[p];
      s.delivered[p] = true;
    }
  }
  if (s.finalizing && !s.finalizing_told) {
    d.finalizing = true;
    s.finalizing_told = true;
  }
  return d;
}

void give(const Due& d) {
  if (d.tool == nullptr) return;
  for (int p = 0; p < 2; ++p)
    if (d.sync[p] && d.tool->clock_sync != nullptr)
      d.tool->clock_sync(p, d.rank, d.size, d.values[p].local_ns, d.values[p].offset_ns, d.values[p].rtt_ns);
  if (d.finalizing && d.tool->finalizing != nullptr) d.tool->finalizing();
}

bool ok(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return true;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error %d", rc);
  std::fprintf(stderr, "kob: clock offsets to rank 0 not measured: %s failed: %s\n", what, text);
  return false;
}

// A rank's turn (and, after it, the end of everyone's) comes when rank 0 says so. Until then it
// sleeps between probes instead of waiting in MPI_Recv: an MPI that busy-polls (MPICH's default)
// would otherwise have every waiting rank spin on the cores that rank 0 and the measured rank
// need, and on an oversubscribed node no round trip would come near kGoodRttNs.
bool wait_for_turn(MPI_Comm comm) {
  const timespec nap{0, 50000};
  for (int flag = 0;;) {
    if (!ok(PMPI_Iprobe(0, kTagTurn, comm, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe")) return false;
    if (flag) break;
    nanosleep(&nap, nullptr);
  }
  long long go = 0;
  return ok(PMPI_Recv(&go, 1, MPI_LONG_LONG, 0, kTagTurn, comm, MPI_STATUS_IGNORE), "MPI_Recv");
}

// The ping-pong with rank 0: each other rank in turn sends its time t1, rank 0 answers with its
// time t0 on receipt, the rank reads t2; offset (t1 + t2) / 2 - t0 from the shortest round trip.
bool measure(int phase) {
  State& s = state();
  int initialised = 0, finalised = 0;
  PMPI_Initialized(&initialised);
  PMPI_Finalized(&finalised);
  if (!initialised || finalised) return false;
  MPI_Comm comm = MPI_COMM_NULL;
  if (!ok(PMPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup")) return false;
  // An error returns here instead of aborting the program (the default on a new communicator is
  // MPI_COMM_WORLD's handler, usually fatal).
  bool good = ok(PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  int rank = -1, size = 0;
  good = good && ok(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank") && ok(PMPI_Comm_size(comm, &size), "MPI_Comm_size");
  Sync best;
  if (good && rank == 0) {
    best = {true, now_ns(), 0, 0};
    auto call = [&](int peer) {
      const long long turn = 0;
      return ok(PMPI_Send(&turn, 1, MPI_LONG_LONG, peer, kTagTurn, comm), "MPI_Send");
    };
    for (int peer = 1; peer < size && good; ++peer) {
      good = call(peer);
      for (int i = 0; i < kMaxTrips + 1 && good; ++i) {
        long long t1 = 0;
        good = ok(PMPI_Recv(&t1, 1, MPI_LONG_LONG, peer, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        if (!good || t1 < 0) break;
        const long long t0 = static_cast<long long>(now_ns());
        good = ok(PMPI_Send(&t0, 1, MPI_LONG_LONG, peer, kTag, comm), "MPI_Send");
      }
    }
    // Everyone measured: the ranks sleeping in wait_for_turn go back to the program together.
    for (int peer = 1; peer < size && good; ++peer) good = call(peer);
  } else if (good) {
    good = wait_for_turn(comm);
    for (int i = 0; i < kMaxTrips && good; ++i) {
      if (i >= kMinTrips && best.rtt_ns <= kGoodRttNs) break;
      const long long t1 = static_cast<long long>(now_ns());
      long long t0 = 0;
      good = ok(PMPI_Send(&t1, 1, MPI_LONG_LONG, 0, kTag, comm), "MPI_Send") &&
             ok(PMPI_Recv(&t0, 1, MPI_LONG_LONG, 0, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      const long long t2 = static_cast<long long>(now_ns());
      if (good && (!best.have || t2 - t1 < best.rtt_ns)) best = {true, t1 + (t2 - t1) / 2, t1 + (t2 - t1) / 2 - t0, t2 - t1};
    }
    const long long done = -1;
    good = good && ok(PMPI_Send(&done, 1, MPI_LONG_LONG, 0, kTag, comm), "MPI_Send");
    // Not back to the program yet: its next MPI call would busy-poll beside the ranks still
    // measuring. Asleep until rank 0 has measured them all.
    good = good && wait_for_turn(comm);
  }
  PMPI_Comm_free(&comm);
  if (!good) return false;
  std::lock_guard<std::mutex> lock(s.mu);
  s.rank = rank;
  s.size = size;
  s.sync[phase] = best;
  return true;
}

}  // namespace

namespace {

void read_environment() {
  // Test only: the same shift the tool applies to its time line (clock.cpp), so that a rank
  // given it looks that far from rank 0 to both.
  if (const char* v = std::getenv("KOB_TEST_CLOCK_SHIFT_NS"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end == '\0') g_shift_ns = n;
  }
}

void after_init() {
  if (!family_matches()) return;
  read_environment();
  if (measure(kob_mpi_clock_start)) {
    State& s = state();
    Due d;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      d = take_due(s);
    }
    give(d);
  }
}

void before_finalize() {
  if (!family_matches()) return;
  measure(kob_mpi_clock_end);
  State& s = state();
  Due d;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.finalizing = true;
    d = take_due(s);
  }
  give(d);
}

}  // namespace
}  // namespace kob_mpi

KOB_EXPORT int kob_mpi_layer_attach(const kob_mpi_tool* tool) {
  using namespace kob_mpi;
  if (tool == nullptr || tool->version < 1 || tool->size < offsetof(kob_mpi_tool, mpi_begin)) return 0;
  // In a process whose MPI is of the other family the tool gets nothing from us: it goes on as
  // without the layer (clocks by wall time). An MPI not started yet is told by the same symbols.
  if (!family_matches()) return 0;
  State& s = state();
  Due d;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.tool != nullptr) return 1;  // once: the first table stays
    s.tool = tool;
    d = take_due(s);
  }
  give(d);
  // From now on the wrapped calls are recorded (mpi_calls.cpp), when the tool's table has them.
  if (tool->size >= sizeof(kob_mpi_tool) && tool->mpi_begin != nullptr && tool->mpi_end != nullptr)
    g_span_tool.store(tool, std::memory_order_release);
  return 1;
}

KOB_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) kob_mpi::after_init();
  return rc;
}

KOB_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) kob_mpi::after_init();
  return rc;
}

KOB_EXPORT int MPI_Finalize() {
  kob_mpi::before_finalize();
  return PMPI_Finalize();
}
