// One thread's recorded events as build_timeline reads them: its identity, what it lost, and its
// records in the order it made them. The raw trace reader provides one per thread of a PREFIX.kob
// file; MemoryThread holds records in memory (unit tests, and the library while it has no raw
// trace).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/record/event_decoder.hpp"
#include "common/record/record.hpp"
#include "common/record/record_fold.hpp"

namespace kob {

// Why a stretch of a thread's events is missing (docs/raw-format.md, META LOST).
enum class LossReason : std::uint32_t { Unknown = 0, RingFull = 1, WriteFailed = 2, TraceSizeCap = 3 };
const char* loss_reason_name(LossReason r);

// A stretch of events a thread recorded but that never reached the raw trace: whole chunks.
struct Loss {
  std::uint64_t first_tick = 0, last_tick = 0;
  std::uint64_t events = 0;
  LossReason reason = LossReason::Unknown;
};

class ThreadSource {
 public:
  virtual ~ThreadSource() = default;

  // The thread's records come in chunks, in order: how many, and one chunk's records (decoded
  // into out, replacing what it held). Readers of a file decode one chunk at a time, so that
  // several threads can be read side by side (read_threads) with one chunk each in memory.
  virtual std::size_t chunk_count() const = 0;
  virtual void read_chunk(std::size_t i, std::vector<Record>& out) const = 0;
  // The same chunk as events (event.hpp), made by the thread's decoder (which must see the
  // thread's chunks in order), replacing what out held. A file's thread decodes its bytes straight
  // into events; this default makes them from read_chunk's records.
  virtual void read_events(std::size_t i, EventDecoder& decoder, EventChunk& out) const {
    thread_local std::vector<Record> recs;
    read_chunk(i, recs);
    out.clear();
    decoder.append(recs.data(), recs.size(), out);
  }

  // The tick of chunk i's first record, where known (0: not known): what the per-thread engine
  // plans its epochs by (summary_engine.hpp).
  virtual std::uint64_t chunk_tick(std::size_t i) const {
    (void)i;
    return 0;
  }

  // Calls f(recs, n) for each chunk in order; the pointer is valid during the call only.
  using ChunkFn = std::function<void(const Record* recs, std::size_t n)>;
  void for_each_chunk(const ChunkFn& f) const {
    std::vector<Record> recs;
    for (std::size_t i = 0; i < chunk_count(); ++i) {
      read_chunk(i, recs);
      if (!recs.empty()) f(recs.data(), recs.size());
    }
  }

  template <class F>
  void for_each(F&& f) const {
    for_each_chunk([&](const Record* recs, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) f(recs[i]);
    });
  }

  // Identity of the track (see ThreadBuffer).
  std::uint32_t index = 0;
  std::uint64_t os_tid = 0;
  int omp_thread_type = 0;  // 0 unknown, else ompt_thread_t
  int omp_proc = -1, omp_place = -1;
  // Events lost: the total, and the stretches where it is known (a file's LOST entries). A
  // loss with no stretch (dropped > sum of losses) lies after the thread's last recorded event.
  std::uint64_t dropped = 0;
  std::vector<Loss> losses;
};

// Records held in memory.
class MemoryThread : public ThreadSource {
 public:
  std::vector<Record> records;
  std::size_t chunk_count() const override { return records.empty() ? 0 : 1; }
  void read_chunk(std::size_t, std::vector<Record>& out) const override {
    out = records;
    out.resize(fold::unfold_all(out, out.size()));
  }
};

}  // namespace kob
