// SummaryFold's OpenMP constructs table: see summary_fold_constructs.hpp.
#include "common/analysis/summary_fold_constructs.hpp"

#include <algorithm>

#include "common/timeline/omp_names.hpp"
#include "common/timeline/source_resolver.hpp"

namespace kob::summary_fold_detail {

namespace {


std::size_t slot_of(std::uint64_t codeptr, std::uint32_t kind, std::size_t mask) {
  std::uint64_t h = (codeptr ^ (std::uint64_t(kind) << 48)) * 0x9e3779b97f4a7c15ull;
  return static_cast<std::size_t>(h >> 17) & mask;
}

}  // namespace

std::uint32_t* ConstructRows::find_address(std::uint64_t codeptr, std::uint32_t kind) {
  if (by_address_.empty()) return nullptr;
  const std::size_t mask = by_address_.size() - 1;
  for (std::size_t i = slot_of(codeptr, kind, mask);; i = (i + 1) & mask) {
    Slot& s = by_address_[i];
    if (s.codeptr == 0) return nullptr;
    if (s.codeptr == codeptr && s.kind == kind) return &s.row;
  }
}

void ConstructRows::add_address(std::uint64_t codeptr, std::uint32_t kind, std::uint32_t row) {
  if (2 * (addresses_ + 1) > by_address_.size()) {  // at most half full
    std::vector<Slot> old(std::max<std::size_t>(64, 2 * by_address_.size()));
    old.swap(by_address_);
    addresses_ = 0;
    for (const Slot& s : old)
      if (s.codeptr != 0) add_address(s.codeptr, s.kind, s.row);
  }
  const std::size_t mask = by_address_.size() - 1;
  std::size_t i = slot_of(codeptr, kind, mask);
  while (by_address_[i].codeptr != 0) i = (i + 1) & mask;
  by_address_[i] = {codeptr, kind, row};
  ++addresses_;
}

std::uint32_t ConstructRows::row(Category c, std::uint16_t kind, const char* kind_name, std::uint64_t codeptr) {
  const std::uint32_t k = (static_cast<std::uint32_t>(c) << 16) | kind;
  if (const std::uint32_t* known = find_address(codeptr, k)) return *known;
  const SourceLocation& loc = sources_->at(codeptr);
  // SourceLocation::same_place, and distinct bare addresses (no module held them) kept apart.
  const std::uint64_t apart = loc.line != 0 ? 0 : loc.module.empty() ? codeptr : loc.offset;
  std::string place = std::to_string(k) + ' ' + std::to_string(loc.line) + ' ' + std::to_string(apart) + ' ';
  place += loc.function;
  place += '\0';
  place += loc.file;
  place += '\0';
  place += loc.module;
  auto [it, fresh] = by_place_.try_emplace(std::move(place), static_cast<std::uint32_t>(rows_.size()));
  if (fresh) {
    OmpConstructStats r;
    r.category = c;
    r.kind = kind_name;
    rows_.push_back(std::move(r));
    where_.push_back(&loc);
  }
  add_address(codeptr, k, it->second);
  return it->second;
}

std::uint32_t ConstructRows::parallel(const OmpParallelSpan& p, bool kernel_inside) {
  if (sources_ == nullptr || p.kernel != 0 || p.codeptr == 0 || p.hidden_helper) return kNoRow;
  const std::uint32_t i = row(Category::Parallel, 0, "parallel", p.codeptr);
  OmpConstructStats& r = rows_[i];
  ++r.calls;
  r.total += p.dur();
  add_call(i, p.dur());
  ++r.parallel_regions;
  r.team_size_sum += p.team_size;
  r.regions_with_kernels += kernel_inside ? 1 : 0;
  return i;
}

namespace {
const char* kind_name(OmpConstructStats::Category c, std::uint16_t kind) {
  switch (c) {
    case OmpConstructStats::Category::Parallel: return "parallel";
    case OmpConstructStats::Category::Work: return omp_names::work(kind);
    case OmpConstructStats::Category::Sync: return omp_names::sync(kind);
    case OmpConstructStats::Category::Mutex: return omp_names::mutex(kind);
    case OmpConstructStats::Category::Task: return "task";
    case OmpConstructStats::Category::Target: return omp_names::target_kind(kind);
  }
  return "unknown";
}
}  // namespace

std::uint32_t ConstructRows::row_of_slow(Category c, std::uint16_t kind, std::uint64_t codeptr) {
  if (sources_ == nullptr || codeptr == 0) return kNoRow;
  if (const std::uint32_t* known = find_address(codeptr, (static_cast<std::uint32_t>(c) << 16) | kind)) return *known;
  return row(c, kind, kind_name(c, kind), codeptr);
}

void ConstructRows::seen_first_slow(std::uint32_t row, std::uint64_t end, std::uint32_t track, std::uint64_t seq) {
  if (row == kNoRow) return;
  if (row >= first_.size()) first_.resize(row + 1);
  FirstKey& f = first_[row];
  if (std::tie(end, track, seq) < std::tie(f.end, f.track, f.seq)) f = {end, track, seq};
}

std::uint32_t ConstructRows::known_row_slow(std::uint32_t kind, std::uint64_t codeptr) {
  const std::uint32_t* known = find_address(codeptr, kind);
  return known != nullptr ? *known : kNoRow;
}

std::uint32_t ConstructRows::work(const OmpWorkSpan& w) {
  if (sources_ == nullptr || w.kernel != 0 || w.codeptr == 0) return kNoRow;
  const std::uint32_t i = row(Category::Work, w.type, omp_names::work(w.type), w.codeptr);
  ++rows_[i].calls;
  rows_[i].total += w.dur();
  add_call(i, w.dur());
  return i;
}

ConstructRows::WorkPart& ConstructRows::part(std::vector<WorkPart>& parts, std::uint32_t row, std::uint32_t track) {
  for (WorkPart& p : parts)
    if (p.row == row && p.track == track) return p;
  parts.push_back({row, track});
  return parts.back();
}

void ConstructRows::work_team(const std::vector<WorkPart>& parts) {
  std::vector<bool> done(parts.size(), false);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (done[i] || parts[i].row == kNoRow) continue;
    std::uint64_t threads = 0, max_busy = 0, sum_busy = 0, barrier = 0, wait = 0;
    for (std::size_t j = i; j < parts.size(); ++j) {
      if (parts[j].row != parts[i].row) continue;
      done[j] = true;
      ++threads;
      max_busy = std::max(max_busy, parts[j].busy);
      sum_busy += parts[j].busy;
      barrier += parts[j].barrier;
      wait += parts[j].wait;
    }
    OmpTeamStats region = one_region(threads, max_busy, sum_busy, sum_busy + barrier, wait);
    region.parallel_regions = 1;
    region.team_size_sum = threads;
    team(parts[i].row, region);
  }
}

