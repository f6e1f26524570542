// The compact on-disk form of a chunk of records (docs/raw-format.md, COMPACT blocks): a 5-byte
// head (type, mask, tick step) and only the fields that changed since the previous record of the same type
// (the ids that OpenMP events of one parallel region share, and a kernel's or fence's id, since
// the previous record of their lane). Used off the hot path only: by the writer thread (encode)
// and by readers (decode).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/record/record.hpp"
#include "common/record/record_fields.hpp"
#include "common/support/wide_zero.hpp"

namespace kob::codec {

// A record's head: type, mask, the tick's step (3 bytes, little-endian). A step that does not fit
// (at least kStepEscape ticks, or negative) is kStepEscape and a varint zigzag step follows.
constexpr std::size_t kHeadBytes = 5;
constexpr std::uint32_t kStepEscape = 0xffffff;

// The most bytes one record can take: the head, the escaped step (10), 8 fields of 10.
constexpr std::size_t kMaxRecordBytes = kHeadBytes + 10 + 8 * 10;
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the head is stored and read as one little-endian word");

// Record types fit in the type byte (Ev values below 128).
constexpr std::size_t kTypes = 128;

// Encodes n records into out (room for n * kMaxRecordBytes), each block starting from base_tick
// and all-zero fields. Returns the bytes written.
std::size_t encode(const Record* recs, std::size_t n, std::uint64_t base_tick, std::uint8_t* out);

// Decodes up to `records` records from [p, p + bytes), calling f(const Record&) for each. Returns
// how many were decoded: fewer than asked when the data ends early or a record is malformed (a
// type out of range), in which case the rest of the block is ignored.
template <class F>
std::size_t decode(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick, F&& f);

// ---- implementation ---------------------------------------------------------------------------

inline std::uint64_t zigzag(std::uint64_t delta) {
  return (delta << 1) ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(delta) >> 63);
}
inline std::uint64_t unzigzag(std::uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

// Reads a varint; returns nullptr when it runs past end or is longer than 10 bytes.
inline const std::uint8_t* get_varint(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
    const std::uint8_t b = *p++;
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return p;
  }
  return nullptr;
}

// Lanes: types whose u0 (and u1) are predicted from the previous record of any type of the lane
// instead of the previous one of the same type. An OpenMP event of a parallel region repeats the
// region's id and kernel of the event before it (implicit task, barrier, work...); a kernel's end
// repeats its begin's id. Lane 0: none.
constexpr unsigned kLanes = 4;
struct Lane {
  std::uint8_t lane = 0;
  std::uint8_t fields = 0;  // 1: u0, 2: u0 and u1
};
constexpr std::array<Lane, kTypes> make_lanes() {
  std::array<Lane, kTypes> t{};
  for (Ev e : {Ev::OmpParallelBegin, Ev::OmpParallelEnd, Ev::OmpImplicitTaskBegin, Ev::OmpImplicitTaskEnd,
               Ev::OmpWorkBegin, Ev::OmpWorkEnd, Ev::OmpMaskedBegin, Ev::OmpMaskedEnd, Ev::OmpDispatch,
               Ev::OmpSyncBegin, Ev::OmpSyncEnd, Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd})
    t[static_cast<unsigned>(e)] = {1, 2};
  for (Ev e : {Ev::KernelBegin, Ev::KernelEnd}) t[static_cast<unsigned>(e)] = {2, 1};
  for (Ev e : {Ev::FenceBegin, Ev::FenceEnd}) t[static_cast<unsigned>(e)] = {3, 1};
  return t;
}
inline constexpr std::array<Lane, kTypes> kLaneOf = make_lanes();
// The numbers docs/raw-format.md gives the lanes' and the folded records' types.
static_assert(static_cast<int>(Ev::KernelBegin) == 1 && static_cast<int>(Ev::FenceEnd) == 4);
static_assert(static_cast<int>(Ev::OmpParallelBegin) == 66 && static_cast<int>(Ev::OmpSyncBegin) == 75 &&
              static_cast<int>(Ev::OmpSyncEnd) == 76 && static_cast<int>(Ev::OmpSyncWaitEnd) == 78);

