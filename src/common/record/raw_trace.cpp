#include "common/record/raw_trace.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <vector>

#include "common/record/clock.hpp"
#include "common/record/intern.hpp"
#include "common/support/log.hpp"
#include "common/record/module_map.hpp"
#include "common/record/raw_writer.hpp"
#include "common/record/record_codec.hpp"
#include "common/record/recorder.hpp"

namespace kob::raw {

namespace {
// Room kept under --max-trace-size for the META entries written after the last chunk.
constexpr std::uint64_t kMetaReserve = 16 << 10;
}  // namespace

namespace {

// A run of lost events of one thread, for one LOST entry. Chunks dropped one after another (by
// sequence number) extend it; anything else starts a new one, so every entry is an exact span.
struct LostSpan {
  std::uint32_t thread = 0, reason = 0;
  std::uint64_t first = 0, last = 0, events = 0;
  std::uint64_t last_seq = 0;  // its last dropped chunk (chunk drops: the next one extends it); 0 none
};

struct File {
  std::mutex mu;
  int fd = -1;
  std::string path;
  std::uint64_t end = 0;        // where the next block goes
  std::uint64_t max_size = 0;   // --max-trace-size, 0 unlimited
  bool lazy = false;            // a fork child: the file is made when first needed
  bool cap_reached = false;     // sticky: past --max-trace-size no chunk is written any more
  std::atomic<bool> finished{false};
  std::vector<std::string> kvs;  // every KV entry's content, for a file made later (fork child)
  std::vector<std::pair<std::uint32_t, std::string>> pending_names;  // interned while lazy
  std::vector<LostSpan> lost;  // not yet written
  std::int64_t rank = -1;      // the process's MPI rank, for the header (a fork child's too)
  std::vector<std::uint8_t> chunk_buf;  // encoding buffer (no thread_local: see record_codec.cpp)
  Stats stats;
};

File& file() {
  static File* f = new File();  // never destroyed: the writer and exit handlers use it
  return *f;
}

void put_u32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& s, std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
void put_str(std::string& s, std::string_view v) {
  put_u32(s, static_cast<std::uint32_t>(v.size()));
  s.append(v);
}

// Writes [iov) at f.end as one block; the end moves only when all of it is written (a write cut
// short is cut off again, so that the next block starts where a reader expects one).
bool write_at_end_locked(File& f, const iovec* iov, int iovcnt, std::size_t bytes) {
  if (f.fd < 0) return false;
  std::size_t done = 0;
  std::vector<iovec> rest(iov, iov + iovcnt);
  int first = 0;
  while (done < bytes) {
    const ssize_t n = pwritev(f.fd, rest.data() + first, iovcnt - first, static_cast<off_t>(f.end + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      if (done > 0 && ftruncate(f.fd, static_cast<off_t>(f.end)) != 0) {
        // Nothing more to do: the block's magic is whole or the reader stops at it anyway.
      }
      errno = err;
      return false;
    }
    done += static_cast<std::size_t>(n);
    std::size_t k = static_cast<std::size_t>(n);
    while (first < iovcnt && k >= rest[first].iov_len) k -= rest[first++].iov_len;
    if (first < iovcnt) {
      rest[first].iov_base = static_cast<char*>(rest[first].iov_base) + k;
      rest[first].iov_len -= k;
    }
  }
  f.end += bytes;
  f.stats.bytes = f.end;
  return true;
}

void warn_write_failed(const File& f, int err) {
  log::warn_once(log::Once::RawWriteFailed, "cannot write the raw trace " + f.path + ": " + std::strerror(err) +
                                                "; events are dropped from now on (counted)");
}

bool write_block_locked(File& f, BlockHeader h, const void* payload, std::size_t n) {
  static const char zeros[8] = {};
  h.magic = kBlockMagic;
  h.payload = static_cast<std::uint32_t>(n);
  const std::size_t total = block_bytes(n);
  iovec iov[3] = {{&h, sizeof h}, {const_cast<void*>(payload), n}, {const_cast<char*>(zeros), total - sizeof h - n}};
  return write_at_end_locked(f, iov, 3, total);
}

void append_entry(std::string& e, std::uint16_t tag, const std::string& content) {
  e.append(reinterpret_cast<const char*>(&tag), 2);
  e.append(2, '\0');
  put_u32(e, static_cast<std::uint32_t>(content.size()));
  e += content;
}

// One META block holding the entries in e (then cleared).
bool flush_batch_locked(File& f, std::string& e) {
  if (e.empty()) return true;
  BlockHeader h{};
  h.kind = kMeta;
  const bool ok = write_block_locked(f, h, e.data(), e.size());
  if (!ok && f.fd >= 0) warn_write_failed(f, errno);
  e.clear();
  return ok;
}

bool write_meta_locked(File& f, std::uint16_t tag, const std::string& content) {
  std::string e;
  e.reserve(8 + content.size());
  append_entry(e, tag, content);
  return flush_batch_locked(f, e);
}

std::string name_entry(std::uint32_t id, std::string_view text) {
  std::string c;
  put_u32(c, id);
  c.append(text);
  return c;
}

std::string thread_entry(const ThreadBuffer& b) {
  std::string c;
  put_u32(c, b.index);
  put_u32(c, 0);
  put_u64(c, b.os_tid);
  put_u32(c, static_cast<std::uint32_t>(b.omp_thread_type.load(std::memory_order_relaxed)));
  put_u32(c, static_cast<std::uint32_t>(b.omp_proc.load(std::memory_order_relaxed)));
  put_u32(c, static_cast<std::uint32_t>(b.omp_place.load(std::memory_order_relaxed)));
  put_u32(c, 0);
  return c;
}

std::string lost_entry(const LostSpan& l) {
  std::string c;
  put_u32(c, l.thread);
  put_u32(c, l.reason);
  put_u64(c, l.first);
  put_u64(c, l.last);
  put_u64(c, l.events);
  return c;
}

std::uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Creates the file and writes its header, the KV entries known so far and the given names. why:
// where to put the reason it could not (nullptr: a line on stderr).
bool create_locked(File& f, const std::string& path, const std::vector<std::string_view>& names, std::string* why = nullptr) {
  // Made under a name of its own, then renamed over PREFIX.kob: a file of that name that another
  // process still records into (same prefix) keeps its inode, so neither clobbers the other's
  // mapped slots (truncating a mapped file would even fault the other process).
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (why != nullptr) {
      *why = std::strerror(errno);
    } else {
      log::warn("cannot create the raw trace " + path + ": " + std::strerror(errno));
    }
    return false;
  }
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, sizeof h.magic);
  h.version = kFormatVersion;
  h.header_bytes = kFileHeaderBytes;
  h.record_bytes = sizeof(Record);
  h.byte_order = kByteOrderCheck;
  h.pid = static_cast<std::uint64_t>(getpid());
  h.ppid = static_cast<std::uint64_t>(getppid());
  h.rank = f.rank;
  h.clock = g_hot.use_tsc ? 1 : 0;
  const clock::Point p = clock::start_point();
  h.start_tick = p.tick;
  h.start_ns = p.ns;
  h.start_width = p.width;
  h.wall_ns = realtime_ns();
  char page[kFileHeaderBytes] = {};
  std::memcpy(page, &h, sizeof h);
  f.fd = fd;
  f.path = path;
  f.end = 0;
  iovec iov{page, sizeof page};
  if (!write_at_end_locked(f, &iov, 1, sizeof page) || ::rename(tmp.c_str(), path.c_str()) != 0) {
    log::warn("cannot write the raw trace " + path + ": " + std::strerror(errno));
    ::close(fd);
    ::unlink(tmp.c_str());
    f.fd = -1;
    f.path.clear();
    return false;
  }
  for (const std::string& kv : f.kvs) write_meta_locked(f, kKv, kv);
  // The names known so far, many to a META block.
  std::string batch;
  auto add_name = [&](std::uint32_t id, std::string_view text) {
    append_entry(batch, kName, name_entry(id, text));
    if (batch.size() >= 64 * 1024) flush_batch_locked(f, batch);
  };
  for (std::size_t id = 0; id < names.size(); ++id) add_name(static_cast<std::uint32_t>(id), names[id]);
  for (const auto& [id, text] : f.pending_names) add_name(id, text);
  flush_batch_locked(f, batch);
  f.pending_names.clear();
  return true;
}

// Called by the intern table under its lock for every new name: the NAME entry reaches the file
// before any record that uses the id can.
void on_new_name(std::uint32_t id, std::string_view text) {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) {
    write_meta_locked(f, kName, name_entry(id, text));
  } else if (f.lazy) {
    f.pending_names.emplace_back(id, std::string(text));
  }
}

