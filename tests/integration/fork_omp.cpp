// fork_omp MODE - an OpenMP program that forks while its worker threads exist, the way process-
// parallel scripts and launchers do. MODE says what the child does:
//   exit   2 parallel regions, then exit(3)
//   _exit  1 parallel region, then _exit(4)
//   exec   execs /bin/true (exit 0)
//   none   no fork at all (a plain run, for mpirun)
// A second argument `late` waits 1.1 s before the fork, so that the child starts in a later second
// than its parent (its start_time differs).
// The parent runs 3 parallel regions before the fork and 2 after it (while the child runs), then
// waits for the child. Deterministic stdout: the child's line (flushed before it ends), then the
// parent's. Each line gives the number of open file descriptors, so a descriptor the tool leaks
// into a child or keeps open shows up as a changed stdout. Exit status 0 when all went as planned.
#include <dirent.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "test_program_util.hpp"

// One parallel region of the default team size; the sum does not depend on the team size.
static long region(int k) {
  long sum = 0;
#pragma omp parallel reduction(+ : sum)
  {
    for (int i = omp_get_thread_num(); i < 1000; i += omp_get_num_threads()) sum += i * k;
  }
  return sum;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "none";
  const bool known = !std::strcmp(mode, "exit") || !std::strcmp(mode, "_exit") || !std::strcmp(mode, "exec") ||
                     !std::strcmp(mode, "none");
  if (!known) {
    std::fprintf(stderr, "usage: fork_omp exit|_exit|exec|none\n");
    return 2;
  }
  long parent = 0;
  for (int k = 1; k <= 3; ++k) parent += region(k);
  if (!std::strcmp(mode, "none")) {
    std::printf("parent sum %ld fds %d\n", parent, open_fds());
    return 0;
  }
  if (argc > 2 && !std::strcmp(argv[2], "late")) usleep(1'100'000);
  std::fflush(stdout);  // nothing buffered may be printed twice
  const pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  if (child == 0) {
    if (!std::strcmp(mode, "exec")) {
      execl("/bin/true", "true", static_cast<char*>(nullptr));
      _exit(127);
    }
    long sum = region(10);
    if (!std::strcmp(mode, "exit")) sum += region(20);
    std::printf("child %s sum %ld fds %d\n", mode, sum, open_fds());
    std::fflush(stdout);
    if (!std::strcmp(mode, "exit")) std::exit(3);
    _exit(4);
  }
  for (int k = 4; k <= 5; ++k) parent += region(k);
  int status = 0;
  if (waitpid(child, &status, 0) != child) {
    std::perror("waitpid");
    return 1;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("parent sum %ld fds %d child status %d\n", parent, open_fds(), code);
  const int expected = !std::strcmp(mode, "exit") ? 3 : !std::strcmp(mode, "_exit") ? 4 : 0;
  return code == expected ? 0 : 1;
}