void ConstructRows::sync(const OmpSyncSpan& y) {
  if (sources_ == nullptr || y.kernel != 0 || y.codeptr == 0 || !explicit_sync(y.kind)) return;
  const std::uint32_t i = row(Category::Sync, y.kind, omp_names::sync(y.kind), y.codeptr);
  OmpConstructStats& r = rows_[i];
  ++r.calls;
  r.total += y.dur();
  add_call(i, y.dur());
  r.wait += y.wait_ns;
}

void ConstructRows::mutex(const OmpMutexSpan& m) {
  if (sources_ == nullptr || m.kernel != 0 || m.codeptr == 0) return;
  const std::uint16_t family = omp_names::mutex_family(m.kind);
  const std::uint32_t i = row(Category::Mutex, family, omp_names::mutex(family), m.codeptr);
  OmpConstructStats& r = rows_[i];
  count_mutex(r, r.calls, m);
  if (!keep_calls_ || m.nested) return;
  // A call is one outer hold; its time as the row counts it: the wait that came before it on its
  // thread and the hold.
  if (m.track >= lock_wait_.size()) lock_wait_.resize(m.track + 1, 0);
  if (!m.hold) {
    lock_wait_[m.track] += m.dur();
  } else {
    add_call(i, lock_wait_[m.track] + m.dur());
    lock_wait_[m.track] = 0;
  }
}