// A fork child's file, made on first need. Names and threads are read before the file lock is
// taken (the intern table and the registry are taken before it elsewhere).
bool ensure_file() {
  File& f = file();
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.fd >= 0) return true;
    if (!f.lazy) return false;
  }
  const std::vector<std::string_view> names = kob::names().snapshot();
  const std::vector<ThreadBuffer*> threads = recorder::threads();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) return true;
  if (!f.lazy) return false;
  f.lazy = false;
  if (!create_locked(f, f.path, names)) return false;
  for (const ThreadBuffer* b : threads) write_meta_locked(f, kThread, thread_entry(*b));
  return true;
}

void flush_lost_locked(File& f) {
  std::vector<LostSpan> keep;
  for (const LostSpan& l : f.lost) {
    if (!write_meta_locked(f, kLost, lost_entry(l))) keep.push_back(l);
  }
  f.lost.swap(keep);
}

void add_lost_locked(File& f, const LostSpan& l) {
  for (LostSpan& o : f.lost) {
    if (o.thread == l.thread && o.reason == l.reason && o.last_seq != 0 && o.last_seq + 1 == l.last_seq) {
      o.last = l.last;
      o.events += l.events;
      o.last_seq = l.last_seq;
      return;
    }
  }
  f.lost.push_back(l);
}

}  // namespace

