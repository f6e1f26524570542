// Shared between the layer's files: the tool's table once attached with the span functions, read
// on every wrapped call (one acquire load; null: not recorded, the call goes straight to PMPI).
#pragma once

#include <atomic>

#include "common/session/mpi_bridge.hpp"

namespace kob_mpi {

extern std::atomic<const kob_mpi_tool*> g_span_tool;

}  // namespace kob_mpi