// Fields coded as values, not as deltas from the previous record's (bit i = Slot i): the time
// steps a folded sync record carries (record_fold.hpp), present when not 0. They are times, not
// ids, so a delta from the last record's is no smaller; coded as they are, an absent one is 0.
constexpr std::array<std::uint8_t, kTypes> make_value_fields() {
  std::array<std::uint8_t, kTypes> t{};
  for (Ev e : {Ev::OmpSyncBegin, Ev::OmpSyncEnd, Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd})
    t[static_cast<unsigned>(e)] = (1u << 5) | (1u << 6) | (1u << 7);  // u[3], u[4], u[5]
  return t;
}
inline constexpr std::array<std::uint8_t, kTypes> kValueFields = make_value_fields();

// The coder codes only the fields each record type carries (fields::kCarried, bit i = Slot i, the
// mask-bit order): the others are zero in every record the writer thread codes (slots are zeroed
// before reuse). The decoder needs no table: a record's mask byte says which fields follow.

// Each record type's place in the remembered fields: the types record.hpp names (Kokkos, MPI and
// the tool's below Ev::OmpFirst, OpenMP from it) one each, every other byte value slot 0, which
// only a malformed block uses (no reader takes an unknown type's fields). Half the 128 types: the
// state coder and decoder zero for every block is half as large.
constexpr std::array<std::uint8_t, kTypes> make_type_slots() {
  std::array<std::uint8_t, kTypes> t{};
  std::uint8_t next = 1;
  for (unsigned e = 1; e <= static_cast<unsigned>(Ev::ToolFlush); ++e) t[e] = next++;
  for (unsigned e = static_cast<unsigned>(Ev::OmpFirst); e < static_cast<unsigned>(Ev::OmpLast); ++e) t[e] = next++;
  return t;
}
inline constexpr std::array<std::uint8_t, kTypes> kTypeSlot = make_type_slots();
inline constexpr std::size_t kTypeSlots = 1 + static_cast<std::size_t>(Ev::ToolFlush) + (static_cast<std::size_t>(Ev::OmpLast) - static_cast<std::size_t>(Ev::OmpFirst));
static_assert(kTypeSlot[static_cast<unsigned>(Ev::OmpLast) - 1] == kTypeSlots - 1);

// What the coder remembers: the field values of the last record of each type (kTypeSlot), in
// mask-bit order (sub, a, u[0..5]), and each lane's last u0, u1.
struct alignas(64) LastFields {
  std::uint64_t v[kTypeSlots][8];
  std::uint64_t lane[kLanes][2];

  // A lane type's u0 (and u1 where its lane has it) is the lane's: coded from it, and kept there
  // (decode_fields).
};

// What the decoder remembers besides: each type's sub and a as one word, (sub & 0xffff) << 16 |
// a << 32 (bytes 2 to 7 of a little-endian word), made again only when either changes (rare), for
// a sink that stores them so (EventSink: an event's head, its type and cells in bytes 0 and 1).
// Apart from LastFields, which the coder zeroes for each block too.
struct DecodedFields : LastFields {
  std::uint64_t sub_a[kTypeSlots];
};
inline std::uint64_t sub_a_word(std::uint64_t sub, std::uint64_t a) { return (sub & 0xffff) << 16 | a << 32; }

// A varint known to lie within the data (at least 10 bytes left): no bound check per byte.
[[gnu::always_inline]] inline const std::uint8_t* get_varint_unchecked(const std::uint8_t* p, std::uint64_t& v) {
  std::uint64_t b = *p++;
  if (b < 0x80) {
    v = b;
    return p;
  }
  v = b & 0x7f;
  for (unsigned shift = 7; shift < 70; shift += 7) {
    b = *p++;
    v |= (b & 0x7f) << shift;
    if (b < 0x80) return p;
  }
  return nullptr;
}

// A decoded record's parts (decode_into's sink) as a Record, written whole.
inline void write_record(Record& r, unsigned type, std::uint64_t tick, const std::uint64_t* l, std::uint64_t u0, std::uint64_t u1) {
  r.tick = tick;
  r.type = static_cast<Ev>(type);
  r.sub = static_cast<std::uint16_t>(l[0]);
  r.a = static_cast<std::uint32_t>(l[1]);
  asm("" : "+r"(u0), "+r"(u1));
  r.u[0] = u0;
  r.u[1] = u1;
  for (unsigned i = 2; i < 6; ++i) {
    // One register per field: a wide (vector) load of fields just stored one by one by the decoder
    // cannot be forwarded from those stores and stalls; this copy was most of the decode time.
    std::uint64_t x = l[2 + i];
    asm("" : "+r"(x));
    r.u[i] = x;
  }
}

