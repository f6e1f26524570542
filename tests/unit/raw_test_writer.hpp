// A raw trace written by hand, byte by byte as docs/raw-format.md describes it, for tests of the
// reader and of `kob convert` (independent of the library's own writer).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/record/record.hpp"
#include "common/record/record_codec.hpp"

namespace kob_test {

// The header's start facts.
struct RawStart {
  std::uint64_t pid = 4242, parent_pid = 1;
  std::int64_t rank = -1;
  std::uint32_t clock = 0;  // 0: ticks are ns
  std::uint64_t tick = 0, ns = 0, width = 0, wall_ns = 0;
};

class RawTraceWriter {
 public:
  using Start = RawStart;

  explicit RawTraceWriter(const Start& s = Start()) {
    buf_.assign(4096, 0);
    std::memcpy(buf_.data(), "KOBRAW\0\0", 8);
    put32(8, 4);  // format version
    put32(12, 4096);
    put32(16, 64);
    put32(20, 0x01020304);
    put64(24, s.pid);
    put64(32, s.parent_pid);
    put64(40, static_cast<std::uint64_t>(s.rank));
    put32(48, s.clock);
    put64(56, s.tick);
    put64(64, s.ns);
    put64(72, s.width);
    put64(80, s.wall_ns);
  }

  // A COMPACT block: records encoded with the codec, from base_tick (default: the first's tick).
  void compact(std::uint32_t thread, std::uint64_t seq, const std::vector<kob::Record>& recs) {
    std::vector<std::uint8_t> payload(recs.size() * kob::codec::kMaxRecordBytes + 1);
    const std::uint64_t base = recs.empty() ? 0 : recs.front().tick;
    payload.resize(kob::codec::encode(recs.data(), recs.size(), base, payload.data()));
    block(1, thread, seq, static_cast<std::uint32_t>(recs.size()), base, recs.empty() ? 0 : recs.back().tick, payload);
  }

  // A RING slot (128 KiB, page-aligned, a PAD block before it): state, committed, the records
  // (more than committed may be given: a record being written when the process ended).
  void ring(std::uint32_t thread, std::uint64_t seq, std::uint32_t state, std::uint32_t committed,
            const std::vector<kob::Record>& recs) {
    const std::size_t slot = 128 * 1024;
    const std::size_t at = buf_.size();
    const std::size_t aligned = (at + 4095) / 4096 * 4096;
    if (aligned != at) {
      std::size_t gap = aligned - at;
      if (gap < 48) gap += 4096;
      block(4, 0, 0, 0, 0, 0, std::vector<std::uint8_t>(gap - 48, 0));
    }
    std::vector<std::uint8_t> payload(slot - 48, 0);
    std::memcpy(payload.data(), &state, 4);
    std::memcpy(payload.data() + 4, &committed, 4);
    std::memcpy(payload.data() + 16, recs.data(), recs.size() * sizeof(kob::Record));
    block(2, thread, seq, 0, 0, 0, payload);
  }

  void name(std::uint32_t id, std::string_view text) {
    std::vector<std::uint8_t> e(4);
    std::memcpy(e.data(), &id, 4);
    e.insert(e.end(), text.begin(), text.end());
    meta(1, e);
  }
  void thread(std::uint32_t index, std::uint64_t os_tid, std::int32_t type, std::int32_t proc = -1, std::int32_t place = -1) {
    std::vector<std::uint8_t> e(32, 0);
    std::memcpy(e.data(), &index, 4);
    std::memcpy(e.data() + 8, &os_tid, 8);
    std::memcpy(e.data() + 16, &type, 4);
    std::memcpy(e.data() + 20, &proc, 4);
    std::memcpy(e.data() + 24, &place, 4);
    meta(2, e);
  }
  void kv(std::string_view section, std::string_view key, std::string_view value) {
    std::vector<std::uint8_t> e;
    for (std::string_view s : {section, key, value}) {
      const auto n = static_cast<std::uint32_t>(s.size());
      e.insert(e.end(), reinterpret_cast<const std::uint8_t*>(&n), reinterpret_cast<const std::uint8_t*>(&n) + 4);
      e.insert(e.end(), s.begin(), s.end());
    }
    meta(3, e);
  }
  void calib(std::uint64_t tick, std::uint64_t ns, std::uint64_t width = 0) {
    std::vector<std::uint8_t> e(24);
    std::memcpy(e.data(), &tick, 8);
    std::memcpy(e.data() + 8, &ns, 8);
    std::memcpy(e.data() + 16, &width, 8);
    meta(4, e);
  }
  void lost(std::uint32_t thread, std::uint32_t reason, std::uint64_t first, std::uint64_t last, std::uint64_t events) {
    std::vector<std::uint8_t> e(32);
    std::memcpy(e.data(), &thread, 4);
    std::memcpy(e.data() + 4, &reason, 4);
    std::memcpy(e.data() + 8, &first, 8);
    std::memcpy(e.data() + 16, &last, 8);
    std::memcpy(e.data() + 24, &events, 8);
    meta(5, e);
  }
  void end(std::uint64_t tick) {
    std::vector<std::uint8_t> e(8);
    std::memcpy(e.data(), &tick, 8);
    meta(6, e);
  }
  // Bytes that look like the start of a block cut short (a crash in the middle of a write).
  void cut_tail(std::size_t bytes) {
    std::vector<std::uint8_t> payload(bytes + 1000, 0xab);
    const std::size_t at = buf_.size();
    block(1, 0, 999, 10, 0, 0, payload);
    buf_.resize(at + 48 + bytes);
  }
  void garbage(std::size_t bytes) { buf_.insert(buf_.end(), bytes, 0x5a); }

  std::vector<std::uint8_t>& bytes() { return buf_; }
  bool write(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool ok = std::fwrite(buf_.data(), 1, buf_.size(), f) == buf_.size();
    return std::fclose(f) == 0 && ok;
  }

 private:
  void put32(std::size_t at, std::uint32_t v) { std::memcpy(buf_.data() + at, &v, 4); }
  void put64(std::size_t at, std::uint64_t v) { std::memcpy(buf_.data() + at, &v, 8); }

  void block(std::uint16_t kind, std::uint32_t thread, std::uint64_t seq, std::uint32_t records, std::uint64_t base,
             std::uint64_t last, const std::vector<std::uint8_t>& payload) {
    const std::size_t at = buf_.size();
    buf_.resize(at + 48, 0);
    put32(at, 0x4B4C424B);
    std::memcpy(buf_.data() + at + 4, &kind, 2);
    put32(at + 8, thread);
    put32(at + 12, static_cast<std::uint32_t>(payload.size()));
    put64(at + 16, seq);
    put32(at + 24, records);
    put64(at + 32, base);
    put64(at + 40, last);
    buf_.insert(buf_.end(), payload.begin(), payload.end());
    buf_.resize((buf_.size() + 7) / 8 * 8, 0);
  }
  void meta(std::uint16_t tag, const std::vector<std::uint8_t>& entry) {
    std::vector<std::uint8_t> payload(8, 0);
    std::memcpy(payload.data(), &tag, 2);
    const auto n = static_cast<std::uint32_t>(entry.size());
    std::memcpy(payload.data() + 4, &n, 4);
    payload.insert(payload.end(), entry.begin(), entry.end());
    block(3, 0, 0, 0, 0, 0, payload);
  }

  std::vector<std::uint8_t> buf_;
};

}  // namespace kob_test
