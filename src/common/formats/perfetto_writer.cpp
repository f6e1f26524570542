// The Perfetto protobuf sink. Layout of the file:
// - packet sequence 1: the track descriptors (process, one track per thread, device and lane;
//   later the section and counter tracks as they first appear);
// - one more sequence per (track, stream), the stream being the track's slices or one category
//   of its instants/counters: each starts by clearing its state, setting its defaults (its track,
//   its clock) and a clock snapshot that declares its clock incremental. Its packets then carry
//   only the time since the sequence's previous packet. A packet whose time is earlier than that
//   (the producer's order is per category, not by time; a slice of a later window may begin
//   before slices of earlier ones) carries an absolute CLOCK_MONOTONIC_RAW time instead, which
//   leaves the incremental clock where it was. Slices still open at a window's end are closed
//   there (their END packets), so a track's BEGIN/END pairs nest once ordered by time, then by
//   position in the file, as trace readers order them.
// - names, categories and argument names are interned: sent once per sequence, then named by id.
#include "common/formats/perfetto_writer.hpp"

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/formats/fixed_text_cache.hpp"
#include "common/formats/perfetto_fields.hpp"
#include "common/formats/proto_writer.hpp"
#include "common/formats/trace_events.hpp"

namespace kob {

namespace {

namespace pf = pftrace;
using trace::Arg;
using trace::Phase;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// Strings to interning ids (1, 2, ...), one table per kind of name.
class IidTable {
 public:
  // The id of s. Names come mostly from a few places (literals, the interned names of the run),
  // so a small cache by address answers most lookups without hashing the text; the text is
  // still compared, as some names are composed in a reused buffer.
  std::uint64_t id(std::string_view s) {
    Slot& c = cache_[(((reinterpret_cast<std::uintptr_t>(s.data()) ^ s.size()) * 0x9E3779B97F4A7C15ull) >> 24) &
                     (cache_.size() - 1)];
    if (c.data == s.data() && c.size == s.size() && c.data != nullptr && std::memcmp(c.text, s.data(), s.size()) == 0)
      return c.iid;
    auto it = ids_.find(s);
    if (it == ids_.end()) {
      it = ids_.emplace(std::string(s), ids_.size() + 1).first;
      // Many distinct names (as many constructs' locations): the cache grows with them.
      if (ids_.size() * 2 > cache_.size() && cache_.size() < kMaxTextSlots) {
        cache_.assign(cache_.size() * 4, Slot{});
        return it->second;
      }
    }
    c = {s.data(), s.size(), it->first.data(), it->second};
    return it->second;
  }

  // The id of a text that never changes at its address while the trace is written (Event::name_fixed,
  // Arg::fixed): known by its address and length, the text never read once it is in the cache.
  std::uint64_t fixed_id(std::string_view s) {
    bool had = false;
    auto& slot = fixed_.slot(s, had);
    if (!had) fixed_.fill(slot, s, nullptr, id(s));
    return slot.value;
  }

  void forget_fixed() { fixed_.clear(); }

  // The id of a text that never changes at its address (the producer's literals: categories and
  // argument names): known by the address alone, no length or text compared.
  std::uint64_t literal_id(const char* s) {
    Lit& l = literals_[(reinterpret_cast<std::uintptr_t>(s) >> 3) & (kSlots - 1)];
    if (l.p != s) l = {s, id(s)};
    return l.iid;
  }

