#include "common/support/atomic_file.hpp"

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

// The temporary files being written now, for remove_partial(): a few slots (a run writes at most
// two files at once), each published by its pointer once its name is complete.
constexpr int kSlots = 4;
char g_partial[kSlots][4096];
std::atomic<const char*> g_partial_now[kSlots];
std::atomic<bool> g_slot_taken[kSlots];

int note_partial(const std::string& tmp) {
  if (tmp.size() >= sizeof g_partial[0]) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slot_taken[i].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_partial[i], tmp.c_str(), tmp.size() + 1);
    g_partial_now[i].store(g_partial[i]);
    return i;
  }
  return -1;
}

void forget_partial(int slot) {
  if (slot < 0) return;
  g_partial_now[slot].store(nullptr);
  g_slot_taken[slot].store(false);
}

std::string failure(const std::string& path, int err) {
  return "cannot write " + path + ": " + std::strerror(err ? err : EIO) + "; that file is not written";
}

}  // namespace

File::~File() {
  if (f_ == nullptr) return;
  std::fclose(f_);
  ::unlink(tmp_.c_str());
  forget_partial(slot_);
}

bool File::open(const std::string& path, std::string& error) {
  path_ = path;
  int fd = -1;
  for (unsigned attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp_ = temp_name(path, attempt);
    fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    error = failure(path, errno);
    return false;
  }
  slot_ = note_partial(tmp_);
  f_ = fdopen(fd, "w");
  if (f_ == nullptr) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    forget_partial(slot_);
    error = failure(path, err);
    return false;
  }
  errno = 0;
  return true;
}

bool File::commit(bool ok, std::string& error) {
  if (f_ == nullptr) {
    error = failure(path_, EBADF);
    return false;
  }
  int err = errno;
  ok = ok && !std::ferror(f_);
  if (std::fflush(f_) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (std::fclose(f_) != 0 && ok) {
    ok = false;
    err = errno;
  }
  f_ = nullptr;
  if (ok && std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp_.c_str());
    error = failure(path_, err);
  }
  forget_partial(slot_);
  return ok;
}

bool write(const std::string& path, const std::function<bool(std::FILE*)>& write, std::string& error) {
  File f;
  if (!f.open(path, error)) return false;
  const bool ok = write(f.get());
  return f.commit(ok, error);
}

void remove_partial() {
  for (int i = 0; i < kSlots; ++i)
    if (const char* p = g_partial_now[i].load()) ::unlink(p);
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
      error = "cannot create the output directory " + dir + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st{};
  const bool found = ::stat(dir.c_str(), &st) == 0;
  if (!found || !S_ISDIR(st.st_mode)) {
    error = "cannot use " + dir + " as the output directory: " + (found ? "not a directory" : std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace kob::atomic_file
