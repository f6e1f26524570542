// LD_PRELOAD helper of benchmarks/soak.py: notes the open file descriptors when the process starts
// (its constructor runs before the program's and the tool's) and again when it ends normally (its
// destructor runs after theirs: after the tool wrote its files at exit), and writes to the file
// named by KOB_FD_AUDIT one line, "fds START END", then one line per descriptor open at the end
// that was not at the start: "extra FD TARGET". A process that a signal ends writes nothing.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kMax = 1024;
bool g_open_at_start[kMax];
int g_at_start = 0;

// Whether fd is open, by the /proc listing (not fcntl: the listing's own descriptor is skipped).
template <class F>
void each_fd(F f) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return;
  const int own = dirfd(d);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd != own) f(fd);
  }
  closedir(d);
}

__attribute__((constructor(101))) void at_start() {
  each_fd([](int fd) {
    if (fd < kMax) g_open_at_start[fd] = true;
    ++g_at_start;
  });
}

__attribute__((destructor(101))) void at_end() {
  const char* path = std::getenv("KOB_FD_AUDIT");
  if (!path) return;
  char lines[8192];
  int n = 0, at_end = 0;
  char extra[6144];
  int used = 0;
  each_fd([&](int fd) {
    ++at_end;
    if (fd < kMax && g_open_at_start[fd]) return;
    char link[64], target[512];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t k = readlink(link, target, sizeof target - 1);
    target[k > 0 ? k : 0] = '\0';
    if (used < static_cast<int>(sizeof extra) - 600)
      used += std::snprintf(extra + used, sizeof extra - static_cast<std::size_t>(used), "extra %d %s\n", fd, target);
  });
  extra[used] = '\0';
  n = std::snprintf(lines, sizeof lines, "fds %d %d\n%s", g_at_start, at_end, extra);
  const int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return;
  if (write(out, lines, static_cast<std::size_t>(n < static_cast<int>(sizeof lines) ? n : sizeof lines - 1)) < 0) {
  }
  close(out);
}

}  // namespace
