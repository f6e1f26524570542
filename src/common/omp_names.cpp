#include "common/omp_names.hpp"

namespace kob::omp_names {

const char* work(std::uint16_t type) {
  switch (type) {
    case kMasked: return "masked";
    case 1: return "loop";
    case 2: return "sections";
    case 3: return "single_executor";
    case 4: return "single_other";
    case 5: return "workshare";
    case 6: return "distribute";
    case 7: return "taskloop";
    case 8: return "scope";
    case 10: return "loop_static";
    case 11: return "loop_dynamic";
    case 12: return "loop_guided";
    case 13: return "loop_other";
    default: return "unknown";
  }
}

const char* sync(std::uint16_t kind) {
  switch (kind) {
    case 1: return "barrier";
    case 2: return "barrier_implicit";
    case 3: return "barrier_explicit";
    case 4: return "barrier_implementation";
    case 5: return "taskwait";
    case 6: return "taskgroup";
    case 7: return "reduction";
    case 8: return "barrier_implicit_workshare";
    case 9: return "barrier_implicit_parallel";
    case 10: return "barrier_teams";
    default: return "unknown";
  }
}

const char* mutex(std::uint16_t kind) {
  switch (kind) {
    case 1: return "lock";
    case 2: return "test_lock";
    case 3: return "nest_lock";
    case 4: return "test_nest_lock";
    case 5: return "critical";
    case 6: return "atomic";
    case 7: return "ordered";
    default: return "unknown";
  }
}

std::uint16_t mutex_family(std::uint16_t kind) {
  if (kind == 2) return 1;
  if (kind == 4) return 3;
  return kind;
}

bool is_test_mutex(std::uint16_t kind) { return kind == 2 || kind == 4; }

const char* dispatch(std::uint16_t kind) {
  switch (kind) {
    case 1: return "iteration";
    case 2: return "section";
    case 3: return "ws_loop_chunk";
    case 4: return "taskloop_chunk";
    case 5: return "distribute_chunk";
    default: return "unknown";
  }
}

const char* task_status(std::uint32_t status) {
  switch (status) {
    case 1: return "complete";
    case 2: return "yield";
    case 3: return "cancel";
    case 4: return "detach";
    case 5: return "early_fulfill";
    case 6: return "late_fulfill";
    case 7: return "switch";
    case 8: return "taskwait_complete";
    default: return "unknown";
  }
}

bool task_status_completes(std::uint32_t status) { return status == 1 || status == 5 || status == 6; }

const char* thread_type(int type) {
  switch (type) {
    case 0: return "none";
    case 1: return "initial";
    case 2: return "worker";
    case 3: return "other";
    default: return "unknown";
  }
}

}  // namespace kob::omp_names
