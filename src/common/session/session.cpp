#include "common/session/session.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <mutex>

#include "common/support/atomic_file.hpp"
#include "common/record/clock.hpp"
#include "common/record/intern.hpp"
#include "common/record/module_map.hpp"
#include "common/support/json.hpp"
#include "common/support/log.hpp"
#include "common/session/mpi_attach.hpp"
#include "common/session/output_name.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/record_fold.hpp"
#include "common/record/recorder.hpp"
#include "common/session/run_outputs.hpp"
#include "common/session/run_report.hpp"
#include "common/session/signals.hpp"
#include "common/timeline/timeline.hpp"
#include "common/support/install_layout.hpp"
#include "common/support/version.hpp"

namespace kob {

std::atomic<bool> g_device_trace_region_set{false};
std::atomic<const RegionListener*> g_region_listener{nullptr};

namespace {
std::atomic<const RegionListener*> g_registered_region_listener{nullptr};

void update_region_listener() {
  g_region_listener.store(g_device_trace_region_set.load() ? g_registered_region_listener.load() : nullptr);
}
}  // namespace

namespace session {

namespace {

struct State {
  std::mutex mu;
  Config env_config;  // KOB_ARGS then KOKKOS_TOOLS_ARGS
  Config config;      // env_config with the command line applied over it
  KokkosInfo kokkos;
  bool ompt_active = false;
  bool ompt_seen = false;
  std::string omp_runtime;
  std::string omp_runtime_code;  // CodeRange's text (timeline.hpp)
  std::vector<std::pair<std::string, std::string>> metadata;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> other;
  std::chrono::system_clock::time_point start_wall;
  std::string wall_reference;  // clock::wall_reference() at the start
  std::atomic<bool> written{false};  // claimed by the first write_outputs call
  // The claiming call is done: a second call (exit() while the signal watcher writes) waits for it.
  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  std::atomic<long> writer_tid{0};
  std::atomic<bool> help_run{false};
  std::vector<std::string> env_args;  // the options of KOB_ARGS then KOKKOS_TOOLS_ARGS, as given
  std::vector<std::string> cmd_args;  // and those of the command line
  // The prefix written under instead of the options' one, where nothing could be written (the
  // current folder's, else $TMPDIR's): "" while the options' prefix serves.
  std::string fallback;
  // The PMPI layer: attached at start; its facts (empty: not measured); a write put off until
  // MPI_Finalize.
  bool mpi_attached = false;
  bool mpi_finalizing = false;
  bool write_deferred = false;
  int mpi_rank = -1, mpi_size = 0;
  std::string mpi_clock[2];  // start, end: "LOCAL_NS OFFSET_NS RTT_NS"
};

State& state() {
  static State* s = new State();  // never destroyed: used from exit handlers
  return *s;
}

std::once_flag g_start_once;
std::atomic<long> g_start_pid{0};  // the process that started the tool; another pid: a fork child
std::atomic<long> g_owner_pid{0};  // the process whose events the buffers hold
std::atomic<bool> g_fork_pending{false};  // between before_fork and the parent or child handler
std::atomic<void (*)()> g_before_write{nullptr};
std::atomic<int> g_omp_initial_device{-1};
// How long a signal handler waits for the files, and a second write_outputs call for the first.
constexpr int kSignalWriteTimeoutMs = 10000;
constexpr auto kSecondWriterWait = std::chrono::seconds(30);

long this_tid() { return static_cast<long>(syscall(SYS_gettid)); }

// Async-signal-safe (an atomic load and gettid).
bool writing_here() { return state().writer_tid.load() == this_tid(); }

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// `kob` beside the library (the build tree), or in bindir as installed relative to the library's
// folder (install_layout.hpp), else the bare name.
std::string kob_command() {
  const std::string lib = library_path();
  const auto slash = lib.rfind('/');
  if (slash == std::string::npos) return "kob";
  const std::string dir = lib.substr(0, slash);
  for (const std::string& rel : {std::string("/kob"), std::string("/" KOB_BINDIR_FROM_LIBDIR "/kob")}) {
    char real[4096];
    const std::string candidate = dir + rel;
    if (is_executable_file(candidate) && realpath(candidate.c_str(), real)) return real;
  }
  return "kob";
}

// The crash handler's line names the raw trace of this process under the current prefix.
void refresh_crash_line() {
  try {
    if (log::level() == log::Level::Off) {
      signals::set_crash_line("", "");
    } else {
      signals::set_crash_line(output_prefix() + ".kob", kob_command());
    }
  } catch (...) {
  }
}

void report(const std::vector<std::string>& errors) {
  for (const auto& e : errors) log::warn(e);
}

// The groups, and kHotKokkosDirect where the Kokkos hooks may record at once.
std::uint32_t hot_events(std::uint32_t groups) {
  return groups | ((groups & kGroupKokkos) != 0 && !g_hot.kokkos_chained ? kHotKokkosDirect : 0);
}

void apply_config(State& s, const Config& c) {
  s.config = c;
  log::set_level(c.log_level);
  g_hot.events.store(hot_events(c.events), std::memory_order_relaxed);
  g_device_trace_region_set.store(!c.device_trace_region.empty());
  update_region_listener();
  recorder::set_memory_limit(c.memory_limit_mib << 20);
  raw::set_max_size(c.max_trace_size_mib << 20);
}

output_name::Context name_context();

// Opens the raw trace under the prefix the options give now, or moves it there; the prefix's
// folder is made first. Where the file cannot be made there (no such folder and none can be made,
// no permission, a read-only file system), the run is not lost: its files go to the current
// folder, else $TMPDIR (or /tmp), under the prefix's last part, with one line saying where.
void place_raw_trace(State& s) {
  const output_name::Resolved name = output_name::resolve(s.config.output, name_context());
  std::string why;
  const bool folder = name.directory.empty() || atomic_file::make_directories(name.directory, why);
  const std::string open_path = raw::path();
  if (!open_path.empty()) {  // the options changed: move the file (it stays where it is, said, when it cannot)
    if (folder && raw::rename_to(name.prefix + ".kob")) {
      s.fallback.clear();
    } else {
      s.fallback = open_path.substr(0, open_path.size() - 4);  // rename_to leaves it there when it fails
      if (!folder) log::warn("cannot write under " + name.prefix + " (" + why + "): this run's files stay " + s.fallback + ".*");
    }
    return;
  }
  if (folder && raw::open(name.prefix + ".kob", mpi_rank(), &why)) {
    s.fallback.clear();
    return;
  }
  // Made but not written (a full disk, a file size limit): said by the raw trace; another folder
  // would fare no better.
  if (why.empty()) return;
  const std::string base = name.prefix.substr(name.prefix.rfind('/') == std::string::npos ? 0 : name.prefix.rfind('/') + 1);
  const char* tmp = std::getenv("TMPDIR");
  for (const std::string& dir : {std::string(), std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/"}) {
    std::string unused;
    if (dir + base == name.prefix || !raw::open(dir + base + ".kob", mpi_rank(), &unused)) continue;
    s.fallback = dir + base;
    log::warn("cannot write under " + name.prefix + " (" + why + "): this run's files go to " + s.fallback + ".* instead");
    return;
  }
  log::warn("cannot write under " + name.prefix + " (" + why + "), nor in the current folder or $TMPDIR: the run is recorded in memory only");
}

// The tool options as given, in the order they apply (environment, then command line), a line each.
std::string given_options(const State& s) {
  std::string args;
  for (const auto* list : {&s.env_args, &s.cmd_args})
    for (const std::string& a : *list) args += (args.empty() ? "" : "\n") + a;
  return args;
}

// The converter's facts about the options: the arguments in the order they apply, and the prefix.
void record_options(const State& s) {
  raw::add_kv("kob", "args", given_options(s));
  raw::add_kv("kob", "prefix", output_prefix());
}

void at_exit() { write_outputs(); }

std::string exe_name() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "program";
  buf[n] = 0;
  const char* slash = std::strrchr(buf, '/');
  return slash ? slash + 1 : buf;
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// fork(): no lock of ours may be inherited held by a thread the child does not have. Taken in
// one order (session, registry, intern table: the order the code nests them in) before the
// fork, released after it in both processes.
void before_fork() {
  g_fork_pending.store(true);
  state().mu.lock();
  state().done_mu.lock();
  recorder::before_fork();
  intern_before_fork();
  raw::before_fork();
}

void after_fork_parent() {
  raw::after_fork_parent();
  intern_after_fork();
  recorder::after_fork_parent();
  state().done_mu.unlock();
  state().mu.unlock();
  g_fork_pending.store(false);
}

// The child records its own events only, from now on, and writes them under a name of its own
// (output_prefix) at its exit; after exec or _exit it writes nothing.
void after_fork_child() {
  const long pid = static_cast<long>(getpid());
  if (g_owner_pid.exchange(pid) == pid) return;  // done already, from after_fork_check
  intern_after_fork();
  raw::after_fork_child(output_prefix() + ".kob");
  recorder::after_fork_child();
  State& s = state();
  s.start_wall = std::chrono::system_clock::now();
  // The child's raw trace (made later) starts with the parent's KV entries; these two are the
  // child's own, as its exit write names them (later entries win).
  raw::add_kv("kob", "start_time", start_time_iso());
  raw::add_kv("kob", "prefix", output_prefix());
  // A write under way in the parent at the fork has no thread here to finish it: nobody waits.
  if (s.written.load() && !s.done) s.done = true;
  s.writer_tid.store(0);
  s.done_mu.unlock();
  s.mu.unlock();
  log::after_fork_child();
  g_fork_pending.store(false);
  refresh_crash_line();
}

void start() {
  State& s = state();
  g_start_pid.store(getpid());
  g_owner_pid.store(getpid());
  s.start_wall = std::chrono::system_clock::now();
  clock::init();
  s.wall_reference = clock::wall_reference();
  Config c;
  std::vector<std::string> errors;
  for (const char* var : {"KOB_ARGS", "KOKKOS_TOOLS_ARGS"}) {
    if (const char* v = std::getenv(var)) {
      std::vector<std::string> errs;
      const std::vector<std::string> args = split_args(v);
      s.env_args.insert(s.env_args.end(), args.begin(), args.end());
      c.apply(args, errs);
      for (auto& e : errs) errors.push_back(std::string(var) + ": " + e);
    }
  }
  s.env_config = c;
  apply_config(s, c);
  report(errors);
  if (c.help) log::plain(help_text());
  // The raw trace: from now on every event reaches the disk while the program runs.
  place_raw_trace(s);
  raw::add_kv("kob", "tool_version", KOB_VERSION);
  raw::add_kv("kob", "exe", exe_name());
  raw::add_kv("kob", "host", hostname());
  raw::add_kv("kob", "start_time", start_time_iso());
  raw::add_kv("kob", "clock", clock::name());
  raw::add_kv("kob", "wall_reference", s.wall_reference);
  record_options(s);
  // Keep this library mapped until exit even if Kokkos dlcloses it: the exit handler lives here.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&at_exit), &info) && info.dli_fname) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
  std::atexit(at_exit);
  if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) != 0)
    log::warn("cannot register the fork handlers; a forked child may hang or write its parent's events");
  refresh_crash_line();
  signals::Options so;
  so.write = write_outputs;
  so.writing_here = writing_here;
  so.write_timeout_ms = kSignalWriteTimeoutMs;
  signals::install(so);
  recorder::set_new_thread_hook(signals::give_thread_alt_stack);
  // Last: the layer may hand its start offsets over right away, into the raw trace opened above.
  const bool mpi = mpi_attach::attach();
  std::lock_guard<std::mutex> lock(s.mu);
  s.mpi_attached = mpi;
}

// Called with s.mu held by a finalize hook that would write now: false when the write waits for
// the PMPI layer's MPI_Finalize instead (then made pending).
bool defer_for_mpi(State& s) {
  if (!s.mpi_attached || s.mpi_finalizing) return false;
  s.write_deferred = true;
  return true;
}

// The facts the outputs name, as the raw trace's KV entries hold them (the same keys: kob convert
// makes the same files from those).
Facts session_facts() {
  modules::poll();
  const std::vector<modules::Module> loaded = modules::seen();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Facts f;
  const std::string kob(fact::kSection);
  auto add = [&](std::string_view key, const std::string& value) { f.push_back({kob, std::string(key), value}); };
  add(fact::kToolVersion, KOB_VERSION);
  add(fact::kPid, std::to_string(getpid()));
  add(fact::kRank, std::to_string(mpi_rank()));
  add(fact::kHost, hostname());
  add(fact::kExe, exe_name());
  add(fact::kStartTime, start_time_iso());
  add(fact::kClock, clock::name());
  add(fact::kWallReference, s.wall_reference);
  add(fact::kKokkosLoadSequence, std::to_string(s.kokkos.load_sequence));
  add(fact::kKokkosInterface, std::to_string(s.kokkos.interface_version));
  std::string devices;
  for (std::size_t i = 0; i < s.kokkos.device_ids.size(); ++i) devices += (i ? "," : "") + std::to_string(s.kokkos.device_ids[i]);
  add(fact::kKokkosDevices, devices);
  add(fact::kOmpRuntime, s.omp_runtime);
  add(fact::kOmpRuntimeCode, s.omp_runtime_code);
  if (s.mpi_rank >= 0) {
    add(fact::kMpiRank, std::to_string(s.mpi_rank));
    add(fact::kMpiSize, std::to_string(s.mpi_size));
  }
  if (!s.mpi_clock[0].empty()) add(fact::kMpiClockStart, s.mpi_clock[0]);
  if (!s.mpi_clock[1].empty()) add(fact::kMpiClockEnd, s.mpi_clock[1]);
  add(fact::kArgs, given_options(s));
  add_config_facts(s.config, f);
  for (const auto& [k, v] : s.metadata) f.push_back({"meta", k, v});
  for (const auto& [section, kvs] : s.other)
    for (const auto& [k, v] : kvs) f.push_back({"other:" + section, k, v});
  for (std::size_t i = 0; i < loaded.size(); ++i)
    f.push_back({std::string(modules::kSection), std::to_string(i + 1), modules::format(loaded[i])});
  return f;
}

output_name::Context name_context() {
  output_name::Context ctx;
  ctx.pid = static_cast<long>(getpid());
  ctx.rank = mpi_rank();
  ctx.host = hostname();
  ctx.exe = exe_name();
  ctx.forked_child = ctx.pid != g_start_pid.load();
  return ctx;
}

}  // namespace

void ensure_started() { std::call_once(g_start_once, start); }

void set_kokkos_chained(bool chained) {
  g_hot.kokkos_chained = chained;
  if (chained) g_hot.events.fetch_and(~kHotKokkosDirect, std::memory_order_relaxed);
  else g_hot.events.store(hot_events(state().config.events), std::memory_order_relaxed);
}

void after_fork_check() {
  if (g_fork_pending.load() && static_cast<long>(getpid()) != g_owner_pid.load()) after_fork_child();
}

const Config& config() { return state().config; }

void apply_command_line(const std::vector<std::string>& args) {
  ensure_started();
  State& s = state();
  Config c = s.env_config;
  std::vector<std::string> errors;
  c.apply(args, errors);
  const bool help_now = c.help && !s.config.help;
  apply_config(s, c);
  s.cmd_args = args;
  place_raw_trace(s);
  record_options(s);
  report(errors);
  refresh_crash_line();
  if (help_now) log::plain(help_text());
}

void kokkos_initialised(int load_sequence, std::uint64_t interface_version, std::vector<std::uint64_t> device_ids) {
  ensure_started();
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.kokkos.initialised = true;
    s.kokkos.load_sequence = load_sequence;
    s.kokkos.interface_version = interface_version;
    s.kokkos.device_ids = std::move(device_ids);
  }
  raw::add_kv("kob", "kokkos_load_sequence", std::to_string(load_sequence));
  raw::add_kv("kob", "kokkos_interface_version", std::to_string(interface_version));
  std::string devs;
  for (std::uint64_t d : s.kokkos.device_ids) devs += (devs.empty() ? "" : ",") + std::to_string(d);
  raw::add_kv("kob", "kokkos_devices", devs);
  // Loaded by Kokkos alone into a process with an OpenMP runtime that never asked for us: the
  // OpenMP half of the picture is missing, and only the user can fix that.
  if (!s.ompt_seen && dlsym(RTLD_DEFAULT, "omp_get_max_threads") != nullptr) {
    const char* otl = std::getenv("OMP_TOOL_LIBRARIES");
    const char* pre = std::getenv("LD_PRELOAD");
    const bool named = (otl && std::strstr(otl, "kokkos_ompt_bridge")) || (pre && std::strstr(pre, "kokkos_ompt_bridge"));
    if (!named) {
      log::warn_once(log::Once::KokkosWithoutOmpt,
                     "OpenMP events are not recorded: also set OMP_TOOL_LIBRARIES=" + library_path());
    }
  }
}

