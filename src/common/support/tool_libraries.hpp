// Tool libraries named in the lists users set (KOKKOS_TOOLS_LIBS, OMP_TOOL_LIBRARIES,
// KOB_TOOL_LIBRARIES): the entries, and whether an entry is this library's own file.
#pragma once

#include <string>
#include <vector>

namespace kob::tool_libraries {

// The entries of a list split on `separator` as strtok splits it (empty entries skipped), the way
// Kokkos, kokkos-tools and libomp read theirs.
std::vector<std::string> entries(const char* list, char separator);

// Both paths name one file (false when either cannot be read).
bool same_file(const char* a, const char* b);

// The file this code was loaded from (the tool library, or the program it is linked into); null
// when the loader cannot say.
const char* own_path();

}  // namespace kob::tool_libraries
