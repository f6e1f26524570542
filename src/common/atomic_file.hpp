// Output files written whole or not at all: into a temporary file in the same directory, renamed
// over the final name once every byte is written and the file is closed.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace kob::atomic_file {

// Writes path through write(f). On any failure (open, a write, close, rename; or write returning
// false) the temporary file is removed, path is left as it was, and error is set to one line
// naming path and the cause. The file is opened close-on-exec.
bool write(const std::string& path, const std::function<bool(std::FILE*)>& write, std::string& error);

// Async-signal-safe: removes the temporary file of a write under way (the process is about to end
// by a signal before that write can finish).
void remove_partial();

// mkdir -p: creates dir and its missing parents. False with error set when it cannot.
bool make_directories(const std::string& dir, std::string& error);

}  // namespace kob::atomic_file