bool open(const std::string& p, std::int64_t rank, std::string* why) {
  File& f = file();
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.fd >= 0 || f.finished.load()) return f.fd >= 0;
    f.rank = rank;
  }
  set_intern_listener(on_new_name);
  const std::vector<std::string_view> names = kob::names().snapshot();
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.fd >= 0) return true;
    if (!create_locked(f, p, names, why)) {
      return false;
    }
  }
  // The objects loaded now are in the file from the start; the writer's passes add later ones.
  modules::poll();
  writer::start();
  return true;
}

std::string path() {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.path;
}

bool rename_to(const std::string& new_path) {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (new_path == f.path) return true;
  if (f.fd < 0) {
    if (f.lazy) f.path = new_path;
    return f.lazy;
  }
  if (::rename(f.path.c_str(), new_path.c_str()) != 0) {
    log::warn("the raw trace stays " + f.path + " (cannot move it to " + new_path + ": " + std::strerror(errno) + ")");
    return false;
  }
  f.path = new_path;
  return true;
}

void add_kv(std::string_view section, std::string_view key, std::string_view value) {
  std::string c;
  put_str(c, section);
  put_str(c, key);
  put_str(c, value);
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) write_meta_locked(f, kKv, c);
  f.kvs.push_back(std::move(c));
}

void set_max_size(std::uint64_t bytes) {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  f.max_size = bytes;
}

