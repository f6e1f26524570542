// Small helpers shared by the test programs that drive the library by hand.
#pragma once

#include <dirent.h>
#include <dlfcn.h>

// A symbol of a dlopen'ed library as a function pointer of type F (nullptr when absent).
template <class F>
inline F sym(void* h, const char* name) {
  return reinterpret_cast<F>(dlsym(h, name));
}

// How many file descriptors the process has open (entries of /proc/self/fd, the directory's own
// included): compared before and after to show the tool leaks none.
inline int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}
