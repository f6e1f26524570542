// Folded records: a sync region (barrier, taskwait, reduction...) and its wait, four callbacks on a
// thread, are stored as one OmpSyncBegin record that the later callbacks complete in place while it
// is still the thread's last record (ompt_backend/host_callbacks.cpp). One record instead of four
// is the recording's largest saving: a 2-thread OpenMP-backend kernel writes 10 records, not 16.
// Readers unfold it back into the records it stands for (the timeline never sees a folded one),
// so everything built from a trace is the same as if each callback had written its own record.
// A thread killed in the middle leaves the steps done so far: the same as separate records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/record/record.hpp"
#include "common/record/record_fields.hpp"

namespace kob::fold {

using Sync = fields::OmpSync;

// A step's tick as stored: the ticks since the step before, plus one (0: not folded).
inline std::uint64_t step(std::uint64_t tick, std::uint64_t before) { return tick - before + 1; }

// How many records r stands for.
inline std::size_t count(const Record& r) {
  if (r.type != Ev::OmpSyncBegin) return 1;
  return 1 + (Sync::wait_begin_step.get(r) != 0) + (Sync::wait_end_step.get(r) != 0) + (Sync::end_step.get(r) != 0);
}

// Writes the records r stands for at out (room for count(r)); returns the end. Any values are
// accepted (a damaged file): a step of 0 is left out, ticks wrap as unsigned numbers.
// As unfold, for a record already in place at `at` (room for count(*at) there): the records it
// stands for besides its own follow it.
inline Record* unfold_in_place(Record* at) {
  if (at->type != Ev::OmpSyncBegin) return at + 1;
  const std::uint64_t wait_begin = Sync::wait_begin_step.get(*at), wait_end = Sync::wait_end_step.get(*at),
                      end = Sync::end_step.get(*at);
  if ((wait_begin | wait_end | end) == 0) return at + 1;
  Sync::wait_begin_step.set(*at, 0);
  Sync::wait_end_step.set(*at, 0);
  Sync::end_step.set(*at, 0);
  Record* p = at + 1;
  std::uint64_t t = at->tick;
  const auto unfold_step = [&](std::uint64_t s, Ev type) {
    if (s == 0) return;
    t += s - 1;
    *p = *at;
    p->tick = t;
    p->type = type;
    ++p;
  };
  unfold_step(wait_begin, Ev::OmpSyncWaitBegin);
  unfold_step(wait_end, Ev::OmpSyncWaitEnd);
  unfold_step(end, Ev::OmpSyncEnd);
  return p;
}

inline Record* unfold(const Record& r, Record* out) {
  *out = r;
  return unfold_in_place(out);
}

// Unfolds recs[0, n) in place (recs grows by what the folded records add). Returns the new size.
inline std::size_t unfold_all(std::vector<Record>& recs, std::size_t n) {
  std::size_t extra = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (recs[i].type == Ev::OmpSyncBegin) extra += count(recs[i]) - 1;
  if (extra == 0) return n;
  recs.resize(n + extra);
  // From the back, so that every record moves once and none is overwritten before it is read.
  std::size_t dst = n + extra;
  for (std::size_t i = n; i-- > 0;) {
    const Record r = recs[i];
    const std::size_t k = count(r);
    dst -= k;
    unfold(r, &recs[dst]);
  }
  return n + extra;
}

}  // namespace kob::fold
