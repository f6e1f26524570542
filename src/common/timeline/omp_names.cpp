#include "common/timeline/omp_names.hpp"

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

bool task_status_completes(std::uint32_t status) { return status == 1 || status == 5 || status == 6 || status == 8; }

const char* severity(std::uint16_t severity) {
  switch (severity) {
    case 1: return "warning";
    case 2: return "fatal";
    default: return "unknown";
  }
}

const char* thread_type(int type) {
  switch (type) {
    case 0: return "none";
    case 1: return "initial";
    case 2: return "worker";
    case 3: return "other";
    default: return "unknown";
  }
}

const char* target_kind(std::uint16_t kind) {
  switch (kind) {
    case 1: return "target";
    case 2: return "target_enter_data";
    case 3: return "target_exit_data";
    case 4: return "target_update";
    case 9: return "target_nowait";
    case 10: return "target_enter_data_nowait";
    case 11: return "target_exit_data_nowait";
    case 12: return "target_update_nowait";
    default: return "unknown";
  }
}

const char* data_op(std::uint16_t optype) {
  switch (optype) {
    case 1: return "alloc";
    case 2: return "transfer_to_device";
    case 3: return "transfer_from_device";
    case 4: return "delete";
    case 5: return "associate";
    case 6: return "disassociate";
    case 17: return "alloc_async";
    case 18: return "transfer_to_device_async";
    case 19: return "transfer_from_device_async";
    case 20: return "delete_async";
    default: return "unknown";
  }
}

const char* callback(std::uint16_t event) {
  static const char* const kNames[] = {
      "unknown",         "thread_begin",     "thread_end",          "parallel_begin",   "parallel_end",
      "task_create",     "task_schedule",    "implicit_task",       "target",           "target_data_op",
      "target_submit",   "control_tool",     "device_initialize",   "device_finalize",  "device_load",
      "device_unload",   "sync_region_wait", "mutex_released",      "dependences",      "task_dependence",
      "work",            "masked",           "target_map",          "sync_region",      "lock_init",
      "lock_destroy",    "mutex_acquire",    "mutex_acquired",      "nest_lock",        "flush",
      "cancel",          "reduction",        "dispatch",            "target_emi",       "target_data_op_emi",
      "target_submit_emi", "target_map_emi", "error",
  };
  return event < sizeof kNames / sizeof kNames[0] ? kNames[event] : "unknown";
}

const char* set_result(int r) {
  // ompt_set_result_t values: error 0, never 1, impossible 2, sometimes 3, sometimes_paired 4, always 5.
  static constexpr const char* kNames[] = {"error", "never", "impossible", "sometimes", "sometimes_paired", "always"};
  return r >= 0 && r <= 5 ? kNames[r] : "unknown";
}

}  // namespace kob::omp_names
