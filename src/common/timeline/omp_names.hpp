// Names of the OMPT enumerations as they appear in the trace and the summaries. Plain numbers
// (not the omp-tools.h types) so that the writers need no OpenMP header. Unknown values give
// "unknown".
#pragma once

#include <cstdint>

namespace kob::omp_names {

// ompt_work_t (loop, sections, ..., loop_other). 0 is our own code for a masked region.
constexpr std::uint16_t kMasked = 0;
const char* work(std::uint16_t type);
// A worksharing loop (ompt_work_loop, loop_static..loop_other): loops of any schedule match each other.
constexpr bool is_loop(std::uint16_t type) { return type == 1 || (type >= 10 && type <= 13); }
// ompt_sync_region_t (barrier, ..., barrier_teams).
const char* sync(std::uint16_t kind);
// A barrier of any kind (barrier, implicit, explicit, implementation; implicit workshare, parallel,
// teams): their ends and waits match each other.
constexpr bool is_barrier(std::uint16_t kind) { return kind <= 4 || (kind >= 8 && kind <= 10); }
// The barriers a worker waits in at the end of its last region (implicit, implicit_parallel,
// teams): libomp reports them ended only when the next region starts, so one still open at the
// end of the run is no problem.
constexpr bool worker_last_barrier(std::uint16_t kind) { return kind == 2 || kind == 9 || kind == 10; }
// ompt_mutex_t as reported (lock, test_lock, nest_lock, test_nest_lock, critical, atomic, ordered).
const char* mutex(std::uint16_t kind);
// The family a mutex kind belongs to: test_lock counts as lock, test_nest_lock as nest_lock.
std::uint16_t mutex_family(std::uint16_t kind);
bool is_test_mutex(std::uint16_t kind);
// ompt_dispatch_t (iteration, section, ws_loop_chunk, taskloop_chunk, distribute_chunk).
const char* dispatch(std::uint16_t kind);
// ompt_task_status_t (complete, yield, cancel, detach, early_fulfill, late_fulfill, switch,
// taskwait_complete).
const char* task_status(std::uint32_t status);
// Whether a task that leaves the CPU with this status has finished (complete, early/late fulfill).
bool task_status_completes(std::uint32_t status);
const char* severity(std::uint16_t severity);  // ompt_severity_t of the error directive
// ompt_thread_t (initial, worker, other, unknown); 0 gives "none" (no OMPT thread_begin seen).
const char* thread_type(int type);
// ompt_target_t as "target", "target_enter_data", "target_exit_data", "target_update" and their
// "_nowait" forms.
const char* target_kind(std::uint16_t kind);
// ompt_target_data_op_t: "alloc", "transfer_to_device", "transfer_from_device", "delete",
// "associate", "disassociate" and their "_async" forms.
const char* data_op(std::uint16_t optype);
// ompt_callbacks_t without the prefix: "thread_begin" ... "target_emi", "target_data_op_emi", ...
const char* callback(std::uint16_t event);
// ompt_set_result_t of ompt_set_callback / ompt_set_trace_ompt: "always", "never", ...
const char* set_result(int result);

}  // namespace kob::omp_names
