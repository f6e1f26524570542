#include "common/record/event_decoder.hpp"

#include <cstring>

#include "common/record/record_codec.hpp"
#include "common/record/record_fold.hpp"

namespace kob {

namespace {

// The most cells one record makes: a folded sync record's four events, two cells each.
constexpr std::size_t kMaxCellsPerRecord = 8;

// The decoder's sink (codec::decode_into): each record's events written straight from the
// decoder's fields into the chunk's cells.
struct EventSink {
  EventDecoder& dec;
  EventChunk& chunk;
  Event* out;
  Event* cap;

  void reserve() {
    if (__builtin_expect(cap - out >= static_cast<std::ptrdiff_t>(kMaxCellsPerRecord), 1)) return;
    const std::size_t at = static_cast<std::size_t>(out - chunk.cells.data());
    chunk.cells.resize(chunk.cells.size() + chunk.cells.size() / 2 + 4 * kMaxCellsPerRecord);
    out = chunk.cells.data() + at;
    cap = chunk.cells.data() + chunk.cells.size();
  }

  // The head word: type, sub and a in one store (Event's layout).
  static std::uint64_t head(unsigned type, std::uint64_t sub, std::uint64_t a) {
    return type | (sub & 0xffff) << 16 | a << 32;
  }
  static void store_head(Event* e, std::uint64_t ns, std::uint64_t h) {
    e->ns = ns;
    std::memcpy(&e->type, &h, sizeof h);
  }

  [[gnu::always_inline]] void put(unsigned type, std::uint64_t tick, const std::uint64_t* l) {
    reserve();
    Event* e = out;
    const std::uint64_t h = head(type, l[0], l[1]);
    store_head(e, dec.place(type, tick), h);
    e->u0 = l[2];
    e->u1 = l[3];
    ++chunk.events;
    if (!kWideEvent[type]) {
      if (__builtin_expect(type == static_cast<unsigned>(Ev::ToolFlush), 0)) flush_length(e, tick);
      out = e + 1;
      return;
    }
    std::uint64_t* w = e->wide_slots();
    w[0] = l[4];
    if (__builtin_expect(type == static_cast<unsigned>(Ev::OmpSyncBegin), 0)) {
      w[1] = w[2] = w[3] = 0;
      out = e + 2;
      if ((l[5] | l[6] | l[7]) != 0) unfold(h, tick, l);
      return;
    }
    w[1] = l[5];
    w[2] = l[6];
    w[3] = l[7];
    out = e + 2;
  }

  // A folded sync begin's wait and end (record_fold.hpp): the begin's fields (its steps 0) at
  // their ticks, written from the decoder's fields (a copy of the begin just stored would be a
  // wide load of narrow stores, which stalls).
  void unfold(std::uint64_t begin_head, std::uint64_t tick, const std::uint64_t* l) {
    static constexpr Ev kSteps[3] = {Ev::OmpSyncWaitBegin, Ev::OmpSyncWaitEnd, Ev::OmpSyncEnd};
    const std::uint64_t kept = begin_head & ~std::uint64_t{0xffff};  // sub and a
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t step = l[5 + i];
      if (step == 0) continue;
      tick += step - 1;
      const unsigned type = static_cast<unsigned>(kSteps[i]);
      Event* e = out;
      store_head(e, dec.place(type, tick), kept | type);
      e->u0 = l[2];
      e->u1 = l[3];
      std::uint64_t* w = e->wide_slots();
      w[0] = l[4];
      w[1] = w[2] = w[3] = 0;
      ++chunk.events;
      out = e + 2;
    }
  }

  // A flush's length (its ticks) as ns on the thread's line (event.hpp).
  void flush_length(Event* e, std::uint64_t tick) {
    const clock::Line& line = dec.line();
    e->u0 = line.to_ns(tick + e->u0) - line.to_ns(tick);
  }

  void finish() { chunk.used = static_cast<std::size_t>(out - chunk.cells.data()); }
};

}  // namespace

std::size_t EventDecoder::decode(const std::uint8_t* p, std::size_t bytes, std::size_t records, std::uint64_t base_tick,
                                 EventChunk& out) {
  EventSink sink{*this, out, out.cells.data() + out.used, out.cells.data() + out.cells.size()};
  // Most records are narrow: room for the chunk in one go (the sink grows it when it must).
  if (out.cells.size() - out.used < records * 2 + kMaxCellsPerRecord) {
    out.cells.resize(out.used + records * 2 + kMaxCellsPerRecord);
    sink.out = out.cells.data() + out.used;
    sink.cap = out.cells.data() + out.cells.size();
  }
  const std::size_t n = codec::decode_into(p, bytes, records, base_tick, sink);
  sink.finish();
  return n;
}

void EventDecoder::append(const Record* recs, std::size_t n, EventChunk& out) {
  EventSink sink{*this, out, out.cells.data() + out.used, out.cells.data() + out.cells.size()};
  for (std::size_t i = 0; i < n; ++i) {
    Record unfolded[4];
    const Record* end = fold::unfold(recs[i], unfolded);
    for (const Record* r = unfolded; r < end; ++r) {
      const std::uint64_t l[8] = {r->sub, r->a, r->u[0], r->u[1], r->u[2], r->u[3], r->u[4], r->u[5]};
      const unsigned type = static_cast<std::uint8_t>(r->type);
      // Already unfolded: its steps are 0 and the sink unfolds nothing more.
      sink.put(type, r->tick, l);
    }
  }
  sink.finish();
}

}  // namespace kob
