// The table of OpenMP constructs by source location (OmpSummary::constructs) in the text summary
// (summary_json.cpp writes summary.json's `openmp.constructs`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/analysis/summary.hpp"

namespace kob::summary_constructs {

// The text summary shows this many rows at most (the largest), then how many more JSON holds.
constexpr std::size_t kTextRows = 30;
// ... and of the Kokkos runtime group (Kokkos' own start-up and finalize), shown after them.
constexpr std::size_t kRuntimeRows = 10;

// The section, from its blank line; "" when there is no row.
std::string text(const std::vector<OmpConstructStats>& rows);

}  // namespace kob::summary_constructs
