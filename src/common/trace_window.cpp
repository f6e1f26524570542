#include "common/trace_window.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/signals.hpp"

namespace kob {

namespace {

// Applies fn to every span vector that the producer nests per track.
template <class T, class Fn>
void each_nested(T& t, Fn&& fn) {
  fn(t.kernels);
  fn(t.fences);
  fn(t.regions);
  fn(t.deep_copies);
  fn(t.omp_parallels);
  fn(t.omp_implicit_tasks);
  fn(t.omp_works);
  fn(t.omp_syncs);
  fn(t.omp_tasks);
  fn(t.omp_mutexes);
  fn(t.omp_targets);
  fn(t.omp_data_ops);
  fn(t.omp_submits);
  fn(t.omp_device_ops);
}

// Empties the window, keeping the vectors' memory for the next one.
void clear_window(Timeline& t) {
  each_nested(t, [](auto& v) { v.clear(); });
  t.sections.clear();
  t.memory.clear();
  t.events.clear();
  t.dual_views.clear();
  t.omp_task_creates.clear();
  t.omp_instants.clear();
  t.omp_device_loads.clear();
}

// Whether a span already written (p) and one written later (l, end ~0: still open) give the same
// trace as if both were in one window: apart, or one strictly inside the other. (Equal times are
// where the writing order would decide, and readers order by time, then by position in the file.)
bool apart_or_nested(std::uint64_t ps, std::uint64_t pe, std::uint64_t ls, std::uint64_t le) {
  return pe <= ls || le < ps || (ls < ps && pe < le) || (ps < ls && le < pe);
}

}  // namespace

TraceWindow::TraceWindow(TraceProducer& producer, std::size_t min_spans, bool background)
    : producer_(producer), min_spans_(min_spans), next_try_(min_spans) {
  if (!background) return;
  try {
    const signals::BlockAllSignals blocked;  // the program's signals are for its own threads
    writer_ = std::thread([this] { writer_loop(); });
  } catch (...) {
    // No thread: the windows are written in the caller's thread.
  }
}

TraceWindow::~TraceWindow() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
}

void TraceWindow::writer_loop() {
  Timeline doing;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return has_work_ || stop_; });
      if (!has_work_) return;
      std::swap(doing, handed_);  // handed_ gets the emptied vectors of the last window back
      has_work_ = false;
      busy_ = true;
    }
    try {
      produce(doing);
    } catch (...) {
      writer_failed_ = true;  // (memory) the trace files are then reported as not written
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    cv_.notify_all();
  }
}

void TraceWindow::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !has_work_ && !busy_; });
}

void TraceWindow::produce(Timeline& w) {
  sort_spans(w);
  producer_.window(w);
  clear_window(w);
}

void TraceWindow::omp_task(const OmpTaskSpan& s) {
  OmpTaskSpan k = s;
  // Creates are numbered over the run; the window numbers its own from 0. A cut never falls
  // while a task is alive, so its create is in this window.
  if (k.create != OmpTaskSpan::kNoCreate) k.create = k.create >= creates_before_ ? k.create - creates_before_ : OmpTaskSpan::kNoCreate;
  add(w_.omp_tasks, k);
}

std::uint32_t TraceWindow::poll(const TimelineBuilder& b) {
  // Records until the window may be big enough (a record makes at most one span), at most 4096.
  auto until_big = [&] { return static_cast<std::uint32_t>(std::min<std::size_t>(4096, next_try_ > size_ ? next_try_ - size_ : 1)); };
  if (size_ < next_try_) return until_big();
  // Big enough: a cut at the first record where one is allowed (between two kernels, say).
  if (!b.can_cut()) return 1;
  b.open_state(open_);
  if (!safe_to_cut()) {
    next_try_ = size_ * 2;  // rare (odd hook orders): try again later, not at every record
    return until_big();
  }
  hold_back();
  write_window(b.so_far());
  // What was held back starts the next window.
  for (const OmpParallelSpan& p : held_.omp_parallels) add(w_.omp_parallels, p);
  for (const KernelSpan& k : held_.kernels) add(w_.kernels, k);
  for (const OmpImplicitTaskSpan& i : held_.omp_implicit_tasks) add(w_.omp_implicit_tasks, i);
  held_.omp_parallels.clear();
  held_.kernels.clear();
  held_.omp_implicit_tasks.clear();
  return until_big();
}

