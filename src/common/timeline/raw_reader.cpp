#include "common/timeline/raw_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <thread>

#include "common/record/clock.hpp"
#include "common/record/record_fold.hpp"
#include "common/record/intern.hpp"
#include "common/record/record_codec.hpp"
#include "common/support/blocked_signals.hpp"

namespace kob::raw {

namespace {

// Little-endian field access (the format's byte order; checked against the header).
template <class T>
T get(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Bytes the read window keeps after what it holds: every record of a chunk is then decoded
// without bound checks (codec::decode_into's readable_after).
constexpr std::size_t kReadableAfter = codec::kMaxRecordBytes;

// The layout (docs/raw-format.md); private to the reader, which follows the document alone.
constexpr std::uint32_t kFormatVersion = 4;
constexpr std::uint32_t kHeaderSize = 4096;
constexpr std::uint32_t kBlockMagic = 0x4B4C424B;  // "KBLK"
constexpr std::size_t kBlockHeaderSize = 48;
constexpr std::size_t kRingRecordsOffset = 64;  // within a slot: block header, state, committed
// The ring slot sizes writers use (32 KiB; 128 KiB before issue 18): a slot cut short by the end
// of the file is read up to there only when its header gives one of them.
constexpr std::uint32_t kRingPayloads[] = {32768 - kBlockHeaderSize, 131072 - kBlockHeaderSize};
// The fewest bytes a COMPACT record takes (its head: type, mask, a 3-byte tick step): a block
// cannot hold more records than its payload has room for at this size.
constexpr std::uint32_t kMinCompactRecordBytes = 5;
// NAME ids are handed out one after the other, so a file with N NAME entries names ids up to about
// N; an id far beyond is damage, and taking it would make the name table allocate up to it.
constexpr std::uint64_t kNameIdSlack = 65536;
enum class BlockKind : std::uint16_t { Compact = 1, Ring = 2, Meta = 3, Pad = 4 };
enum class MetaTag : std::uint16_t { Name = 1, Thread = 2, Kv = 3, Calib = 4, Lost = 5, End = 6 };
constexpr char kMagic[8] = {'K', 'O', 'B', 'R', 'A', 'W', 0, 0};
constexpr std::uint32_t kByteOrder = 0x01020304;

std::uint64_t round8(std::uint64_t n) { return (n + 7) & ~std::uint64_t(7); }

// A string inside a META entry: u32 length + bytes.
bool get_string(const std::uint8_t*& p, const std::uint8_t* end, std::string& out) {
  if (end - p < 4) return false;
  const std::uint32_t n = get<std::uint32_t>(p);
  p += 4;
  if (std::uint64_t(end - p) < n) return false;
  out.assign(reinterpret_cast<const char*>(p), n);
  p += n;
  return true;
}

}  // namespace

Reader::~Reader() {
  if (fd_ >= 0) ::close(fd_);
}

bool Reader::read_at(std::uint64_t offset, void* out, std::size_t n) const {
  auto* p = static_cast<std::uint8_t*>(out);
  while (n > 0) {
    const ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
    offset += static_cast<std::uint64_t>(r);
  }
  return true;
}

std::uint32_t Reader::complete_ring_records(std::uint64_t offset, std::uint32_t from, std::uint64_t room) const {
  std::uint32_t n = from;
  Record batch[64];
  while (n < room) {
    const std::size_t want = std::min<std::uint64_t>(64, room - n);
    if (!read_at(offset + std::uint64_t{n} * sizeof(Record), batch, want * sizeof(Record))) break;
    for (std::size_t i = 0; i < want; ++i, ++n) {
      const auto type = static_cast<std::uint16_t>(batch[i].type);
      if (type == 0 || type >= static_cast<std::uint16_t>(Ev::OmpLast) || batch[i].tick == 0) return n;
    }
  }
  return n;
}

bool Reader::open(const std::string& path, std::string& error) {
  static std::atomic<std::uint64_t> opens{0};
  serial_ = ++opens;
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st{};
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + " is not a regular file";
    return false;
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (!read_header(error)) return false;
  ChunkCopies chunks;
  walk_blocks(chunks);
  drop_bad_names();
  make_threads(chunks);
  return true;
}

bool Reader::read_header(std::string& error) {
  const std::string& path = path_;
  std::uint8_t h[96];
  if (size_ < kHeaderSize || !read_at(0, h, sizeof h)) {
    error = path + " is not a kokkos-ompt-bridge raw trace (shorter than its 4096-byte header)";
    return false;
  }
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0) {
    error = path + " is not a kokkos-ompt-bridge raw trace (no KOBRAW magic)";
    return false;
  }
  if (get<std::uint32_t>(h + 20) != kByteOrder) {
    error = path + " was written on a machine of another byte order; it cannot be read here";
    return false;
  }
  header_.version = get<std::uint32_t>(h + 8);
  if (header_.version != kFormatVersion) {
    error = path + " has raw trace format version " + std::to_string(header_.version) + "; this kob reads version " +
            std::to_string(kFormatVersion);
    return false;
  }
  header_.record_size = get<std::uint32_t>(h + 16);
  if (get<std::uint32_t>(h + 12) != kHeaderSize || header_.record_size != sizeof(Record)) {
    error = path + " has an unexpected header or record size; it is damaged or from another version";
    return false;
  }
  header_.pid = get<std::uint64_t>(h + 24);
  header_.parent_pid = get<std::uint64_t>(h + 32);
  header_.rank = get<std::int64_t>(h + 40);
  header_.clock = get<std::uint32_t>(h + 48);
  header_.flags = get<std::uint32_t>(h + 52);
  header_.start_tick = get<std::uint64_t>(h + 56);
  header_.start_ns = get<std::uint64_t>(h + 64);
  header_.start_width = get<std::uint64_t>(h + 72);
  header_.wall_ns = get<std::uint64_t>(h + 80);
  return true;
}

namespace {

// A window on the file for a walk over its block headers: kWalkWindow bytes read at a time (a
// read per header, a block being a few KiB, was most of the walk, a system call each). Where the
// window cannot be read whole (the file shrank since its size was taken), the header alone is read.
constexpr std::size_t kWalkWindow = std::size_t{1} << 16;
struct HeaderWindow {
  // Not zeroed (a 64 KiB memset was 65,000 instructions of every kob start, callgrind): only what
  // a read filled is looked at.
  std::unique_ptr<std::uint8_t[]> bytes{new std::uint8_t[kWalkWindow]};
  std::uint64_t at = 0;
  std::size_t held = 0;
  template <class Read>
  bool header(std::uint64_t off, std::uint64_t size, std::uint8_t* b, Read&& read_at) {
    if (off < at || off + kBlockHeaderSize > at + held) {
      at = off;
      held = static_cast<std::size_t>(std::min<std::uint64_t>(kWalkWindow, size - off));
      if (!read_at(off, bytes.get(), held)) {
        held = 0;
        return read_at(off, b, kBlockHeaderSize);
      }
    }
    std::memcpy(b, bytes.get() + (off - at), kBlockHeaderSize);
    return true;
  }
};

// A block header read ahead by the helper of a walk, and where it lies.
struct FarHeader {
  std::uint64_t off;
  std::uint8_t b[kBlockHeaderSize];
};

// Below this size one thread walks the whole file; the most headers the helper keeps (12 MiB).
constexpr std::uint64_t kTwoWalkers = std::uint64_t{8} << 20;
constexpr std::size_t kFarHeaders = std::size_t{1} << 18;

}  // namespace

void Reader::walk_blocks(ChunkCopies& chunks) {
  const auto read = [this](std::uint64_t off, void* out, std::size_t n) { return read_at(off, out, n); };
  // A large file's second half is walked by a helper thread at the same time: from the first
  // place past the middle that holds the block magic, it reads the headers of the chain it finds
  // there (a guess: the magic may be a payload's bytes). The walk below takes a header from that
  // list only where the list has one at the very offset it has reached, so the guess decides how
  // much the helper saves, never what the walk finds; a header not there is read as before.
  std::vector<FarHeader> far;                        // the helper's, until it is joined
  std::atomic<std::uint64_t> far_start{UINT64_MAX};  // where its list begins, once it knows
  std::atomic<bool> stop{false};                     // the walk below has ended: the helper may too
  std::thread helper;
  if (size_ >= kTwoWalkers) {
    try {
      const BlockAllSignals blocked;  // the program's signals are for its own threads
      helper = std::thread([this, &far, &far_start, &stop, read] {
        try {
          HeaderWindow w;
          std::uint64_t off = kHeaderSize + (size_ / 2 - kHeaderSize) / 8 * 8;  // blocks start 8-aligned from the header
          std::uint8_t b[kBlockHeaderSize];
          for (; off + kBlockHeaderSize <= size_; off += 8)
            if (!w.header(off, size_, b, read) || get<std::uint32_t>(b) == kBlockMagic) break;
          far_start.store(off, std::memory_order_release);
          // At most kFarHeaders (a file of tiny blocks): the walk reads the rest itself.
          while (far.size() < kFarHeaders && !stop.load(std::memory_order_relaxed) && off + kBlockHeaderSize <= size_ &&
                 w.header(off, size_, b, read) && get<std::uint32_t>(b) == kBlockMagic) {
            FarHeader& h = far.emplace_back();
            h.off = off;
            std::memcpy(h.b, b, sizeof b);
            off += round8(kBlockHeaderSize + std::uint64_t(get<std::uint32_t>(b + 12)));
          }
        } catch (...) {
          // Out of memory: the list so far holds good headers all the same.
        }
      });
    } catch (...) {
      // No thread: one walker.
    }
  }
  HeaderWindow window;
  std::size_t next_far = 0;  // where to look in far (once the helper is joined)
  const auto header = [&](std::uint64_t off, std::uint8_t* b) {
    if (helper.joinable() && off >= far_start.load(std::memory_order_acquire)) helper.join();  // its list is whole
    if (!helper.joinable()) {
      while (next_far < far.size() && far[next_far].off < off) ++next_far;
      if (next_far < far.size() && far[next_far].off == off) {
        std::memcpy(b, far[next_far++].b, kBlockHeaderSize);
        return true;
      }
    }
    return window.header(off, size_, b, read);
  };
  struct JoinAtEnd {
    std::thread& t;
    std::atomic<bool>& stop;
    ~JoinAtEnd() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join_at_end{helper, stop};
  std::uint32_t last_thread = 0;
  std::vector<FileThread::Chunk>* last_chunks = nullptr;  // last_thread's (blocks of a thread come in runs)
  std::uint64_t off = kHeaderSize;
  while (off + kBlockHeaderSize <= size_) {
    std::uint8_t b[kBlockHeaderSize];
    if (!header(off, b) || get<std::uint32_t>(b) != kBlockMagic) break;
    const auto kind = static_cast<BlockKind>(get<std::uint16_t>(b + 4));
    const std::uint32_t payload = get<std::uint32_t>(b + 12);
    const std::uint64_t next = off + round8(kBlockHeaderSize + std::uint64_t(payload));
    // A block past the end ends the walk (a write cut short). A ring slot is the exception: its
    // records are written in place, so those before the cut are whole (a copy of the file cut short).
    const bool cut = off + kBlockHeaderSize + payload > size_;
    if (cut && (kind != BlockKind::Ring || std::find(std::begin(kRingPayloads), std::end(kRingPayloads), payload) ==
                                                std::end(kRingPayloads)))
      break;
    const std::uint64_t present = cut ? size_ - off - kBlockHeaderSize : payload;
    const FileThread::Chunk c = block_chunk(b, off, present);
    if (c.records != 0) {
      const std::uint32_t thread = get<std::uint32_t>(b + 8);
      if (last_chunks == nullptr || thread != last_thread) {
        last_chunks = &chunks[thread];
        last_thread = thread;
      }
      last_chunks->push_back(c);
    }
    if (cut) break;
    off = next;
  }
  cut_tail_ = off < size_ ? size_ - off : 0;
}

FileThread::Chunk Reader::block_chunk(const std::uint8_t* b, std::uint64_t off, std::uint64_t present) {
  const auto kind = static_cast<BlockKind>(get<std::uint16_t>(b + 4));
  const std::uint32_t thread = get<std::uint32_t>(b + 8);
  const std::uint32_t payload = get<std::uint32_t>(b + 12);
  FileThread::Chunk c;
  c.seq = get<std::uint64_t>(b + 16);
  c.block = off;
  switch (kind) {
    case BlockKind::Compact:
      c.offset = off + kBlockHeaderSize;
      c.bytes = payload;
      c.records = get<std::uint32_t>(b + 24);
      c.base_tick = get<std::uint64_t>(b + 32);
      if (c.records > payload / kMinCompactRecordBytes) {
        note_damage(off + 24, "a COMPACT block of thread " + std::to_string(thread) + " claims " + std::to_string(c.records) +
                                  " records in " + std::to_string(payload) + " bytes; only what the bytes hold is read");
        c.records = payload / kMinCompactRecordBytes;
      }
      break;
    case BlockKind::Ring: {
      std::uint8_t w[8];
      if (present < kRingRecordsOffset - kBlockHeaderSize || !read_at(off + kBlockHeaderSize, w, sizeof w)) break;
      const std::uint32_t state = get<std::uint32_t>(w), committed = get<std::uint32_t>(w + 4);
      const std::uint64_t room = (present - (kRingRecordsOffset - kBlockHeaderSize)) / sizeof(Record);
      if (c.seq == 0 || (state != 1 && state != 2) || (committed == 0 && state != 1)) break;
      c.ring = true;
      c.offset = off + kRingRecordsOffset;
      c.records = static_cast<std::uint32_t>(std::min<std::uint64_t>(committed, room));
      // The slot being filled: its thread publishes no count per event (the writer thread
      // brings `committed` up to date now and then), but slots are zeroed before reuse, so the
      // complete records past the count are those with a type and a tick.
      if (state == 1) c.records = complete_ring_records(c.offset, c.records, room);
      break;
    }
    case BlockKind::Meta: {
      std::vector<std::uint8_t> meta(payload);
      if (read_at(off + kBlockHeaderSize, meta.data(), payload)) parse_meta(meta.data(), payload, off + kBlockHeaderSize);
      break;
    }
    default:  // PAD, or a kind this reader does not know: skipped whole
      break;
  }
  return c;
}

// NAME ids far beyond the entries' count cannot be the file's (see kNameIdSlack).
void Reader::drop_bad_names() {
  const std::uint64_t max_name_id = kNameIdSlack + 16 * std::uint64_t(names_.size());
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i].first > max_name_id)
      note_damage(name_offsets_[i], "a NAME entry gives id " + std::to_string(names_[i].first) + " to " +
                                        std::to_string(names_.size()) + " names; ignored");
  std::erase_if(names_, [&](const auto& n) { return n.first > max_name_id; });
  name_offsets_.clear();
}

