#include "common/atomic_file.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace kob::atomic_file {

namespace {

// Unique enough with O_EXCL behind it: pid, a per-process counter and the clock's nanoseconds.
std::string temp_name(const std::string& path, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const unsigned long mix = (static_cast<unsigned long>(ts.tv_nsec) * 2654435761ul) ^
                            (counter.fetch_add(1, std::memory_order_relaxed) * 40503ul) ^ attempt;
  char buf[64];
  std::snprintf(buf, sizeof buf, ".tmp.%ld.%08lx", static_cast<long>(getpid()), mix & 0xfffffffful);
  return path + buf;
}

// The temporary file being written now, for remove_partial(): two buffers, so that the one a
// signal handler may be reading is not the one being filled.
char g_partial[2][4096];
std::atomic<const char*> g_partial_now{nullptr};

void note_partial(const std::string& tmp) {
  if (tmp.size() >= sizeof g_partial[0]) return;
  char* buf = g_partial_now.load() == g_partial[0] ? g_partial[1] : g_partial[0];
  std::memcpy(buf, tmp.c_str(), tmp.size() + 1);
  g_partial_now.store(buf);
}

std::string failure(const std::string& path, int err) {
  return "cannot write " + path + ": " + std::strerror(err ? err : EIO) + "; that file is not written";
}

}  // namespace

bool write(const std::string& path, const std::function<bool(std::FILE*)>& write, std::string& error) {
  std::string tmp;
  int fd = -1;
  for (unsigned attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = temp_name(path, attempt);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    error = failure(path, errno);
    return false;
  }
  note_partial(tmp);
  std::FILE* f = fdopen(fd, "w");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    g_partial_now.store(nullptr);
    error = failure(path, err);
    return false;
  }
  errno = 0;
  bool ok = write(f);
  int err = errno;
  ok = ok && !std::ferror(f);
  if (std::fflush(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    error = failure(path, err);
  }
  g_partial_now.store(nullptr);
  return ok;
}

void remove_partial() {
  if (const char* p = g_partial_now.load()) ::unlink(p);
}

bool make_directories(const std::string& dir, std::string& error) {
  std::string part;
  std::size_t i = 0;
  while (i <= dir.size()) {
    const std::size_t slash = dir.find('/', i);
    const std::size_t end = slash == std::string::npos ? dir.size() : slash;
    part = dir.substr(0, end);
    i = end + 1;
    if (part.empty() || part == "." || part == "..") continue;
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) {
      error = "cannot create the output directory " + dir + ": " + std::strerror(errno) + "; no file is written";
      return false;
    }
  }
  struct stat st{};
  const bool found = ::stat(dir.c_str(), &st) == 0;
  if (!found || !S_ISDIR(st.st_mode)) {
    error = "cannot use " + dir + " as the output directory: " + (found ? "not a directory" : std::strerror(errno)) +
            "; no file is written";
    return false;
  }
  return true;
}

}  // namespace kob::atomic_file
