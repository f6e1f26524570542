#include "common/formats/trace_window.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/support/blocked_signals.hpp"
#include "common/formats/trace_flows.hpp"

namespace kob {

namespace {

// Applies fn to every span vector that the producer nests per track.
template <class T, class Fn>
void each_nested(T& t, Fn&& fn) {
  trace::for_each_thread_spans(t, [&](auto& v, trace::SpanKind) { fn(v); });
  fn(t.omp_device_ops);
}

// Entries in the window (spans, instants, memory events...).
std::size_t entries(const Timeline& t) {
  std::size_t n = t.sections.size() + t.memory.size() + t.events.size() + t.dual_views.size() + t.omp_task_creates.size() +
                  t.omp_instants.size() + t.omp_device_loads.size();
  each_nested(t, [&](const auto& v) { n += v.size(); });
  return n;
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
// where the writing order would decide, and readers order by time, then by position in the file.
// A span of no length where the later one starts is not apart from it: in one window the longer
// of two equal starts is written first, and holds it.)
bool apart_or_nested(std::uint64_t ps, std::uint64_t pe, std::uint64_t ls, std::uint64_t le) {
  return pe < ls || (pe == ls && ps < ls) || le < ps || (ls < ps && pe < le) || (ps < ls && le < pe);
}

}  // namespace

TraceWindow::TraceWindow(TraceProducer& producer, std::size_t min_spans, bool background)
    : producer_(producer), min_spans_(min_spans), next_try_(min_spans) {
  if (!background) return;
  try {
    const BlockAllSignals blocked;  // the program's signals are for its own threads
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
  t_.omp_tasks.push_back(k);
}

std::uint32_t TraceWindow::poll(TimelineBuilder& b) {
  // Records until the window may be big enough (a record makes at most one span), at most 4096.
  std::size_t size = entries(t_);
  auto until_big = [&] { return static_cast<std::uint32_t>(std::min<std::size_t>(4096, next_try_ > size ? next_try_ - size : 1)); };
  if (size < next_try_) return until_big();
  // Big enough: a cut at the first record where one is allowed (between two kernels, say).
  if (!b.can_cut()) return 1;
  b.open_state(open_);
  if (!safe_to_cut()) {
    next_try_ = size * 2;  // rare (odd hook orders): try again later, not at every record
    return until_big();
  }
  hold_back();
  write_window(b.so_far());
  // What was held back starts the next window.
  t_.omp_parallels.insert(t_.omp_parallels.end(), held_.omp_parallels.begin(), held_.omp_parallels.end());
  t_.kernels.insert(t_.kernels.end(), held_.kernels.begin(), held_.kernels.end());
  t_.omp_implicit_tasks.insert(t_.omp_implicit_tasks.end(), held_.omp_implicit_tasks.begin(), held_.omp_implicit_tasks.end());
  held_.omp_parallels.clear();
  held_.kernels.clear();
  held_.omp_implicit_tasks.clear();
  size = entries(t_);
  return until_big();
}

// Late spans per track: open ones (end ~0) and those to be held back; then every span of the
// window that stays is checked against those of its track.
bool TraceWindow::safe_to_cut() {
  held_teams_.clear();
  held_teams_.insert(open_.waiting_teams.begin(), open_.waiting_teams.end());
  held_kernels_.clear();
  for (const OmpParallelSpan& p : t_.omp_parallels)
    if (held(p) && p.kernel != 0) held_kernels_.insert(p.kernel);
  // A held kernel's arrows go to every region it opened (user OpenMP inside a Serial kernel opens
  // several): those wait with it, and the implicit tasks of all of them (below).
  for (const OmpParallelSpan& p : t_.omp_parallels)
    if (p.kernel != 0 && held_kernels_.count(p.kernel)) held_teams_.insert(p.id);
  for (const OmpTargetSpan& x : t_.omp_targets)
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
  each_nested(t_, [&](const auto& v) {
    for (const auto& s : v)
      if (held(s)) late(s.track, s.start, s.end);
  });
  bool ok = true;
  each_nested(t_, [&](const auto& v) {
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
    from.erase(keep, from.end());
  };
  split(t_.omp_parallels, held_.omp_parallels);
  split(t_.kernels, held_.kernels);
  split(t_.omp_implicit_tasks, held_.omp_implicit_tasks);
}

void TraceWindow::write_window(const Timeline& known) {
  t_.tracks = known.tracks;
  t_.omp_devices = known.omp_devices;
  t_.t0 = known.t0;
  ++windows_;
  largest_ = std::max(largest_, entries(t_));
  creates_before_ += t_.omp_task_creates.size();
  next_try_ = min_spans_;
  if (!writer_.joinable()) {
    produce(t_);
    return;
  }
  // The writer takes this window when it is done with the last one; this thread goes on with
  // the emptied vectors it gave back.
  wait_idle();
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::swap(t_, handed_);
    has_work_ = true;
  }
  cv_.notify_all();
  clear_window(t_);
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