void Reader::make_threads(ChunkCopies& chunks) {
  // META was parsed into kv_, names_, calibs_; the THREAD and LOST entries were kept aside.
  std::map<std::uint32_t, Identity> identity;  // THREAD entries, the last one of each thread
  std::map<std::uint32_t, std::vector<Loss>> losses;
  for (const auto& [index, id] : thread_entries_) identity[index] = id;
  for (const auto& [index, l] : loss_entries_) losses[index].push_back(l);
  thread_entries_.clear();
  loss_entries_.clear();

  std::map<std::uint32_t, bool> indices;
  for (const auto& [i, c] : chunks) indices[i] = true;
  for (const auto& [i, c] : identity) indices[i] = true;
  for (const auto& [i, l] : losses) indices[i] = true;
  for (const auto& [index, unused] : indices) {
    auto t = std::make_unique<FileThread>();
    t->file_ = this;
    t->index = index;
    if (auto it = identity.find(index); it != identity.end()) {
      t->os_tid = it->second.os_tid;
      t->omp_thread_type = it->second.omp_thread_type;
      t->omp_proc = it->second.omp_proc;
      t->omp_place = it->second.omp_place;
    }
    if (auto it = losses.find(index); it != losses.end()) {
      t->losses = it->second;
      for (const Loss& l : t->losses) t->dropped += l.events;
    }
    // A slot's records count when its COMPACT copy has fewer: what the writer had not copied when
    // the process ended. After END the writer has copied every slot, and records a thread still
    // put in its slot after that (thread ends at exit) are not part of the run.
    if (auto it = chunks.find(index); it != chunks.end()) {
      // Per sequence number the COMPACT copy and the ring slot with the most records (the first
      // in the file of equals), in sequence order (the file's order, but for a copy made again).
      std::vector<FileThread::Chunk>& found = it->second;
      const auto by_seq = [](const FileThread::Chunk& a, const FileThread::Chunk& b) { return a.seq < b.seq; };
      if (!std::is_sorted(found.begin(), found.end(), by_seq)) {
        // The COMPACT copies lie in sequence order but for a copy made again; the few ring slots
        // (which hold the latest chunks) lie before them: sorted apart, then merged (a sort of the
        // whole was most of the index's making).
        const auto rings_end = std::stable_partition(found.begin(), found.end(), [](const FileThread::Chunk& c) { return c.ring; });
        std::stable_sort(found.begin(), rings_end, by_seq);
        if (!std::is_sorted(rings_end, found.end(), by_seq)) std::stable_sort(rings_end, found.end(), by_seq);
        std::inplace_merge(found.begin(), rings_end, found.end(), by_seq);
      }
      t->chunks_.reserve(found.size());
      for (std::size_t g = 0; g < found.size();) {
        FileThread::Chunk compact, ring;
        std::size_t e = g;
        for (; e < found.size() && found[e].seq == found[g].seq; ++e) {
          FileThread::Chunk& best = found[e].ring ? ring : compact;
          if (found[e].records > best.records) best = found[e];
        }
        g = e;
        const bool use_ring = !has_end_ && ring.records > compact.records;
        if (use_ring || compact.records != 0) t->chunks_.push_back(use_ring ? ring : compact);
      }
      std::vector<FileThread::Chunk>().swap(found);  // the next thread's copies may use its memory
    }
    threads_.push_back(std::move(t));
  }
}

