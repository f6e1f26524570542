#include "common/record/event_decoder.hpp"

#include <algorithm>
#include <cstring>

#include "common/record/record_codec.hpp"
#include "common/record/record_fold.hpp"

namespace kob {

namespace {

// The most cells one record makes: a folded sync record's begin (two cells) and its three steps.
constexpr std::size_t kMaxCellsPerRecord = 5;
constexpr unsigned kSyncBegin = static_cast<unsigned>(Ev::OmpSyncBegin);
constexpr unsigned kToolFlush = static_cast<unsigned>(Ev::ToolFlush);
constexpr unsigned kDeviceRecord = static_cast<unsigned>(Ev::OmpDeviceRecord);

// The decoder's sink (codec::decode_into): each record's events written straight from the
// decoder's fields into the chunk's cells, what its type needs decided at compile time. The place
// on the time line lives in the sink (registers) while a chunk is decoded. The cells were sized for
// the most a chunk can make (reserve_cells), so no record checks for room.
template <bool kInBegin, bool kSubNs = false>
struct EventSink {
  EventDecoder::Place place;
  Event* out;
  std::size_t devices = 0;  // device tracing records (EventChunk::device_records)
  // The current tick on the line as fixed-point ns (clock::Line::fixed_at): moved by each step, so
  // that a record's time costs one multiplication (codec::sink_start, sink_advance).
  unsigned __int128 fixed = 0;

  EventSink(EventChunk& c, const EventDecoder::Place& p) : place(p), out(c.cells.data() + c.used) {}

  [[gnu::always_inline]] void start(std::uint64_t tick) { fixed = place.line.template fixed_at<kSubNs>(tick); }
  [[gnu::always_inline]] void advance(std::uint64_t step) { fixed += place.line.template step_fixed<kSubNs>(step); }
  static std::uint64_t whole_ns(unsigned __int128 f) { return static_cast<std::uint64_t>(f >> 64); }

  // The head word: type, cells, sub and a in one store (Event's layout); sub_a: (sub & 0xffff) <<
  // 16 | a << 32 (codec::DecodedFields::sub_a).
  static std::uint64_t head(unsigned type, std::uint64_t sub_a) { return type | (1u + kWideEvent[type & 127]) << 8 | sub_a; }
  static void store(Event* e, std::uint64_t ns, std::uint64_t h, std::uint64_t u0, std::uint64_t u1) {
    e->ns = ns;
    std::memcpy(reinterpret_cast<char*>(e) + 8, &h, sizeof h);  // type, cells, sub, a
    e->u0 = u0;
    e->u1 = u1;
  }

  // tick: counted from the line's tick0 (Place::at), the one `fixed` stands for.
  template <unsigned T>
  [[gnu::always_inline]] void put(std::uint64_t tick, const std::uint64_t* l, std::uint64_t u0, std::uint64_t u1, std::uint64_t sub_a) {
    Event* e = out;
    const std::uint64_t h = head(T, sub_a);
    store(e, place.template place<T>(whole_ns(fixed)), h, u0, u1);
    if constexpr (!kWideEvent[T]) {
      if constexpr (T == kToolFlush) e->u0 = place.line.template since_ns<kSubNs>(tick + u0) - whole_ns(fixed);  // its length in ns (event.hpp)
      out = e + 1;
    } else if constexpr (T == kSyncBegin) {
      std::uint64_t* w = e->wide_slots();
      w[0] = l[4];
      out = e + 2;
      if constexpr (kInBegin) {
        steps_in_begin(w, tick, l);
      } else {
        w[1] = w[2] = w[3] = 0;  // the steps, unfolded below
        if ((l[5] | l[6] | l[7]) != 0) unfold(h, tick, l, u0, u1);
      }
    } else {
      std::uint64_t* w = e->wide_slots();
      if constexpr (T == kDeviceRecord) {
        // One register per field: most change from record to record, just stored one by one by
        // the decoder, which a wide load could not take from those stores (a stall).
        w[0] = l[4];
        w[1] = l[5];
        w[2] = l[6];
        w[3] = l[7];
        ++devices;
      } else {
        std::memcpy(w, l + 4, 4 * sizeof(std::uint64_t));  // mostly the same as the type's last record's
      }
      out = e + 2;
    }
  }

  // A folded sync begin's wait and end (record_fold.hpp): one cell each (event.hpp), the begin's
  // sub, a, u0 and u1 at their ticks, written from the decoder's fields (a copy of the begin just
  // stored would be a wide load of narrow stores, which stalls).
  [[gnu::always_inline]] void unfold(std::uint64_t begin_head, std::uint64_t tick, const std::uint64_t* l, std::uint64_t u0, std::uint64_t u1) {
    const std::uint64_t kept = (begin_head & ~std::uint64_t{0xffff}) | 1u << 8;  // sub and a; one cell
    const auto step = [&]<unsigned T>(std::uint64_t s) __attribute__((always_inline)) {
      if (s == 0) return;
      tick += s - 1;
      store(out, place.template at<T, kSubNs>(tick), kept | T, u0, u1);
      ++out;
    };
    step.template operator()<static_cast<unsigned>(Ev::OmpSyncWaitBegin)>(l[5]);
    step.template operator()<static_cast<unsigned>(Ev::OmpSyncWaitEnd)>(l[6]);
    step.template operator()<static_cast<unsigned>(Ev::OmpSyncEnd)>(l[7]);
  }

