// The Perfetto protobuf sink. Layout of the file:
// - packet sequence 1: the track descriptors (process, one track per thread, device and lane;
//   later the section and counter tracks as they first appear);
// - one more sequence per (track, stream), the stream being the track's slices or one category
//   of its instants/counters: each starts by clearing its state, setting its defaults (its track,
//   its clock) and a clock snapshot that declares its clock incremental. Its packets then carry
//   only the time since the sequence's previous packet. A packet whose time is earlier than that
//   (the producer's order is per category, not by time) carries an absolute CLOCK_MONOTONIC_RAW
//   time instead, which leaves the incremental clock where it was.
// - names, categories and argument names are interned: sent once per sequence, then named by id.
#include "common/perfetto_writer.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <protozero/pbf_writer.hpp>

#include "common/perfetto_fields.hpp"
#include "common/trace_events.hpp"

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
class InternTable {
 public:
  // The id of s; fresh is set when s is new to the table.
  std::uint64_t id(std::string_view s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const std::uint64_t iid = ids_.size() + 1;
    ids_.emplace(std::string(s), iid);
    return iid;
  }

 private:
  std::unordered_map<std::string, std::uint64_t, StringHash, std::equal_to<>> ids_;
};

struct Sequence {
  std::uint32_t id = 0;
  std::uint64_t track = 0;  // the track its events are on unless they say otherwise
  std::uint64_t last = 0;   // the incremental clock: time of its last packet that used it
  std::vector<bool> sent[3];  // per interning table (categories, names, argument names): ids it was sent
};