void Reader::note_damage(std::uint64_t offset, std::string what) {
  if (offset >= damage_.offset) return;
  damage_.offset = offset;
  damage_.what = std::move(what);
}

void Reader::parse_meta(const std::uint8_t* p, std::size_t n, std::uint64_t at) {
  const std::uint8_t* begin = p;
  const std::uint8_t* end = p + n;
  while (end - p >= 8) {
    const std::uint64_t entry_at = at + std::uint64_t(p - begin);
    const auto tag = static_cast<MetaTag>(get<std::uint16_t>(p));
    const std::uint32_t len = get<std::uint32_t>(p + 4);
    p += 8;
    if (std::uint64_t(end - p) < len) {
      note_damage(entry_at, "a META entry of " + std::to_string(len) + " bytes runs past its block (" +
                                std::to_string(end - p) + " bytes left); the rest of the block is ignored");
      break;
    }
    const std::uint8_t* e = p;
    const std::uint8_t* e_end = p + len;
    switch (tag) {
      case MetaTag::Name:
        if (len >= 4) {
          names_.emplace_back(get<std::uint32_t>(e), std::string(reinterpret_cast<const char*>(e + 4), len - 4));
          name_offsets_.push_back(entry_at);
        }
        break;
      case MetaTag::Thread:
        if (len >= 32) {
          Identity id;
          id.os_tid = get<std::uint64_t>(e + 8);
          id.omp_thread_type = get<std::int32_t>(e + 16);
          id.omp_proc = get<std::int32_t>(e + 20);
          id.omp_place = get<std::int32_t>(e + 24);
          thread_entries_.emplace_back(get<std::uint32_t>(e), id);
        }
        break;
      case MetaTag::Kv: {
        Kv kv;
        if (get_string(e, e_end, kv.section) && get_string(e, e_end, kv.key) && get_string(e, e_end, kv.value))
          kv_.push_back(std::move(kv));
        else
          note_damage(entry_at, "a KV entry's strings run past its " + std::to_string(len) + " bytes; ignored");
        break;
      }
      case MetaTag::Calib:
        if (len >= 24) calibs_.push_back({get<std::uint64_t>(e), get<std::uint64_t>(e + 8), get<std::uint64_t>(e + 16)});
        break;
      case MetaTag::Lost:
        if (len >= 32) {
          Loss l;
          l.reason = static_cast<LossReason>(get<std::uint32_t>(e + 4));
          l.first_tick = get<std::uint64_t>(e + 8);
          l.last_tick = get<std::uint64_t>(e + 16);
          l.events = get<std::uint64_t>(e + 24);
          loss_entries_.emplace_back(get<std::uint32_t>(e), l);
        }
        break;
      case MetaTag::End:
        if (len >= 8) {
          has_end_ = true;
          end_tick_ = get<std::uint64_t>(e);
        }
        break;
      default:  // unknown tags are skipped
        break;
    }
    p = e_end;
  }
}

