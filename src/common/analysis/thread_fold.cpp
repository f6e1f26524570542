#include "common/analysis/thread_fold.hpp"

#include <algorithm>
#include <utility>

#include "common/analysis/summary_fold_constructs.hpp"
#include "common/record/intern.hpp"
#include "common/record/record_fields.hpp"
#include "common/timeline/builder_parts.hpp"
#include "common/timeline/omp_names.hpp"

namespace kob::engine {

namespace {

using Category = OmpConstructStats::Category;
constexpr std::uint32_t construct_kind(Category c, std::uint16_t kind) { return (static_cast<std::uint32_t>(c) << 16) | kind; }

using builder::find_top;  // the timeline builder's stack rule, shared

constexpr std::uint16_t kBarrierImplicitWorkshare = 8;
// The sync kinds implicit_whole leaves to the general way: a work construct's barrier, and the
// explicit ones (summary_fold_detail::explicit_sync), which close_sync marks for place_constructs.
constexpr std::uint32_t kNotWhole = 1u << kBarrierImplicitWorkshare | summary_fold_detail::kExplicitSyncKinds;

// v.emplace_back(), inlined (called, it took about 22 Ir a row, callgrind): its growth is not.
template <class T>
[[gnu::noinline]] void grow(std::vector<T>& v) {
  v.reserve(std::max<std::size_t>(16, 2 * v.capacity()));
}
template <class T, class... A>
[[gnu::always_inline]] inline T& append(std::vector<T>& v, A&&... a) {
  if (v.size() == v.capacity()) [[unlikely]]
    grow(v);
  [[clang::always_inline]] return v.emplace_back(std::forward<A>(a)...);
}

// Removes v[i]: mostly the last one (what ends is mostly the innermost), without a move.
template <class V>
[[gnu::always_inline]] inline void remove_at(V& v, std::size_t i) {
  if (i + 1 == v.size()) v.pop_back();
  else v.erase(v.begin() + long(i));
}

}  // namespace

ThreadFold::ThreadFold(std::uint32_t t, int thread_type, CodeRange omp_runtime_code, bool with_rows,
                       const std::vector<std::uint8_t>* keep_names)
    : track(t), omp_thread_type(thread_type), runtime_code_(omp_runtime_code), with_rows_(with_rows), keep_names_(keep_names) {}

bool ThreadFold::kept(std::uint32_t name) {
  if (keep_names_ == nullptr) return true;
  if (name >= keep_names_->size()) {
    decline("a kernel or region name the trace's table does not hold");
    return true;
  }
  return (*keep_names_)[name] != 0;
}

// A damaged file whose thread goes on past a kernel that never ends there (its end, and what came
// between, lost): a kernel, or a parallel region of another kernel (`kernel`, 0: none), begins
// while it is open. The builder's figures of the open kernel's regions, waiting for its span,
// expire on such a span (SummaryFold's expire_waits); not followed here: declines.
bool ThreadFold::past_lost_kernel_end(std::uint64_t kernel) {
  if (open_kernels_.empty() || open_kernels_.back().id == kernel) return false;
  decline("a damaged file's thread goes on past a kernel's lost end");
  return true;
}

// Odd orders the builder ignores, counted out of the handlers that inline them. The builder
// looks a parallel end's region up over all threads: its id is kept, for the join to tell one
// still open on another thread (unended_parallels) from one never begun.
void ThreadFold::ignore(Ignored what, std::uint64_t id) {
  switch (what) {
    case Ignored::kImplicitEnd: ++implicit_ends_unbegun; break;
    case Ignored::kParallelEnd:
      ++parallel_ends_unbegun;
      unbegun_parallel_ends.push_back(id);
      break;
  }
}

void ThreadFold::decline(const char* why) {
  if (why_.empty()) why_ = why;
}

void ThreadFold::hand_over(EpochRows& out, bool last) {
  out.track = track;
  // Swapped, not copied: the rows change hands, and each side keeps reusing the other's memory
  // (made as large as this epoch's at once, so that no vector grows by copying once per slot).
  const auto move = [](auto& from, auto& to) {
    to.clear();
    std::swap(from, to);
    if (from.capacity() < to.size()) from.reserve(to.capacity());
  };
  move(parallels, out.parallels);
  move(unended_parallels, out.unended_parallels);
  move(implicits, out.implicits);
  move(ordered, out.ordered);
  move(kernel_times, out.kernel_times);
  move(open_waits, out.open_waits);
  move(open_syncs, out.open_syncs);
  move(unended_works, out.unended_works);
  move(pieces, out.pieces);
  move(parts, out.parts);
  move(nested_implicits, out.nested_implicits);
  move(nested_pieces, out.nested_pieces);
  move(nested_parts, out.nested_parts);
  move(task_creates, out.task_creates);
  move(task_stretches, out.task_stretches);
  // The pieces and parts of the implicit tasks still open stay with them, renumbered from the
  // outermost one's (a nested one's lie after its parent's).
  if (OpenImplicit* t = last ? nullptr : outer_task()) {
    const std::uint32_t base_pieces = t->pieces, base_parts = t->parts;
    pieces.assign(out.pieces.begin() + base_pieces, out.pieces.end());
    parts.assign(out.parts.begin() + base_parts, out.parts.end());
    out.pieces.resize(base_pieces);
    out.parts.resize(base_parts);
    if (last_work_.part != kNone) last_work_.part = last_work_.part >= base_parts ? last_work_.part - base_parts : kNone;
    for (OpenImplicit& o : implicit_)
      if (!o.initial) {
        o.pieces -= base_pieces;
        o.parts -= base_parts;
      }
  } else {
    last_work_.part = kNone;
  }
  out.targets = target_records != 0;
  out.outside_parallels = outside_parallels_;
  out.outside_syncs = outside_syncs_;
  outside_parallels_ = false;
  outside_syncs_ = !pieces.empty() && outside_syncs_;  // those of the tasks still open stay
  out.open_tasks.clear();
  for (const OpenImplicit& o : implicit_)
    if (!o.initial) out.open_tasks.push_back(o.parallel_id);
  out.hits.clear();
  for (; handed_hits_ < hits.size(); ++handed_hits_) {
    const ConstructHit& h = hits[handed_hits_];
    out.hits.push_back({h.codeptr, h.first_end, h.first_seq, h.kind});
  }
  out.kernels.clear();
  for (; handed_kernels_ < kernels.size(); ++handed_kernels_) {
    const KernelPart& k = kernels[handed_kernels_];
    out.kernels.push_back({k.name, k.kind, k.space, k.kept});
  }
}

ThreadFold::OpenImplicit* ThreadFold::worker_task() {
  for (std::size_t i = implicit_.size(); i-- > 0;)
    if (!implicit_[i].initial) return &implicit_[i];
  return nullptr;
}

// The work constructs still open at the end (a run cut short or ended inside a loop's body; libomp's
// own masked region on a hidden-helper thread), outermost first as OmpMatcher::finish closes them:
// each to unended_works, its part among its implicit task's made here, for the last join to close.
// False where one lies outside its task (a nested region's open inside it: declined).
bool ThreadFold::open_works(bool cut) {
  OpenImplicit* t = worker_task();
  for (const OpenWork& w : work_) {
    if (t == nullptr || t->parallel_id != w.parallel_id) return false;
    tasks_in_work(w.start);
    const bool has_row = with_rows_ && w.kernel == 0 && w.codeptr != 0;
    const std::uint32_t p = work_part(*t, w.type, has_row, w.codeptr);
    unended_works.push_back({w.type, hidden_helper, has_row ? w.codeptr : 0, w.start, cut ? std::max(last_ns, w.start) : 0, w.parallel_id,
                             p - t->parts});
  }
  work_.clear();
  return true;
}

ThreadFold::OpenImplicit* ThreadFold::outer_task() {
  for (OpenImplicit& t : implicit_)
    if (!t.initial) return &t;
  return nullptr;
}

[[gnu::always_inline]] inline void ThreadFold::kernel_begin(const Event& e) {
  using F = fields::Kernel;
  const std::uint32_t name = F::name.get(e);
  const KernelKind kind = F::kind.get(e);
  const std::uint32_t devid = F::devid.get(e);
  const std::uint32_t space = devid >> 17;
  if (name >= kernel_by_name_.size()) [[unlikely]] {
    // Ids past the table (names a cut file lost) read as ""; one far past it is a damaged
    // record, which must not size this array (a flipped id asked for 16 GiB).
    if (name >= kob::names().size() + kNamesPastTable) return decline("a kernel name id far past the trace's table");
    kernel_by_name_.resize(std::size_t(name) + 1, kNone);
  }
  std::uint32_t p = kernel_by_name_[name];
  while (p != kNone && (kernels[p].kind != kind || kernels[p].space != space)) p = kernels[p].next;
  if (p == kNone) {
    p = static_cast<std::uint32_t>(kernels.size());
    KernelPart k;
    k.name = name;
    k.kind = kind;
    k.space = space;
    k.next = kernel_by_name_[name];
    k.kept = kept(name);
    kernels.push_back(k);
    kernel_by_name_[name] = p;
  }
  const std::uint64_t id = F::id.get(e);
  for (const OpenKernel& k : open_kernels_)
    if (k.id == id) return decline("a kernel begun with the id of one still open");
  if (damaged_) [[unlikely]]
    if (past_lost_kernel_end(id)) return;
  append(open_kernels_, OpenKernel{id, e.ns, p, devid});
}

[[gnu::always_inline]] inline void ThreadFold::kernel_end(const Event& e) {
  const std::uint64_t id = fields::Kernel::id.get(e);
  OpenKernel k;
  // Mostly the innermost: popped at once, else looked for below it.
  if (!open_kernels_.empty() && open_kernels_.back().id == id) [[likely]] {
    k = open_kernels_.back();
    open_kernels_.pop_back();
  } else if (!take_open_kernel(id, k)) {
    return;
  }
  KernelPart& p = kernels[k.part];
  const std::uint64_t d = e.ns - k.start;
  // As SummaryFold::kernel: the device of the earliest start; the rest summed (kernel_figures, by
  // hand: through it the event loop took 11 Ir a kernel more, callgrind of the 10^4-kernel trace).
  if (p.calls == 0 || k.start < p.first_start) {
    p.first_start = k.start;
    p.devid = k.devid;
  }
  if (p.calls == 0) p.min = d;
  ++p.calls;
  p.total += d;
  p.min = std::min(p.min, d);
  p.max = std::max(p.max, d);
  if (p.kept) [[likely]]
    append(kernel_times, KernelTimes{e.ns, k.start, track, seq()});
  if (keep_calls_) [[unlikely]]
    add_call(kernel_calls, k.part, d);
}

// The innermost open kernel of that id on this thread, size_t(-1) when none is.
std::size_t ThreadFold::open_kernel(std::uint64_t id) const {
  std::size_t i = open_kernels_.size();
  while (i-- > 0 && open_kernels_[i].id != id) {
  }
  return i;
}

// The part of a region's kernel that is not the innermost open one (parallel_begin): one open
// below it, or none here (a league's team: on another thread); false when the region is not taken.
bool ThreadFold::kernel_part_below(ParallelRow& r) {
  const std::size_t i = open_kernel(r.kernel);
  if (i == std::size_t(-1)) {
    if (damaged_ && past_lost_kernel_end(r.kernel)) return false;
    r.kernel_part = ParallelRow::kOtherThread;
    return true;
  }
  if (damaged_ && past_lost_kernel_end(r.kernel)) return false;  // not the innermost kernel's
  r.kernel_part = open_kernels_[i].part;
  return true;
}

// A kernel's end that is not the innermost's (kernel_end): its begin taken from below, out of the
// event loop.
bool ThreadFold::take_open_kernel(std::uint64_t id, OpenKernel& k) {
  const std::size_t i = open_kernel(id);
  if (i == std::size_t(-1)) {
    decline("a kernel end with no begin on its thread");
    return false;
  }
  k = open_kernels_[i];
  remove_at(open_kernels_, i);
  return true;
}

void ThreadFold::kernel_figures(const OpenKernel& k, std::uint64_t d) {
  KernelPart& p = kernels[k.part];
  // As SummaryFold::kernel: the device of the earliest start; the rest summed.
  if (p.calls == 0 || k.start < p.first_start) {
    p.first_start = k.start;
    p.devid = k.devid;
  }
  if (p.calls == 0) p.min = d;
  ++p.calls;
  p.total += d;
  p.min = std::min(p.min, d);
  p.max = std::max(p.max, d);
  if (keep_calls_) [[unlikely]]
    add_call(kernel_calls, k.part, d);
}

void ThreadFold::region_push(const Event& e) {
  const std::uint32_t name = fields::Named::name.get(e);
  const std::uint32_t parent = open_regions_.empty() ? kNone : open_regions_.back().node;
  std::uint32_t n = parent == kNone ? (regions.empty() ? kNone : 0) : regions[parent].first_child;
  // Roots are chained from node 0 through next_sibling (node 0 is the first root made).
  while (n != kNone && (regions[n].name != name || regions[n].parent != parent)) n = regions[n].next_sibling;
  if (n == kNone) {
    n = static_cast<std::uint32_t>(regions.size());
    RegionNode r;
    r.parent = parent;
    r.name = name;
    r.depth = static_cast<std::uint32_t>(open_regions_.size());
    r.kept = kept(name);
    if (parent == kNone) {
      if (n != 0) {  // append to the roots' chain
        std::uint32_t last = 0;
        while (regions[last].next_sibling != kNone) last = regions[last].next_sibling;
        regions[last].next_sibling = n;
      }
    } else {
      r.next_sibling = regions[parent].first_child;
      regions[parent].first_child = n;
    }
    regions.push_back(r);
  }
  append(open_regions_, OpenRegion{n, e.ns, 0});
}

void ThreadFold::region_pop(const Event& e) {
  if (open_regions_.empty()) {  // as the builder: ignored
    ++region_pops_unpushed;
    return;
  }
  end_region(e.ns);
}

void ThreadFold::end_region(std::uint64_t end) {
  const OpenRegion r = open_regions_.back();
  open_regions_.pop_back();
  const std::uint64_t d = end - r.start;
  RegionNode& n = regions[r.node];
  if (n.calls == 0) n.first_end = end;
  ++n.calls;  // (a region left out: counted as such when the threads are merged)
  if (!n.kept) [[unlikely]]
    return;
  n.inclusive += d;
  n.exclusive += d - std::min(r.children, d);
  // Its time is the exclusive time's share of the kept region that holds it (SummaryFold::region:
  // a region's children are the kept regions it holds directly).
  for (std::size_t i = open_regions_.size(); i-- > 0;)
    if (regions[open_regions_[i].node].kept) [[likely]] {
      open_regions_[i].children += d;
      break;
    }
  if (keep_calls_) [[unlikely]]
    add_call(region_calls, r.node, d);
}

void ThreadFold::deep_copy_end(const Event& e) {
  const std::uint64_t id = fields::DeepCopy::id.get(e);
  std::size_t i = open_copies_.size();
  while (i-- > 0 && open_copies_[i].id != id) {
  }
  if (i == std::size_t(-1)) return decline("a deep copy end with no begin on its thread");
  const OpenCopy c = open_copies_[i];
  remove_at(open_copies_, i);
  end_copy(c, e.ns);
  // The target data ops it caused are credited to it in time order (SummaryFold::target_copy).
  OrderedRow m;
  m.time = e.ns;
  m.track = track;
  m.kind = OrderedRow::DeepCopy;
  m.seq = seq();
  m.ptr = c.id;
  m.bytes = c.bytes;
  m.space = c.dst_space;
  m.name = c.dst_name;
  m.src_space = c.src_space;
  m.src_name = c.src_name;
  m.start = c.start;
  ordered.push_back(m);
}

void ThreadFold::end_copy(const OpenCopy& c, std::uint64_t end) {
  const std::uint64_t d = end - c.start;
  CopyStats& st = copies[{c.dst_space, c.src_space}];
  ++st.calls;
  st.bytes += c.bytes;
  st.time += d;
  auto& site = copy_sites[{c.dst_name, c.src_name, c.dst_space, c.src_space, c.bytes}];
  ++site.first;
  site.second += d;
}

[[gnu::always_inline]] inline void ThreadFold::hit(std::uint32_t kind, std::uint64_t codeptr, std::uint64_t dur, std::uint64_t wait,
                                                   std::uint64_t end) {
  // Mostly the construct of the hit before (one loop, region after region): checked first.
  std::uint32_t i = last_hit_;
  if (i >= hits.size() || hits[i].codeptr != codeptr || hits[i].kind != kind) i = find_hit(kind, codeptr, end, seq());
  ConstructHit& h = hits[i];
  ++h.calls;
  h.total += dur;
  h.wait += wait;
  if (keep_calls_) [[unlikely]]
    add_call(hit_calls, i, dur);
}

std::uint32_t ThreadFold::find_hit(std::uint32_t kind, std::uint64_t codeptr, std::uint64_t end, std::uint64_t seq) {
  // Open addressing, at most half full.
  if (2 * (hits.size() + 1) > hit_slots_.size()) {
    hit_slots_.assign(std::max<std::size_t>(64, 4 * (hits.size() + 1)), kNone);
    const std::size_t mask = hit_slots_.size() - 1;
    for (std::uint32_t i = 0; i < hits.size(); ++i) {
      std::size_t s = static_cast<std::size_t>(((hits[i].codeptr ^ (std::uint64_t(hits[i].kind) << 40)) * 0x9e3779b97f4a7c15ull) >> 20) & mask;
      while (hit_slots_[s] != kNone) s = (s + 1) & mask;
      hit_slots_[s] = i;
    }
  }
  const std::size_t mask = hit_slots_.size() - 1;
  std::size_t s = static_cast<std::size_t>(((codeptr ^ (std::uint64_t(kind) << 40)) * 0x9e3779b97f4a7c15ull) >> 20) & mask;
  for (;; s = (s + 1) & mask) {
    const std::uint32_t i = hit_slots_[s];
    if (i == kNone) break;
    if (hits[i].codeptr == codeptr && hits[i].kind == kind) return last_hit_ = i;
  }
  hit_slots_[s] = last_hit_ = static_cast<std::uint32_t>(hits.size());
  ConstructHit& h = hits.emplace_back();
  h.codeptr = codeptr;
  h.kind = kind;
  h.first_end = end;
  h.first_seq = seq;
  return last_hit_;
}

void ThreadFold::add_call(std::vector<std::vector<std::uint64_t>>& calls, std::uint32_t i, std::uint64_t ns) {
  if (i >= calls.size()) calls.resize(std::size_t(i) + 1);
  calls[i].push_back(ns);
}

// Locks, critical sections, atomics and ordered blocks, matched on the thread as OmpMatcher matches
// them: a wait from mutex_acquire to mutex_acquired, a hold from there to mutex_released, a nest
// lock set again while held from nest_lock begin to end. A release on another thread than the
// acquire's (an untied task moved) needs the other threads' holds in time order: declined.
void ThreadFold::mutex_acquire(const Event& e) {
  using M = fields::OmpMutex;
  const std::uint16_t kind = M::kind.get(e);
  const std::uint16_t family = omp_names::mutex_family(kind);
  if (family >= kKinds) return decline("an unknown mutex kind");
  const std::uint64_t wait_id = M::wait_id.get(e);
  for (std::size_t i = acquiring_.size(); i-- > 0;) {
    if (acquiring_[i].family != family || acquiring_[i].wait_id != wait_id) continue;
    const OpenAcquire a = acquiring_[i];
    acquiring_.erase(acquiring_.begin() + long(i));
    if (a.test) mutex_span(a.family, a.kernel, a.codeptr, 0, false, false, true, e.ns, seq());  // the try failed: known now
    else ++mutex_asked_twice;  // as the builder: the first ignored
    break;
  }
  acquiring_.push_back({family, omp_names::is_test_mutex(kind), wait_id, M::kernel.get(e), M::codeptr.get(e), e.ns});
}

void ThreadFold::mutex_acquired(const Event& e) {
  using M = fields::OmpMutex;
  const std::uint16_t family = omp_names::mutex_family(M::kind.get(e));
  if (family >= kKinds) return decline("an unknown mutex kind");  // a damaged file's: no acquire checked it
  const std::uint64_t wait_id = M::wait_id.get(e);
  std::size_t i = acquiring_.size();
  while (i-- > 0 && (acquiring_[i].family != family || acquiring_[i].wait_id != wait_id)) {
  }
  if (i == std::size_t(-1)) {  // as the builder: a hold without a wait
    ++mutex_acquired_unasked;
    holds_.push_back({family, false, wait_id, M::kernel.get(e), 0, e.ns});
    return;
  }
  const OpenAcquire a = acquiring_[i];
  acquiring_.erase(acquiring_.begin() + long(i));
  mutex_span(family, a.kernel, a.codeptr, e.ns - a.start, false, false, false, e.ns, seq());
  holds_.push_back({family, false, wait_id, M::kernel.get(e), a.codeptr, e.ns});
}

void ThreadFold::mutex_released(const Event& e) {
  using M = fields::OmpMutex;
  const std::uint16_t family = omp_names::mutex_family(M::kind.get(e));
  const std::uint64_t wait_id = M::wait_id.get(e);
  std::size_t i = holds_.size();
  while (i-- > 0 && (holds_[i].nested || holds_[i].family != family || holds_[i].wait_id != wait_id)) {
  }
  if (i == std::size_t(-1)) return decline("a mutex released that its thread did not hold");
  const OpenHold h = holds_[i];
  holds_.erase(holds_.begin() + long(i));
  mutex_span(family, h.kernel, h.codeptr, e.ns - h.start, true, false, false, e.ns, seq());
}

void ThreadFold::nest_lock(const Event& e) {
  using N = fields::OmpNestLock;
  constexpr std::uint16_t kNest = 3;  // ompt_mutex_nest_lock
  const std::uint64_t wait_id = N::wait_id.get(e);
  if (N::endpoint.get(e) == 1) {  // begin: the thread sets a nest lock it already holds
    std::uint64_t codeptr = 0;
    for (std::size_t i = acquiring_.size(); i-- > 0;) {
      if (acquiring_[i].family != kNest || acquiring_[i].wait_id != wait_id) continue;
      const OpenAcquire a = acquiring_[i];
      acquiring_.erase(acquiring_.begin() + long(i));
      codeptr = a.codeptr;
      mutex_span(kNest, a.kernel, a.codeptr, e.ns - a.start, false, false, false, e.ns, seq());
      break;
    }
    holds_.push_back({kNest, true, wait_id, N::kernel.get(e), codeptr, e.ns});
    return;
  }
  std::size_t i = holds_.size();
  while (i-- > 0 && (!holds_[i].nested || holds_[i].wait_id != wait_id)) {
  }
  if (i == std::size_t(-1)) return decline("a nest lock end with no nest lock begin on its thread");
  const OpenHold h = holds_[i];
  holds_.erase(holds_.begin() + long(i));
  mutex_span(kNest, h.kernel, h.codeptr, e.ns - h.start, true, true, false, e.ns, seq());
}

void ThreadFold::mutex_span(std::uint16_t family, std::uint64_t kernel, std::uint64_t codeptr, std::uint64_t dur, bool hold, bool nested,
                            bool failed, std::uint64_t end, std::uint64_t seq) {
  // For the family and for the site's row, as the builder's spans are counted.
  MutexFigure& m = mutex[family];
  m.seen = true;
  summary_fold_detail::count_mutex(m, m.holds, dur, hold, nested, failed);
  if (!with_rows_ || kernel != 0 || codeptr == 0) return;
  const std::uint32_t i = find_hit(construct_kind(Category::Mutex, family), codeptr, end, seq);
  ConstructHit& h = hits[i];
  summary_fold_detail::count_mutex(h, h.calls, dur, hold, nested, failed);
  // kob diff's call: an outer hold, with the waits before it on this thread (ConstructRows::mutex).
  if (!keep_calls_ || nested) return;
  if (!hold) {
    lock_wait_ += dur;
  } else {
    add_call(hit_calls, i, lock_wait_ + dur);
    lock_wait_ = 0;
  }
}

// Explicit tasks, matched on the thread as OmpMatcher matches them: a stretch from the
// task_schedule that names a task as next to the one that names it as prior. What crosses threads
// (a task runs where it was not created: its creation site and time) is joined by task id.
// Cancelled and detached tasks (their counts need every thread's schedules in time order), and a
// stretch ended on another thread, decline.
namespace {
using summary_fold_detail::kTaskwaitFlag;
constexpr std::uint32_t kCancel = 3, kEarlyFulfill = 5, kLateFulfill = 6, kSwitch = 7, kTaskwaitComplete = 8;
}  // namespace

void ThreadFold::task_create(const Event& e) {
  using F = fields::OmpTaskCreate;
  TaskCreateRow c;
  c.task_id = F::task_id.get(e);
  c.time = e.ns;
  c.seq = seq();
  c.track = track;
  c.flags = F::flags.get(e);
  const std::uint64_t codeptr = F::codeptr.get(e);
  ++tasks_created;
  ++creates_since_;
  tasks_seen_ = true;
  if (with_rows_ && F::kernel.get(e) == 0 && codeptr != 0) {  // ConstructRows::task_create
    c.codeptr = codeptr;
    ++hits[find_hit(construct_kind(Category::Task, 0), codeptr, e.ns, seq())].calls;
    // Right after a create with a row and no task run between: a gap, if both sites are one row
    // (two addresses can be one place: the join tells).
    if (last_create_codeptr_ != 0 && e.ns >= last_create_time_) {
      c.prev_codeptr = last_create_codeptr_;
      c.gap = e.ns - last_create_time_;
    }
  }
  last_create_codeptr_ = c.codeptr;
  last_create_time_ = e.ns;
  task_creates.push_back(c);
  if (c.flags & kTaskwaitFlag) taskwait_creates_.push_back({c.task_id, e.ns});
}

void ThreadFold::task_schedule(const Event& e) {
  using F = fields::OmpTaskSchedule;
  const std::uint64_t prior = F::prior_task_id.get(e), next = F::next_task_id.get(e);
  if (prior != 0) task_prior(e.ns, prior, F::prior_status.get(e), next);
  if (next == 0 || declined()) return;
  for (const RunningTask& k : running_)
    if (k.task_id == next) return decline("a task_schedule starts a task already running on its thread");
  running_.push_back({next, e.ns});
}

void ThreadFold::task_prior(std::uint64_t ns, std::uint64_t prior, std::uint32_t status, std::uint64_t next) {
  // A detached task (OmpMatcher::schedule_prior): an early fulfill (omp_fulfill_event inside its
  // body, which runs on to `complete`) or a late one (after its body ended with `detach`) ends no
  // stretch; the task counts as completed once.
  if (status == kEarlyFulfill || status == kLateFulfill) [[unlikely]] {
    if (status == kLateFulfill) {
      ++tasks_completed;
    } else if (std::find(early_fulfilled_.begin(), early_fulfilled_.end(), prior) == early_fulfilled_.end()) {
      early_fulfilled_.push_back(prior);
      ++tasks_completed;
    }
    return;
  }
  if (omp_names::task_status_completes(status)) {
    const auto early = std::find(early_fulfilled_.begin(), early_fulfilled_.end(), prior);
    if (early == early_fulfilled_.end()) ++tasks_completed;
    else early_fulfilled_.erase(early);
  }
  for (std::size_t i = running_.size(); i-- > 0;) {
    if (running_[i].task_id != prior) continue;
    const std::uint64_t start = running_[i].start;
    running_.erase(running_.begin() + long(i));
    return task_stretch({prior, start, ns, seq(), track, status, false});
  }
  if (status == kTaskwaitComplete) {  // shown from its creation to the moment it is met
    for (std::size_t i = 0; i < taskwait_creates_.size(); ++i) {
      if (taskwait_creates_[i].first != prior) continue;
      const std::uint64_t created = taskwait_creates_[i].second;
      taskwait_creates_.erase(taskwait_creates_.begin() + long(i));
      return task_stretch({prior, created, std::max(ns, created), seq(), track, status, true});
    }
    return;
  }
  if (status == kSwitch && next == prior) return;  // an untied task's next part
  if (status == kCancel) {  // discarded by cancellation (the join counts it, and tells whether it had started)
    TaskStretchRow d{prior, ns, ns, seq(), track, status, false};
    d.discard = true;
    task_stretches.push_back(d);
    return;
  }
  decline("a task_schedule names as prior a task not running on its thread");
}

// A stretch ended (SummaryFold::omp_task): the thread's task work, and the row for its site's join.
void ThreadFold::task_stretch(const TaskStretchRow& k) {
  tasks_seen_ = true;
  if (!k.taskwait) {
    ++task_stretch_count;
    const std::uint64_t d = k.end - k.start;
    task_run_ += d;
    task_run_end_ = std::max(task_run_end_, k.end);
    recent_run_ += d;
    recent_end_ = std::max(recent_end_, k.end);
    last_create_codeptr_ = 0;  // a task ran: the next creation's gap holds it
  }
  task_stretches.push_back(k);
}

void ThreadFold::take_task_work(std::uint64_t start, std::uint64_t& work, bool& created) {
  if ((task_run_ | creates_since_) == 0) return;
  work = task_run_end_ > start ? task_run_ : 0;
  created = creates_since_ != 0;
  task_run_ = creates_since_ = recent_run_ = 0;
}

// The OpenMP events the loop in events() does not take itself.
[[gnu::always_inline]] inline void ThreadFold::omp_event(const Event& e) {
  const std::uint64_t ns = e.ns;
  switch (e.type) {
    case Ev::OmpThreadBegin:
      if (omp_thread_type == 0) omp_thread_type = fields::OmpThread::thread_type.get(e);
      break;
    case Ev::OmpThreadEnd: break;
    case Ev::OmpWorkBegin:
    case Ev::OmpMaskedBegin: {
      const bool masked = e.type == Ev::OmpMaskedBegin;
      OpenWork w;
      w.type = masked ? omp_names::kMasked : fields::OmpWork::work_type.get(e);
      w.parallel_id = fields::InParallel::parallel_id.get(e);
      w.kernel = fields::InParallel::kernel.get(e);
      w.codeptr = masked ? fields::OmpMasked::codeptr.get(e) : fields::OmpWork::codeptr.get(e);
      w.start = ns;
      if (w.type >= kKinds) return decline("an unknown work type");
      append(work_, w);
      break;
    }
    case Ev::OmpDispatch: {
      const std::uint16_t kind = fields::OmpDispatch::kind.get(e);
      if (kind >= kKinds) return decline("an unknown dispatch kind");
      ++dispatch[kind].count;
      break;
    }
    case Ev::OmpDependences:
      ++tasks_with_dependences;
      dependences += fields::OmpDependences::count.get(e);
      break;
    case Ev::OmpTaskDependence: ++task_dependences; break;
    case Ev::OmpLockInit: ++lock_inits; break;
    case Ev::OmpLockDestroy: ++lock_destroys; break;
    case Ev::OmpCancel: ++cancels; break;
    case Ev::OmpFlush: ++flushes; break;
    case Ev::OmpControlTool: break;
    case Ev::OmpError: ++(fields::OmpError::severity.get(e) == 2 ? errors_fatal : errors_warning); break;  // ompt_fatal
    case Ev::OmpSyncEnd: sync_end(e); break;
    case Ev::OmpSyncWaitBegin: waits_.push_back({fields::OmpSync::kind.get(e), ns}); break;
    case Ev::OmpSyncWaitEnd: wait_end(e); break;
    case Ev::OmpMutexAcquire: mutex_acquire(e); break;
    case Ev::OmpMutexAcquired: mutex_acquired(e); break;
    case Ev::OmpMutexReleased: mutex_released(e); break;
    case Ev::OmpNestLock: nest_lock(e); break;
    case Ev::OmpTaskCreate: task_create(e); break;
    case Ev::OmpTaskSchedule: task_schedule(e); break;
    case Ev::OmpDeviceRecord: decline("a device tracing record among host events"); break;  // events_with_devices takes them
    default:
      if (e.type >= Ev::OmpTargetBegin && e.type < Ev::OmpLast) target_event(e);
      else decline("an unknown OpenMP record");
      break;
  }
}

// A target offload record: to the join's time-ordered facts whole (TargetMatcher takes them there).
void ThreadFold::target_event(const Event& e) {
  OrderedRow& m = target_row(e);
  if (const std::uint64_t kernel = fields::OmpTarget::kernel.get(e); e.type == Ev::OmpTargetBegin && kernel != 0)
    for (const OpenKernel& k : open_kernels_)  // its kernel, for the regions of its league on other threads
      if (k.id == kernel) m.kernel_part = k.part;
  ++target_records;
}

// A target or device record's time-ordered fact: the record whole, at its time on the thread.
OrderedRow& ThreadFold::target_row(const Event& e) {
  OrderedRow& m = ordered.emplace_back();
  m.time = e.ns;
  m.track = track;
  m.kind = OrderedRow::Target;
  m.seq = seq();
  m.event[0] = e;
  if (e.wide()) m.event[1] = *(&e + 1);
  return m;
}

// A device tracing record (its times already host ns, in its fields; its own time when the runtime
// delivered it): the builder's TimelineBuilder::record_in. Not a host record of its thread: its
// start and end count for the run's first and last times (start 0: none), not its thread's; to
// the join's time-ordered facts, where TargetMatcher counts it per device.
void ThreadFold::device_record(const Event& e) {
  using F = fields::OmpDeviceRecord;
  if (const std::uint64_t start = F::start.get(e); start != 0) {
    t_min = std::min(t_min, start);
    t_max = std::max(t_max, std::max(start, F::end.get(e)));
  }
  target_row(e);
  ++device_records;
}

void ThreadFold::events_with_devices(const Event* begin, const Event* end) {
  const Event* from = begin;
  for (const Event* e = begin; e < end && !declined(); e = e->next()) {
    if (e->type != Ev::OmpDeviceRecord) continue;
    if (from < e) events(from, e);
    if (declined()) return;
    cells_ = cur_ = e;
    device_record(*e);
    seq_base_ += e->cells;
    from = e->next();
  }
  if (from < end) events(from, end);
}

// libomp's hidden-helper team's region, begun on this thread: it and the thread marked (out of
// parallel_begin's code: rare). False: declined.
bool ThreadFold::hidden_region(ParallelRow& r) {
  if (r.kernel != 0) {
    decline("libomp's hidden-helper team in a Kokkos kernel");
    return false;
  }
  r.hidden = true;
  r.codeptr = 0;  // no constructs row, where it ends or not (the builder's ConstructRows::parallel)
  hidden_helper = true;
  return true;
}

// A region begun at e. When its own thread's implicit task is taken whole (implicit_whole) and the
// region's end follows at once, the region is closed here without going on the stack; returns the
// last event taken.
[[gnu::always_inline]] inline const Event* ThreadFold::parallel_begin(const Event* at, const Event* end, std::uint64_t& lo,
                                                                       std::uint64_t& hi, std::uint64_t& taken) {
  const Event& e = *at;
  constexpr std::uint32_t kTeamFlag = 0x80000000;  // ompt_parallel_team
  using F = fields::OmpParallel;
  OpenParallel p;
  ParallelRow& r = p.row;
  r.id = F::parallel_id.get(e);
  r.kernel = F::kernel.get(e);
  r.requested = F::requested_team_size.get(e);
  r.flags = F::flags.get(e);
  r.level = open_non_initial_;
  r.codeptr = F::codeptr.get(e);
  r.start = e.ns;
  r.track = track;
  // libomp's hidden-helper team: its main thread, an initial thread of its own, opens one
  // outermost team region from inside the runtime (OmpMatcher::parallel_begin).
  if (r.level == 0 && (r.flags & kTeamFlag) && runtime_code_.contains(r.codeptr) && !hidden_region(r)) [[unlikely]]
    return at;
  for (const OpenParallel& o : open_parallels_)
    if (o.row.id == r.id) {
      decline("a parallel id begun twice");
      return at;
    }
  if (r.kernel != 0) {
    // Mostly the innermost kernel's; else looked for below it, out of the loop.
    if (!open_kernels_.empty() && open_kernels_.back().id == r.kernel) [[likely]]
      r.kernel_part = open_kernels_.back().part;
    else if (!kernel_part_below(r))
      return at;
  } else {
    // Its row, made here or by parallel_end, is one place_constructs looks at (EpochRows).
    outside_parallels_ = true;
    if (damaged_ && past_lost_kernel_end(0)) [[unlikely]]
      return at;
  }
  const Event* task = at->next();
  if (task < end && task->type == Ev::OmpImplicitTaskBegin) {
    std::uint64_t in_task = 0;
    const Event* last = implicit_whole(task, end, lo, hi, in_task, &r);
    const Event* x = last->next();
    if (last != task && x < end && x->type == Ev::OmpParallelEnd && fields::OmpParallel::parallel_id.get(*x) == r.id) {
      cur_ = x;
      ParallelRow& row = append(parallels, r);
      row.end = x->ns;
      row.seq = seq();
      lo = std::min(lo, x->ns);
      hi = std::max(hi, x->ns);
      taken = in_task + 2;  // the task's events, the region's end
      return x;
    }
    if (last != task) {  // the task taken, the region's end not next: the region goes on the stack
      append(open_parallels_, p);
      taken = in_task + 1;
      return last;
    }
  }
  append(open_parallels_, p);
  return at;
}

[[gnu::always_inline]] inline void ThreadFold::parallel_end(const Event& e) {
  const std::uint64_t id = fields::OmpParallel::parallel_id.get(e);
  std::size_t i = open_parallels_.size();
  while (i-- > 0 && open_parallels_[i].row.id != id) {
  }
  if (i == std::size_t(-1)) return ignore(Ignored::kParallelEnd, id);
  ParallelRow& r = append(parallels, open_parallels_[i].row);
  outside_parallels_ |= r.kernel == 0;  // (parallel_begin marks those it closes itself)
  r.end = e.ns;
  r.seq = seq();
  remove_at(open_parallels_, i);
}

[[gnu::always_inline]] inline void ThreadFold::implicit_begin(const Event& e) {
  using F = fields::OmpImplicitTask;
  OpenImplicit t{};
  t.parallel_id = F::parallel_id.get(e);
  t.start = e.ns;
  t.thread_num = F::thread_num.get(e);
  t.team_size = F::team_size.get(e);
  t.initial = (F::flags.get(e) & 1) != 0;
  t.level = open_non_initial_;
  t.pieces = static_cast<std::uint32_t>(pieces.size());
  t.parts = static_cast<std::uint32_t>(parts.size());
  t.own = false;
  for (const OpenParallel& o : open_parallels_) t.own = t.own || o.row.id == t.parallel_id;
  if (!t.initial) ++open_non_initial_;  // a nested region's task: level 1 and more
  append(implicit_, t);
}

[[gnu::always_inline]] inline void ThreadFold::implicit_end(const Event& e) {
  using F = fields::OmpImplicitTask;
  const std::uint64_t pid = F::parallel_id.get(e);
  const std::uint32_t num = F::thread_num.get(e);
  const long i = find_top(
      implicit_, [&](const OpenImplicit& x) { return x.parallel_id == pid && x.thread_num == num; },
      [&](const OpenImplicit& x) { return x.parallel_id == pid; });
  if (i < 0) return ignore(Ignored::kImplicitEnd);
  if (std::size_t(i) + 1 != implicit_.size()) return decline("implicit tasks ended out of order");
  const OpenImplicit& t = implicit_.back();
  if (t.initial) {
    ++initial_tasks;
    implicit_.pop_back();
    return;
  }
  --open_non_initial_;
  std::uint64_t task_work = 0;
  bool created_tasks = false;
  if (tasks_seen_) [[unlikely]]
    take_task_work(t.start, task_work, created_tasks);
  // The region's own thread: its task is not cut (its region ends on this thread, after it); with
  // no explicit tasks and at most one work construct (no barrier piece naming it) its figures go
  // with the region's row (its syncs were folded as they ended). The work construct's piece stays
  // in parts, named by no row: last_work_ may still name it.
  const bool one_work = t.level == 0 && t.parts + 1 == parts.size() && t.pieces == pieces.size();
  if (t.own && (t.parts == parts.size() || one_work) && task_work == 0 && !created_tasks) {
    std::size_t o = open_parallels_.size();
    while (o-- > 0 && open_parallels_[o].row.id != t.parallel_id) {
    }
    // With a work construct, a task whose region is not open here, a second task of the region on
    // this thread or libomp's hidden team's leaves a row, as before own tasks had one.
    if (o == std::size_t(-1)) [[unlikely]] {
      if (one_work) return own_row(e.ns);
      return decline("an implicit task outlived its region on its thread");
    }
    ParallelRow& p = open_parallels_[o].row;
    if (one_work && (p.own_task || p.hidden)) return own_row(e.ns);
    if (p.own_task) return decline("two implicit tasks of one region on one thread");
    const std::uint64_t dur = e.ns - t.start;
    p.own_task = true;
    p.own_team_size = t.team_size;
    p.own_dur = dur;
    p.own_wait = t.wait;
    if (one_work) take_own_work(p, parts[t.parts]);
    ++implicit_tasks;
    if (t.level == 0) busy += dur - std::min(t.wait, dur);
    pieces.resize(t.pieces);
    implicit_.pop_back();
    return;
  }
  // A row's pieces and parts are the vectors' tail from its start: a nested task's lie inside its
  // parent's, so they move apart (out of line: rare).
  if (t.level != 0) [[unlikely]]
    return nested_row(e.ns, task_work, created_tasks);
  fill_row(append(implicits), t, e.ns, task_work, created_tasks);
  implicit_.pop_back();
}

// implicit_end's row for the region's own task (level 0, no explicit tasks) with a work construct
// that cannot go with the region's row (rare): as any task's.
void ThreadFold::own_row(std::uint64_t end) {
  fill_row(append(implicits), implicit_.back(), end, 0, false);
  implicit_.pop_back();
}

// The region's own task's one work construct, with the region's row (ParallelRow::own_work).
[[gnu::always_inline]] inline void ThreadFold::take_own_work(ParallelRow& p, const WorkPiece& w) {
  p.own_work = true;
  p.own_work_row = w.has_row;
  p.own_work_loop = w.loop;
  p.own_work_type = w.type;
  p.own_work_busy = w.busy;
  p.own_work_codeptr = w.codeptr;
}

// A non-initial implicit task at level 0 whose events are at most one work construct (its begin,
// dispatches and end), then one sync region taken whole (its begin folded with its wait and end,
// record_fold.hpp; times in order) and its end, all in a row in the chunk: a worker's task in a
// small region, or the region's own thread's (most regions of the Kokkos OpenMP backend, a
// `parallel for`). Taken in one step with the effects that implicit_begin, omp_event, work_end,
// sync_begin and implicit_end have on it, in their order, without the stacks and a dispatch per
// event. Returns the task's end event, or e when the events are not of that shape, or when the
// general handlers would decline or ignore them (they then take them one by one). `taken`: the
// events it stands for besides e (a folded sync region's steps count).
// The shape is told by the event after e (kWork: a work construct's begin), so that the code for
// the one without a work construct (the Kokkos backend's) carries none of the other's.
[[gnu::always_inline]] inline const Event* ThreadFold::implicit_whole(const Event* e, const Event* end, std::uint64_t& lo, std::uint64_t& hi,
                                                                       std::uint64_t& taken, ParallelRow* region) {
  const Event* s = e->next();
  if (s >= end) return e;
  if (s->type == Ev::OmpWorkBegin) return implicit_whole<true>(e, s, end, lo, hi, taken, region);
  return implicit_whole<false>(e, s, end, lo, hi, taken, region);
}

template <bool kWork>
[[gnu::always_inline]] inline const Event* ThreadFold::implicit_whole(const Event* e, const Event* s, const Event* end, std::uint64_t& lo,
                                                                       std::uint64_t& hi, std::uint64_t& taken, ParallelRow* region) {
  using T = fields::OmpImplicitTask;
  using S = fields::OmpSync;
  const Event* wb = nullptr;  // a work construct's begin, and its end
  const Event* wx = nullptr;
  unsigned dispatch_kinds = 0;  // its dispatches' kinds or-ed: one below kKinds when each is
  if constexpr (kWork) {
    wb = s;
    wx = s->next();
    for (; wx < end && wx->type == Ev::OmpDispatch; wx = wx->next()) dispatch_kinds |= fields::OmpDispatch::kind.get(*wx);
    if (wx >= end || wx->type != Ev::OmpWorkEnd) return e;
    s = wx->next();
  }
  if (s >= end || s->type != Ev::OmpSyncBegin) return e;
  const Event* x = s->next();
  if (x >= end || x->type != Ev::OmpImplicitTaskEnd) return e;
  const std::uint64_t pid = T::parallel_id.get(*e);
  if ((T::flags.get(*e) & 1) != 0 || open_non_initial_ != 0 || tasks_seen_ || T::parallel_id.get(*x) != pid ||
      T::thread_num.get(*x) != T::thread_num.get(*e))
    return e;
  const std::uint16_t kind = S::kind.get(*s);
  const std::uint64_t* w = s->wide_slots();
  const std::uint64_t start = e->ns, ys = s->ns, ws = w[1], we = w[2], ye = w[3];
  // kNoStep is the largest value: ye below it means all three steps are there.
  if (kind >= kKinds || ((kNotWhole >> kind) & 1) != 0 || ye == kNoStep || !(start <= ys && ys <= ws && ws <= we && we <= ye))
    return e;
  if constexpr (kWork)
    if (!work_whole_fits(wb, wx, pid, dispatch_kinds)) return e;
  // The region's own thread: its task goes with the region's row (implicit_end), the innermost
  // region of that id, unless it ran a work construct.
  ParallelRow* own = nullptr;
  if (region != nullptr && region->id == pid) own = region;  // just begun, not on the stack (ids open are distinct)
  else
    for (OpenParallel& o : open_parallels_)
      if (o.row.id == pid) own = &o.row;
  if (own != nullptr && !kWork && own->own_task) return e;
  // Its figures go with the region's row; with a work construct, a second task of the region on
  // this thread (or libomp's hidden team's) leaves a row instead (implicit_end's rule).
  const bool fold_own = own != nullptr && !(kWork && (own->own_task || own->hidden));
  std::uint64_t events = kWork ? 7 : 5;  // the sync region's begin and steps, the task's end (and the work's begin and end)
  const auto first_part = static_cast<std::uint32_t>(parts.size());
  if constexpr (kWork) events += take_work_whole(wb, wx, pid, lo, hi);
  // The wait (thread_wait): the thread's, and every implicit task's open on it, this one's too.
  const std::uint64_t d = we - ws;
  wait_total += d;
  for (OpenImplicit& t : implicit_) {
    t.wait += d;
    t.last_start = ws;
    t.last_end = we;
  }
  const std::uint64_t stop = x->ns;
  const OpenSyncRegion y{kind, pid, S::kernel.get(*s), S::codeptr.get(*s), ys, d, ws, we};
  const auto first_piece = static_cast<std::uint32_t>(pieces.size());
  if (own != nullptr) {  // close_sync: not cut, folded now
    cur_ = s;  // the sync's facts take its place in the thread's order
    fold_sync(kind, y.kernel != 0, y.codeptr, ye - ys, d, ye);
  } else {
    add_piece(y, kNone, ye);
  }
  if (fold_own) {
    const std::uint64_t dur = stop - start;
    own->own_task = true;
    own->own_team_size = T::team_size.get(*e);
    own->own_dur = dur;
    own->own_wait = d;
    if constexpr (kWork) take_own_work(*own, parts[first_part]);
    ++implicit_tasks;
    busy += dur - std::min(d, dur);
  } else {  // fill_row's row, by hand: through an OpenImplicit made for it, +0.6 % on the goal traces
    ImplicitRow& r = append(implicits);
    r.parallel_id = pid;
    r.start = start;
    r.end = stop;
    r.wait = d;
    r.last_start = ws;
    r.last_end = we;
    r.track = track;
    r.team_size = T::team_size.get(*e);
    r.pieces = first_piece;
    r.piece_count = own != nullptr ? 0 : 1;  // the sync region: folded now on its region's thread, else a piece
    r.parts = first_part;
    r.part_count = kWork ? 1 : 0;
  }
  lo = std::min(lo, std::min(start, stop));
  hi = std::max(hi, std::max(ye, stop));
  taken = events;
  return x;
}

// implicit_whole's work construct (its begin wb, dispatches, end wx): whether the handlers would
// take it without declining (omp_event, work_end), as the task's only construct (a region id 0, a
// damaged file's, makes no part there).
[[gnu::always_inline]] inline bool ThreadFold::work_whole_fits(const Event* wb, const Event* wx, std::uint64_t pid,
                                                                unsigned dispatch_kinds) const {
  using W = fields::OmpWork;
  static_assert((kKinds & (kKinds - 1)) == 0, "kinds below a power of two or-ed stay below it");
  const std::uint16_t type = W::work_type.get(*wb), end_type = W::work_type.get(*wx);
  return type < kKinds && (end_type == type || (omp_names::is_loop(end_type) && omp_names::is_loop(type))) && W::parallel_id.get(*wb) == pid &&
         pid != 0 && recent_run_ == 0 && dispatch_kinds < kKinds;
}

// Its effects, as omp_event's and work_end's: the dispatches, the construct's figures and hit, the
// task's part. Returns the dispatches taken.
[[gnu::always_inline]] inline std::uint64_t ThreadFold::take_work_whole(const Event* wb, const Event* wx, std::uint64_t pid, std::uint64_t& lo,
                                                                       std::uint64_t& hi) {
  using W = fields::OmpWork;
  std::uint64_t dispatches = 0;
  for (const Event* q = wb->next(); q != wx; q = q->next()) {
    ++dispatch[fields::OmpDispatch::kind.get(*q)].count;
    lo = std::min(lo, q->ns);
    hi = std::max(hi, q->ns);
    ++dispatches;
  }
  const std::uint16_t type = W::work_type.get(*wb);
  const std::uint64_t d = wx->ns - wb->ns;
  CountFigure& c = work[type];
  ++c.count;
  c.total += d;
  const std::uint64_t codeptr = W::codeptr.get(*wb);
  const bool has_row = with_rows_ && W::kernel.get(*wb) == 0 && codeptr != 0;
  const auto part = static_cast<std::uint32_t>(parts.size());
  if (has_row) {
    cur_ = wx;
    hit(construct_kind(Category::Work, type), codeptr, d, 0, wx->ns);
    last_work_ = {part, pid, wx->ns};
  }
  WorkPiece& piece = append(parts);
  piece.type = type;
  piece.has_row = has_row;
  piece.codeptr = has_row ? codeptr : 0;
  piece.busy = d;
  piece.loop = omp_names::is_loop(type);
  lo = std::min(lo, std::min(wb->ns, wx->ns));
  hi = std::max(hi, std::max(wb->ns, wx->ns));
  return dispatches;
}

// An implicit task's row, its pieces and parts where the vectors hold them from the task's start.
[[gnu::always_inline]] inline void ThreadFold::fill_row(ImplicitRow& r, const OpenImplicit& t, std::uint64_t end, std::uint64_t task_work,
                                                        bool created_tasks) const {
  r.parallel_id = t.parallel_id;
  r.start = t.start;
  r.end = end;
  r.wait = t.wait;
  r.last_start = t.last_start;
  r.last_end = t.last_end;
  r.track = track;
  r.team_size = t.team_size;
  r.level = t.level;
  r.pieces = t.pieces;
  r.piece_count = static_cast<std::uint32_t>(pieces.size()) - t.pieces;
  r.parts = t.parts;
  r.part_count = static_cast<std::uint32_t>(parts.size()) - t.parts;
  r.task_work = task_work;
  r.created_tasks = created_tasks;
}

// A nested region's implicit task (implicit_.back()) ended: its row, its pieces and parts moved
// from the vectors' tail (its parent's go on there) to nested_pieces and nested_parts.
void ThreadFold::nested_row(std::uint64_t end, std::uint64_t task_work, bool created_tasks) {
  const OpenImplicit& t = implicit_.back();
  ImplicitRow& r = nested_implicits.emplace_back();
  fill_row(r, t, end, task_work, created_tasks);
  r.pieces = static_cast<std::uint32_t>(nested_pieces.size());
  r.parts = static_cast<std::uint32_t>(nested_parts.size());
  nested_pieces.insert(nested_pieces.end(), pieces.begin() + t.pieces, pieces.end());
  nested_parts.insert(nested_parts.end(), parts.begin() + t.parts, parts.end());
  pieces.resize(t.pieces);
  parts.resize(t.parts);
  if (last_work_.part != kNone && last_work_.part >= t.parts) last_work_.part = kNone;
  implicit_.pop_back();
}

void ThreadFold::work_end(const Event& e) {
  const std::uint16_t type = e.type == Ev::OmpMaskedEnd ? omp_names::kMasked : fields::OmpWork::work_type.get(e);
  const long i = find_top(
      work_, [&](const OpenWork& x) { return x.type == type; },
      [&](const OpenWork& x) { return omp_names::is_loop(type) && omp_names::is_loop(x.type); });
  if (i < 0) return decline("a work end with no begin on its thread");
  const OpenWork w = work_[std::size_t(i)];
  remove_at(work_, std::size_t(i));
  tasks_in_work(w.start);
  const std::uint64_t d = e.ns - w.start;
  CountFigure& c = work[w.type];
  ++c.count;
  c.total += d;
  const bool has_row = with_rows_ && w.kernel == 0 && w.codeptr != 0;
  if (has_row) hit(construct_kind(Category::Work, w.type), w.codeptr, d, 0, e.ns);
  if (w.parallel_id == 0) return;
  // Its implicit task's part of the region's work (summary_fold_constructs.hpp WorkPart).
  OpenImplicit* t = worker_task();
  if (t == nullptr || t->parallel_id != w.parallel_id) return decline("a work construct outside its implicit task");
  const std::uint32_t p = work_part(*t, w.type, has_row, w.codeptr);
  parts[p].busy += d;
  if (has_row) last_work_ = {p, w.parallel_id, e.ns};
}

// Explicit tasks that ran inside a work construct begun at `start` are its time, not its implicit
// task's task work (SummaryFold::omp_work).
[[gnu::always_inline]] inline void ThreadFold::tasks_in_work(std::uint64_t start) {
  if (recent_run_ != 0) [[unlikely]] {
    if (recent_end_ > start) task_run_ -= std::min(task_run_, recent_run_);
    recent_run_ = 0;
  }
}

// The piece of task t's parts that a work construct's time goes to (summary_fold_constructs.hpp
// WorkPart: one per constructs row, one for those with none), made on its first call.
[[gnu::always_inline]] inline std::uint32_t ThreadFold::work_part(const OpenImplicit& t, std::uint16_t type, bool has_row,
                                                                  std::uint64_t codeptr) {
  std::uint32_t p = t.parts;
  for (; p < parts.size(); ++p)
    if (parts[p].has_row == has_row && (!has_row || (parts[p].type == type && parts[p].codeptr == codeptr))) break;
  if (p == parts.size()) {
    WorkPiece piece;
    piece.type = type;
    piece.has_row = has_row;
    piece.codeptr = has_row ? codeptr : 0;
    append(parts, piece);
  }
  parts[p].loop = parts[p].loop || omp_names::is_loop(type);
  return p;
}

// A wait's length, counted for the thread and for each implicit task open on it.
[[gnu::always_inline]] inline std::uint64_t ThreadFold::thread_wait(std::uint64_t start, std::uint64_t end) {
  const std::uint64_t d = end - std::min(start, end);
  wait_total += d;
  for (OpenImplicit& t : implicit_) {
    t.wait += d;
    t.last_start = start;
    t.last_end = end;
  }
  return d;
}

// A wait ended: it counts for the thread, for each implicit task open on it, and for the innermost
// sync region of the same kind (OmpMatcher::ThreadState::add_wait).
void ThreadFold::add_wait(std::uint16_t kind, std::uint64_t start, std::uint64_t end) {
  const std::uint64_t d = thread_wait(start, end);
  const long y = find_top(
      sync_, [&](const OpenSyncRegion& x) { return x.kind == kind; },
      [&](const OpenSyncRegion& x) { return omp_names::is_barrier(kind) && omp_names::is_barrier(x.kind); });
  if (y >= 0) {
    sync_[std::size_t(y)].wait += d;
    sync_[std::size_t(y)].last_start = start;
    sync_[std::size_t(y)].last_end = end;
  }
}

void ThreadFold::wait_end(const Event& e) {
  const std::uint16_t kind = fields::OmpSync::kind.get(e);
  const long i = find_top(
      waits_, [&](const Wait& x) { return x.kind == kind; },
      [&](const Wait& x) { return omp_names::is_barrier(kind) && omp_names::is_barrier(x.kind); });
  if (i < 0) return decline("a sync wait end with no begin on its thread");
  const Wait w = waits_[std::size_t(i)];
  remove_at(waits_, std::size_t(i));
  add_wait(w.kind, w.start, e.ns);
}

void ThreadFold::sync_end(const Event& e) {
  const std::uint16_t kind = fields::OmpSync::kind.get(e);
  const long i = find_top(
      sync_, [&](const OpenSyncRegion& x) { return x.kind == kind; },
      [&](const OpenSyncRegion& x) { return omp_names::is_barrier(kind) && omp_names::is_barrier(x.kind); });
  if (i < 0) return decline("a sync region end with no begin on its thread");
  const OpenSyncRegion y = sync_[std::size_t(i)];
  remove_at(sync_, std::size_t(i));
  close_sync(y, e.ns);
}

// A sync region that ended at `end` inside a worker's implicit task: a piece of the task's row.
[[gnu::always_inline]] inline void ThreadFold::add_piece(const OpenSyncRegion& y, std::uint32_t part, std::uint64_t end) {
  SyncPiece& p = append(pieces);
  p.kind = y.kind;
  p.in_kernel = y.kernel != 0;
  p.part = part;
  p.codeptr = y.codeptr;
  p.start = y.start;
  p.end = end;
  p.wait = y.wait;
  p.last_start = y.last_start;
  p.last_end = y.last_end;
}

// A sync region ended at `end`: folded, or kept for its implicit task's region's end.
[[gnu::always_inline]] inline void ThreadFold::close_sync(const OpenSyncRegion& y, std::uint64_t end) {
  OpenImplicit* t = worker_task();
  // The implicit barrier that ends a work construct on this thread: its time is the construct's.
  std::uint32_t part = kNone;
  if (y.kind == kBarrierImplicitWorkshare && last_work_.part != kNone && last_work_.parallel_id == y.parallel_id &&
      y.start >= last_work_.end) {
    if (t == nullptr || last_work_.part < t->parts) return decline("a workshare barrier outside its implicit task");
    part = last_work_.part - t->parts;  // its task's own numbering (SyncPiece::part)
    last_work_.part = kNone;
  }
  if (t != nullptr && t->start <= y.start && (!t->own || part != kNone)) {
    // Inside a worker's implicit task: it may end after its region did (reported late), and is
    // cut with it: folded when the region's end is known. (The region's own thread's task is not
    // cut: its syncs are folded now, but a work construct's barrier, which its region's join needs.)
    // (implicit_whole leaves explicit syncs to this path, the only one that marks them.)
    outside_syncs_ |= y.kernel == 0 && summary_fold_detail::explicit_sync(y.kind);
    add_piece(y, part, end);
    return;
  }
  if (part != kNone) return decline("a workshare barrier before its implicit task");
  fold_sync(y.kind, y.kernel != 0, y.codeptr, end - y.start, y.wait, end);
}

// A sync region's figures on this thread, and its constructs-table row's.
[[gnu::always_inline]] inline void ThreadFold::fold_sync(std::uint16_t kind, bool in_kernel, std::uint64_t codeptr, std::uint64_t dur,
                                                         std::uint64_t wait, std::uint64_t end) {
  CountFigure& c = sync[kind];
  ++c.count;
  c.total += dur;
  c.wait += wait;
  if (with_rows_ && !in_kernel && codeptr != 0 && summary_fold_detail::explicit_sync(kind))
    hit(construct_kind(Category::Sync, kind), codeptr, dur, wait, end);
}


// A sync region begun at e. A record the hot path folded (record_fold.hpp) comes with the times of
// its wait begin, wait end and end (EventDecoder::SyncSteps::InBegin): with all three, or the end
// alone, the region is closed here without going on the stack. Otherwise, when its wait and end
// follow it at once as events of their own, likewise; returns the last event taken. `steps`: the
// folded steps taken (events the begin stands for besides itself).
[[gnu::always_inline]] inline const Event* ThreadFold::sync_begin(const Event* e, const Event* end, std::uint64_t& steps) {
  using F = fields::OmpSync;
  OpenSyncRegion y{F::kind.get(*e), F::parallel_id.get(*e), F::kernel.get(*e), F::codeptr.get(*e), e->ns, 0, 0, 0};
  if (y.kind >= kKinds) {
    decline("an unknown sync region kind");
    return e;
  }
  const std::uint64_t* w = e->wide_slots();
  const std::uint64_t ws = w[1], we = w[2], ye = w[3];
  if (ws != kNoStep || we != kNoStep || ye != kNoStep) {  // folded
    if (ws != kNoStep && we != kNoStep && ye != kNoStep) {
      steps = 3;
      sync_wait(y, ws, we);
      close_sync(y, ye);
    } else if (ws == kNoStep && we == kNoStep) {  // the end alone
      steps = 1;
      close_sync(y, ye);
    } else {
      steps = partial_sync(*e, y, ws, we, ye);
    }
    return e;
  }
  const Event* n = e->next();
  if (n < end && n->type == Ev::OmpSyncWaitBegin && n->sub == y.kind && n + 1 < end && n[1].type == Ev::OmpSyncWaitEnd &&
      n[1].sub == y.kind && n + 2 < end && n[2].type == Ev::OmpSyncEnd && n[2].sub == y.kind) {
    sync_wait(y, n->ns, n[1].ns);
    close_sync(y, n[2].ns);
    return n + 2;
  }
  if (n < end && n->type == Ev::OmpSyncEnd && n->sub == y.kind) {
    close_sync(y, n->ns);
    return n;
  }
  sync_.push_back(y);
  return e;
}

// The wait of a sync region taken whole: it counts for the thread, its implicit tasks and the
// region (add_wait).
[[gnu::always_inline]] inline void ThreadFold::sync_wait(OpenSyncRegion& y, std::uint64_t ws, std::uint64_t we) {
  y.wait = thread_wait(ws, we);
  y.last_start = ws;
  y.last_end = we;
}

// A folded sync begin with some of its steps (a thread that stopped inside it, or a damaged
// file): the region on the stack and each step as the event it stands for. Returns the steps.
std::uint64_t ThreadFold::partial_sync(const Event& begin, const OpenSyncRegion& y, std::uint64_t ws, std::uint64_t we,
                                      std::uint64_t ye) {
  sync_.push_back(y);
  std::uint64_t steps = 0;
  const auto step = [&](Ev type, std::uint64_t ns) {
    if (ns == kNoStep || declined()) return;
    Event s = begin;
    s.type = type;
    s.cells = 1;
    s.ns = ns;
    ++steps;
    if (type == Ev::OmpSyncWaitBegin) waits_.push_back({y.kind, ns});
    else if (type == Ev::OmpSyncWaitEnd) wait_end(s);
    else sync_end(s);
  };
  step(Ev::OmpSyncWaitBegin, ws);
  step(Ev::OmpSyncWaitEnd, we);
  step(Ev::OmpSyncEnd, ye);
  return steps;
}

void ThreadFold::finish(bool cut, bool lost_ends) {
  if (declined()) return;
  // The builder closes what the team has open at the thread's last event then (close_all_quietly),
  // and with events lost not at all.
  if (hidden_helper && (cut || lost_ends)) return decline("libomp's hidden-helper team in a run cut short or with events lost");
  // Events were dropped (their ends may be among them): the Kokkos kernels, fences, deep copies
  // and MPI calls still open are discarded, as the builder's close_unended does; regions are not.
  if (lost_ends) {
    discarded = {open_kernels_.size(), open_fences_.size(), open_copies_.size(), open_mpi_.size(), 0};
    open_kernels_.clear();
    open_fences_.clear();
    open_copies_.clear();
    open_mpi_.clear();
  }
  // Kokkos spans and MPI calls still open: ended here after a cut, else by the engine at the end
  // of the run (close_open), their kernels' times given now, with the last epoch's rows.
  if (cut) {
    close_open(last_ns, true);
  } else {
    for (const OpenKernel& k : open_kernels_)
      if (kernels[k.part].kept) kernel_times.push_back({UINT64_MAX, k.start, track, seq_base_ + 1});
  }
  if (!work_.empty() && (lost_ends || !open_works(cut))) return decline("an OpenMP work construct never ended");
  // A parallel region still open at the end: it ends at this thread's last event in a run cut short
  // (a program killed inside a kernel on the OpenMP backend), else at the end of the run (exit()
  // inside a region: the join's), and arrives after every span that ended; its team is the
  // implicit tasks begun in it (the join's). With events lost, the builder's path.
  if (!open_parallels_.empty()) {
    if (lost_ends) return decline("an OpenMP parallel region never ended");
    for (const OpenParallel& o : open_parallels_) {
      ParallelRow& r = unended_parallels.emplace_back(o.row);
      r.end = cut ? std::max(last_ns, r.start) : 0;
      r.seq = ParallelRow::kUnended;  // their order among themselves is the builder's hash map's: the join takes one outside kernels
    }
    open_parallels_.clear();
  }
  // A worker's last implicit task, which libomp never reports ended: it ends where its region ends
  // (known when the threads are joined), with the waits and syncs still open inside it.
  if (open_non_initial_ > 1) return decline("a nested implicit task never ended");
  OpenImplicit* t = worker_task();
  if (t != nullptr) {
    ImplicitRow r;
    fill_row(r, *t, cut ? std::max(last_ns, t->start) : 0, 0, false);  // end: where it ends if its region never did (ParallelRow::unended())
    r.open = true;
    take_task_work(t->start, r.task_work, r.created_tasks);
    // Innermost first, as OmpMatcher::finish closes them.
    r.open_waits = static_cast<std::uint32_t>(open_waits.size());
    for (std::size_t w = waits_.size(); w-- > 0 && waits_[w].start >= t->start;) {
      open_waits.push_back({waits_[w].kind, waits_[w].start});
      waits_.pop_back();
    }
    r.open_wait_count = static_cast<std::uint32_t>(open_waits.size()) - r.open_waits;
    r.open_syncs = static_cast<std::uint32_t>(open_syncs.size());
    while (!sync_.empty() && sync_.back().start >= t->start) {
      const OpenSyncRegion& y = sync_.back();
      if (y.kind == kBarrierImplicitWorkshare) return decline("a workshare barrier never ended");
      open_syncs.push_back({y.kind, y.kernel != 0, y.codeptr, y.start, y.wait});
      sync_.pop_back();
    }
    r.open_sync_count = static_cast<std::uint32_t>(open_syncs.size()) - r.open_syncs;
    implicits.push_back(r);
    for (std::size_t i = implicit_.size(); i-- > 0;)
      if (!implicit_[i].initial) implicit_.erase(implicit_.begin() + long(i));
    open_non_initial_ = 0;
  }
  if ((!waits_.empty() || !sync_.empty()) && !last_barriers(cut, lost_ends)) return decline("an OpenMP sync region or wait never ended");
  // Explicit tasks still running (a program killed or ending inside a task's body): each stretch
  // ends at the thread's last event after a run cut short, else at the end of the run
  // (kEndOfRun: the join's), given after every other event (OmpMatcher::finish, give_task), with
  // no status (not completed) and a problem line each (the join's).
  if (!running_.empty()) {
    if (lost_ends) return decline("an OpenMP explicit task never ended");
    for (std::size_t i = 0; i < running_.size(); ++i) {
      const RunningTask& k = running_[i];
      ++task_stretch_count;
      task_stretches.push_back({k.task_id, k.start, cut ? std::max(last_ns, k.start) : TaskStretchRow::kEndOfRun, seq_base_ + 1 + i, track, 0,
                                false});
    }
    unended_tasks += running_.size();  // a problem line each (the engine's close_unended)
    if (cut) cut_spans += running_.size();
    running_.clear();
  }
  // Its `complete` would come on another thread (an untied task moved after its fulfill): the
  // builder counts it once over all threads.
  if (!early_fulfilled_.empty()) return decline("an early-fulfilled task that did not complete on its thread");
  finish_mutexes(cut, lost_ends);
  // The initial task lives as long as the program: counted, silently (in a run cut short it ends
  // at its thread's last event, and is counted as cut, as OmpMatcher::finish closes it).
  initial_tasks += implicit_.size();
  if (cut) cut_spans += implicit_.size();
  implicit_.clear();
}

// The mutexes still asked for or held at the end (finish), as OmpMatcher::finish hands them on.
// A test that never got its lock, nor was tried again: a failed try, known at the end (after every
// event, in the order of the tries). An acquire still waiting (a thread killed, or the program
// ending, while it waits for a lock), then a hold still open: events lost (their ends may be
// among them), discarded; a run cut short, ended at the thread's last event; a clean end, at the
// end of the run (close_open_mutexes).
void ThreadFold::finish_mutexes(bool cut, bool lost_ends) {
  for (std::size_t i = 0; i < acquiring_.size(); ++i) {
    const OpenAcquire& a = acquiring_[i];
    const std::uint64_t seq = seq_base_ + 1 + i;
    if (a.test) {
      mutex_span(a.family, a.kernel, a.codeptr, 0, false, false, true, UINT64_MAX, seq);
    } else if (lost_ends) {
      ++acquires_discarded;
    } else {
      ++acquires_unended;
      if (!cut) {
        open_mutexes_.push_back({a.family, false, false, a.kernel, a.codeptr, a.start, seq});
        continue;
      }
      ++cut_spans;
      mutex_span(a.family, a.kernel, a.codeptr, std::max(last_ns, a.start) - a.start, false, false, false, UINT64_MAX, seq);
    }
  }
  for (std::size_t i = 0; i < holds_.size(); ++i) {
    const OpenHold& h = holds_[i];
    const std::uint64_t seq = seq_base_ + 1 + acquiring_.size() + i;
    if (lost_ends) {
      ++holds_discarded;
      continue;
    }
    ++holds_cut;
    if (!cut) {
      open_mutexes_.push_back({h.family, true, h.nested, h.kernel, h.codeptr, h.start, seq});
      continue;
    }
    ++cut_spans;
    mutex_span(h.family, h.kernel, h.codeptr, std::max(last_ns, h.start) - h.start, true, h.nested, false, UINT64_MAX, seq);
  }
  holds_.clear();
  acquiring_.clear();
}

void ThreadFold::close_open_mutexes(std::uint64_t end) {
  for (const OpenMutexSpan& m : open_mutexes_)
    mutex_span(m.family, m.kernel, m.codeptr, std::max(end, m.start) - m.start, m.hold, m.nested, false, UINT64_MAX, m.seq);
  open_mutexes_.clear();
}

// The Kokkos kernels, fences, deep copies, regions and MPI calls still open at the end of the
// thread's events end at `end` (or their start, if later), as the builder's OpenEnd closes them:
// after a run cut short (no clean end in the raw trace: a crash, a signal, _exit) at the thread's
// last event, each counted as cut; after a clean end at the end of the run, known once every
// thread is folded. Counted by kind (the problem lines). The builder hands them on after every span
// that ended: a kernel's arrival is after every parallel region's (given by finish, before the
// last join, when the end is the run's).
void ThreadFold::close_open(std::uint64_t end, bool cut) {
  const auto end_of = [&](std::uint64_t start) { return std::max(end, start); };
  for (const OpenKernel& k : open_kernels_) {
    kernel_figures(k, end_of(k.start) - k.start);
    if (cut && kernels[k.part].kept) kernel_times.push_back({UINT64_MAX, k.start, track, seq_base_ + 1});
  }
  for (const OpenFence& f : open_fences_) end_named(fences[f.name], f.start, end_of(f.start));
  for (const OpenCopy& c : open_copies_) end_copy(c, end_of(c.start));
  for (std::size_t i = open_mpi_.size(); i-- > 0;) end_named(mpi_calls[open_mpi_[i].call], open_mpi_[i].start, end_of(open_mpi_[i].start));
  unended = {open_kernels_.size(), open_fences_.size(), open_copies_.size(), open_mpi_.size(), open_regions_.size()};
  while (!open_regions_.empty()) end_region(end_of(open_regions_.back().start));  // innermost first
  if (cut) cut_spans += unended.kernels + unended.fences + unended.copies + unended.mpi + unended.regions;
  open_kernels_.clear();
  open_fences_.clear();
  open_copies_.clear();
  open_mpi_.clear();
  if (!cut) close_last_barriers(end, false);  // cut: finish took them
}

// finish: the waits and sync regions open outside any implicit task of the thread's own. A
// worker's last barriers (a league's teams barrier: the threads of an offloaded target region's
// league run in initial tasks) run to the end, silently (OmpMatcher::finish): cut here, else ended
// in close_open at the end of the run. Anything else: false.
bool ThreadFold::last_barriers(bool cut, bool lost_ends) {
  bool last = omp_thread_type == 2;
  for (const Wait& w : waits_) last = last && omp_names::worker_last_barrier(w.kind);
  for (const OpenSyncRegion& y : sync_) last = last && omp_names::worker_last_barrier(y.kind);
  if (!last) return false;
  if (lost_ends) {
    waits_.clear();
    sync_.clear();
  } else if (cut) {
    close_last_barriers(last_ns, true);
  }
  return true;
}

// A worker's last barriers and their waits left open (finish): ended at `end`, waits first (they
// count into the barriers), as OmpMatcher::finish ends them.
void ThreadFold::close_last_barriers(std::uint64_t end, bool cut) {
  for (const Wait& w : waits_) add_wait(w.kind, w.start, std::max(end, w.start));
  waits_.clear();
  for (const OpenSyncRegion& y : sync_) {
    const std::uint64_t e = std::max(end, y.start);
    fold_sync(y.kind, y.kernel != 0, y.codeptr, e - y.start, y.wait, e);
    if (cut) ++cut_spans;
  }
  sync_.clear();
}

void ThreadFold::end_named(NamedStats& st, std::uint64_t start, std::uint64_t end) {
  ++st.calls;
  st.total += end - start;
}

// The Kokkos and tool records other than kernels and regions: fewer, so kept out of the loop.
void ThreadFold::rare_host_event(const Event& e, Ev type, std::uint64_t ns) {
  switch (type) {
    case Ev::FenceBegin:
      open_fences_.push_back({fields::Fence::id.get(e), ns, fields::Fence::name.get(e)});
      break;
    case Ev::FenceEnd: {
      const std::uint64_t id = fields::Fence::id.get(e);
      std::size_t i = open_fences_.size();
      while (i-- > 0 && open_fences_[i].id != id) {
      }
      if (i == std::size_t(-1)) {
        decline("a fence end with no begin on its thread");
        break;
      }
      const OpenFence f = open_fences_[i];
      remove_at(open_fences_, i);
      end_named(fences[f.name], f.start, ns);
      break;
    }
    case Ev::Alloc:
    case Ev::Dealloc: {
      OrderedRow m;
      m.time = ns;
      m.track = track;
      m.kind = type == Ev::Alloc ? OrderedRow::Alloc : OrderedRow::Dealloc;
      m.space = fields::Memory::space.get(e);
      m.name = fields::Memory::name.get(e);
      m.ptr = fields::Memory::ptr.get(e);
      m.bytes = fields::Memory::bytes.get(e);
      m.seq = seq();
      ordered.push_back(m);
      break;
    }
    case Ev::SectionCreate:
    case Ev::SectionStart:
    case Ev::SectionStop:
    case Ev::SectionDestroy: {
      OrderedRow m;
      m.time = ns;
      m.track = track;
      m.kind = static_cast<OrderedRow::Kind>(OrderedRow::SectionCreate + (static_cast<int>(type) - static_cast<int>(Ev::SectionCreate)));
      m.space = fields::Section::id.get(e);
      m.name = type == Ev::SectionCreate ? fields::Section::name.get(e) : 0;
      m.seq = seq();
      ordered.push_back(m);
      break;
    }
    case Ev::MpiBegin: open_mpi_.push_back({fields::Mpi::call.get(e), ns}); break;
    case Ev::MpiEnd: {
      // MPI calls do not nest on one thread (the layer calls PMPI only): the innermost is it.
      if (open_mpi_.empty() || open_mpi_.back().call != fields::Mpi::call.get(e)) {
        decline("an MPI call ended that had not begun on its thread");
        break;
      }
      end_named(mpi_calls[open_mpi_.back().call], open_mpi_.back().start, ns);
      open_mpi_.pop_back();
      break;
    }
    case Ev::DeepCopyBegin: {
      using F = fields::DeepCopy;
      open_copies_.push_back({F::id.get(e), ns, F::bytes.get(e), F::dst_space.get(e), F::dst_name.get(e), F::src_space.get(e),
                              F::src_name.get(e)});
      break;
    }
    case Ev::DeepCopyEnd: deep_copy_end(e); break;
    case Ev::ProfileEvent: ++profile_events; break;
    case Ev::DualView: ++(fields::DualView::modify.get(e) ? dual_view_modifies : dual_view_syncs); break;
    case Ev::ToolFlush: {
      const std::uint64_t d = fields::ToolFlush::ticks.get(e);  // made ns by the decoder
      ++tool_flushes;
      tool_flush_ns += d;
      flush_end_ = std::max(flush_end_, ns + d);
      break;
    }
    default: decline("an unknown record"); break;
  }
}

void ThreadFold::events(const Event* begin, const Event* end) {
  if (declined()) return;
  std::uint64_t lo = t_min, hi = last_ns, n = 0, omp = 0;
  cells_ = begin;
  // One switch on the type for every event: the common types' handlers inlined, the others
  // (omp_event, rare_host_event) out of the loop.
  for (const Event* e = begin; e < end; e = e->next()) {
    const std::uint64_t ns = e->ns;
    const Ev type = e->type;
    cur_ = e;
    ++n;
    omp += type >= Ev::OmpFirst;
    lo = std::min(lo, ns);
    hi = std::max(hi, ns);
    switch (type) {
      case Ev::KernelBegin: kernel_begin(*e); break;
      case Ev::KernelEnd: kernel_end(*e); break;
      case Ev::RegionPush: region_push(*e); break;
      case Ev::RegionPop: region_pop(*e); break;
      case Ev::OmpParallelBegin: {
        std::uint64_t taken = 0;
        e = parallel_begin(e, end, lo, hi, taken);
        n += taken;
        omp += taken;
        break;
      }
      case Ev::OmpParallelEnd: parallel_end(*e); break;
      case Ev::OmpImplicitTaskBegin: {
        std::uint64_t taken = 0;
        const Event* last = implicit_whole(e, end, lo, hi, taken);
        if (last == e) {
          implicit_begin(*e);
          break;
        }
        n += taken;
        omp += taken;
        e = last;
        break;
      }
      case Ev::OmpImplicitTaskEnd: implicit_end(*e); break;
      case Ev::OmpWorkEnd:
      case Ev::OmpMaskedEnd: work_end(*e); break;
      case Ev::OmpSyncBegin: {
        // Its steps' times count too: folded in the begin, or the stretch of events the fast path
        // took (one cell each, after the begin's two).
        std::uint64_t steps = 0;
        const Event* last = sync_begin(e, end, steps);
        // Folded steps mostly lie in order after the begin (the region whole, or its end alone):
        // then only the end can move the latest time. A tick that ran backwards (a thread moved to
        // a core whose TSC is behind, or a damaged file) takes each step as it is.
        const std::uint64_t* w = e->wide_slots();
        const std::uint64_t ws = w[1], we = w[2], ye = w[3];
        if (ye != kNoStep && (ws == kNoStep ? we == kNoStep && ns <= ye : ns <= ws && ws <= we && we <= ye)) {
          hi = std::max(hi, ye);
        } else {
          for (const std::uint64_t t : {ws, we, ye}) {
            if (t == kNoStep) continue;
            lo = std::min(lo, t);
            hi = std::max(hi, t);
          }
        }
        for (const Event* x = e + 2; x <= last; ++x) {
          lo = std::min(lo, x->ns);
          hi = std::max(hi, x->ns);
        }
        const std::uint64_t more = steps + static_cast<std::uint64_t>(last - e) - (last == e ? 0 : 1);  // the cells after the begin's two
        n += more;
        omp += more;
        e = last;
        break;
      }
      default:
        if (type >= Ev::OmpFirst) omp_event(*e);
        else rare_host_event(*e, type, ns);
        break;
    }
  }
  t_min = lo;
  last_ns = hi;
  t_max = std::max({t_max, hi, flush_end_});  // t_max: also a device record's end (device_record)
  host_records += n;
  omp_records += omp;
  seq_base_ += static_cast<std::uint64_t>(end - begin);
}

}  // namespace kob::engine
