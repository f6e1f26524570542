// An OpenMP (OMPT) tool run beside this library (the child), as LLVM's ompt-multiplex.h runs two:
// the runtime starts this library, which starts the child and shares every callback with it.
// The child is the first library whose ompt_start_tool returns a result, of: the entries of
// KOB_TOOL_LIBRARIES (':'-separated, as OMP_TOOL_LIBRARIES), --chain=LIB, then the entries of
// OMP_TOOL_LIBRARIES after this library's (all of them when this library is not listed: the
// runtime started it first, through LD_PRELOAD or linking, and reads the list no further).
// Without a child nothing here is on any callback's way.
#pragma once

#include <omp-tools.h>

namespace kob::omp::chain {

// Finds the child and calls its ompt_start_tool; its result, or null.
ompt_start_tool_result_t* start(unsigned int omp_version, const char* runtime_version);
// This library does not start as an OMPT tool: the child's result goes to the runtime as it is,
// and the runtime talks to the child alone.
ompt_start_tool_result_t* hand_over();
// Registers one of this library's callbacks: directly without a child, else through its wrapper.
// The runtime's answer.
int set_ours(ompt_callbacks_t event, ompt_callback_t fn);
// After ours are registered: the child's initialize, given our lookup. A child that declines
// (returns 0) or crashes is dropped, with one line, and ours are registered directly again.
void initialize_child(ompt_function_lookup_t lookup, int initial_device_num);
// The runtime finalizes the tools: the child's finalize, before ours.
void finalize_child();

}  // namespace kob::omp::chain