// Calls f.template operator()<T>() with T the record type `type` (below kTypes) as a constant: a
// jump on the type, after which its lane, value fields and what a sink does with it are known at
// compile time (the table lookups and branches on them were a third of the decoding).
#define KOB_TYPE_CASE(n) \
  case (n): f.template operator()<(n)>(); break;
#define KOB_TYPE_CASE4(n) KOB_TYPE_CASE(n) KOB_TYPE_CASE(n + 1) KOB_TYPE_CASE(n + 2) KOB_TYPE_CASE(n + 3)
#define KOB_TYPE_CASE16(n) KOB_TYPE_CASE4(n) KOB_TYPE_CASE4(n + 4) KOB_TYPE_CASE4(n + 8) KOB_TYPE_CASE4(n + 12)
#define KOB_TYPE_CASE128(n)                                                                                    \
  KOB_TYPE_CASE16(n) KOB_TYPE_CASE16(n + 16) KOB_TYPE_CASE16(n + 32) KOB_TYPE_CASE16(n + 48) KOB_TYPE_CASE16(n + 64) \
  KOB_TYPE_CASE16(n + 80) KOB_TYPE_CASE16(n + 96) KOB_TYPE_CASE16(n + 112)
template <class F>
[[gnu::always_inline]] inline void with_type(unsigned type, F&& f) {
  static_assert(kTypes == 128, "one case per type");
  switch (type) {
    KOB_TYPE_CASE128(0)
    default: break;
  }
}
#undef KOB_TYPE_CASE128
#undef KOB_TYPE_CASE16
#undef KOB_TYPE_CASE4
#undef KOB_TYPE_CASE

// A varint at p, with (kChecked) or without bound checks; nullptr when malformed.
template <bool kChecked>
[[gnu::always_inline]] inline const std::uint8_t* read_varint(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t& v) {
  if constexpr (kChecked) return get_varint(p, end, v);
  else return get_varint_unchecked(p, v);
}

// One record's fields after its head (the record's first 8 bytes, of which it reads the mask
// byte), for a type T known at compile time: the changed fields (mask), read with (kChecked) or
// without bound checks, into the type's remembered values (a lane type's u0, and u1 where its lane
// has it, into the lane's, where they stay: no copy in and out per record); then the sink's
// put<T>. Returns where the next record starts, nullptr when the record is malformed.
template <unsigned T, bool kChecked, class Sink>
[[gnu::always_inline]] inline const std::uint8_t* decode_fields(const std::uint8_t* p, const std::uint8_t* end, std::uint64_t head,
                                                                std::uint64_t tick, DecodedFields& last, Sink& sink) {
  // The mask taken from the head here, after the jump on the type: a test of its bits is then one
  // instruction on the head (most records test only whether it is 0).
  const unsigned mask = static_cast<std::uint8_t>(head >> 8);
  constexpr Lane kLane = kLaneOf[T];
  constexpr unsigned kValues = kValueFields[T];
  std::uint64_t* l = last.v[kTypeSlot[T]];
  // Where u0 and u1 are kept: the type's own slots, or the lane's for a lane type (u1 the type's
  // own where the lane keeps u0 only).
  std::uint64_t* const u0 = kLane.lane != 0 ? &last.lane[kLane.lane][0] : &l[2];
  std::uint64_t* const u1 = kLane.lane != 0 && kLane.fields == 2 ? &last.lane[kLane.lane][1] : &l[3];
  // The value fields come last in the mask-bit order (a folded sync record's steps, u3..u5): the
  // delta fields first, then each value field where its bit says (absent: 0), with no test per
  // field of which kind it is.
  static_assert(kValues == 0 || kValues == 0xe0, "value fields: u3..u5");
  unsigned deltas = mask;
  if constexpr (kValues != 0) deltas &= ~kValues;
  const auto add = [&](unsigned bits, std::uint64_t* slots) __attribute__((always_inline)) -> bool {
    while (bits) {  // only the fields that changed
      const unsigned i = static_cast<unsigned>(__builtin_ctz(bits));
      bits &= bits - 1;
      std::uint64_t z;
      if ((p = read_varint<kChecked>(p, end, z)) == nullptr) return false;
      slots[i] += unzigzag(z);
    }
    return true;
  };
  if constexpr (kLane.lane == 0) {
    if (!add(deltas, l)) return nullptr;
    if (deltas & 3u) [[unlikely]]
      last.sub_a[kTypeSlot[T]] = sub_a_word(l[0], l[1]);
  } else if (deltas != 0) {  // in mask-bit order: sub and a, u0 and u1 (the lane's), the rest
    // Mostly the lane's ids alone changed (a new region, a new kernel): one test for the others.
    const bool others = (deltas & ~12u) != 0;
    if (others && (deltas & 3u)) [[unlikely]] {
      if (!add(deltas & 3u, l)) return nullptr;
      last.sub_a[kTypeSlot[T]] = sub_a_word(l[0], l[1]);
    }
    std::uint64_t z;
    if (deltas & 4u) {
      if ((p = read_varint<kChecked>(p, end, z)) == nullptr) return nullptr;
      *u0 += unzigzag(z);
    }
    if (deltas & 8u) {
      if ((p = read_varint<kChecked>(p, end, z)) == nullptr) return nullptr;
      *u1 += unzigzag(z);
    }
    if (others && !add(deltas & ~15u, l)) return nullptr;
  }
  if constexpr (kValues != 0) {
    for (unsigned i = 5; i < 8; ++i) {
      std::uint64_t z = 0;
      if (mask & (1u << i)) {
        if ((p = read_varint<kChecked>(p, end, z)) == nullptr) return nullptr;
      }
      l[i] = z;
    }
  }
  sink.template put<T>(tick, l, *u0, *u1, last.sub_a[kTypeSlot[T]]);
  return p;
}