std::string Reader::kv_value(std::string_view section, std::string_view key, const std::string& fallback) const {
  for (auto it = kv_.rbegin(); it != kv_.rend(); ++it)
    if (it->section == section && it->key == key) return it->value;
  return fallback;
}

std::vector<const ThreadSource*> Reader::threads() const {
  std::vector<const ThreadSource*> v;
  for (const auto& t : threads_) v.push_back(t.get());
  return v;
}

std::uint64_t Reader::total_records() const {
  std::uint64_t n = 0;
  for (const auto& t : threads_) n += t->records();
  return n;
}

void Reader::note_chunk(std::uint64_t records, std::uint64_t lost, std::uint64_t block) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (lost != 0 && damaged_blocks_.insert(block).second) {
    damaged_ += lost;
    damaged_block_ = std::min(damaged_block_, block);
  }
  decoded_ += records;
  if (!on_progress) return;
  if (total_ == 0) total_ = total_records();  // counted once: a walk over every chunk
  on_progress(decoded_, total_);
}

bool Reader::clock_line(std::uint64_t& tick0, std::uint64_t& ns0, double& ticks_per_ns) const {
  tick0 = header_.start_tick;
  ns0 = header_.start_ns;
  ticks_per_ns = 1.0;
  if (header_.clock == 0) {  // ticks are ns already
    tick0 = ns0 = 0;
    return true;
  }
  for (auto it = calibs_.rbegin(); it != calibs_.rend(); ++it) {
    if (it->tick > tick0 && it->ns > ns0) {
      ticks_per_ns = double(it->tick - tick0) / double(it->ns - ns0);
      return true;
    }
  }
  // No usable CALIB (a run cut short within its first second): this machine's clocks continue
  // the file's when both have moved on since its start point (same boot). Two conversions then
  // take rates a hair apart; KOB_TEST_TICKS_PER_NS gives tests that compare two one rate.
  if (const char* fixed = std::getenv("KOB_TEST_TICKS_PER_NS")) {
    char* end = nullptr;
    const double r = std::strtod(fixed, &end);
    if (*end == '\0' && r > 0) {
      ticks_per_ns = r;
      return false;
    }
  }
  const clock::Point now = clock::take_point(+[]() -> std::uint64_t {
#ifdef KOB_HAVE_TSC
    return __rdtsc();
#else
    return clock::raw_ns();
#endif
  }, +[]() { return clock::raw_ns(); }, 5);
  if (now.tick > tick0 && now.ns > ns0) ticks_per_ns = double(now.tick - tick0) / double(now.ns - ns0);
  return false;
}

