// The layout of the raw trace PREFIX.kob (docs/raw-format.md is the reference): the file
// header, block headers, ring slots and META tags, as the recorder and its writer use them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/record/record.hpp"

namespace kob::raw {

inline constexpr char kFileMagic[8] = {'K', 'O', 'B', 'R', 'A', 'W', 0, 0};
inline constexpr std::uint32_t kFormatVersion = 4;
inline constexpr std::uint32_t kFileHeaderBytes = 4096;
inline constexpr std::uint32_t kByteOrderCheck = 0x01020304;
inline constexpr std::uint32_t kBlockMagic = 0x4B4C424B;  // "KBLK"
inline constexpr std::size_t kPageBytes = 4096;

enum BlockKind : std::uint16_t { kCompact = 1, kRing = 2, kMeta = 3, kPad = 4 };
enum MetaTag : std::uint16_t { kName = 1, kThread = 2, kKv = 3, kCalib = 4, kLost = 5, kEnd = 6 };
enum LostReason : std::uint32_t { kLostRingFull = 1, kLostWriteFailed = 2, kLostSizeCap = 3 };

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::uint32_t record_bytes;
  std::uint32_t byte_order;
  std::uint64_t pid;
  std::uint64_t ppid;
  std::int64_t rank;
  std::uint32_t clock;  // 0 CLOCK_MONOTONIC_RAW ns, 1 TSC
  std::uint32_t flags;
  std::uint64_t start_tick;
  std::uint64_t start_ns;
  std::uint64_t start_width;
  std::uint64_t wall_ns;
};
static_assert(sizeof(FileHeader) == 88);

struct BlockHeader {
  std::uint32_t magic;
  std::uint16_t kind;
  std::uint16_t flags;
  std::uint32_t thread;
  std::uint32_t payload;  // bytes after this header; the block is 48 + payload rounded up to 8
  std::uint64_t seq;
  std::uint32_t records;
  std::uint32_t zero;
  std::uint64_t base_tick;
  std::uint64_t last_tick;
};
static_assert(sizeof(BlockHeader) == 48);

inline constexpr std::size_t block_bytes(std::size_t payload) { return (sizeof(BlockHeader) + payload + 7) & ~std::size_t{7}; }

// Slot states (SlotHeader::state).
enum SlotState : std::uint32_t { kSlotFree = 0, kSlotFilling = 1, kSlotFull = 2 };

// A ring slot: a RING block of exactly kSlotBytes, page-aligned in the file. The owning thread
// appends records and publishes `committed` (release); the writer reads `committed` (acquire).
// 32 KiB: a thread's ring of 4 is 128 KiB, so that 512 threads fit the default --memory-limit of
// 64 MiB (with 128 KiB slots half of 256 threads recorded nothing). Readers take a slot's size
// from its block header (files written with 128 KiB slots read the same).
inline constexpr std::size_t kSlotBytes = 32 * 1024;
inline constexpr std::uint32_t kSlotRecords = (kSlotBytes - 64) / sizeof(Record);  // 511

// The 64 bytes before a slot's records: the block header, the state and the committed count.
struct alignas(64) SlotHead {
  BlockHeader block;
  std::atomic<std::uint32_t> state;
  std::atomic<std::uint32_t> committed;
  std::uint64_t zero;
};
static_assert(sizeof(SlotHead) == 64);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

struct Slot : SlotHead {
  Record recs[kSlotRecords];
};
static_assert(sizeof(Slot) == kSlotBytes);

}  // namespace kob::raw