void kokkos_finalised() {
  State& s = state();
  bool write_now;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.kokkos.finalised = true;
    write_now = !s.ompt_active && !defer_for_mpi(s);
  }
  if (write_now) write_outputs();
}

const KokkosInfo& kokkos() { return state().kokkos; }

void ompt_started(const std::string& runtime_version) {
  ensure_started();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.ompt_active = true;
  s.ompt_seen = true;
  s.omp_runtime = runtime_version;
  raw::add_kv("kob", "openmp_runtime", runtime_version);
}

void ompt_finalised() {
  State& s = state();
  bool write_now;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.ompt_active = false;
    write_now = (!s.kokkos.initialised || s.kokkos.finalised) && !defer_for_mpi(s);
  }
  if (write_now) write_outputs();
}

void mpi_clock_sync(bool end, int rank, int size, std::int64_t local_ns, std::int64_t offset_ns, std::int64_t rtt_ns) {
  State& s = state();
  const std::string value = std::to_string(local_ns) + " " + std::to_string(offset_ns) + " " + std::to_string(rtt_ns);
  std::lock_guard<std::mutex> lock(s.mu);
  s.mpi_rank = rank;
  s.mpi_size = size;
  s.mpi_clock[end ? 1 : 0] = value;
  raw::add_kv(std::string(fact::kSection), std::string(fact::kMpiRank), std::to_string(rank));
  raw::add_kv(std::string(fact::kSection), std::string(fact::kMpiSize), std::to_string(size));
  raw::add_kv(std::string(fact::kSection), std::string(end ? fact::kMpiClockEnd : fact::kMpiClockStart), value);
}