void Reader::apply_clock() const {
  std::uint64_t tick0 = 0, ns0 = 0;
  double rate = 1.0;
  clock_line(tick0, ns0, rate);
  clock::set_calibration(header_.clock != 0, tick0, ns0, rate);
}

void Reader::load_names() const {
  InternTable& table = kob::names();
  for (const auto& [id, text] : names_) table.define(id, text);
}

std::uint64_t FileThread::records() const {
  std::uint64_t n = 0;
  for (const Chunk& c : chunks_) n += c.records;
  return n;
}

namespace {
// read_chunk's sink (codec::decode_into): each record decoded in its place in recs and unfolded
// there (room for the 4 records a folded one may stand for).
struct RecordsInto {
  std::vector<Record>* recs;  // a pointer: decode_into copies the sink
  Record* out;
  Record* cap;
  template <unsigned T>
  void put(std::uint64_t tick, const std::uint64_t* l, std::uint64_t u0, std::uint64_t u1, std::uint64_t) {
    if (__builtin_expect(cap - out < 4, 0)) {
      const std::size_t at = static_cast<std::size_t>(out - recs->data());
      recs->resize(recs->size() + recs->size() / 2 + 4);
      out = recs->data() + at;
      cap = recs->data() + recs->size();
    }
    codec::write_record(*out, T, tick, l, u0, u1);
    out = fold::unfold_in_place(out);
  }
};
}  // namespace

