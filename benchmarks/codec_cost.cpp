// The writer's encoding on the records of a real run (benchmarks/pipeline_cost.py --only writer):
// every thread's records of RAW.kob coded again in slot-sized chunks, the way the writer codes a
// full ring slot (raw::write_chunk). Under callgrind, codec::encode's inclusive Ir over `records`
// is the encoding's price per record on the data a native run records; a live run under valgrind
// records time steps ~50x longer (longer varints) than the same program without it.
// The reader unfolds folded sync records (record_fold.hpp); they are folded again here as the
// recorder folds them (a step completes the thread's last record, in the same slot), so the coder
// sees what the writer sees. Prints `records N bytes B chunks C folded F` and exits 1 if a chunk
// does not decode to what was coded.
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/record/raw_format.hpp"
#include "common/record/record_fold.hpp"
#include "common/record/record_codec.hpp"
#include "common/timeline/raw_reader.hpp"

namespace {

using Sync = kob::fields::OmpSync;

// Folds recs as host_callbacks.cpp does: each step of a sync region (wait begin, wait end, end)
// that follows its begin (or the step before) in the same slot completes the begin's record.
std::vector<kob::Record> refold(const std::vector<kob::Record>& recs, std::uint64_t& folded) {
  std::vector<kob::Record> out;
  out.reserve(recs.size());
  std::size_t open = SIZE_MAX;  // out index of a foldable begin
  std::uint64_t last_tick = 0;
  int stage = 0;                // 1 begun, 2 waiting, 3 waited
  for (const kob::Record& r : recs) {
    const bool same_slot = open != SIZE_MAX && open + 1 == out.size() && out.size() % kob::raw::kSlotRecords != 0;
    const bool same = same_slot && Sync::kind.get(r) == Sync::kind.get(out[open]) &&
                      r.u[0] == out[open].u[0] && r.u[1] == out[open].u[1];
    auto step = [&](auto field, int from, int to) {
      if (!same || stage != from) return false;
      field.set(out[open], kob::fold::step(r.tick, last_tick));
      last_tick = r.tick;
      stage = to;
      ++folded;
      return true;
    };
    bool done = false;
    if (r.type == kob::Ev::OmpSyncWaitBegin) done = step(Sync::wait_begin_step, 1, 2);
    else if (r.type == kob::Ev::OmpSyncWaitEnd) done = step(Sync::wait_end_step, 2, 3);
    else if (r.type == kob::Ev::OmpSyncEnd) done = step(Sync::end_step, stage == 1 ? 1 : 3, 0);
    if (done) continue;
    out.push_back(r);
    if (r.type == kob::Ev::OmpSyncBegin) {
      open = out.size() - 1;
      last_tick = r.tick;
      stage = 1;
    } else {
      open = SIZE_MAX;
      stage = 0;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: codec_cost RAW.kob\n");
    return 2;
  }
  kob::raw::Reader reader;
  std::string error;
  if (!reader.open(argv[1], error)) {
    std::fprintf(stderr, "codec_cost: %s\n", error.c_str());
    return 1;
  }
  std::vector<std::vector<kob::Record>> threads;
  std::uint64_t folded = 0;
  for (const kob::ThreadSource* th : reader.threads()) {
    std::vector<kob::Record> recs;
    th->for_each_chunk([&](const kob::Record* r, std::size_t n) { recs.insert(recs.end(), r, r + n); });
    threads.push_back(refold(recs, folded));
  }
  std::vector<std::uint8_t> buf(std::size_t{kob::raw::kSlotRecords} * kob::codec::kMaxRecordBytes);
  std::uint64_t records = 0, bytes = 0, chunks = 0;
  bool same = true;
  for (const std::vector<kob::Record>& recs : threads) {
    for (std::size_t at = 0; at < recs.size(); at += kob::raw::kSlotRecords) {
      const std::size_t n = std::min<std::size_t>(kob::raw::kSlotRecords, recs.size() - at);
      const kob::Record* chunk = recs.data() + at;
      const std::size_t b = kob::codec::encode(chunk, n, chunk[0].tick, buf.data());
      std::size_t k = 0;
      kob::codec::decode(buf.data(), b, n, chunk[0].tick, [&](const kob::Record& r) {
        same = same && std::memcmp(&r, &chunk[k], sizeof r) == 0;
        ++k;
      });
      same = same && k == n;
      records += n;
      bytes += b;
      ++chunks;
    }
  }
  std::printf("records %llu bytes %llu chunks %llu folded %llu\n", static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(chunks),
              static_cast<unsigned long long>(folded));
  if (!same) std::fprintf(stderr, "codec_cost: a chunk did not decode to the records coded\n");
  return same ? 0 : 1;
}