void mpi_finalizing() {
  State& s = state();
  bool write_now;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.mpi_finalizing = true;
    write_now = s.write_deferred;
  }
  if (write_now) write_outputs();
}

bool ompt_active() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.ompt_active;
}

void add_metadata(const std::string& key, const std::string& value) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.metadata.emplace_back(key, value);
  raw::add_kv("meta", key, value);
}

void add_other_data(const std::string& section, const std::string& key, const std::string& value) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.other[section].emplace_back(key, value);
  raw::add_kv("other:" + section, key, value);
}

std::vector<std::pair<std::string, std::string>> metadata() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.metadata;
}

std::vector<std::pair<std::string, std::string>> other_data(const std::string& section) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.other.find(section);
  return it == s.other.end() ? std::vector<std::pair<std::string, std::string>>{} : it->second;
}

void set_before_write(void (*fn)()) { g_before_write.store(fn); }

void set_omp_runtime_code(const std::string& range) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.omp_runtime_code = range;
  }
  raw::add_kv(fact::kSection, fact::kOmpRuntimeCode, range);
}

void set_region_listener(const RegionListener* listener) {
  g_registered_region_listener.store(listener);
  update_region_listener();
}

void set_omp_initial_device(int device_num) {
  g_omp_initial_device.store(device_num);
  raw::add_kv("kob", "omp_initial_device", std::to_string(device_num));
}
int omp_initial_device() { return g_omp_initial_device.load(); }

