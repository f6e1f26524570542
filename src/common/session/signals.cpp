#include "common/session/signals.hpp"

#include <csignal>
#include <pthread.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <memory>
#include <mutex>
#include <vector>

#include "common/support/atomic_file.hpp"
#include "common/support/blocked_signals.hpp"
#include "common/support/deferred_signal.hpp"
#include "common/support/log.hpp"

namespace kob::signals {

namespace {

// Everything a handler reads is set up before the handler is installed and lives until exit;
// handlers call only async-signal-safe functions (write, sigaction, raise, pthread_sigmask,
// sem_post, clock_gettime, nanosleep, getpid).
struct Slot {
  int sig = 0;
  const char* name = "";
  bool installed = false;
  struct sigaction old {};
};

Slot g_term[] = {{SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGHUP, "SIGHUP"}};
Slot g_crash[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"}, {SIGABRT, "SIGABRT"}};
constexpr int kCrashCount = sizeof g_crash / sizeof g_crash[0];

Options g_options;
std::mutex g_install_mu;
// The process that has the watcher thread; in a fork() child a signal takes the default path.
std::atomic<long> g_watcher_pid{0};
sem_t g_request;
// 0: no write asked for; 1: asked, under way; 2: finished (or given up by the watcher).
std::atomic<int> g_write_state{0};
std::atomic<bool> g_crash_reported{false};
// A termination signal that arrived on the thread writing the outputs (a write at Kokkos finalize
// or exit): the write goes on, and the signal ends the process once it is done (end_if_deferred).
// 0: none; else the signal number, its siginfo in g_deferred_info.
std::atomic<int> g_deferred{0};
siginfo_t g_deferred_info;

// The crash lines, one per crash signal, replaced whole when the prefix changes: the handler
// reads one consistent set through the pointer. Old sets are kept (a handler may be reading one).
struct CrashLines {
  std::string line[kCrashCount];
};
std::atomic<const CrashLines*> g_lines{nullptr};
std::mutex g_lines_mu;
std::vector<std::unique_ptr<CrashLines>>& all_lines() {
  static auto* v = new std::vector<std::unique_ptr<CrashLines>>();  // never destroyed: read at exit
  return *v;
}

alignas(16) char g_alt_stack[64 * 1024];

Slot* find(Slot* slots, int count, int sig) {
  for (int i = 0; i < count; ++i)
    if (slots[i].sig == sig) return &slots[i];
  return nullptr;
}

bool is_default(const struct sigaction& a) { return a.sa_handler == SIG_DFL; }

void set_default(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
}

// What the kernel would have done with the signal had we not been there: the program's handler
// (with its mask and flags) or the default action.
void end_as_without_tool(int sig, siginfo_t* info, void* context, const struct sigaction& old) {
  if (is_default(old)) {
    // Ending now: a file still being written (the wait gave up) leaves no temporary behind.
    if (g_write_state.load() != 2) atomic_file::remove_partial();
    set_default(sig);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    raise(sig);  // terminates (SIGTERM, SIGINT, SIGHUP: default action is to end the process)
    return;
  }
  if (old.sa_flags & SA_RESETHAND) set_default(sig);
  sigset_t mask = old.sa_mask, saved;
  if (!(old.sa_flags & SA_NODEFER)) sigaddset(&mask, sig);
  pthread_sigmask(SIG_BLOCK, &mask, &saved);
  if (old.sa_flags & SA_SIGINFO) {
    old.sa_sigaction(sig, info, context);
  } else {
    old.sa_handler(sig);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

std::int64_t monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void wait_for_write(int timeout_ms) {
  const std::int64_t deadline = monotonic_ms() + timeout_ms;
  const timespec step{0, 1000000};
  while (g_write_state.load() != 2 && monotonic_ms() < deadline) nanosleep(&step, nullptr);
}

void on_termination(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const Slot* slot = find(g_term, 3, sig);
  if (slot == nullptr) return;
  // This thread holds a lock the write needs: the signal comes back when it lets go.
  if (deferred_signal::defer(sig)) {
    errno = saved_errno;
    return;
  }
  // Only the first signal of a process with a watcher waits for the write; a repeated one (Ctrl-C
  // twice), one in a fork() child, or one that interrupted the write itself ends the process now.
  const bool mine = static_cast<long>(getpid()) == g_watcher_pid.load();
  const bool writing = mine && g_options.writing_here && g_options.writing_here();
  if (writing) {
    // This thread is writing the files: waiting would wait for itself, ending now would lose
    // them. The first such signal is kept for end_if_deferred; a second ends the process now.
    int none = 0;
    if (g_deferred.compare_exchange_strong(none, sig)) {
      if (info != nullptr) g_deferred_info = *info;
      errno = saved_errno;
      return;
    }
  }
  int idle = 0;
  if (mine && !writing && g_write_state.compare_exchange_strong(idle, 1)) {
    sem_post(&g_request);
    wait_for_write(g_options.write_timeout_ms);
  }
  end_as_without_tool(sig, info, context, slot->old);
  errno = saved_errno;
}

void on_crash(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  Slot* slot = find(g_crash, kCrashCount, sig);
  if (slot == nullptr) return;
  if (!g_crash_reported.exchange(true)) {
    if (const CrashLines* lines = g_lines.load()) {
      const std::string& l = lines->line[slot - g_crash];
      if (!l.empty()) [[maybe_unused]] ssize_t n = write(STDERR_FILENO, l.data(), l.size());
    }
  }
  sigaction(sig, &slot->old, nullptr);
  // A fault (si_code > 0) recurs by itself when we return, now under the previous disposition,
  // with its own siginfo; a sent signal (kill, raise, abort) is sent again. It is blocked while
  // we run, so it arrives as we return.
  if (info == nullptr || info->si_code <= 0) raise(sig);
  errno = saved_errno;
}

void* watcher(void*) {
  for (;;) {
    if (sem_wait(&g_request) != 0) continue;  // EINTR
    if (g_write_state.load() == 1) {
      g_options.write();
      g_write_state.store(2);
    }
  }
  return nullptr;
}

void install_one(Slot& slot, void (*handler)(int, siginfo_t*, void*), int flags) {
  if (sigaction(slot.sig, nullptr, &slot.old) != 0) return;
  if (slot.old.sa_handler == SIG_IGN) return;  // the program does not want it: neither do we
  struct sigaction sa {};
  sa.sa_sigaction = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | flags | (slot.old.sa_flags & (SA_RESTART | SA_ONSTACK));
  slot.installed = sigaction(slot.sig, &sa, nullptr) == 0;
}

void give_alt_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
  stack_t ss{};
  ss.ss_sp = g_alt_stack;
  ss.ss_size = sizeof g_alt_stack;
  sigaltstack(&ss, nullptr);
}

// Another thread's alternate stack, made when the thread first records and unmapped when it ends
// (only if it is still the thread's alternate stack then: the program may have set its own). A
// pthread key's destructor, not a thread_local object: that would register a per-thread exit
// record with the C++ runtime (an allocation the leak checker sees in a fork child).
constexpr std::size_t kThreadAltStack = 64 * 1024;
void drop_thread_alt_stack(void* base) {
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && current.ss_sp == base) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    if (sigaltstack(&off, nullptr) != 0) return;  // still in use: leave it mapped
  }
  munmap(base, kThreadAltStack);
}
pthread_key_t g_alt_stack_key;
bool g_alt_stack_key_made = [] { return pthread_key_create(&g_alt_stack_key, drop_thread_alt_stack) == 0; }();
std::atomic<bool> g_crash_installed{false};

bool start_watcher() {
  if (sem_init(&g_request, 0, 0) != 0) return false;
  pthread_t tid;
  int rc;
  {
    BlockAllSignals block;
    rc = pthread_create(&tid, nullptr, watcher, nullptr);
  }
  if (rc != 0) return false;
  pthread_detach(tid);
  pthread_setname_np(tid, "kob-signals");
  g_write_state.store(0);
  g_watcher_pid.store(static_cast<long>(getpid()));
  return true;
}

}  // namespace

bool install(const Options& options) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  g_options = options;
  give_alt_stack();
  for (auto& slot : g_crash)
    if (!slot.installed) install_one(slot, on_crash, SA_ONSTACK | SA_RESETHAND);
  g_crash_installed.store(true);
  if (options.write == nullptr) return true;
  if (g_watcher_pid.load() != static_cast<long>(getpid()) && !start_watcher()) {
    log::warn("cannot start the signal watcher thread; the output files are not written if SIGTERM, SIGINT or SIGHUP ends the program");
    return false;
  }
  // SA_NODEFER: a second signal of the same kind reaches the handler while it waits, and ends the
  // process at once.
  for (auto& slot : g_term)
    if (!slot.installed) install_one(slot, on_termination, SA_NODEFER);
  return true;
}