// Late spans per track: open ones (end ~0) and those to be held back; then every span of the
// window that stays is checked against those of its track.
bool TraceWindow::safe_to_cut() {
  held_teams_.clear();
  held_teams_.insert(open_.waiting_teams.begin(), open_.waiting_teams.end());
  held_kernels_.clear();
  for (const OmpParallelSpan& p : w_.omp_parallels)
    if (held(p) && p.kernel != 0) held_kernels_.insert(p.kernel);
  // A held kernel's arrows go to every region it opened (user OpenMP inside a Serial kernel opens
  // several): those wait with it, and the implicit tasks of all of them (below).
  for (const OmpParallelSpan& p : w_.omp_parallels)
    if (p.kernel != 0 && held_kernels_.count(p.kernel)) held_teams_.insert(p.id);
  for (const OmpTargetSpan& x : w_.omp_targets)
    if (x.kernel != 0 && held_kernels_.count(x.kernel)) return false;  // its arrows reach further: no cut here
  open_teams_.clear();
  open_teams_.insert(open_.open_parallels.begin(), open_.open_parallels.end());
  open_teams_.insert(held_teams_.begin(), held_teams_.end());
  for (auto& v : late_) v.clear();
  auto late = [&](std::uint32_t track, std::uint64_t start, std::uint64_t end) {
    if (late_.size() <= track) late_.resize(track + 1);
    late_[track].push_back({start, end});
  };
  constexpr std::uint64_t kOpen = std::numeric_limits<std::uint64_t>::max();
  for (const builder::OpenSpanAt& o : open_.open) late(o.track, o.start, kOpen);
  each_nested(w_, [&](const auto& v) {
    for (const auto& s : v)
      if (held(s)) late(s.track, s.start, s.end);
  });
  bool ok = true;
  each_nested(w_, [&](const auto& v) {
    for (const auto& s : v) {
      if (!ok) return;
      if (s.track >= late_.size() || late_[s.track].empty() || held(s)) continue;
      for (const auto& [ls, le] : late_[s.track])
        if (!apart_or_nested(s.start, s.end, ls, le)) ok = false;
    }
  });
  return ok;
}

void TraceWindow::hold_back() {
  auto split = [&](auto& from, auto& to) {
    auto keep = std::stable_partition(from.begin(), from.end(), [&](const auto& s) { return !held(s); });
    to.insert(to.end(), std::make_move_iterator(keep), std::make_move_iterator(from.end()));
    size_ -= static_cast<std::size_t>(from.end() - keep);
    from.erase(keep, from.end());
  };
  split(w_.omp_parallels, held_.omp_parallels);
  split(w_.kernels, held_.kernels);
  split(w_.omp_implicit_tasks, held_.omp_implicit_tasks);
}

void TraceWindow::write_window(const Timeline& known) {
  w_.tracks = known.tracks;
  w_.omp_devices = known.omp_devices;
  w_.t0 = known.t0;
  ++windows_;
  largest_ = std::max(largest_, size_);
  creates_before_ += w_.omp_task_creates.size();
  size_ = 0;
  next_try_ = min_spans_;
  if (!writer_.joinable()) {
    produce(w_);
    return;
  }
  // The writer takes this window when it is done with the last one; this thread goes on with
  // the emptied vectors it gave back.
  wait_idle();
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::swap(w_, handed_);
    has_work_ = true;
  }
  cv_.notify_all();
  clear_window(w_);
}

void TraceWindow::finish(const Timeline& rest) {
  write_window(rest);
  rest_.tracks = rest.tracks;
  rest_.omp_devices = rest.omp_devices;
  rest_.t0 = rest.t0;
}

bool TraceWindow::end(const std::string& other_data_json) {
  if (writer_.joinable()) wait_idle();
  const bool ok = producer_.end(rest_, other_data_json);
  return ok && !writer_failed_;
}

}  // namespace kob
