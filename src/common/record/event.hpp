// A decoded record as the conversion reads it: 32 bytes (half a Record), its time already in ns on
// the thread's time line, and a second 32-byte cell after it for the types that carry any of
// u2..u5 (kWideEvent). A thread's chunk decodes into an array of such cells, walked with next().
// Fields are read through the same names as a Record's (fields::Kernel::id.get(e)).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/record/record.hpp"
#include "common/record/record_fields.hpp"

namespace kob {

// The types whose events take a second cell: those that carry u2..u5 (fields::kCarried), but a
// sync region's wait begin, wait end and end, the steps of a folded sync begin (record_fold.hpp):
// their u2 is the begin's code address, which the timeline takes from the begin, so they keep sub,
// a, u0 and u1 only. Known from the type alone, so that a reader steps over an event without a
// flag of its own.
constexpr std::array<std::uint8_t, 128> make_wide_events() {
  std::array<std::uint8_t, 128> t{};
  for (unsigned i = 0; i < 128; ++i) t[i] = (fields::kCarried[i] & 0xf0) != 0;
  for (Ev e : {Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd, Ev::OmpSyncEnd}) t[static_cast<unsigned>(e)] = 0;
  return t;
}
inline constexpr std::array<std::uint8_t, 128> kWideEvent = make_wide_events();

struct alignas(32) Event {
  std::uint64_t ns;  // on the thread's time line, nudged (EventDecoder)
  // Types are below 128 (record.hpp): the type's high byte holds the cells, 1 + wide(), set by the
  // decoder, so that next() steps without a table lookup.
  Ev type : 8;
  std::uint16_t cells : 8;
  std::uint16_t sub;
  std::uint32_t a;
  std::uint64_t u0, u1;

  bool wide() const { return kWideEvent[static_cast<std::uint8_t>(type)] != 0; }
  // The event after this one in its array.
  const Event* next() const { return this + cells; }
  Event* next() { return this + cells; }
  // u2..u5: the second cell's, 0 for a type that carries none of them.
  const std::uint64_t* wide_slots() const { return reinterpret_cast<const std::uint64_t*>(this + 1); }
  std::uint64_t* wide_slots() { return reinterpret_cast<std::uint64_t*>(this + 1); }

  // A slot's value, for fields::Field::get.
  template <fields::Slot S>
  std::uint64_t slot() const {
    if constexpr (S == fields::Slot::sub) return sub;
    else if constexpr (S == fields::Slot::a) return a;
    else if constexpr (S == fields::Slot::u0) return u0;
    else if constexpr (S == fields::Slot::u1) return u1;
    else return wide() ? wide_slots()[static_cast<int>(S) - static_cast<int>(fields::Slot::u2)] : 0;
  }

  // The record it was decoded from, its tick given (ns stays behind): what the tests compare an
  // event with.
  Record record(std::uint64_t tick = 0) const {
    Record r{};
    r.tick = tick;
    r.type = type;
    r.sub = sub;
    r.a = a;
    r.u[0] = u0;
    r.u[1] = u1;
    if (wide())
      for (int i = 0; i < 4; ++i) r.u[2 + i] = wide_slots()[i];
    return r;
  }
};
static_assert(sizeof(Event) == 32, "an event is half a cache line");
static_assert(offsetof(Event, sub) == 10 && offsetof(Event, a) == 12, "the decoder stores type, cells, sub and a as one word at byte 8");

// A folded sync begin's step that it does not hold (EventDecoder::SyncSteps::InBegin).
inline constexpr std::uint64_t kNoStep = UINT64_MAX;

// The flush record's length (fields::ToolFlush::ticks) is ns in an Event: the decoder converts it
// on the thread's clock line, which the readers after it do not have.

}  // namespace kob