void give_thread_alt_stack() {
  if (!g_crash_installed.load(std::memory_order_relaxed) || !g_alt_stack_key_made) return;
  if (pthread_getspecific(g_alt_stack_key) != nullptr) return;
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;  // it has one
  void* p = mmap(nullptr, kThreadAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  stack_t ss{};
  ss.ss_sp = p;
  ss.ss_size = kThreadAltStack;
  if (sigaltstack(&ss, nullptr) != 0 || pthread_setspecific(g_alt_stack_key, p) != 0) {
    drop_thread_alt_stack(p);
    return;
  }
}

void set_crash_line(const std::string& raw_trace_path, const std::string& kob_command) {
  auto lines = std::make_unique<CrashLines>();
  for (int i = 0; i < kCrashCount && !raw_trace_path.empty(); ++i) {
    lines->line[i] = std::string("kob: the program ended with ") + g_crash[i].name + "; its events are in " +
                     raw_trace_path + ": run '" + kob_command + " convert " + raw_trace_path + "'\n";
  }
  std::lock_guard<std::mutex> lock(g_lines_mu);
  g_lines.store(lines.get());
  all_lines().push_back(std::move(lines));
}

std::string crash_line(const char* signal_name) {
  const CrashLines* lines = g_lines.load();
  if (lines == nullptr) return "";
  for (int i = 0; i < kCrashCount; ++i)
    if (std::string(g_crash[i].name) == signal_name) return lines->line[i];
  return "";
}

void end_if_deferred() {
  const int sig = g_deferred.load();
  if (sig == 0) return;
  if (const Slot* slot = find(g_term, 3, sig)) {
    g_write_state.store(2);  // the files are written: nothing partial to remove
    end_as_without_tool(sig, &g_deferred_info, nullptr, slot->old);
  }
}

void reset_for_test() {
  for (auto* slots : {static_cast<Slot*>(g_term), static_cast<Slot*>(g_crash)}) {
    const int n = slots == g_term ? 3 : kCrashCount;
    for (int i = 0; i < n; ++i) {
      if (slots[i].installed) sigaction(slots[i].sig, &slots[i].old, nullptr);
      slots[i].installed = false;
    }
  }
  g_write_state.store(0);
  g_deferred.store(0);
  g_crash_reported.store(false);
  g_crash_installed.store(false);
}

}  // namespace kob::signals
