// Output files written whole or not at all: into a temporary file in the same directory, renamed
// over the final name once every byte is written and the file is closed.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace kob::atomic_file {

// One file under way: open() makes the temporary file, commit() renames it over path. Several
// may be under way at once; one dropped uncommitted is removed.
class File {
 public:
  File() = default;
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool open(const std::string& path, std::string& error);
  std::FILE* get() const { return f_; }
  // ok: whether everything was written. Closes the file and renames it over path; on any
  // failure the temporary file is removed and error is set as write() sets it.
  bool commit(bool ok, std::string& error);

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
  int slot_ = -1;
};

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
