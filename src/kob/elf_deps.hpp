// What a program's ELF file says about the libraries it loads: its DT_NEEDED names, where the
// dynamic loader would find them, and whether a file holds a given string (kob run tells the MPI
// family and the Kokkos version of the program it starts from these).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kob::cli {

// A program name looked up in PATH as execvp would (a name with a '/' as it is).
std::string find_in_path(const std::string& name);

// The DT_NEEDED names of an ELF file (empty when it is not one or has none).
std::vector<std::string> needed(const std::string& path);

// The folders the loader searches for `program`'s libraries, in its order: its DT_RPATH /
// DT_RUNPATH ($ORIGIN expanded), LD_LIBRARY_PATH, /etc/ld.so.conf and its includes, then the
// default folders (read once; resolve_library takes them).
std::vector<std::string> library_dirs(const std::string& program);

// Where the loader would find library `name` in those folders; "" when none holds it.
std::string resolve_library(const std::string& name, const std::vector<std::string>& dirs);

// Whether the file holds these bytes anywhere (false when it cannot be read).
bool file_contains(const std::string& path, std::string_view bytes);

}  // namespace kob::cli
