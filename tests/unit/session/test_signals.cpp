// The signal handlers, each case in a forked child (it ends by its signal): the write happens on
// the watcher before the default action; a write that never finishes, a repeated signal, a signal
// on the writing thread or in a fork() child end the process without waiting; the program's own
// handler is chained with its arguments; an ignored signal stays ignored; a crash prints its line
// and dies by the same signal. The parent waits for each child with a time limit: a hang fails.
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>

#include "common/support/atomic_file.hpp"
#include "common/session/session.hpp"
#include "common/session/signals.hpp"
#include "common/support/blocked_signals.hpp"
#include "helpers.hpp"

namespace sg = kob::signals;

namespace {

const int kAll[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
int g_pipe[2] = {-1, -1};  // the child reports through it: 'W' write started, 'D' write done...
std::atomic<bool> g_write_started{false};

void note(char c) { [[maybe_unused]] ssize_t n = write(g_pipe[1], &c, 1); }

void write_quickly() { note('W'); }
void write_forever() {
  note('W');
  g_write_started.store(true);
  for (;;) pause();
}
// The same, inside an output file: the handler that gives up must leave no temporary behind.
std::string g_dir;
void write_file_forever() {
  std::string error;
  kob::atomic_file::write(g_dir + "/out.json", [](std::FILE*) {
    write_forever();
    return true;
  }, error);
}

int entries(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

bool never_here() { return false; }
bool always_here() { return true; }

sg::Options options(void (*write)(), int timeout_ms, bool (*here)() = never_here) {
  sg::Options o;
  o.write = write;
  o.writing_here = here;
  o.write_timeout_ms = timeout_ms;
  return o;
}

struct Ended {
  int status = 0;
  std::string notes;  // what the child wrote to the pipe (and stderr, when captured)
  bool hung = false;
};

// Runs body in a fork() child with default dispositions and no core dump; its return value is the
// exit code. stderr goes to the pipe too when capture_stderr.
template <class F>
Ended in_child(F body, bool capture_stderr = false) {
  Ended e;
  REQUIRE(pipe(g_pipe) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(g_pipe[0]);
    if (capture_stderr) dup2(g_pipe[1], STDERR_FILENO);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    sg::reset_for_test();
    for (int sig : kAll) signal(sig, SIG_DFL);
    _exit(body());
  }
  close(g_pipe[1]);
  for (int waited_ms = 0;; waited_ms += 10) {
    const pid_t r = waitpid(pid, &e.status, WNOHANG);
    if (r == pid) break;
    if (waited_ms > 30000) {
      kill(pid, SIGKILL);
      waitpid(pid, &e.status, 0);
      e.hung = true;
      break;
    }
    usleep(10000);
  }
  char buf[512];
  ssize_t n;
  while ((n = read(g_pipe[0], buf, sizeof buf)) > 0) e.notes.append(buf, static_cast<std::size_t>(n));
  close(g_pipe[0]);
  return e;
}

bool killed_by(const Ended& e, int sig) { return !e.hung && WIFSIGNALED(e.status) && WTERMSIG(e.status) == sig; }
bool exited(const Ended& e, int code) { return !e.hung && WIFEXITED(e.status) && WEXITSTATUS(e.status) == code; }

siginfo_t g_seen_info;
bool g_seen_reset = false;
bool g_seen_written = false;
void program_handler(int sig, siginfo_t* info, void*) {
  g_seen_info = *info;
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  g_seen_reset = now.sa_handler == SIG_DFL;
  g_seen_written = true;
}

void exit_42(int) { _exit(42); }

std::atomic<bool> g_first_entered{false};
std::atomic<bool> g_first_release{false};
void slow_first_write() {
  g_first_entered.store(true);
  while (!g_first_release.load()) usleep(1000);
  note('A');  // the first write's last step before it is done
}

}  // namespace

TEST_CASE("SIGTERM: the watcher writes, then the default action ends the process") {
  const Ended e = in_child([] {
    sg::install(options(write_quickly, 60000));
    raise(SIGTERM);
    return 0;
  });
  CHECK(killed_by(e, SIGTERM));
  CHECK(e.notes == "W");
}

TEST_CASE("a write that never finishes: the handler gives up and the signal ends the process") {
  const Ended e = in_child([] {
    sg::install(options(write_forever, 100));
    raise(SIGINT);
    return 0;
  });
  CHECK(killed_by(e, SIGINT));
  CHECK(e.notes == "W");
}

TEST_CASE("a file being written when the handler gives up leaves no temporary file") {
  const kob_test::TempDir tmp;
  REQUIRE(!tmp.path().empty());
  g_dir = tmp.path();
  const Ended e = in_child([] {
    sg::install(options(write_file_forever, 100));
    raise(SIGTERM);
    return 0;
  });
  CHECK(killed_by(e, SIGTERM));
  CHECK(e.notes == "W");
  CHECK(entries(g_dir) == 0);
}

TEST_CASE("a second signal while the first waits ends the process at once") {
  // The first waits 60 s for a write that never ends; the second (from a thread that blocks
  // every signal, so the main thread takes it) must end the process well within the 30 s limit.
  const Ended e = in_child([] {
    sg::install(options(write_forever, 60000));
    std::thread second([] {
      kob::BlockAllSignals block;
      while (!g_write_started.load()) usleep(1000);
      kill(getpid(), SIGHUP);
    });
    second.detach();
    kill(getpid(), SIGTERM);
    return 0;
  });
  CHECK(killed_by(e, SIGHUP));
  CHECK(e.notes == "W");
}

TEST_CASE("a signal on the thread that is writing waits for the write's end, then ends the process") {
  // The write (here: the code after raise) goes on; its end (end_if_deferred) ends the process.
  const Ended e = in_child([] {
    sg::install(options(write_forever, 60000, always_here));
    raise(SIGTERM);
    note('R');
    sg::end_if_deferred();
    note('X');
    return 0;
  });
  CHECK(killed_by(e, SIGTERM));
  CHECK(e.notes == "R");
}

TEST_CASE("a second signal on the thread that is writing ends the process at once") {
  const Ended e = in_child([] {
    sg::install(options(write_forever, 60000, always_here));
    raise(SIGINT);
    note('R');
    raise(SIGTERM);
    note('X');
    return 0;
  });
  CHECK(killed_by(e, SIGTERM));
  CHECK(e.notes == "R");
}

TEST_CASE("without a signal, the end of a write ends nothing") {
  const Ended e = in_child([] {
    sg::install(options(write_forever, 60000, always_here));
    sg::end_if_deferred();
    note('R');
    return 0;
  });
  CHECK(exited(e, 0));
  CHECK(e.notes == "R");
}

// Under ThreadSanitizer the grandchild's raise(SIGTERM) after our handler restored SIG_DFL ends
// in exit status 0 (its runtime's signal emulation after a multi-threaded fork), so the case is
// left to the other builds.
TEST_CASE("in a fork() child there is no watcher: the default action, at once" *
          doctest::skip(kob_test::kThreadSanitizer)) {
  const Ended e = in_child([] {
    sg::install(options(write_forever, 60000));
    const pid_t child = fork();
    if (child == 0) {
      raise(SIGTERM);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM ? 0 : 1;
  });
  CHECK(exited(e, 0));
  CHECK(e.notes == "");
}

TEST_CASE("the program's handler installed before ours is chained: siginfo, SA_RESETHAND, after the write") {
  const Ended e = in_child([] {
    struct sigaction sa {};
    sa.sa_sigaction = program_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(SIGHUP, &sa, nullptr);
    sg::install(options(write_quickly, 60000));
    raise(SIGHUP);
    struct sigaction after {};
    sigaction(SIGHUP, nullptr, &after);
    int bad = 0;
    if (!g_seen_written) bad |= 1;
    if (g_seen_info.si_signo != SIGHUP || g_seen_info.si_pid != getpid()) bad |= 2;
    if (!g_seen_reset || after.sa_handler != SIG_DFL) bad |= 4;
    return bad;
  });
  CHECK(exited(e, 0));
  CHECK(e.notes == "W");
}

TEST_CASE("an ignored signal stays ignored: no handler of ours") {
  const Ended e = in_child([] {
    signal(SIGHUP, SIG_IGN);
    sg::install(options(write_quickly, 60000));
    struct sigaction now {};
    sigaction(SIGHUP, nullptr, &now);
    raise(SIGHUP);
    return now.sa_handler == SIG_IGN ? 0 : 1;
  });
  CHECK(exited(e, 0));
  CHECK(e.notes == "");
}

TEST_CASE("the crash line names the raw trace and the kob command") {
  sg::set_crash_line("/tmp/run dir/out.kob", "/opt/kob/bin/kob");
  CHECK(sg::crash_line("SIGBUS") ==
        "kob: the program ended with SIGBUS; its events are in /tmp/run dir/out.kob: run '/opt/kob/bin/kob convert "
        "/tmp/run dir/out.kob'\n");
  CHECK(sg::crash_line("SIGTERM") == "");
  sg::set_crash_line("", "kob");  // --log-level=off
  CHECK(sg::crash_line("SIGBUS") == "");
}

TEST_CASE("a segfault prints the line once and dies by SIGSEGV; a sent one too") {
  for (bool fault : {true, false}) {
    const Ended e = in_child(
        [fault] {
          sg::set_crash_line("p.kob", "kob");
          sg::install(options(nullptr, 0));
          if (fault) {
            volatile int* volatile p = nullptr;
            *p = 1;
          }
          raise(SIGSEGV);
          return 0;
        },
        true);
    CHECK(killed_by(e, SIGSEGV));
    CHECK(e.notes == "kob: the program ended with SIGSEGV; its events are in p.kob: run 'kob convert p.kob'\n");
  }
}

TEST_CASE("a crash with the program's own handler: the line, then its handler runs") {
  const Ended e = in_child(
      [] {
        signal(SIGFPE, exit_42);
        sg::set_crash_line("p.kob", "kob");
        sg::install(options(nullptr, 0));
        raise(SIGFPE);
        return 0;
      },
      true);
  CHECK(exited(e, 42));
  CHECK(e.notes == "kob: the program ended with SIGFPE; its events are in p.kob: run 'kob convert p.kob'\n");
}

TEST_CASE("write_outputs called while another thread writes returns only once that write is done") {
  // The watcher writing after a signal while the program calls exit(): the exit must not end the
  // process mid-write. The second call is made while the first is held inside; it may only
  // return after the first has finished ('A' before 'C').
  const Ended e = in_child([] {
    // Its raw trace goes to the temporary directory (and away at the end), not into the cwd.
    const std::string prefix = kob_test::temp_path("write_twice");
    setenv("KOB_ARGS", ("--format=none --quiet --output=" + prefix).c_str(), 1);
    kob::session::ensure_started();
    kob::session::set_before_write(slow_first_write);
    std::thread first([] { kob::session::write_outputs(); });
    while (!g_first_entered.load()) usleep(1000);
    std::thread second([] {
      kob::session::write_outputs();
      note('C');
    });
    usleep(200000);  // room for a wrong early return to show; the order holds whatever the delay
    g_first_release.store(true);
    first.join();
    second.join();
    std::remove((prefix + ".kob").c_str());
    return 0;
  });
  CHECK(exited(e, 0));
  CHECK(e.notes == "AC");
}
