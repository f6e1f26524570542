// A minimal reader of the raw trace for the recording tests, written from docs/raw-format.md alone
// (no code of the writer). Test-only: to be replaced by the library's reader (raw_reader.hpp)
// once both are on one branch.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/record.hpp"
#include "common/record_codec.hpp"

namespace kob_test {

struct RawRead {
  struct Lost {
    std::uint32_t thread, reason;
    std::uint64_t first, last, events;
  };
  struct Thread {
    std::uint64_t os_tid = 0;
    std::int32_t type = 0, proc = -1, place = -1;
  };
  struct Chunk {
    std::vector<kob::Record> recs;
  };
  bool ok = false;       // header valid
  std::uint64_t pid = 0, ppid = 0, size = 0;
  std::int64_t rank = 0;
  std::uint32_t clock = 0;
  std::map<std::uint32_t, std::string> names;
  std::map<std::string, std::string> kv;  // "section/key" -> value (later wins)
  std::map<std::uint32_t, Thread> threads;
  std::vector<Lost> lost;
  std::uint64_t calibs = 0;
  bool end = false;
  std::uint64_t blocks = 0, compact_blocks = 0, compact_bytes = 0, ring_slots = 0, pads = 0;
  bool bad_block = false;  // the walk stopped at something that is not a block before the end
  // thread -> seq -> records: the COMPACT block, or the RING slot when it has more records.
  std::map<std::uint32_t, std::map<std::uint64_t, Chunk>> chunks;

  std::vector<kob::Record> records(std::uint32_t thread) const {
    std::vector<kob::Record> out;
    auto it = chunks.find(thread);
    if (it == chunks.end()) return out;
    for (const auto& [seq, c] : it->second) out.insert(out.end(), c.recs.begin(), c.recs.end());
    return out;
  }
  std::uint64_t lost_events(std::uint32_t reason) const {
    std::uint64_t n = 0;
    for (const Lost& l : lost) n += l.reason == reason ? l.events : 0;
    return n;
  }
};

// A fresh path in a directory of this test process.
inline std::string temp_file(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kob-raw-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

template <class T>
T get(const std::string& d, std::size_t off) {
  T v;
  std::memcpy(&v, d.data() + off, sizeof v);
  return v;
}

inline RawRead read_raw(const std::string& path) {
  RawRead r;
  std::ifstream in(path, std::ios::binary);
  const std::string d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  r.size = d.size();
  if (d.size() < 4096 || std::memcmp(d.data(), "KOBRAW\0\0", 8) != 0 || get<std::uint32_t>(d, 8) != 1 ||
      get<std::uint32_t>(d, 12) != 4096 || get<std::uint32_t>(d, 16) != 64 || get<std::uint32_t>(d, 20) != 0x01020304)
    return r;
  r.ok = true;
  r.pid = get<std::uint64_t>(d, 24);
  r.ppid = get<std::uint64_t>(d, 32);
  r.rank = get<std::int64_t>(d, 40);
  r.clock = get<std::uint32_t>(d, 48);
  std::map<std::uint32_t, std::map<std::uint64_t, RawRead::Chunk>> ring;
  std::size_t off = 4096;
  while (off + 48 <= d.size()) {
    if (get<std::uint32_t>(d, off) != 0x4B4C424B) {
      r.bad_block = true;
      break;
    }
    const std::uint16_t kind = get<std::uint16_t>(d, off + 4);
    const std::uint32_t thread = get<std::uint32_t>(d, off + 8);
    const std::uint32_t payload = get<std::uint32_t>(d, off + 12);
    const std::uint64_t seq = get<std::uint64_t>(d, off + 16);
    const std::uint32_t nrec = get<std::uint32_t>(d, off + 24);
    const std::uint64_t base = get<std::uint64_t>(d, off + 32);
    const std::size_t total = (48 + std::size_t{payload} + 7) & ~std::size_t{7};
    if (off + 48 + payload > d.size()) {
      r.bad_block = true;
      break;
    }
    const auto* p = reinterpret_cast<const std::uint8_t*>(d.data() + off + 48);
    ++r.blocks;
    if (kind == 1) {
      ++r.compact_blocks;
      r.compact_bytes += total;
      RawRead::Chunk c;
      kob::codec::decode(p, payload, nrec, base, [&](const kob::Record& rec) { c.recs.push_back(rec); });
      r.chunks[thread][seq] = std::move(c);
    } else if (kind == 2) {
      ++r.ring_slots;
      const std::uint32_t state = get<std::uint32_t>(d, off + 48);
      const std::uint32_t committed = get<std::uint32_t>(d, off + 52);
      if ((state == 1 || state == 2) && seq != 0) {
        RawRead::Chunk c;
        for (std::uint32_t i = 0; i < 2047; ++i) {
          const auto rec = get<kob::Record>(d, off + 64 + i * 64ul);
          // Past the (lazily published) count of a slot being filled: the complete records.
          if (i >= committed && (state != 1 || rec.type == kob::Ev::None || rec.tick == 0)) break;
          c.recs.push_back(rec);
        }
        ring[thread][seq] = std::move(c);
      }
    } else if (kind == 4) {
      ++r.pads;
    } else if (kind == 3) {
      std::size_t e = 0;
      while (e + 8 <= payload) {
        const std::uint16_t tag = get<std::uint16_t>(d, off + 48 + e);
        const std::uint32_t len = get<std::uint32_t>(d, off + 48 + e + 4);
        const std::size_t c = off + 48 + e + 8;
        if (tag == 1) {
          r.names[get<std::uint32_t>(d, c)] = d.substr(c + 4, len - 4);
        } else if (tag == 2) {
          RawRead::Thread t;
          t.os_tid = get<std::uint64_t>(d, c + 8);
          t.type = get<std::int32_t>(d, c + 16);
          t.proc = get<std::int32_t>(d, c + 20);
          t.place = get<std::int32_t>(d, c + 24);
          r.threads[get<std::uint32_t>(d, c)] = t;
        } else if (tag == 3) {
          std::size_t q = c;
          std::string parts[3];
          for (auto& s : parts) {
            const std::uint32_t n = get<std::uint32_t>(d, q);
            s = d.substr(q + 4, n);
            q += 4 + n;
          }
          r.kv[parts[0] + "/" + parts[1]] = parts[2];
        } else if (tag == 4) {
          ++r.calibs;
        } else if (tag == 5) {
          r.lost.push_back({get<std::uint32_t>(d, c), get<std::uint32_t>(d, c + 4), get<std::uint64_t>(d, c + 8),
                            get<std::uint64_t>(d, c + 16), get<std::uint64_t>(d, c + 24)});
        } else if (tag == 6) {
          r.end = true;
        }
        e += 8 + len;
      }
    }
    off += total;
  }
  for (auto& [thread, slots] : ring)
    for (auto& [seq, c] : slots) {
      auto& have = r.chunks[thread];
      auto it = have.find(seq);
      if (it == have.end() || it->second.recs.size() < c.recs.size()) have[seq] = std::move(c);
    }
  return r;
}

}  // namespace kob_test