std::uint32_t ConstructRows::task_create(const OmpTaskCreate& c) {
  const std::size_t number = task_creates_++;
  if (sources_ == nullptr || c.kernel != 0 || c.codeptr == 0) return kNoRow;
  const std::uint32_t i = row(Category::Task, 0, "task", c.codeptr);
  ++rows_[i].calls;
  task_rows_.emplace(number, PendingTask{i, false, c.time});
  return i;
}

void ConstructRows::create_gap(std::uint32_t row, std::uint64_t gap) {
  if (row >= rows_.size()) return;
  rows_[row].create_gap += gap;
  ++rows_[row].create_gaps;
}

void ConstructRows::task(const OmpTaskSpan& k) {
  if (task_rows_.empty() || k.create == OmpTaskSpan::kNoCreate) return;
  auto it = task_rows_.find(k.create);
  if (it == task_rows_.end()) return;
  if ((k.flags & kTaskwaitFlag) == 0) {
    OmpConstructStats& r = rows_[it->second.row];
    ++r.stretches;
    r.total += k.dur();
    it->second.run += k.dur();
    if (!it->second.started) {
      it->second.started = true;
      ++r.tasks_started;
      r.start_delay += k.start > it->second.created ? k.start - it->second.created : 0;
    }
  }
  if (task_ends(k.status)) {
    add_call(it->second.row, it->second.run);
    task_rows_.erase(it);
  }
}

void ConstructRows::target(const OmpTargetSpan& t) {
  if (sources_ == nullptr || t.kernel != 0 || t.deep_copy != 0 || t.codeptr == 0) return;
  const std::uint32_t i = row(Category::Target, t.kind, omp_names::target_kind(t.kind), t.codeptr);
  OmpConstructStats& r = rows_[i];
  ++r.calls;
  r.total += t.dur();
  add_call(i, t.dur());
}

std::vector<OmpConstructStats> ConstructRows::result(bool partial) const {
  const auto total = [&](std::uint32_t i) { return rows_[i].category == Category::Mutex ? rows_[i].wait + rows_[i].hold : rows_[i].total; };
  std::vector<std::uint32_t> order(rows_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<FirstKey> first = first_;  // ties: first seen first (seen_first, else the order made)
  if (!first.empty()) first.resize(rows_.size());
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (total(a) != total(b)) return total(a) > total(b);
    return !first.empty() && std::tie(first[a].end, first[a].track, first[a].seq) < std::tie(first[b].end, first[b].track, first[b].seq);
  });
  std::vector<OmpConstructStats> out;
  out.reserve(rows_.size());
  for (std::uint32_t i : order) {
    out.push_back(located(i));
    out.back().total = total(i);
    out.back().partial = partial;
  }
  return out;
}

namespace {

// Kokkos' own code: a function of namespace Kokkos (Kokkos::OpenMP::impl_initialize, ...), or
// an address in libkokkoscore without a symbol.
bool kokkos_code(const SourceLocation& loc) {
  if (loc.function.rfind("Kokkos::", 0) == 0) return true;
  const std::size_t slash = loc.module.rfind('/');
  return loc.function.empty() && loc.module.compare(slash == std::string::npos ? 0 : slash + 1, 13, "libkokkoscore") == 0;
}

}  // namespace

OmpConstructStats ConstructRows::located(std::uint32_t i) const {
  OmpConstructStats r = rows_[i];
  const SourceLocation& loc = *where_[i];
  r.function = loc.function;
  r.file = loc.file;
  r.line = loc.line;
  r.caller = loc.caller;
  r.module = loc.module;
  r.offset = loc.offset;
  r.source = loc.source;
  r.label = loc.label;
  r.kokkos_runtime = kokkos_code(loc);
  return r;
}

void ConstructRows::take_calls(std::map<std::string, std::vector<std::uint64_t>>& out) {
  for (std::uint32_t i = 0; i < calls_.size() && i < rows_.size(); ++i) {
    std::vector<std::uint64_t>& to = out[located(i).place_key()];
    to.insert(to.end(), calls_[i].begin(), calls_[i].end());
  }
  calls_.clear();
}

void ConstructRows::keep_call(std::uint32_t row, std::uint64_t ns) {
  if (row >= calls_.size()) calls_.resize(row + 1);
  calls_[row].push_back(ns);
}

}  // namespace kob::summary_fold_detail