bool outputs_written() { return state().written.load(); }

void help_run() {
  state().help_run.store(true);
  raw::discard();
}

namespace {

// Before raw-rec: the records still in the in-memory buffers, read in place.
class BufferThread : public ThreadSource {
 public:
  explicit BufferThread(const ThreadBuffer* b) : b_(b) {
    index = b->index;
    os_tid = b->os_tid;
    omp_thread_type = b->omp_thread_type.load(std::memory_order_relaxed);
    omp_proc = b->omp_proc.load(std::memory_order_relaxed);
    omp_place = b->omp_place.load(std::memory_order_relaxed);
    dropped = b->dropped();
  }
  std::size_t chunk_count() const override { return 1; }
  void read_chunk(std::size_t, std::vector<Record>& out) const override {
    out.clear();
    b_->for_each([&](const Record& r) { out.push_back(r); });
    out.resize(fold::unfold_all(out, out.size()));
  }

 private:
  const ThreadBuffer* b_;
};

// Marks the claiming write_outputs call finished, however it leaves.
struct WriteDone {
  ~WriteDone() {
    State& s = state();
    {
      std::lock_guard<std::mutex> lock(s.done_mu);
      s.done = true;
    }
    s.done_cv.notify_all();
    s.writer_tid.store(0);
    signals::end_if_deferred();
  }
};

}  // namespace

