// A Kokkos (OpenMP backend) program that runs a known number of kernels, says so on stdout, then
// ends the way it is asked to: waiting for a signal from the test, or crashing, aborting,
// throwing, calling _exit. It may install its own handler for SIGTERM/SIGINT/SIGHUP before the
// tool is loaded (before Kokkos::initialize) or after it.
//
//   signal_victim ACTION [HANDLER] [N]
//   ACTION:  exit | wait | segv | overflow | overflow-worker | abort | throw | _exit | fork-wait
//   HANDLER: none | before-exit3 | before-siginfo-resethand | before-flag | after-flag | ignore-hup
#include <Kokkos_Core.hpp>

#include <omp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

volatile sig_atomic_t g_flag = 0;
const int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

void write_str(const char* s) { [[maybe_unused]] ssize_t n = write(STDOUT_FILENO, s, std::strlen(s)); }

void exit3(int) { _exit(3); }

void set_flag(int sig) { g_flag = sig; }

// Checks what the kernel would have given it: its own signal number in siginfo, and the
// disposition already reset to SIG_DFL (SA_RESETHAND); then lets the default action end it.
void siginfo_resethand(int sig, siginfo_t* info, void*) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  write_str(info != nullptr && info->si_signo == sig ? "handler: siginfo ok\n" : "handler: siginfo WRONG\n");
  write_str(now.sa_handler == SIG_DFL ? "handler: reset ok\n" : "handler: reset WRONG\n");
  raise(sig);
}

void install(void (*fn)(int)) {
  for (int sig : kSignals) {
    struct sigaction sa {};
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

void install_siginfo_resethand() {
  for (int sig : kSignals) {
    struct sigaction sa {};
    sa.sa_sigaction = siginfo_resethand;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(sig, &sa, nullptr);
  }
}

// Unbounded recursion the compiler cannot turn into a loop: overflows the main thread's stack.
int overflow(volatile int depth) {
  if (depth < 0) return 0;  // never: keeps the compiler from seeing an endless recursion
  volatile char frame[1024];
  frame[depth % 1024] = static_cast<char>(depth);
  return overflow(depth + 1) + frame[(depth * 7) % 1024];
}

// The same on an OpenMP worker thread. A function of its own: clang starts the OpenMP runtime at
// the entry of any function holding a parallel construct, and main must not start it (the
// "handler before the tool" cases install theirs before the runtime loads the tool).
__attribute__((noinline)) int overflow_on_worker() {
  int r = 0;
#pragma omp parallel num_threads(2) reduction(+ : r)
  if (omp_get_thread_num() == 1) r += overflow(0);
  return r;
}

void wait_for_flag() {
  const timespec step{0, 10 * 1000 * 1000};
  while (!g_flag) nanosleep(&step, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string action = argc > 1 ? argv[1] : "exit";
  const std::string handler = argc > 2 ? argv[2] : "none";
  const int n = argc > 3 ? std::atoi(argv[3]) : 7;

  if (handler == "before-exit3") install(exit3);
  if (handler == "before-siginfo-resethand") install_siginfo_resethand();
  if (handler == "before-flag") install(set_flag);
  if (handler == "ignore-hup") signal(SIGHUP, SIG_IGN);

  Kokkos::initialize(argc, argv);
  if (handler == "after-flag") install(set_flag);
  if (handler == "ignore-hup") {
    struct sigaction now {};
    sigaction(SIGHUP, nullptr, &now);
    std::printf("SIGHUP %s\n", now.sa_handler == SIG_IGN ? "still ignored" : "NOT ignored any more");
  }
  long total = 0;
  {
    Kokkos::View<long*> v("victim_view", 1000);
    for (int k = 0; k < n; ++k) {
      Kokkos::parallel_for("victim_kernel", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) += i; });
    }
    Kokkos::fence();
    auto h = Kokkos::create_mirror_view(v);
    Kokkos::deep_copy(h, v);
    for (int i = 0; i < 1000; ++i) total += h(i);
  }
  std::printf("ran %d kernels, sum %ld\n", n, total);
  std::fflush(stdout);

  if (action == "wait") {
    wait_for_flag();
    std::printf("the program saw signal %d\n", static_cast<int>(g_flag));
    Kokkos::finalize();
    return 4;
  }
  if (action == "fork-wait") {
    const pid_t child = fork();
    if (child == 0) {
      char line[64];
      std::snprintf(line, sizeof line, "child %d waiting\n", static_cast<int>(getpid()));
      write_str(line);
      wait_for_flag();
      _exit(6);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) {
      std::printf("child ended by signal %d\n", WTERMSIG(status));
    } else {
      std::printf("child exited %d\n", WEXITSTATUS(status));
    }
  }
  if (action == "segv") {
    volatile int* volatile p = nullptr;
    *p = 1;
  }
  if (action == "overflow") std::printf("%d\n", overflow(0));
  if (action == "overflow-worker") std::printf("%d\n", overflow_on_worker());
  if (action == "abort") std::abort();
  if (action == "throw") throw std::runtime_error("signal_victim: uncaught on purpose");
  if (action == "_exit") _exit(5);
  Kokkos::finalize();
  return 0;
}