class PerfettoSink : public trace::TraceSink {
 public:
  explicit PerfettoSink(std::FILE* f) : f_(f) { buf_.reserve(kFlushAt + 65536); }

  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override {
    pid_ = static_cast<std::int32_t>(pid);
    t0_ = t0;
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint32(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
    pk.add_uint32(pf::packet::sequence_flags, pf::packet::kIncrementalStateCleared);
    protozero::pbf_writer td(pk, pf::packet::track_descriptor);
    td.add_uint64(pf::track::uuid, kProcessUuid);
    protozero::pbf_writer pd(td, pf::track::process);
    pd.add_int32(pf::process::pid, pid_);
    pd.add_string(pf::process::process_name, name.data(), name.size());
  }

  // Program threads are thread tracks (pid, tid); devices and lanes are named tracks of the process.
  void track(const trace::TrackDesc& d) override {
    if (open_.size() <= d.index) open_.resize(d.index + 1);
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint32(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
    protozero::pbf_writer td(pk, pf::packet::track_descriptor);
    td.add_uint64(pf::track::uuid, track_uuid(d.index));
    if (d.kind == trace::TrackKind::Thread && d.os_tid_first && d.os_tid <= 0x7FFFFFFF) {
      protozero::pbf_writer th(td, pf::track::thread);
      th.add_int32(pf::thread::pid, pid_);
      th.add_int32(pf::thread::tid, static_cast<std::int32_t>(d.os_tid));
      th.add_string(pf::thread::thread_name, d.name);
    } else {
      td.add_string(pf::track::name, d.name);
      td.add_uint64(pf::track::parent_uuid, kProcessUuid);
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
        const std::uint64_t uuid = named_track(std::string(e.name), e.name, true);
        Sequence& seq = sequence(uuid, e.cat);
        protozero::pbf_writer trace(buf_);
        protozero::pbf_writer pk(trace, pf::trace::packet);
        header(pk, seq, e.ts);
        protozero::pbf_writer te(pk, pf::packet::track_event);
        te.add_uint32(pf::track_event::type, pf::track_event::kCounter);
        const std::int64_t value = e.args && !e.args->empty() ? static_cast<std::int64_t>(e.args->begin()->u) : 0;
        te.add_int64(pf::track_event::counter_value, value);
        break;
      }
      case Phase::AsyncBegin:
      case Phase::AsyncEnd: {
        // Sections overlap freely: each section id is a track of its own under the process.
        const std::string id = std::to_string(e.id);
        const std::uint64_t uuid = named_track(std::string(e.cat) + '\x1f' + id, std::string(e.name) + " (section " + id + ")", false);
        Sequence& seq = sequence(kProcessUuid, e.cat);
        if (e.phase == Phase::AsyncBegin) {
          track_event(seq, uuid, pf::track_event::kSliceBegin, e);
        } else {
          protozero::pbf_writer trace(buf_);
          protozero::pbf_writer pk(trace, pf::trace::packet);
          header(pk, seq, e.ts);
          protozero::pbf_writer te(pk, pf::packet::track_event);
          te.add_uint32(pf::track_event::type, pf::track_event::kSliceEnd);
          te.add_uint64(pf::track_event::track_uuid, uuid);
        }
        break;
      }
    }
    if (buf_.size() >= kFlushAt) flush();
  }

  // The arrows are on the events at their ends already (flow_ids, terminating_flow_ids).
  void flow(const trace::Flow&) override {}

  bool finish(const std::string&) override {
    for (std::uint32_t track = 0; track < open_.size(); ++track) {
      auto& open = open_[track];
      if (open.empty()) continue;
      Sequence& seq = sequence(track_uuid(track), nullptr);
      for (; !open.empty(); open.pop_back()) end_slice(seq, open.back());
    }
    flush();
    return ok_;
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 20;
  static constexpr std::uint32_t kDescriptorSequence = 1;
  static constexpr std::uint64_t kProcessUuid = 1;
  static constexpr std::uint32_t kClock = pf::clock::kFirstSequenceClock;  // each sequence's incremental clock
  enum Table { kCategories, kNames, kArgNames };

  static std::uint64_t track_uuid(std::uint32_t index) { return 2 + index; }

  // A track of the process named on first use (counters, sections), by key.
  std::uint64_t named_track(std::string key, std::string_view name, bool counter) {
    auto [it, fresh] = named_.emplace(std::move(key), 0);
    if (!fresh) return it->second;
    it->second = kNamedUuidBase + named_.size();
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint32(pf::packet::trusted_packet_sequence_id, kDescriptorSequence);
    protozero::pbf_writer td(pk, pf::packet::track_descriptor);
    td.add_uint64(pf::track::uuid, it->second);
    td.add_string(pf::track::name, name.data(), name.size());
    td.add_uint64(pf::track::parent_uuid, kProcessUuid);
    if (counter) td.add_message(pf::track::counter, std::string());  // a plain counter
    return it->second;
  }
  static constexpr std::uint64_t kNamedUuidBase = std::uint64_t(1) << 32;

  // The sequence of (track, stream), started on first use.
  Sequence& sequence(std::uint64_t track, const char* stream) {
    if (last_seq_ && last_key_.first == track && last_key_.second == stream) return *last_seq_;
    auto [it, fresh] = sequences_.try_emplace({track, std::string(stream ? stream : "")});
    if (fresh) {
      it->second = std::make_unique<Sequence>();
      start(*it->second, track);
    }
    last_key_ = {track, stream};
    last_seq_ = it->second.get();
    return *last_seq_;
  }

  void start(Sequence& seq, std::uint64_t track) {
    seq.id = next_sequence_++;
    seq.track = track;
    seq.last = t0_;
    {
      protozero::pbf_writer trace(buf_);
      protozero::pbf_writer pk(trace, pf::trace::packet);
      pk.add_uint32(pf::packet::trusted_packet_sequence_id, seq.id);
      pk.add_uint32(pf::packet::sequence_flags, pf::packet::kIncrementalStateCleared);
      protozero::pbf_writer defaults(pk, pf::packet::trace_packet_defaults);
      defaults.add_uint32(pf::defaults::timestamp_clock_id, kClock);
      protozero::pbf_writer te(defaults, pf::defaults::track_event_defaults);
      te.add_uint64(pf::defaults::track_uuid, track);
    }
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint32(pf::packet::trusted_packet_sequence_id, seq.id);
    protozero::pbf_writer snap(pk, pf::packet::clock_snapshot);
    {
      protozero::pbf_writer c(snap, pf::clock::clocks);
      c.add_uint32(pf::clock::clock_id, kClock);
      c.add_uint64(pf::clock::timestamp, t0_);
      c.add_bool(pf::clock::is_incremental, true);
    }
    {
      protozero::pbf_writer c(snap, pf::clock::clocks);
      c.add_uint32(pf::clock::clock_id, pf::clock::kMonotonicRaw);
      c.add_uint64(pf::clock::timestamp, t0_);
    }
    // The trace's own clock, said once before any time is read: the Timeline's clock.
    if (seq.id == kDescriptorSequence + 1) snap.add_uint32(pf::clock::primary_trace_clock, pf::clock::kMonotonicRaw);
  }

  // Time and sequence of an event packet: the time since the sequence's last packet, or when
  // that would be negative, the absolute time on CLOCK_MONOTONIC_RAW.
  void header(protozero::pbf_writer& pk, Sequence& seq, std::uint64_t ts) {
    if (ts >= seq.last) {
      pk.add_uint64(pf::packet::timestamp, ts - seq.last);
      seq.last = ts;
    } else {
      pk.add_uint64(pf::packet::timestamp, ts);
      pk.add_uint32(pf::packet::timestamp_clock_id, pf::clock::kMonotonicRaw);
    }
    pk.add_uint32(pf::packet::trusted_packet_sequence_id, seq.id);
    pk.add_uint32(pf::packet::sequence_flags, pf::packet::kNeedsIncrementalState);
  }

  std::uint64_t intern(Sequence& seq, Table table, std::string_view s) {
    const std::uint64_t iid = tables_[table].id(s);
    std::vector<bool>& sent = seq.sent[table];
    if (sent.size() <= iid) sent.resize(iid + 64);
    if (!sent[iid]) {
      sent[iid] = true;
      fresh_.push_back({table, iid, s});
    }
    return iid;
  }

  void track_event(Sequence& seq, std::uint64_t uuid, std::uint32_t type, const trace::Event& e) {
    fresh_.clear();
    const std::uint64_t cat_iid = intern(seq, kCategories, e.cat);
    const std::uint64_t name_iid = intern(seq, kNames, e.name);
    std::size_t n = 0;
    if (e.args) {
      for (const Arg& a : *e.args) key_iids_[n++] = intern(seq, kArgNames, a.key);
    }
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    header(pk, seq, e.ts);
    if (!fresh_.empty()) {
      static constexpr std::uint32_t kField[] = {pf::interned::event_categories, pf::interned::event_names,
                                                 pf::interned::debug_annotation_names};
      protozero::pbf_writer in(pk, pf::packet::interned_data);
      for (const Fresh& f : fresh_) {
        protozero::pbf_writer entry(in, kField[f.table]);
        entry.add_uint64(pf::interned::iid, f.iid);
        entry.add_string(pf::interned::name, f.name.data(), f.name.size());
      }
    }
    protozero::pbf_writer te(pk, pf::packet::track_event);
    te.add_uint32(pf::track_event::type, type);
    if (uuid != seq.track) te.add_uint64(pf::track_event::track_uuid, uuid);
    te.add_uint64(pf::track_event::category_iids, cat_iid);
    te.add_uint64(pf::track_event::name_iid, name_iid);
    if (e.args) {
      n = 0;
      for (const Arg& a : *e.args) annotation(te, key_iids_[n++], a);
    }
    for (std::uint64_t id : e.flows_out) te.add_fixed64(pf::track_event::flow_ids, id);
    for (std::uint64_t id : e.flows_in) te.add_fixed64(pf::track_event::terminating_flow_ids, id);
  }

  static void annotation(protozero::pbf_writer& te, std::uint64_t key_iid, const Arg& a) {
    protozero::pbf_writer an(te, pf::track_event::debug_annotations);
    an.add_uint64(pf::annotation::name_iid, key_iid);
    switch (a.type) {
      case Arg::Type::Uint: an.add_uint64(pf::annotation::uint_value, a.u); break;
      case Arg::Type::Int: an.add_int64(pf::annotation::int_value, a.i); break;
      case Arg::Type::Bool: an.add_bool(pf::annotation::bool_value, a.u != 0); break;
      case Arg::Type::Str: an.add_string(pf::annotation::string_value, a.s.data(), a.s.size()); break;
      case Arg::Type::Null: break;  // the name alone
    }
  }

  void end_slice(Sequence& seq, std::uint64_t ts) {
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    header(pk, seq, ts);
    protozero::pbf_writer te(pk, pf::packet::track_event);
    te.add_uint32(pf::track_event::type, pf::track_event::kSliceEnd);
  }

  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) ok_ = false;
    buf_.clear();
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

  std::FILE* f_;
  std::string buf_;
  bool ok_ = true;
  std::int32_t pid_ = 0;
  std::uint64_t t0_ = 0;
  std::uint32_t next_sequence_ = kDescriptorSequence + 1;
  std::vector<std::vector<std::uint64_t>> open_;  // per track index
  std::unordered_map<std::string, std::uint64_t> named_;
  std::unordered_map<std::pair<std::uint64_t, std::string>, std::unique_ptr<Sequence>, KeyHash> sequences_;
  std::pair<std::uint64_t, const char*> last_key_{0, nullptr};
  Sequence* last_seq_ = nullptr;
  InternTable tables_[3];
  std::vector<Fresh> fresh_;
  std::uint64_t key_iids_[trace::Args::kMax] = {};
};

}  // namespace

bool write_perfetto_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped) {
  PerfettoSink sink(f);
  return produce_trace(t, info, sink, clipped);
}

}  // namespace kob