void write_outputs() {
  State& s = state();
  if (s.written.exchange(true)) {
    // Written or being written: the process must not end while another thread writes (exit()
    // during the write asked for by a signal); bounded, and never waiting for our own thread.
    if (writing_here()) return;
    std::unique_lock<std::mutex> lock(s.done_mu);
    s.done_cv.wait_for(lock, kSecondWriterWait, [&] { return s.done; });
    return;
  }
  s.writer_tid.store(this_tid());
  WriteDone done_at_end;
  if (s.help_run.load()) return;
  try {
    if (auto fn = g_before_write.load()) fn();
    // The raw trace gets its last records, the threads, a calibration point and END; the files
    // are then made from it, as kob convert makes them.
    const bool complete = raw::finish();
    recorder::close();
    clock::finish_calibration();
    const Config& c = s.config;
    RunData run;
    run.initial_device_num = omp_initial_device();
    raw::Reader reader;
    std::vector<std::unique_ptr<BufferThread>> buffers;
    std::string error;
    const std::string raw_path = raw::path();
    // --format=none makes no file from the trace: the in-memory counts say what was dropped, and
    // the trace is not read back (an exit cost that grew with the run: a read per block).
    const bool read_back = c.formats != 0;
    if (read_back && !raw_path.empty() && reader.open(raw_path, error)) {
      // Not complete (a write failed at the end): what reached the file, with its LOST entries,
      // still says more than the few records left in memory.
      if (!complete) log::warn("the raw trace " + raw_path + " could not be completed; the files hold what reached it");
      reader.apply_clock();
      run.threads = reader.threads();
      run.run_end = complete ? clock::to_ns(reader.end_tick()) : clock::to_ns(clock::now());
      run.intact = reader.damage().offset == raw::Reader::kNoDamage && reader.cut_tail_bytes() == 0;
    } else {
      if (read_back && !raw_path.empty()) log::warn(error);
      if (!read_back && !complete && !raw_path.empty()) log::warn("the raw trace " + raw_path + " could not be completed");
      for (const ThreadBuffer* b : recorder::threads()) buffers.push_back(std::make_unique<BufferThread>(b));
      for (const auto& b : buffers) run.threads.push_back(b.get());
      run.run_end = clock::to_ns(clock::now());
    }
    const output_name::Resolved name = output_name::resolve(c.output, name_context());
    if (!name.note.empty()) log::warn(name.note);
    OutputRequest req;
    req.prefix = output_prefix();
    req.directory = s.fallback.empty() ? name.directory : std::string();
    req.directory_reported = true;  // said when the raw trace was placed
    req.formats = c.formats;
    req.print_summary = !c.quiet;
    // Under `kob run` kob's last line names the files: one such line per run; --quiet: none.
    req.print_written = !c.quiet && std::getenv(run_report::kVariable) == nullptr;
    req.next_step = true;
    req.raw_trace = raw_path;
    req.jobs = c.jobs;
    std::vector<std::string> files = write_run_outputs(run, session_facts(), req);
    if (!raw_path.empty()) files.insert(files.begin(), raw_path);
    run_report::append(static_cast<long>(getpid()), files);  // for `kob run`, when it started us
  } catch (const std::exception& e) {
    log::error(std::string("could not write the output: ") + e.what());
  } catch (...) {
    log::error("could not write the output");
  }
}

int mpi_rank() {
  return output_name::rank_from_environment(+[](const char* n) -> const char* { return std::getenv(n); });
}

std::string output_prefix() {
  State& s = state();
  return !s.fallback.empty() ? s.fallback : output_name::resolve(s.config.output, name_context()).prefix;
}

std::string library_path() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&at_exit), &info) && info.dli_fname) {
    char real[4096];
    if (realpath(info.dli_fname, real)) return real;
    return info.dli_fname;
  }
  return "libkokkos_ompt_bridge.so";
}

std::string start_time_iso() {
  const std::time_t tt = std::chrono::system_clock::to_time_t(state().start_wall);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace session
}  // namespace kob
