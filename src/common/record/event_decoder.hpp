// One thread's records made events (event.hpp) in one pass: decoded from a COMPACT chunk (or taken
// from records already in memory), folded sync records unfolded, ticks made ns on the thread's
// time line and ties nudged. What a thread's chunks need from each other (the last time, the nudge)
// lives here, so a thread's chunks are decoded in order by one decoder, on any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/record/clock.hpp"
#include "common/record/event.hpp"
#include "common/record/record.hpp"

namespace kob {

// A chunk's events: cells[0, used) (the vector only grows, so that a reused chunk is not zeroed).
struct EventChunk {
  std::vector<Event> cells;
  std::size_t used = 0;
  // The device tracing records among them (their time is not on the thread's line: a reader that
  // takes the others in one loop takes these apart, where there are any).
  std::size_t device_records = 0;
  const Event* begin() const { return cells.data(); }
  const Event* end() const { return cells.data() + used; }
  bool empty() const { return used == 0; }
  void clear() { used = device_records = 0; }
};

// The nudge: a record that begins a span inside others (a kernel, fence or deep copy, a loop or
// masked block, a lock wait or hold, a task, a target region) whose time is not after the record
// before it on its thread is put 1 ns after it, as are the records after it until their own times
// are later again. Two records of a thread get the same time, or the later one an earlier time, when
// the thread moved to a core whose TSC is behind (on this VM the TSC counts in steps of 10 ns, and
// 64 threads on 2 cores move often). Such a span started at or before a span it lies in; a tie of
// that kind between a span written with one trace window and one still open stopped every later
// cut, and the window grew for as long as the task ran (270 MB in the 64-thread tuning sample).
// Other records (a region pushed on its parent's tick, a barrier's steps, an end) keep their times.
// A device record's tick is when the runtime delivered it, not a time on this thread's line, and a
// flush record comes before the event whose hook made it, whose time may have been taken first:
// their times move no later record.
namespace event_time {
// How a type's time is placed: kBeginsInner (nudged on a tie), kOwnTime (not on the line).
enum : std::uint8_t { kBeginsInner = 1, kOwnTime = 2 };
constexpr std::array<std::uint8_t, 128> make_flags() {
  std::array<std::uint8_t, 128> t{};
  for (Ev e : {Ev::KernelBegin, Ev::FenceBegin, Ev::DeepCopyBegin, Ev::OmpWorkBegin, Ev::OmpMaskedBegin, Ev::OmpMutexAcquire,
               Ev::OmpMutexAcquired, Ev::OmpNestLock, Ev::OmpTaskSchedule, Ev::OmpTargetBegin})
    t[static_cast<unsigned>(e)] = kBeginsInner;
  t[static_cast<unsigned>(Ev::OmpDeviceRecord)] = kOwnTime;
  t[static_cast<unsigned>(Ev::ToolFlush)] = kOwnTime;
  return t;
}
inline constexpr std::array<std::uint8_t, 128> kFlags = make_flags();
}  // namespace event_time

class EventDecoder {
 public:
  // What a folded sync begin (record_fold.hpp) becomes. Unfold: the records it stands for, each an
  // event of its own (the begin's steps 0). InBegin: the begin alone, the times of its wait begin,
  // wait end and end in its wide cell's u3, u4, u5 (kNoStep where it has none). A reader that
  // takes each sync region whole (the summary engine's ThreadFold) is spared three cells a region.
  // The decoder counts no events: a reader counts those it takes (a count kept here per step
  // cost the decoding loop a memory increment per step).
  enum class SyncSteps : std::uint8_t { Unfold, InBegin };
  explicit EventDecoder(const clock::Line& line, SyncSteps mode = SyncSteps::Unfold) : line_(line), mode_(mode) {
    place_.line = line.arithmetic();
  }

  // Decodes up to `records` records of a COMPACT chunk's payload [p, p + bytes) (codec::decode's
  // rules: it stops at the first malformed record) and appends their events to out. Returns the
  // records decoded. readable_after: bytes after the payload that may be read (0, or at least
  // codec::kMaxRecordBytes: then no record is bound-checked, the same events).
  std::size_t decode(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick, EventChunk& out,
                     std::size_t readable_after = 0);
  // Appends the events of n records (folded ones unfolded) to out.
  void append(const Record* recs, std::size_t n, EventChunk& out);

  // A thread's place on its time line: the last time and whether it was nudged. Copied into the
  // decoding loop's registers while a chunk is decoded, written back after.
  struct Place {
    clock::Line line;  // arithmetic(): no test of tsc per event
    std::uint64_t last1 = 0;  // the last time plus 1 (0: none yet), so that "not after the last" is one compare
    bool nudged = false;
    // The time of a record of type T at `since` ticks after the line's tick0 (the decoder counts
    // its ticks from there), nudged (the rule above).
    template <unsigned T, bool kSubNs = false>
    [[gnu::always_inline]] std::uint64_t at(std::uint64_t since) {
      return place<T>(line.template since_ns<kSubNs>(since));
    }
    // The same for a record whose time on the line, t, is known.
    template <unsigned T>
    [[gnu::always_inline]] std::uint64_t place(std::uint64_t t) {
      constexpr unsigned kFlags = event_time::kFlags[T];
      if constexpr ((kFlags & event_time::kOwnTime) != 0) {
        return t;
      } else if constexpr ((kFlags & event_time::kBeginsInner) != 0) {
        nudged = t < last1;
        const std::uint64_t ns = nudged ? last1 : t;
        last1 = ns + 1;
        return ns;
      } else {
        // Nudged only after a record that was (rare): a test, not a select, on the common path.
        if (nudged) [[unlikely]] {
          nudged = t < last1;
          if (nudged) t = last1;
        }
        last1 = t + 1;
        return t;
      }
    }
  };

  const clock::Line& line() const { return line_; }

 private:
  clock::Line line_;
  SyncSteps mode_;
  Place place_;
};

}  // namespace kob
