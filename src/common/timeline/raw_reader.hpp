// Reads a raw trace, PREFIX.kob (docs/raw-format.md): the header, the blocks, each thread's
// chunks in sequence order, and the META facts. Records are decoded one chunk at a time while a
// thread is read (FileThread::read_chunk), never the whole run at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/timeline/thread_source.hpp"

namespace kob::raw {

// The file header's facts (docs/raw-format.md, "File header").
struct RunHeader {
  std::uint32_t version = 0;
  std::uint32_t record_size = 0;
  std::uint64_t pid = 0, parent_pid = 0;
  std::int64_t rank = -1;
  std::uint32_t clock = 0;  // 0: ticks are CLOCK_MONOTONIC_RAW ns; 1: invariant TSC
  std::uint32_t flags = 0;
  std::uint64_t start_tick = 0, start_ns = 0, start_width = 0;
  std::uint64_t wall_ns = 0;
};

struct Kv {
  std::string section, key, value;
};

struct Calib {
  std::uint64_t tick = 0, ns = 0, width = 0;
};

class Reader;

// One thread of the file.
class FileThread : public ThreadSource {
 public:
  std::size_t chunk_count() const override { return chunks_.size(); }
  void read_chunk(std::size_t i, std::vector<Record>& out) const override;
  void read_events(std::size_t i, EventDecoder& decoder, EventChunk& out) const override;
  std::uint64_t chunk_tick(std::size_t i) const override { return i < chunks_.size() ? chunks_[i].base_tick : 0; }
  std::uint64_t records() const;  // in its chunks, as their headers say

 private:
  friend class Reader;
  struct Chunk {
    std::uint64_t seq = 0;
    std::uint64_t block = 0;   // where its block starts
    std::uint64_t offset = 0;  // of the payload (COMPACT) or of the first record (RING)
    std::uint32_t bytes = 0;   // payload bytes (COMPACT)
    std::uint32_t records = 0;
    std::uint64_t base_tick = 0;
    bool ring = false;
  };
  // The payload of COMPACT chunk i (nullptr: it cannot be read), from the calling thread's window
  // on the file: read with the thread's next chunks when they lie close behind it.
  const std::uint8_t* compact_bytes(std::size_t i) const;
  std::vector<Chunk> chunks_;  // by seq
  const Reader* file_ = nullptr;
};

class Reader {
 public:
  Reader() = default;
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads the header and indexes the blocks. false: error holds one line naming the file.
  bool open(const std::string& path, std::string& error);

  const std::string& path() const { return path_; }
  const RunHeader& header() const { return header_; }
  // END was found: the run ended cleanly and the file is complete.
  bool complete() const { return has_end_; }
  std::uint64_t end_tick() const { return end_tick_; }
  // Bytes after the last whole block (a write cut short); 0 for an intact file.
  std::uint64_t cut_tail_bytes() const { return cut_tail_; }
  // Where those bytes start (the file's size when there are none).
  std::uint64_t cut_tail_offset() const { return size_ - cut_tail_; }

  // The first place (lowest byte offset) where opening found the file damaged inside its blocks,
  // and what was wrong there: a count the file cannot back (refused before anything is allocated
  // for it), a META entry running past its block. offset is kNoDamage when none was found.
  static constexpr std::uint64_t kNoDamage = ~std::uint64_t{0};
  struct Damage {
    std::uint64_t offset = kNoDamage;
    std::string what;
  };
  const Damage& damage() const { return damage_; }

  const std::vector<Kv>& kv() const { return kv_; }
  // The last value given to section/key, or fallback.
  std::string kv_value(std::string_view section, std::string_view key, const std::string& fallback = "") const;
  const std::vector<std::pair<std::uint32_t, std::string>>& names() const { return names_; }
  const std::vector<Calib>& calibrations() const { return calibs_; }

  // The threads, by index.
  std::vector<const ThreadSource*> threads() const;
  std::uint64_t total_records() const;
  // Records dropped while decoding damaged COMPACT blocks (so far), and where the first such
  // block starts (kNoDamage while none).
  std::uint64_t damaged_records() const {
    std::lock_guard<std::mutex> lock(mu_);
    return damaged_;
  }
  std::uint64_t damaged_block_offset() const {
    std::lock_guard<std::mutex> lock(mu_);
    return damaged_block_;
  }