 private:
  static constexpr std::size_t kSlots = 256;
  // Names and values at many source locations each keep a slot: the cache starts at kTextSlots
  // and grows to twice the distinct texts, up to kMaxTextSlots (32 bytes each).
  static constexpr std::size_t kTextSlots = 4096, kMaxTextSlots = std::size_t{1} << 20;
  struct Lit {
    const char* p = nullptr;
    std::uint64_t iid = 0;
  };
  Lit literals_[kSlots];
  struct Slot {
    const char* data = nullptr;
    std::size_t size = 0;
    const char* text = nullptr;  // the table's copy (nodes do not move)
    std::uint64_t iid = 0;
  };
  std::vector<Slot> cache_ = std::vector<Slot>(kTextSlots);
  trace::FixedTextCache<std::uint64_t, 12> fixed_;
  std::unordered_map<std::string, std::uint64_t, StringHash, std::equal_to<>> ids_;
};

struct Sequence {
  std::uint32_t id = 0;
  std::uint64_t track = 0;  // the track its events are on unless they say otherwise
  std::uint64_t last = 0;   // the incremental clock: time of its last packet that used it
  std::vector<std::uint8_t> sent[4];  // per interning table (categories, names, argument names, string values): ids it was sent
  // Categories and argument names it was sent, by the literal's address (a few per event).
  struct Literal {
    const char* text = nullptr;
    std::uint64_t iid = 0;
  };
  // Two ways: an event's few names seldom evict each other.
  static constexpr std::size_t kLiteralSlots = 128;  // the top 7 bits of a hash, then the neighbour
  Literal literals[2][kLiteralSlots];
};

// What a sink and its shards (trace_events.hpp, TraceSink::split) share: the file and the
// sequence numbers.
struct SharedOut {
  explicit SharedOut(std::FILE* f) : out(f) {}
  ChunkWriter out;
  std::atomic<std::uint32_t> next_sequence{2};  // 1: the descriptors' sequence
  bool primary_clock_said = false;
};

class PerfettoSink : public trace::TraceSink {
 public:
  explicit PerfettoSink(std::FILE* f) : owned_(std::make_unique<SharedOut>(f)), shared_(owned_.get()), w_(kFlushAt + 65536) {}
  // A shard: its own sequences (one per track it is given), interning and buffer.
  explicit PerfettoSink(SharedOut* shared) : shared_(shared), w_(kFlushAt + 65536) {}

