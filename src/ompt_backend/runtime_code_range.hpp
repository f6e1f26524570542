// Where the OpenMP runtime's own code lies, so that the timeline can tell the runtime's
// hidden-helper team from the program's parallel regions (timeline.hpp, CodeRange).
#pragma once

#include <string>

namespace kob::omp {

// The address range of the loaded object holding `fn` (any function of the runtime: an OMPT entry
// point), found from /proc/self/maps (no loader lock), as the raw trace's fact
// kob/omp_runtime_code writes it ("START-END", hex). "" when `fn` lies in no file or in the
// executable itself (a runtime linked into it shares its object with the program's code).
std::string runtime_code_range(const void* fn);

}  // namespace kob::omp
