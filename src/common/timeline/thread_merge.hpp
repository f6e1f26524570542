// The threads' records merged into one stream by time, for the timeline builder. Decoding a chunk
// and putting its records on the time line (ticks to ns, ties nudged: EventDecoder, common/record) depend on
// the thread alone, so other threads may do them ahead of the merge, which then only picks the
// earliest record: the part of the reading that scales with the cores a conversion has.
#pragma once

#include <vector>

#include "common/timeline/thread_source.hpp"

namespace kob {

class TimelineBuilder;

// Adds the threads to the builder and gives it all their records merged by time (ties: the lower
// track first). decoders 0: the caller decodes each thread's chunks as the merge reaches them (one
// chunk per thread in memory); n > 0: n threads decode them ahead (each takes every n-th thread,
// a few chunks ahead of the merge). The records and times the builder gets are the same.
void read_threads(const std::vector<const ThreadSource*>& threads, TimelineBuilder& builder, unsigned decoders = 0);

}  // namespace kob