  // Several processes may follow one another (kob merge): each gets uuids of its own (the
  // process number in the top bits), its tracks are declared anew; sequences are never reused.
  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override {
    if (processes_++ != 0) {
      window_end();
      next_process();
      named_.clear();
    }
    pid_ = static_cast<std::int32_t>(pid);
    t0_ = t0;
    for (auto& sh : shards_) {
      if (processes_ != 1) sh->next_process();
      sh->processes_ = processes_;
      sh->pid_ = pid_;
      sh->t0_ = t0_;
      sh->uuid_base_ = uuid_base_;
    }
    {
      proto::Nested pk(w_, pf::trace::packet);
      w_.add_varint(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
      w_.add_varint(pf::packet::sequence_flags, pf::packet::kIncrementalStateCleared);
      proto::Nested td(w_, pf::packet::track_descriptor);
      w_.add_varint(pf::track::uuid, process_uuid());
      proto::Nested pd(w_, pf::track::process);
      w_.add_int(pf::process::pid, pid_);
      w_.add_string(pf::process::process_name, name);
    }
    if (!shards_.empty() && !shared_->primary_clock_said) {
      // Shards' sequences reach the file in no set order: the trace's clock is said here, before
      // any of them, rather than by the first sequence started.
      shared_->primary_clock_said = true;
      proto::Nested pk(w_, pf::trace::packet);
      w_.add_varint(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
      proto::Nested snap(w_, pf::packet::clock_snapshot);
      {
        proto::Nested c(w_, pf::clock::clocks);
        w_.add_varint(pf::clock::clock_id, pf::clock::kMonotonicRaw);
        w_.add_varint(pf::clock::timestamp, t0_);
      }
      w_.add_varint(pf::clock::primary_trace_clock, pf::clock::kMonotonicRaw);
    }
  }

  bool split(unsigned n) override {
    if (processes_ != 0 && shards_.size() != n) return false;  // only before the first process
    while (shards_.size() < n) shards_.push_back(std::make_unique<PerfettoSink>(shared_));
    return true;
  }
  TraceSink& shard(unsigned i) override { return i < shards_.size() ? *shards_[i] : *this; }
  void shards_begin() override { flush(); }

  // Program threads are thread tracks (pid, tid); devices and lanes are named tracks of the process.
  void track(const trace::TrackDesc& d) override {
    if (open_.size() <= d.index) open_.resize(d.index + 1);
    proto::Nested pk(w_, pf::trace::packet);
    w_.add_varint(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
    proto::Nested td(w_, pf::packet::track_descriptor);
    w_.add_varint(pf::track::uuid, track_uuid(d.index));
    if (d.kind == trace::TrackKind::Thread && d.os_tid_first && d.os_tid <= 0x7FFFFFFF) {
      proto::Nested th(w_, pf::track::thread);
      w_.add_int(pf::thread::pid, pid_);
      w_.add_int(pf::thread::tid, static_cast<std::int32_t>(d.os_tid));
      w_.add_string(pf::thread::thread_name, d.name);
    } else {
      w_.add_string(pf::track::name, d.name);
      w_.add_varint(pf::track::parent_uuid, process_uuid());
    }
  }

  void event(const trace::Event& e) override {
    switch (e.phase) {
      case Phase::Slice: {
        const std::uint64_t uuid = track_uuid(e.track);
        Sequence& seq = sequence(uuid, nullptr);
        if (open_.size() <= e.track) open_.resize(e.track + 1);
        auto& open = open_[e.track];  // ends of the slices open on this track, innermost last
        while (!open.empty() && open.back() <= e.ts) {
          end_slice(seq, open.back());
          open.pop_back();
        }
        track_event(seq, uuid, pf::track_event::kSliceBegin, e);
        open.push_back(e.end);
        break;
      }
      case Phase::Instant: {
        const std::uint64_t uuid = track_uuid(e.track);
        track_event(sequence(uuid, e.cat), uuid, pf::track_event::kInstant, e);
        break;
      }
      case Phase::Counter: {
        const std::uint64_t uuid = named_track(e.name, e.name, true);
        Sequence& seq = sequence(uuid, e.cat);
        proto::Nested pk(w_, pf::trace::packet);
        header(seq, e.ts);
        proto::Nested te(w_, pf::packet::track_event);
        w_.add_varint(pf::track_event::type, pf::track_event::kCounter);
        const std::int64_t value = e.args && !e.args->empty() ? static_cast<std::int64_t>(e.args->begin()->u) : 0;
        w_.add_int(pf::track_event::counter_value, value);
        break;
      }
      case Phase::AsyncBegin:
      case Phase::AsyncEnd: {
        // Sections overlap freely: each section id is a track of its own under the process.
        const std::string id = std::to_string(e.id);
        const std::uint64_t uuid = named_track(std::string(e.cat) + '\x1f' + id, std::string(e.name) + " (section " + id + ")", false);
        Sequence& seq = sequence(process_uuid(), e.cat);
        if (e.phase == Phase::AsyncBegin) {
          track_event(seq, uuid, pf::track_event::kSliceBegin, e);
        } else {
          proto::Nested pk(w_, pf::trace::packet);
          header(seq, e.ts);
          proto::Nested te(w_, pf::packet::track_event);
          w_.add_varint(pf::track_event::type, pf::track_event::kSliceEnd);
          w_.add_varint(pf::track_event::track_uuid, uuid);
        }
        break;
      }
    }
    if (w_.size() >= kFlushAt) flush();
  }

  // The arrows are on the events at their ends already (flow_ids, terminating_flow_ids).
  void flow(const trace::Flow&) override {}

  // A later window's slices on a track either follow these or enclose them (a slice open across
  // the window's end): these are closed now, and trace readers sort by time.
  void window_end() override {
    for (auto& sh : shards_) sh->window_end();
    for (std::uint32_t track = 0; track < open_.size(); ++track) {
      auto& open = open_[track];
      if (open.empty()) continue;
      Sequence& seq = sequence(track_uuid(track), nullptr);
      for (; !open.empty(); open.pop_back()) end_slice(seq, open.back());
    }
    if (w_.size() >= kFlushAt) flush();
  }

  bool finish(const std::string&) override {
    window_end();
    for (auto& sh : shards_) sh->flush();
    flush();
    return shared_->out.finish();
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 20;
  static constexpr std::uint32_t kDescriptorSequence = 1;
  std::uint64_t process_uuid() const { return uuid_base_ + 1; }
  static constexpr std::uint32_t kClock = pf::clock::kFirstSequenceClock;  // each sequence's incremental clock
  enum Table { kCategories, kNames, kArgNames, kStringValues };

  std::uint64_t track_uuid(std::uint32_t index) const { return uuid_base_ + 2 + index; }

  // A track of the process named on first use (counters, sections), by key.
  std::uint64_t named_track(std::string_view key, std::string_view name, bool counter) {
    if (auto found = named_.find(key); found != named_.end()) return found->second;
    auto it = named_.emplace(std::string(key), 0).first;
    it->second = uuid_base_ + kNamedUuidBase + named_.size();
    proto::Nested pk(w_, pf::trace::packet);
    w_.add_varint(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
    proto::Nested td(w_, pf::packet::track_descriptor);
    w_.add_varint(pf::track::uuid, it->second);
    w_.add_string(pf::track::name, name);
    w_.add_varint(pf::track::parent_uuid, process_uuid());
    if (counter) w_.add_string(pf::track::counter, {});  // a plain counter
    return it->second;
  }
  static constexpr std::uint64_t kNamedUuidBase = std::uint64_t(1) << 32;

  // The sequence of (track, stream), started on first use.
  Sequence& sequence(std::uint64_t track, const char* stream) {
    if (last_seq_ && last_key_.first == track && last_key_.second == stream) return *last_seq_;
    last_key_ = {track, stream};
    // By the stream's address first (streams are the producer's literals), then by its text.
    auto [by_ptr, new_ptr] = sequence_by_ptr_.try_emplace(last_key_, nullptr);
    if (!new_ptr) return *(last_seq_ = by_ptr->second);
    auto [it, fresh] = sequences_.try_emplace({track, std::string(stream ? stream : "")});
    if (fresh) {
      it->second = std::make_unique<Sequence>();
      start(*it->second, track);
    }
    last_seq_ = by_ptr->second = it->second.get();
    return *last_seq_;
  }

  void start(Sequence& seq, std::uint64_t track) {
    seq.id = shared_->next_sequence.fetch_add(1, std::memory_order_relaxed);
    seq.track = track;
    seq.last = t0_;
    {
      proto::Nested pk(w_, pf::trace::packet);
      w_.add_varint(pf::packet::trusted_packet_sequence_id, seq.id);
      w_.add_varint(pf::packet::sequence_flags, pf::packet::kIncrementalStateCleared);
      proto::Nested defaults(w_, pf::packet::trace_packet_defaults);
      w_.add_varint(pf::defaults::timestamp_clock_id, kClock);
      proto::Nested te(w_, pf::defaults::track_event_defaults);
      w_.add_varint(pf::defaults::track_uuid, track);
    }
    // The snapshot declares a clock of this sequence (its incremental state): a reader must drop
    // it with the rest of the state, so it needs the state the clear above began.
    proto::Nested pk(w_, pf::trace::packet);
    w_.add_varint(pf::packet::trusted_packet_sequence_id, seq.id);
    w_.add_varint(pf::packet::sequence_flags, pf::packet::kNeedsIncrementalState);
    proto::Nested snap(w_, pf::packet::clock_snapshot);
    {
      proto::Nested c(w_, pf::clock::clocks);
      w_.add_varint(pf::clock::clock_id, kClock);
      w_.add_varint(pf::clock::timestamp, t0_);
      w_.add_bool(pf::clock::is_incremental, true);
    }
    {
      proto::Nested c(w_, pf::clock::clocks);
      w_.add_varint(pf::clock::clock_id, pf::clock::kMonotonicRaw);
      w_.add_varint(pf::clock::timestamp, t0_);
    }
    // The trace's own clock, said once before any time is read: the Timeline's clock.
    if (!shared_->primary_clock_said) {
      shared_->primary_clock_said = true;  // unsplit sinks only: a split one said it at process()
      w_.add_varint(pf::clock::primary_trace_clock, pf::clock::kMonotonicRaw);
    }
  }

  // Time and sequence of an event packet: the time since the sequence's last packet, or when
  // that would be negative, the absolute time on CLOCK_MONOTONIC_RAW.
  // w: the packet being written (proto::Writer, or a proto::RawMessage written in place).
  template <class W>
  static void header(W& w, Sequence& seq, std::uint64_t ts) {
    if (ts >= seq.last) {
      w.add_varint(pf::packet::timestamp, ts - seq.last);
      seq.last = ts;
    } else {
      w.add_varint(pf::packet::timestamp, ts);
      w.add_varint(pf::packet::timestamp_clock_id, pf::clock::kMonotonicRaw);
    }
    w.add_varint(pf::packet::trusted_packet_sequence_id, seq.id);
    w.add_varint(pf::packet::sequence_flags, pf::packet::kNeedsIncrementalState);
  }
  void header(Sequence& seq, std::uint64_t ts) { header(w_, seq, ts); }

  std::uint64_t intern(Sequence& seq, Table table, std::string_view s) {
    const std::uint64_t iid = tables_[table].id(s);
    if (first_use(seq, table, iid)) fresh_.push_back({table, iid, s});
    return iid;
  }
  std::uint64_t intern_fixed(Sequence& seq, Table table, std::string_view s) {
    const std::uint64_t iid = tables_[table].fixed_id(s);
    if (first_use(seq, table, iid)) fresh_.push_back({table, iid, s});
    return iid;
  }
  std::uint64_t intern_literal(Sequence& seq, Table table, const char* s) { return literal_slot(seq, table, s).iid; }
  // The sequence's cache entry of a literal, the literal interned and sent.
  [[gnu::always_inline]] Sequence::Literal& literal_slot(Sequence& seq, Table table, const char* s) {
    Sequence::Literal* slots = seq.literals[table == kCategories ? 0 : 1];
    const std::size_t i = (reinterpret_cast<std::uintptr_t>(s) * 0x9E3779B97F4A7C15ull) >> 57;
    if (slots[i].text == s) return slots[i];
    Sequence::Literal& other = slots[i ^ 1];
    if (other.text == s) return other;
    Sequence::Literal& had = slots[i].text == nullptr || other.text != nullptr ? slots[i] : other;
    intern_new_literal(seq, table, s, had);
    return had;
  }
  // Apart from literal_slot, which is a few instructions when it hits (most calls).
  [[gnu::noinline]] void intern_new_literal(Sequence& seq, Table table, const char* s, Sequence::Literal& had) {
    const std::uint64_t iid = tables_[table].literal_id(s);
    if (first_use(seq, table, iid)) fresh_.push_back({table, iid, std::string_view(s)});
    had = {s, iid};
  }
  // Whether the sequence has not had the name yet (it goes with the next packet); marks it had.
  static bool first_use(Sequence& seq, Table table, std::uint64_t iid) {
    std::vector<std::uint8_t>& sent = seq.sent[table];
    if (sent.size() <= iid) sent.resize(iid + 64 + iid / 2);
    if (sent[iid]) return false;
    sent[iid] = 1;
    return true;
  }

  void track_event(Sequence& seq, std::uint64_t uuid, std::uint32_t type, const trace::Event& e) {
    fresh_.clear();
    const std::uint64_t cat_iid = intern_literal(seq, kCategories, e.cat);
    const std::uint64_t name_iid = e.name_fixed ? intern_fixed(seq, kNames, e.name) : intern(seq, kNames, e.name);
    std::size_t n = 0, args_bound = 0;  // the most bytes the annotations can take (packet_in_place)
    if (e.args) {
      using R = proto::RawMessage;
      for (const Arg& a : *e.args) {
        if (a.type == Arg::Type::SharedStr)
          value_iids_[n] = a.fixed ? intern_fixed(seq, kStringValues, a.s) : intern(seq, kStringValues, a.s);
        key_iids_[n++] = intern_literal(seq, kArgNames, a.key);
        args_bound += a.type == Arg::Type::Str ? R::kMaxStringMessage + a.s.size() : R::kMaxVarintsMessage;
      }
    }
    // Most packets: nothing newly interned, written in place.
    if (fresh_.empty()) {
      packet_in_place(seq, uuid, type, cat_iid, name_iid, e, args_bound);
      return;
    }
    proto::Nested pk(w_, pf::trace::packet);
    header(seq, e.ts);
    if (!fresh_.empty()) {
      static constexpr std::uint32_t kField[] = {pf::interned::event_categories, pf::interned::event_names,
                                                 pf::interned::debug_annotation_names,
                                                 pf::interned::debug_annotation_string_values};
      proto::Nested in(w_, pf::packet::interned_data);
      for (const Fresh& f : fresh_) {
        proto::Nested entry(w_, kField[f.table]);
        w_.add_varint(pf::interned::iid, f.iid);
        w_.add_string(pf::interned::name, f.name);
      }
    }
    proto::Nested te(w_, pf::packet::track_event);
    event_fields(w_, seq, uuid, type, cat_iid, name_iid, e);
  }

  // The packet of a TrackEvent written straight into the buffer: its tag, a one-byte length, the
  // header, the TrackEvent's tag and one-byte length, its fields; both lengths set once the
  // fields are written (RawMessage::close). The same bytes as the message made whole first.
  void packet_in_place(Sequence& seq, std::uint64_t uuid, std::uint32_t type, std::uint64_t cat_iid, std::uint64_t name_iid,
                       const trace::Event& e, std::size_t args_bound) {
    using R = proto::RawMessage;
    // Lengths, header, TrackEvent fields, annotations, arrows.
    std::size_t bound = 2 + 4 * R::kMaxVarintField + 2 + 4 * R::kMaxVarintField + args_bound;
    bound += (e.flows_out.size() + e.flows_in.size()) * R::kMaxFixed64;
    char* const start = w_.tail(bound + 16);
    R m(start + 2);
    header(m, seq, e.ts);
    char* const te_at = m.pos();
    m.skip(2);
    event_fields(m, seq, uuid, type, cat_iid, name_iid, e);
    // Lengths innermost first: a longer TrackEvent length moves its fields up, then the packet's.
    te_at[0] = static_cast<char>((pf::packet::track_event << 3) | 2);
    char* const end = R::close(te_at + 1, m.pos());
    start[0] = static_cast<char>((pf::trace::packet << 3) | 2);
    w_.commit(R::close(start + 1, end));
  }

  // The TrackEvent's fields; w: the proto::Writer inside the TrackEvent, or a proto::RawMessage.
  template <class W>
  void event_fields(W& w, const Sequence& seq, std::uint64_t uuid, std::uint32_t type, std::uint64_t cat_iid,
                    std::uint64_t name_iid, const trace::Event& e) {
    w.add_varint(pf::track_event::type, type);
    if (uuid != seq.track) w.add_varint(pf::track_event::track_uuid, uuid);
    w.add_varint(pf::track_event::category_iids, cat_iid);
    w.add_varint(pf::track_event::name_iid, name_iid);
    if (e.args) {
      std::size_t n = 0;
      for (const Arg& a : *e.args) {
        annotation(w, key_iids_[n], value_iids_[n], a);
        ++n;
      }
    }
    for (std::uint64_t id : e.flows_out) w.add_fixed64(pf::track_event::flow_ids, id);
    for (std::uint64_t id : e.flows_in) w.add_fixed64(pf::track_event::terminating_flow_ids, id);
  }

  // A DebugAnnotation; w as for event_fields.
  template <class W>
  void annotation(W& w, std::uint64_t key_iid, std::uint64_t value_iid, const Arg& a) {
    namespace an = pf::annotation;
    if (a.type == Arg::Type::Str) {
      if constexpr (std::is_same_v<W, proto::Writer>) {  // any length: a nested message
        proto::Nested m(w, pf::track_event::debug_annotations);
        w.add_varint(an::name_iid, key_iid);
        w.add_string(an::string_value, a.s);
      } else {
        w.add_varint_string_message(pf::track_event::debug_annotations, an::name_iid, key_iid, an::string_value, a.s);
      }
      return;
    }
    std::uint32_t field = 0;  // numbers (most annotations); Null: the name alone
    std::uint64_t value = 0;
    switch (a.type) {
      case Arg::Type::Uint: field = an::uint_value, value = a.u; break;
      case Arg::Type::Int: field = an::int_value, value = static_cast<std::uint64_t>(a.i); break;  // int64: two's complement
      case Arg::Type::Bool: field = an::bool_value, value = a.u != 0 ? 1 : 0; break;
      case Arg::Type::SharedStr: field = an::string_value_iid, value = value_iid; break;
      case Arg::Type::Str:
      case Arg::Type::Null: break;
    }
    if constexpr (std::is_same_v<W, proto::Writer>) {
      proto::Nested m(w, pf::track_event::debug_annotations);
      w.add_varint(an::name_iid, key_iid);
      if (field != 0) w.add_varint(field, value);
    } else {
      w.add_varints_message(pf::track_event::debug_annotations, an::name_iid, key_iid, field, value);
    }
  }

  // The most frequent packet, written in place as packet_in_place writes the others.
  void end_slice(Sequence& seq, std::uint64_t ts) {
    using R = proto::RawMessage;
    char* const start = w_.tail(2 + 4 * R::kMaxVarintField + R::kMaxVarintsMessage);
    R m(start + 2);
    header(m, seq, ts);
    m.add_varints_message(pf::packet::track_event, pf::track_event::type, pf::track_event::kSliceEnd);
    start[0] = static_cast<char>((pf::trace::packet << 3) | 2);
    w_.commit(R::close(start + 1, m.pos()));
  }

  void flush() {
    if (w_.size() != 0) w_.hand_over(shared_->out);
  }

  // A later process: its slices are closed, its texts may sit at the last one's addresses.
  void next_process() {
    open_.clear();
    for (IidTable& t : tables_) t.forget_fixed();
    uuid_base_ = std::uint64_t(processes_ - 1) << 40;
  }

  struct Fresh {
    Table table;
    std::uint64_t iid;
    std::string_view name;
  };
  struct KeyHash {
    std::size_t operator()(const std::pair<std::uint64_t, std::string>& k) const {
      return std::hash<std::uint64_t>()(k.first) ^ std::hash<std::string>()(k.second) * 31;
    }
  };

  std::unique_ptr<SharedOut> owned_;  // the sink's own; null in a shard
  SharedOut* shared_;
  std::vector<std::unique_ptr<PerfettoSink>> shards_;
  proto::Writer w_;
  std::int32_t pid_ = 0;
  std::uint64_t t0_ = 0;
  std::uint32_t processes_ = 0;
  std::uint64_t uuid_base_ = 0;  // of the current process's tracks
  std::vector<std::vector<std::uint64_t>> open_;  // per track index
  std::unordered_map<std::string, std::uint64_t, StringHash, std::equal_to<>> named_;
  std::unordered_map<std::pair<std::uint64_t, std::string>, std::unique_ptr<Sequence>, KeyHash> sequences_;
  struct PtrKeyHash {
    std::size_t operator()(const std::pair<std::uint64_t, const char*>& k) const {
      return std::hash<std::uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ reinterpret_cast<std::uintptr_t>(k.second));
    }
  };
  std::unordered_map<std::pair<std::uint64_t, const char*>, Sequence*, PtrKeyHash> sequence_by_ptr_;
  std::pair<std::uint64_t, const char*> last_key_{0, nullptr};
  Sequence* last_seq_ = nullptr;
  IidTable tables_[4];
  std::vector<Fresh> fresh_;
  std::uint64_t key_iids_[trace::Args::kMax] = {};
  std::uint64_t value_iids_[trace::Args::kMax] = {};  // SharedStr args: their interned value
};

}  // namespace

bool write_perfetto_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped) {
  PerfettoSink sink(f);
  return produce_trace(t, info, sink, clipped);
}

std::unique_ptr<trace::TraceSink> make_perfetto_sink(std::FILE* f) { return std::make_unique<PerfettoSink>(f); }

}  // namespace kob
