// Small helpers shared by the test programs that drive the library by hand.
#pragma once

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

// A symbol of a dlopen'ed library as a function pointer of type F (nullptr when absent).
template <class F>
inline F sym(void* h, const char* name) {
  return reinterpret_cast<F>(dlsym(h, name));
}

// How many file descriptors the process has open (entries of /proc/self/fd, the directory's own
// included): compared before and after to show the tool leaks none. The one descriptor the tool
// holds by design while the run goes on, on its raw trace (PREFIX.kob, close-on-exec, closed in a
// fork child), is not counted; any other is.
inline int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char link[64], target[4096];
      std::snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
      ssize_t k = readlink(link, target, sizeof target - 1);
      // " (deleted)": another process of the same prefix put its own raw trace under the name.
      if (k > 10 && std::memcmp(target + k - 10, " (deleted)", 10) == 0) k -= 10;
      const bool raw_trace = k > 4 && std::memcmp(target + k - 4, ".kob", 4) == 0;
      if (!raw_trace) ++n;
    }
    closedir(d);
  }
  return n;
}