const std::uint8_t* FileThread::compact_bytes(std::size_t i) const {
  // A read per chunk (a few KiB) cost more in system calls than the decoding of a chunk on a
  // virtual machine. The window takes the chunks after this one too, while they lie in file order
  // within kReadWindow and the window holds at most twice their bytes (other threads' blocks lie
  // between them: with many threads each chunk is read alone). Per calling thread: the engine
  // keeps a program thread on the same worker where it can.
  constexpr std::uint64_t kReadWindow = std::uint64_t{1} << 16;
  struct Window {
    std::uint64_t serial = 0;  // the Reader's (0: none)
    std::uint64_t at = 0, bytes = 0;
    std::unique_ptr<std::uint8_t[]> buf;  // not zeroed (see HeaderWindow)
    std::size_t size = 0;
  };
  thread_local Window w;
  const Chunk& c = chunks_[i];
  if (w.serial == file_->serial_ && c.offset >= w.at && c.offset + c.bytes <= w.at + w.bytes) return w.buf.get() + (c.offset - w.at);
  std::uint64_t end = c.offset + c.bytes, useful = c.bytes;
  for (std::size_t j = i + 1; j < chunks_.size(); ++j) {
    const Chunk& d = chunks_[j];
    const std::uint64_t e = d.offset + d.bytes;
    if (d.ring || d.offset < end || e - c.offset > kReadWindow || 2 * (useful + d.bytes) < e - c.offset) break;
    end = e;
    useful += d.bytes;
  }
  w.serial = 0;
  // Sized once for a whole window (growing it step by step zeroed and copied it each time), with
  // kReadableAfter bytes after what it holds, for the decoder (read_events).
  if (w.size < end - c.offset + kReadableAfter) {
    w.size = static_cast<std::size_t>(std::max<std::uint64_t>(end - c.offset, kReadWindow) + kReadableAfter);
    w.buf.reset(new std::uint8_t[w.size]);
  }
  // What lies after the chunks read, as the decoder may read it: set, never left as it was.
  const auto read = [&](std::uint64_t n) {
    if (!file_->read_at(c.offset, w.buf.get(), n)) return false;
    std::memset(w.buf.get() + n, 0, kReadableAfter);
    return true;
  };
  if (!read(end - c.offset)) {
    // The window runs past what the file holds now (cut since it was opened): the chunk alone.
    return end != c.offset + c.bytes && read(c.bytes) ? w.buf.get() : nullptr;
  }
  w.serial = file_->serial_;
  w.at = c.offset;
  w.bytes = end - c.offset;
  return w.buf.get();
}