// A sink that keeps its own place on the time line is told where the ticks go: start(tick) where
// the tick is set anew (the block's start, an escaped step, which may go back; each record of the
// bound-checked tail), advance(step) for a step from a head (below 2^24). Others are not.
template <class Sink>
[[gnu::always_inline]] inline void sink_start(Sink& s, std::uint64_t tick) {
  if constexpr (requires { s.start(tick); }) s.start(tick);
}
template <class Sink>
[[gnu::always_inline]] inline void sink_advance(Sink& s, std::uint64_t step) {
  if constexpr (requires { s.advance(step); }) s.advance(step);
}

// X(h, l) for each byte 0xhl, h and l hex digits: a label and a case for each.
#define KOB_BYTE_ROW(X, h) X(h, 0) X(h, 1) X(h, 2) X(h, 3) X(h, 4) X(h, 5) X(h, 6) X(h, 7) X(h, 8) X(h, 9) X(h, a) X(h, b) X(h, c) X(h, d) X(h, e) X(h, f)
#define KOB_BYTES(X)                                                                                                        \
  KOB_BYTE_ROW(X, 0) KOB_BYTE_ROW(X, 1) KOB_BYTE_ROW(X, 2) KOB_BYTE_ROW(X, 3) KOB_BYTE_ROW(X, 4) KOB_BYTE_ROW(X, 5) \
  KOB_BYTE_ROW(X, 6) KOB_BYTE_ROW(X, 7) KOB_BYTE_ROW(X, 8) KOB_BYTE_ROW(X, 9) KOB_BYTE_ROW(X, a) KOB_BYTE_ROW(X, b) \
  KOB_BYTE_ROW(X, c) KOB_BYTE_ROW(X, d) KOB_BYTE_ROW(X, e) KOB_BYTE_ROW(X, f)