  // The straight line tick -> ns: the header's start point and the last CALIB (docs/raw-format.md).
  // false when the file has no CALIB: then, if this machine's clock continues the file's (same
  // boot), a point taken now; else 1 tick per ns (times are then only relative).
  bool clock_line(std::uint64_t& tick0, std::uint64_t& ns0, double& ticks_per_ns) const;
  // Makes clock::to_ns follow clock_line (for build_timeline).
  void apply_clock() const;
  // Makes names().str(id) give the file's names (ids not in the file: a placeholder).
  void load_names() const;

  // Called after each chunk decoded: records decoded so far, and the total.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;

 private:
  friend class FileThread;
  bool read_at(std::uint64_t offset, void* out, std::size_t n) const;
  // Of a slot being filled whose records start at offset: the records from `from` on that are
  // complete (a known type and a tick), up to room; returns the new count.
  std::uint32_t complete_ring_records(std::uint64_t offset, std::uint32_t from, std::uint64_t room) const;
  // A META block's payload, which starts at byte `at` of the file.
  void parse_meta(const std::uint8_t* p, std::size_t n, std::uint64_t at);
  void note_damage(std::uint64_t offset, std::string what);
  // By thread, its blocks' chunks in file order (COMPACT copies and ring slots, a sequence number
  // possibly more than once): a vector each, not a node per chunk (the walk's time went to the nodes).
  using ChunkCopies = std::map<std::uint32_t, std::vector<FileThread::Chunk>>;
  // The steps of open(): the file header; the walk over the blocks, keeping per thread and
  // sequence number the COMPACT copy and the ring slot with the most records; one block's chunk
  // (no records: nothing to read); NAME entries that cannot be the file's; the threads.
  bool read_header(std::string& error);
  void walk_blocks(ChunkCopies& chunks);
  FileThread::Chunk block_chunk(const std::uint8_t* b, std::uint64_t off, std::uint64_t present);
  void drop_bad_names();
  void make_threads(ChunkCopies& chunks);
  // After a chunk of `records` records was decoded, of which `lost` were not (damaged, in the
  // block at byte `block`); calls on_progress. Any thread.
  void note_chunk(std::uint64_t records, std::uint64_t lost, std::uint64_t block) const;

  std::string path_;
  int fd_ = -1;
  std::uint64_t serial_ = 0;  // this open's number in the process: a read window's owner
  std::uint64_t size_ = 0;
  RunHeader header_;
  bool has_end_ = false;
  std::uint64_t end_tick_ = 0;
  std::uint64_t cut_tail_ = 0;
  std::vector<Kv> kv_;
  std::vector<std::pair<std::uint32_t, std::string>> names_;
  std::vector<std::uint64_t> name_offsets_;  // of each NAME entry, while opening
  std::vector<Calib> calibs_;
  struct Identity {  // a THREAD entry
    std::uint64_t os_tid = 0;
    int omp_thread_type = 0, omp_proc = -1, omp_place = -1;
  };
  std::vector<std::pair<std::uint32_t, Identity>> thread_entries_;  // while opening
  std::vector<std::pair<std::uint32_t, Loss>> loss_entries_;        // while opening
  std::vector<std::unique_ptr<FileThread>> threads_;
  // Chunks are decoded on several threads at once (thread_merge.hpp): what they count, under mu_.
  mutable std::mutex mu_;
  mutable std::uint64_t decoded_ = 0;
  mutable std::uint64_t total_ = 0;  // total_records(), once known
  mutable std::uint64_t damaged_ = 0;
  mutable std::uint64_t damaged_block_ = kNoDamage;
  // The damaged blocks counted: a block read again (the builder's pass after the per-thread
  // engine declined) counts once.
  mutable std::set<std::uint64_t> damaged_blocks_;
  Damage damage_;
};

}  // namespace kob::raw