  // SyncSteps::InBegin: the steps' times (kNoStep: not folded) in the begin's wide cell, on the
  // time line in the same order as unfold would put them. Steps are not nudged but after a nudged
  // record: unless the begin was, each is its time on the line, with no test of the nudge, moved
  // from the begin's by one multiplication (steps below 2^40: a damaged file's larger ones, which
  // may wrap, take the tick's own conversion).
  [[gnu::always_inline]] void steps_in_begin(std::uint64_t* w, std::uint64_t tick, const std::uint64_t* l) {
    static_assert(event_time::kFlags[static_cast<unsigned>(Ev::OmpSyncWaitBegin)] == 0 && event_time::kFlags[static_cast<unsigned>(Ev::OmpSyncWaitEnd)] == 0 &&
                  event_time::kFlags[static_cast<unsigned>(Ev::OmpSyncEnd)] == 0);
    if (place.nudged || ((l[5] | l[6] | l[7]) >> 40) != 0) [[unlikely]] {
      const auto step = [&]<unsigned T>(std::uint64_t s) __attribute__((always_inline)) -> std::uint64_t {
        if (s == 0) return kNoStep;
        tick += s - 1;
        return place.template at<T, kSubNs>(tick);
      };
      w[1] = step.template operator()<static_cast<unsigned>(Ev::OmpSyncWaitBegin)>(l[5]);
      w[2] = step.template operator()<static_cast<unsigned>(Ev::OmpSyncWaitEnd)>(l[6]);
      w[3] = step.template operator()<static_cast<unsigned>(Ev::OmpSyncEnd)>(l[7]);
      return;
    }
    unsigned __int128 f = fixed;
    std::uint64_t last = place.last1 - 1;
    const auto step = [&](std::uint64_t s) __attribute__((always_inline)) -> std::uint64_t {
      if (s == 0) return kNoStep;
      f += place.line.template step_fixed<kSubNs>(s - 1);
      return last = whole_ns(f);
    };
    w[1] = step(l[5]);
    w[2] = step(l[6]);
    w[3] = step(l[7]);
    place.last1 = last + 1;
  }

  void finish(EventChunk& chunk, EventDecoder::Place& back) {
    chunk.used = static_cast<std::size_t>(out - chunk.cells.data());
    chunk.device_records += devices;
    back = place;
  }
};

// Room for the most cells `records` records in `bytes` bytes can make: a record makes at most
// kMaxCellsPerRecord (a wide folded sync begin and its three steps) and takes kHeadBytes, and each
// step beyond the begin's two cells needs a byte of its own (a step is coded only when not 0).
void reserve_cells(EventChunk& out, std::size_t cells) {
  if (out.cells.size() - out.used < cells) out.cells.resize(out.used + cells);
}

// The mode as a constant (EventSink<kInBegin>): a folded sync begin tests nothing to know it; and
// whether a tick is under 1 ns (kSubNs, Line::since_ns), which each time conversion would test.
// With readable_after (codec::decode_into), a chunk whose last record runs past its bytes is
// decoded again without it: its events and the place on the line as they were before it.
template <bool kInBegin, bool kSubNs>
std::size_t decode_chunk(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick, EventChunk& out,
                         EventDecoder::Place& place, std::size_t readable_after) {
  reserve_cells(out, std::min(records * kMaxCellsPerRecord, bytes) + kMaxCellsPerRecord);
  const std::size_t used = out.used;
  EventSink<kInBegin, kSubNs> sink(out, place);
  // Ticks counted from the line's tick0 (Place::at).
  std::size_t n = codec::decode_into(p, bytes, records, base_tick - place.line.tick0, sink, readable_after);
  if (n == codec::kRanPast) [[unlikely]] {
    out.used = used;
    sink = EventSink<kInBegin, kSubNs>(out, place);
    n = codec::decode_into(p, bytes, records, base_tick - place.line.tick0, sink);
  }
  sink.finish(out, place);
  return n;
}

template <bool kInBegin>
void append_records(const Record* recs, std::size_t n, EventChunk& out, EventDecoder::Place& place) {
  reserve_cells(out, n * kMaxCellsPerRecord);
  EventSink<kInBegin> sink(out, place);
  for (std::size_t i = 0; i < n; ++i) {
    const Record& r = recs[i];
    const std::uint64_t l[8] = {r.sub, r.a, r.u[0], r.u[1], r.u[2], r.u[3], r.u[4], r.u[5]};
    const std::uint64_t since = r.tick - place.line.tick0, sub_a = codec::sub_a_word(r.sub, r.a);
    sink.start(since);
    codec::with_type(static_cast<unsigned>(r.type), [&]<unsigned T>() { sink.template put<T>(since, l, l[2], l[3], sub_a); });
  }
  sink.finish(out, place);
}

}  // namespace

std::size_t EventDecoder::decode(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick,
                                 EventChunk& out, std::size_t readable_after) {
  const bool sub_ns = place_.line.whole == 0;
  const std::size_t r = readable_after;
  if (mode_ == SyncSteps::InBegin)
    return sub_ns ? decode_chunk<true, true>(p, bytes, records, base_tick, out, place_, r) : decode_chunk<true, false>(p, bytes, records, base_tick, out, place_, r);
  return sub_ns ? decode_chunk<false, true>(p, bytes, records, base_tick, out, place_, r) : decode_chunk<false, false>(p, bytes, records, base_tick, out, place_, r);
}

void EventDecoder::append(const Record* recs, std::size_t n, EventChunk& out) {
  if (mode_ == SyncSteps::InBegin) append_records<true>(recs, n, out, place_);
  else append_records<false>(recs, n, out, place_);
}

}  // namespace kob