bool map_slots(std::uint32_t thread, std::uint32_t count, Slot** out) {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd < 0 || count == 0) return false;
  // A PAD block up to the next page boundary (at least a block header long).
  std::uint64_t start = (f.end + kPageBytes - 1) & ~std::uint64_t{kPageBytes - 1};
  if (start != f.end && start - f.end < sizeof(BlockHeader)) start += kPageBytes;
  const std::uint64_t bytes = std::uint64_t{count} * kSlotBytes;
  if (f.max_size != 0 && start + bytes > f.max_size) return false;
  if (posix_fallocate(f.fd, static_cast<off_t>(f.end), static_cast<off_t>(start + bytes - f.end)) != 0) return false;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd, static_cast<off_t>(start));
  if (m == MAP_FAILED) return false;
  if (start != f.end) {
    BlockHeader pad{};
    pad.magic = kBlockMagic;
    pad.kind = kPad;
    pad.payload = static_cast<std::uint32_t>(start - f.end - sizeof pad);
    if (pwrite(f.fd, &pad, sizeof pad, static_cast<off_t>(f.end)) != static_cast<ssize_t>(sizeof pad)) {
      munmap(m, bytes);
      return false;
    }
  }
  // Zeroing writes every page: they are faulted in now, not on the hot path.
  std::memset(m, 0, bytes);
  for (std::uint32_t i = 0; i < count; ++i) {
    Slot* s = reinterpret_cast<Slot*>(static_cast<char*>(m) + std::size_t{i} * kSlotBytes);
    s->block.magic = kBlockMagic;
    s->block.kind = kRing;
    s->block.thread = thread;
    s->block.payload = static_cast<std::uint32_t>(kSlotBytes - sizeof(BlockHeader));
    std::atomic_ref<Slot*>(out[i]).store(s, std::memory_order_relaxed);  // read unlocked: ring_slot_unlocked
  }
  f.end = start + bytes;
  f.stats.bytes = f.end;
  return true;
}

void note_thread(const ThreadBuffer& b) {
  const std::string c = thread_entry(b);
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) write_meta_locked(f, kThread, c);
}

void slot_full(ThreadBuffer& b) {
  if (writer::running()) {
    writer::wake();
    return;
  }
  ensure_file();
  writer::copy_thread(b, false);
}

void note_lost(std::uint32_t thread, std::uint32_t reason, std::uint64_t first_tick, std::uint64_t last_tick,
               std::uint64_t events) {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  add_lost_locked(f, LostSpan{thread, reason, first_tick, last_tick, events, 0});
  if (reason == kLostRingFull) flush_lost_locked(f);
}

bool write_chunk(std::uint32_t thread, std::uint64_t seq, const Record* recs, std::uint32_t n) {
  if (n == 0) return true;
  BlockHeader h{};
  h.kind = kCompact;
  h.thread = thread;
  h.seq = seq;
  h.records = n;
  h.base_tick = recs[0].tick;
  h.last_tick = recs[n - 1].tick;
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd < 0) {
    // No raw trace at all (it could not be made): there is no file for these to be missing from.
    f.stats.chunks_discarded++;
    return true;
  }
  // Encoded under the lock, into the one buffer: a few tens of microseconds per chunk.
  std::vector<std::uint8_t>& buf = f.chunk_buf;
  if (buf.size() < std::size_t{n} * codec::kMaxRecordBytes) buf.resize(std::size_t{n} * codec::kMaxRecordBytes);
  const std::size_t bytes = codec::encode(recs, n, h.base_tick, buf.data());
  std::uint32_t reason = 0;
  // Chunks stop kMetaReserve short of the cap: the META entries that follow (lost stretches,
  // threads, names, the final calibration and END) still fit under it.
  if (f.cap_reached || (f.max_size != 0 && f.end + block_bytes(bytes) + kMetaReserve > f.max_size)) {
    // Sticky, so that what the file holds of each thread is one unbroken start of its run.
    f.cap_reached = true;
    reason = kLostSizeCap;
    log::warn_once(log::Once::RawSizeCap, "the raw trace " + f.path + " reached --max-trace-size=" +
                                              std::to_string(f.max_size >> 20) + " (MiB); events are dropped from now on (counted)");
  } else if (!write_block_locked(f, h, buf.data(), bytes)) {
    reason = kLostWriteFailed;
    warn_write_failed(f, errno);
  }
  if (reason != 0) {
    f.stats.chunks_dropped++;
    f.stats.records_dropped += n;
    add_lost_locked(f, LostSpan{thread, reason, h.base_tick, h.last_tick, program_events(recs, n), seq});
    return false;
  }
  f.stats.chunks_written++;
  f.stats.records_written += n;
  return true;
}

