#include "common/record/event_decoder.hpp"

#include <cstring>

#include "common/record/record_codec.hpp"
#include "common/record/record_fold.hpp"

namespace kob {

namespace {

// The most cells one record makes: a folded sync record's begin (two cells) and its three steps.
constexpr std::size_t kMaxCellsPerRecord = 5;
constexpr unsigned kSyncBegin = static_cast<unsigned>(Ev::OmpSyncBegin);
constexpr unsigned kToolFlush = static_cast<unsigned>(Ev::ToolFlush);

// The decoder's sink (codec::decode_into): each record's events written straight from the
// decoder's fields into the chunk's cells, what its type needs decided at compile time. The place
// on the time line and the counts live in the sink (registers) while a chunk is decoded.
struct EventSink {
  EventChunk& chunk;
  EventDecoder::Place place;
  Event* out;
  Event* limit;  // room for a record's cells while out is not past it
  std::size_t events = 0;

  EventSink(EventChunk& c, const EventDecoder::Place& p) : chunk(c), place(p) {
    if (c.cells.size() < c.used + kMaxCellsPerRecord) c.cells.resize(c.used + kMaxCellsPerRecord);
    out = c.cells.data() + c.used;
    set_limit();
  }

  void set_limit() { limit = chunk.cells.data() + chunk.cells.size() - kMaxCellsPerRecord; }
  void grow() {
    const std::size_t at = static_cast<std::size_t>(out - chunk.cells.data());
    chunk.cells.resize(chunk.cells.size() + chunk.cells.size() / 2 + 4 * kMaxCellsPerRecord);
    out = chunk.cells.data() + at;
    set_limit();
  }

  // The head word: type, sub and a in one store (Event's layout).
  static std::uint64_t head(unsigned type, std::uint64_t sub, std::uint64_t a) {
    return type | (sub & 0xffff) << 16 | a << 32;
  }
  static void store(Event* e, std::uint64_t ns, std::uint64_t h, std::uint64_t u0, std::uint64_t u1) {
    e->ns = ns;
    std::memcpy(&e->type, &h, sizeof h);
    e->u0 = u0;
    e->u1 = u1;
  }

  template <unsigned T>
  [[gnu::always_inline]] void put(std::uint64_t tick, const std::uint64_t* l) {
    if (__builtin_expect(out > limit, 0)) grow();
    Event* e = out;
    const std::uint64_t h = head(T, l[0], l[1]);
    store(e, place.at<T>(tick), h, l[2], l[3]);
    ++events;
    if constexpr (!kWideEvent[T]) {
      if constexpr (T == kToolFlush) e->u0 = place.line.to_ns(tick + l[2]) - place.line.to_ns(tick);  // its length in ns (event.hpp)
      out = e + 1;
    } else if constexpr (T == kSyncBegin) {
      std::uint64_t* w = e->wide_slots();
      w[0] = l[4];
      w[1] = w[2] = w[3] = 0;  // the steps, unfolded below
      out = e + 2;
      if ((l[5] | l[6] | l[7]) != 0) unfold(h, tick, l);
    } else {
      std::uint64_t* w = e->wide_slots();
      w[0] = l[4];
      w[1] = l[5];
      w[2] = l[6];
      w[3] = l[7];
      out = e + 2;
    }
  }

  // A folded sync begin's wait and end (record_fold.hpp): one cell each (event.hpp), the begin's
  // sub, a, u0 and u1 at their ticks, written from the decoder's fields (a copy of the begin just
  // stored would be a wide load of narrow stores, which stalls).
  void unfold(std::uint64_t begin_head, std::uint64_t tick, const std::uint64_t* l) {
    const std::uint64_t kept = begin_head & ~std::uint64_t{0xffff};  // sub and a
    const auto step = [&]<unsigned T>(std::uint64_t s) __attribute__((always_inline)) {
      if (s == 0) return;
      tick += s - 1;
      store(out, place.at<T>(tick), kept | T, l[2], l[3]);
      ++events;
      ++out;
    };
    step.template operator()<static_cast<unsigned>(Ev::OmpSyncWaitBegin)>(l[5]);
    step.template operator()<static_cast<unsigned>(Ev::OmpSyncWaitEnd)>(l[6]);
    step.template operator()<static_cast<unsigned>(Ev::OmpSyncEnd)>(l[7]);
  }

  void finish(EventDecoder::Place& back) {
    chunk.used = static_cast<std::size_t>(out - chunk.cells.data());
    chunk.events += events;
    back = place;
  }
};

}  // namespace

std::size_t EventDecoder::decode(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick,
                                 EventChunk& out) {
  // Most records are narrow: room for the chunk in one go (the sink grows it when it must).
  if (out.cells.size() - out.used < records * 2 + kMaxCellsPerRecord) out.cells.resize(out.used + records * 2 + kMaxCellsPerRecord);
  EventSink sink(out, place_);
  const std::size_t n = codec::decode_into(p, bytes, records, base_tick, sink);
  sink.finish(place_);
  return n;
}

void EventDecoder::append(const Record* recs, std::size_t n, EventChunk& out) {
  EventSink sink(out, place_);
  for (std::size_t i = 0; i < n; ++i) {
    const Record& r = recs[i];
    const std::uint64_t l[8] = {r.sub, r.a, r.u[0], r.u[1], r.u[2], r.u[3], r.u[4], r.u[5]};
    codec::with_type(static_cast<unsigned>(r.type), [&]<unsigned T>() { sink.put<T>(r.tick, l); });
  }
  sink.finish(place_);
}

}  // namespace kob