void FileThread::read_chunk(std::size_t i, std::vector<Record>& recs) const {
  if (i >= chunks_.size()) {
    recs.clear();
    return;
  }
  const Chunk& c = chunks_[i];
  // Decoded straight into recs: sized up (not cleared first, so a caller that reuses it does not
  // have it zeroed for every chunk), then cut to what was read. A folded record is unfolded as it
  // is decoded (record_fold.hpp): recs grows when the folded records need more room.
  if (recs.size() < c.records) recs.resize(c.records);
  std::size_t n = 0, out_n = 0;
  if (c.ring) {
    if (file_->read_at(c.offset, recs.data(), std::size_t(c.records) * sizeof(Record))) n = c.records;
    recs.resize(n);
    out_n = fold::unfold_all(recs, n);
  } else {
    if (const std::uint8_t* bytes = compact_bytes(i)) {
      RecordsInto into{&recs, recs.data(), recs.data() + recs.size()};
      n = codec::decode_into(bytes, c.bytes, c.records, c.base_tick, into);
      out_n = static_cast<std::size_t>(into.out - recs.data());
    }
  }
  recs.resize(out_n);
  file_->note_chunk(c.records, c.records - std::min<std::uint64_t>(n, c.records), c.block);
}

void FileThread::read_events(std::size_t i, EventDecoder& decoder, EventChunk& out) const {
  out.clear();
  if (i >= chunks_.size()) return;
  const Chunk& c = chunks_[i];
  std::size_t n = 0;
  if (c.ring) {
    thread_local std::vector<Record> recs;
    recs.resize(c.records);
    if (file_->read_at(c.offset, recs.data(), std::size_t(c.records) * sizeof(Record))) {
      n = c.records;
      decoder.append(recs.data(), n, out);
    }
  } else {
    if (const std::uint8_t* bytes = compact_bytes(i)) n = decoder.decode(bytes, c.bytes, c.records, c.base_tick, out, kReadableAfter);
  }
  file_->note_chunk(c.records, c.records - std::min<std::uint64_t>(n, c.records), c.block);
}

}  // namespace kob::raw