void write_calib(bool periodic) {
  const clock::Point p = clock::point_now();
  std::string c;
  put_u64(c, p.tick);
  put_u64(c, p.ns);
  put_u64(c, p.width);
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  // Past --max-trace-size only the final point is written: the file must not keep growing.
  if (f.fd >= 0 && !(periodic && f.cap_reached)) write_meta_locked(f, kCalib, c);
}

void flush_lost() {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) flush_lost_locked(f);
}

bool finish() {
  File& f = file();
  if (f.finished.exchange(true)) {
    std::lock_guard<std::mutex> lock(f.mu);
    return f.fd >= 0 || !f.path.empty();
  }
  recorder::close();
  writer::stop();
  // A library loaded since the writer's last pass (or in a fork child, which has no writer).
  modules::poll();
  const std::vector<ThreadBuffer*> threads = recorder::threads();
  ensure_file();
  for (ThreadBuffer* b : threads) writer::copy_thread(*b, true);
  for (ThreadBuffer* b : threads) {
    std::uint64_t first, last, n;
    if (b->open_lost(first, last, n)) note_lost(b->index, kLostRingFull, first, last, n);
    note_thread(*b);
  }
  write_calib(false);
  bool ok;
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.fd < 0) return false;
    flush_lost_locked(f);
    std::string c;
    put_u64(c, clock::now());
    ok = write_meta_locked(f, kEnd, c) && f.lost.empty();
    // The slots stay mapped (threads may still record into them); the descriptor is not needed.
    ::close(f.fd);
    f.fd = -1;
  }
  // Nor their pages, now that the file holds everything (the conversion at exit follows). Outside
  // the file lock: the registry's lock is taken before it elsewhere.
  recorder::release_file_rings();
  return ok;
}

void discard() {
  File& f = file();
  f.finished.store(true);
  recorder::close();
  writer::stop();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) {
    ::close(f.fd);
    ::unlink(f.path.c_str());
  }
  f.fd = -1;
  f.lazy = false;
  f.path.clear();
}

Stats stats() {
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.stats;
}

void reset_for_test() {
  writer::stop();
  writer::pause_for_test(false);
  modules::reset_for_test();
  File& f = file();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.fd >= 0) ::close(f.fd);
  f.fd = -1;
  f.path.clear();
  f.end = 0;
  f.max_size = 0;
  f.lazy = false;
  f.cap_reached = false;
  f.finished.store(false);
  f.kvs.clear();
  f.pending_names.clear();
  f.lost.clear();
  f.stats = Stats{};
  f.rank = -1;
}

void before_fork() {
  modules::before_fork();
  file().mu.lock();
}
void after_fork_parent() {
  file().mu.unlock();
  modules::after_fork_parent();
}

void after_fork_child(const std::string& child_path) {
  File& f = file();
  writer::after_fork_child();
  // The parent's descriptor: never written by the child (its offsets are the parent's).
  if (f.fd >= 0) ::close(f.fd);
  f.fd = -1;
  f.lazy = !f.finished.load() && !f.path.empty();
  f.path = child_path;
  f.end = 0;
  f.cap_reached = false;
  f.pending_names.clear();
  f.lost.clear();
  f.stats = Stats{};
  f.mu.unlock();
  modules::after_fork_child();
}

}  // namespace kob::raw
