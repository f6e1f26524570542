#include "common/record/record_codec.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/support/hot_path.hpp"

namespace kob::codec {

namespace {
// Most values are deltas that fit one or two bytes.
KOB_HOT_INLINE std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  if (KOB_LIKELY(v < 0x80)) {
    *p = static_cast<std::uint8_t>(v);
    return p + 1;
  }
  if (v < 0x4000) {
    p[0] = static_cast<std::uint8_t>(v | 0x80);
    p[1] = static_cast<std::uint8_t>(v >> 7);
    return p + 2;
  }
  // Tick steps of a few microseconds (and longer ones under valgrind): three or four bytes.
  if (v < (std::uint64_t{1} << 28)) {
    p[0] = static_cast<std::uint8_t>(v | 0x80);
    p[1] = static_cast<std::uint8_t>((v >> 7) | 0x80);
    if (v < (1u << 21)) {
      p[2] = static_cast<std::uint8_t>(v >> 14);
      return p + 3;
    }
    p[2] = static_cast<std::uint8_t>((v >> 14) | 0x80);
    p[3] = static_cast<std::uint8_t>(v >> 21);
    return p + 4;
  }
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

KOB_HOT_INLINE void store_u64(std::uint8_t* p, std::uint64_t v) { std::memcpy(p, &v, sizeof v); }  // little-endian

template <unsigned I>
KOB_HOT_INLINE std::uint64_t field(const Record& r) {
  if constexpr (I == 0) return r.sub;
  else if constexpr (I == 1) return r.a;
  else return r.u[I - 2];
}

#ifndef NDEBUG
// A record with a field its type does not declare (fields::kCarried) would lose it: a developer's
// mistake that the test builds (not release builds) stop at once.
[[noreturn]] void undeclared_field(unsigned type, unsigned bit) {
  std::fprintf(stderr, "kokkos-ompt-bridge: record type %u carries slot %u, not in its fields::kCarried entry\n", type, bit);
  std::abort();
}
#endif

// Field I of a record of type T, coded when T carries it and it changed since T's previous record
// (the lane's, for u0 and u1 of a type in a lane).
template <unsigned T, unsigned I>
KOB_HOT_INLINE void code_field(const Record& r, LastFields& last, std::uint8_t*& p, unsigned& m) {
  constexpr unsigned kFields = fields::kCarried[T];
  constexpr Lane kLane = kLaneOf[T];
  if constexpr (((kFields >> I) & 1) && ((kValueFields[T] >> I) & 1)) {
    // A time step (a folded sync record's): coded as it is, present when not 0.
    const std::uint64_t v = field<I>(r);
    if (v != 0) {
      m |= 1u << I;
      p = put_varint(p, v);
    }
  } else if constexpr ((kFields >> I) & 1) {
    std::uint64_t* prev;
    if constexpr (kLane.lane != 0 && I == 2) prev = &last.lane[kLane.lane][0];
    else if constexpr (kLane.lane != 0 && kLane.fields == 2 && I == 3) prev = &last.lane[kLane.lane][1];
    else prev = &last.v[kTypeSlot[T]][I];
    const std::uint64_t v = field<I>(r);
    if (v != *prev) {
      // The previous value read again (volatile): else the compiler makes the test a subtraction
      // whose result the delta reuses, a load, a copy, a sub and a branch for every unchanged
      // field instead of a compare with memory and a branch, and most fields are unchanged.
      const std::uint64_t was = *static_cast<volatile const std::uint64_t*>(prev);
      m |= 1u << I;
      p = put_varint(p, zigzag(v - was));
      *prev = v;
    }
  } else {
#ifndef NDEBUG
    if (field<I>(r) != 0) undeclared_field(T, I);
#endif
  }
}

// One record of type T: straight-line code per type, each field it carries compared once.
template <unsigned T>
KOB_HOT_INLINE std::uint8_t* encode_one(const Record& r, LastFields& last, std::uint8_t* mask, std::uint8_t* p) {
  unsigned m = 0;
  code_field<T, 0>(r, last, p, m);
  code_field<T, 1>(r, last, p, m);
  code_field<T, 2>(r, last, p, m);
  code_field<T, 3>(r, last, p, m);
  code_field<T, 4>(r, last, p, m);
  code_field<T, 5>(r, last, p, m);
  code_field<T, 6>(r, last, p, m);
  code_field<T, 7>(r, last, p, m);
  *mask = static_cast<std::uint8_t>(m);
  return p;
}

// Every type's coder, for the types the loop does not inline.
using EncodeOne = std::uint8_t* (*)(const Record&, LastFields&, std::uint8_t*, std::uint8_t*);
template <unsigned... T>
constexpr std::array<EncodeOne, kTypes> make_encoders(std::integer_sequence<unsigned, T...>) {
  return {&encode_one<T>...};
}
constexpr std::array<EncodeOne, kTypes> kEncoders = make_encoders(std::make_integer_sequence<unsigned, kTypes>{});

// The types of a kernel and its OpenMP regions (most of any trace): their coders inlined in the
// loop through a switch (the chain of compares below becomes one jump table), so the loop's
// registers (the output, the record, the remembered fields) stay put and no call is made. Only
// these: inlining all 108 types made the coder 160 KB.
template <Ev... E>
struct Inlined {};
// None: never coded, but a case 0 makes the jump table start at 0 (no subtraction per record).
using HotTypes = Inlined<Ev::None, Ev::KernelBegin, Ev::KernelEnd, Ev::FenceBegin, Ev::FenceEnd, Ev::OmpParallelBegin,
                         Ev::OmpParallelEnd, Ev::OmpImplicitTaskBegin, Ev::OmpImplicitTaskEnd, Ev::OmpWorkBegin,
                         Ev::OmpWorkEnd, Ev::OmpMaskedBegin, Ev::OmpMaskedEnd, Ev::OmpDispatch, Ev::OmpSyncBegin,
                         Ev::OmpSyncEnd, Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd>;
template <Ev... E>
KOB_HOT_INLINE std::uint8_t* encode_any(unsigned type, const Record& r, LastFields& last, std::uint8_t* mask, std::uint8_t* p,
                                        Inlined<E...>) {
  std::uint8_t* out = nullptr;
  const bool inlined =
      ((type == static_cast<unsigned>(E) && (out = encode_one<static_cast<unsigned>(E)>(r, last, mask, p))) || ...);
  return inlined ? out : kEncoders[type & (kTypes - 1)](r, last, mask, p);
}

}  // namespace

std::size_t encode(const Record* recs, std::size_t n, std::uint64_t base_tick, std::uint8_t* out) {
  // On the stack, not thread_local: the library has an initial-exec TLS variable, so all of its TLS
  // must fit the few KiB of static TLS a dlopen may get ("cannot allocate memory in static TLS").
  // Lanes are kept in LastFields::lane alone, as the decoder keeps them.
  LastFields last;
  wide_zero(&last, sizeof last);
  std::uint8_t* p = out;
  std::uint64_t tick = base_tick;
  for (const Record* r = recs; r != recs + n; ++r) {
    const auto type = static_cast<std::uint8_t>(r->type);  // record.hpp keeps every Ev below kTypes
    // Type, mask (stored by the coder below) and a 3-byte step in one 8-byte store; the fields
    // overwrite its last three bytes. Room: kMaxRecordBytes a record, a record takes at least 5.
    const std::uint64_t step = r->tick - tick;
    tick = r->tick;
    std::uint8_t* head = p;
    if (KOB_LIKELY(step < kStepEscape)) {
      store_u64(head, type | step << 16);
      p += kHeadBytes;
    } else {
      store_u64(head, type | std::uint64_t{kStepEscape} << 16);
      p = put_varint(p + kHeadBytes, zigzag(step));
    }
    p = encode_any(type, *r, last, head + 1, p, HotTypes{});
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace kob::codec