// The decoding loop, handing each record to the sink as its parts, its type a constant:
// `template <unsigned T> void put(std::uint64_t tick, const std::uint64_t* fields, std::uint64_t u0,
// std::uint64_t u1, std::uint64_t sub_a)` (fields: the 8 slots in mask-bit order, sub, a, u0..u5,
// of which u0 and u1 are the arguments', not fields[2] and fields[3]; sub_a: DecodedFields::sub_a),
// inlined, so that a sink writes the form it keeps (a Record, an Event) straight from the
// decoder's registers and remembered fields, with no record between, and does only what type T
// needs. A sink is copied and assigned back (a value type:
// pointers, not references).
//
// readable_after: bytes that may be read past the data (0, or at least kMaxRecordBytes: a buffer
// with room after it). With them every record is decoded without bound checks, and one that runs
// past the data (a chunk cut short) returns kRanPast, the sink having taken it: the caller decodes
// the data again without them.
inline constexpr std::size_t kRanPast = ~std::size_t{0};
template <class Sink>
std::size_t decode_into(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick, Sink& sink,
                        std::size_t readable_after = 0) {
  const std::uint8_t* end = p + bytes;
  // Below this point a whole record (kMaxRecordBytes) fits in what is left: no bound checks.
  const std::uint8_t* safe_end = readable_after >= kMaxRecordBytes ? end : bytes > kMaxRecordBytes ? end - kMaxRecordBytes : p;
  DecodedFields last;  // not thread_local: see encode
  wide_zero(&last, sizeof last);
  std::uint64_t tick = base_tick;
  // The sink copied into this frame for the loop: its fields (the output, the place on the time
  // line) are then values the compiler keeps in registers, not memory that every event store might
  // alias and that is read back after each one.
  Sink s = sink;
  sink_start(s, tick);
#define KOB_T(h, l) &&t_##h##l,
  static constexpr const void* kJump[256] = {KOB_BYTES(KOB_T)};
#undef KOB_T
  std::size_t left = records;  // counted down: one test a record, against 0
  while (left != 0 && p < safe_end) {
    std::uint64_t head;
    std::memcpy(&head, p, sizeof head);
    const unsigned type = static_cast<std::uint8_t>(head);
    std::uint64_t step = (head >> 16) & kStepEscape;
    p += kHeadBytes;
    if (step == kStepEscape) [[unlikely]] {
      std::uint64_t z;
      if ((p = get_varint_unchecked(p, z)) == nullptr) break;
      tick += unzigzag(z);
      sink_start(s, tick);
    } else {
      tick += step;
      sink_advance(s, step);
    }
    // Type 0 or not below kTypes: malformed, the rest of the block too (p nullptr). One jump
    // through a table of addresses (a switch's table holds offsets: two instructions more a record).
    goto *kJump[type];
#define KOB_T(h, l)                                                           \
  t_##h##l : if constexpr (0x##h##l == 0 || 0x##h##l >= kTypes) p = nullptr; \
  else p = decode_fields<0x##h##l, false>(p, end, head, tick, last, s);       \
  goto decoded;
    KOB_BYTES(KOB_T)
#undef KOB_T
  decoded:
    if (p == nullptr) break;
    --left;
  }
  std::size_t done = records - left;
  sink = s;
  if (p > end) [[unlikely]]
    return kRanPast;  // only with readable_after (p is nullptr after a malformed record)
  // The last records of a block (p is nullptr after a malformed one): the same per type,
  // bound-checked (not inlined: rare).
  while (p != nullptr && done < records && p < end) {
    if (end - p < static_cast<std::ptrdiff_t>(kHeadBytes)) break;
    const unsigned type = p[0];
    const std::uint64_t head = std::uint64_t{p[1]} << 8;  // the mask, where decode_fields takes it
    std::uint64_t step = p[2] | std::uint64_t{p[3]} << 8 | std::uint64_t{p[4]} << 16;
    p += kHeadBytes;
    if (type - 1 >= kTypes - 1) break;
    if (step == kStepEscape) {
      std::uint64_t z;
      if ((p = get_varint(p, end, z)) == nullptr) break;
      step = unzigzag(z);
    }
    tick += step;
    sink_start(sink, tick);
    with_type(type, [&]<unsigned T>() { p = decode_fields<T, true>(p, end, head, tick, last, sink); });
    if (p == nullptr) break;
    ++done;
  }
  return done;
}
#undef KOB_BYTES
#undef KOB_BYTE_ROW

// decode's sink: each record made a Record and handed to f.
template <class F>
struct RecordEach {
  F* f;  // a pointer: decode_into copies its sink
  Record r{};
  template <unsigned T>
  void put(std::uint64_t tick, const std::uint64_t* l, std::uint64_t u0, std::uint64_t u1, std::uint64_t) {
    write_record(r, T, tick, l, u0, u1);
    (*f)(static_cast<const Record&>(r));
  }
};

template <class F>
std::size_t decode(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick, F&& f) {
  RecordEach<std::remove_reference_t<F>> each{&f};
  return decode_into(p, bytes, records, base_tick, each);
}

}  // namespace kob::codec
