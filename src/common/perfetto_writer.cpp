#include "common/perfetto_writer.hpp"

#include <charconv>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <protozero/pbf_writer.hpp>

#include "common/perfetto_fields.hpp"

namespace kob {

namespace {

namespace pf = pftrace;

// The Chrome writer is the one place that decides which events a trace holds (nesting cuts,
// mutex-hold lanes, device tracks, flows); this writer reads its event stream piece by piece and
// re-encodes each event, so the two files cannot drift apart. Only small per-event structures
// live here: nothing holds the whole document.

struct JValue {
  enum Kind : std::uint8_t { Str, Num, True, False, Null, Other } kind = Null;
  std::string text;
};

struct JEvent {
  std::string ph, cat, name, ts, dur, id;
  std::uint64_t tid = 0, pid = 0;
  std::vector<std::pair<std::string, JValue>> args;
  void clear() {
    ph.clear(), cat.clear(), name.clear(), ts.clear(), dur.clear(), id.clear();
    tid = pid = 0;
    args.clear();
  }
};

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Reads the JSON the Chrome writer makes: an object per event, flat but for "args".
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}
  bool ok() const { return ok_; }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip(char c) {
    if (peek() == c) ++i_; else ok_ = false;
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t' || s_[i_] == ',')) ++i_;
  }
  // Past the first '[' (the start of traceEvents).
  bool find_array() {
    const auto at = s_.find('[', i_);
    if (at == std::string_view::npos) return false;
    i_ = at + 1;
    return true;
  }
  void string(std::string& out) {
    out.clear();
    skip('"');
    while (ok_ && i_ < s_.size() && s_[i_] != '"') {
      const char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
            i_ += 2;
            const std::uint32_t lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: out += e;
      }
    }
    skip('"');
  }
  void value(JValue& v) {
    const char c = peek();
    v.text.clear();
    if (c == '"') {
      v.kind = JValue::Str;
      string(v.text);
    } else if (c == '{' || c == '[') {
      v.kind = JValue::Other;
      skip_nested();
    } else if (s_.substr(i_, 4) == "true") {
      v.kind = JValue::True, i_ += 4;
    } else if (s_.substr(i_, 5) == "false") {
      v.kind = JValue::False, i_ += 5;
    } else if (s_.substr(i_, 4) == "null") {
      v.kind = JValue::Null, i_ += 4;
    } else {
      v.kind = JValue::Num;
      const std::size_t b = i_;
      while (i_ < s_.size() && std::string_view("+-.0123456789eE").find(s_[i_]) != std::string_view::npos) ++i_;
      v.text.assign(s_.substr(b, i_ - b));
      if (v.text.empty()) ok_ = false;
    }
  }
  // One event object into e; false at the end of the array or on malformed text.
  bool event(JEvent& e) {
    e.clear();
    ws();
    if (peek() != '{') return false;
    ++i_;
    std::string key;
    JValue v;
    while (ok_) {
      ws();
      if (peek() == '}') {
        ++i_;
        return true;
      }
      string(key);
      ws_colon();
      if (key == "args" && peek() == '{') {
        ++i_;
        while (ok_) {
          ws();
          if (peek() == '}') {
            ++i_;
            break;
          }
          std::pair<std::string, JValue> a;
          string(a.first);
          ws_colon();
          value(a.second);
          e.args.push_back(std::move(a));
        }
        continue;
      }
      value(v);
      if (key == "ph") e.ph = v.text;
      else if (key == "cat") e.cat = v.text;
      else if (key == "name") e.name = v.text;
      else if (key == "ts") e.ts = v.text;
      else if (key == "dur") e.dur = v.text;
      else if (key == "id") e.id = v.text;
      else if (key == "tid") std::from_chars(v.text.data(), v.text.data() + v.text.size(), e.tid);
      else if (key == "pid") std::from_chars(v.text.data(), v.text.data() + v.text.size(), e.pid);
    }
    return false;
  }

 private:
  void ws_colon() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == ':')) ++i_;
  }
  std::uint32_t hex4() {
    std::uint32_t v = 0;
    if (i_ + 4 > s_.size()) {
      ok_ = false;
      return 0;
    }
    std::from_chars(s_.data() + i_, s_.data() + i_ + 4, v, 16);
    i_ += 4;
    return v;
  }
  void skip_nested() {
    int depth = 0;
    bool in_str = false;
    for (; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (in_str) {
        if (c == '\\') ++i_;
        else if (c == '"') in_str = false;
      } else if (c == '"') {
        in_str = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        ++i_;
        return;
      }
    }
    ok_ = false;
  }
  std::string_view s_;
  std::size_t i_ = 0;
  bool ok_ = true;
};

// "12.345" (microseconds, exact to the ns) -> 12345.
std::uint64_t us_text_to_ns(std::string_view s) {
  std::uint64_t whole = 0;
  const auto dot = s.find('.');
  std::from_chars(s.data(), s.data() + (dot == std::string_view::npos ? s.size() : dot), whole);
  std::uint64_t frac = 0;
  if (dot != std::string_view::npos) {
    for (std::size_t k = 1; k <= 3; ++k) frac = frac * 10 + (dot + k < s.size() ? static_cast<std::uint64_t>(s[dot + k] - '0') : 0);
  }
  return whole * 1000 + frac;
}

// Feeds each complete event of the Chrome text to a handler.
class EventReader : public TraceTextSink {
 public:
  bool write(std::string_view text) override {
    if (done_) return true;
    Scanner sc(text);
    if (!started_) {
      if (!sc.find_array()) return false;
      started_ = true;
    }
    while (true) {
      sc.ws();
      if (sc.at_end()) return true;
      if (sc.peek() == ']') {
        done_ = true;
        return true;
      }
      if (!sc.event(ev_) || !sc.ok()) return false;
      if (!on_event(ev_)) return false;
    }
  }

 protected:
  virtual bool on_event(const JEvent& e) = 0;

 private:
  JEvent ev_;
  bool started_ = false, done_ = false;
};

struct FlowEnd {
  std::uint64_t id;
  bool terminating;
  std::string name;
};

struct KeyHash {
  std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& k) const {
    return std::hash<std::uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
  }
};
using FlowMap = std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::vector<FlowEnd>, KeyHash>;

// First pass: where each flow starts and ends (thread id, ns), so the slices there can carry it.
class FlowCollector : public EventReader {
 public:
  FlowMap flows;

 protected:
  bool on_event(const JEvent& e) override {
    if (e.ph != "s" && e.ph != "f") return true;
    std::uint64_t id = 0;
    std::from_chars(e.id.data(), e.id.data() + e.id.size(), id);
    flows[{e.tid, us_text_to_ns(e.ts)}].push_back({id, e.ph == "f", e.name});
    return true;
  }
};

class PacketWriter : public EventReader {
 public:
  PacketWriter(std::FILE* f, std::uint64_t t0, std::unordered_set<std::uint64_t> thread_tids, FlowMap flows)
      : f_(f), t0_(t0), thread_tids_(std::move(thread_tids)), flows_(std::move(flows)) {
    buf_.reserve(kFlushAt + 65536);
  }

  bool finish() {
    close_slices();
    for (auto& [key, ends] : flows_) {  // flows with no slice or instant to carry them
      if (ends.empty()) continue;
      const std::string name = ends.front().name;
      event(key.second, thread_track(key.first), pf::track_event::kInstant, "correlation", name, nullptr, &ends);
    }
    flows_.clear();
    flush();
    return ok_;
  }

 protected:
  bool on_event(const JEvent& e) override {
    if (e.ph != "X" && e.ph != "M") close_slices();
    if (e.ph == "M") {
      metadata(e);
    } else if (e.ph == "X") {
      const std::uint64_t start = t0_ + us_text_to_ns(e.ts), end = start + us_text_to_ns(e.dur);
      const std::uint64_t uuid = thread_track(e.tid);
      auto& open = open_[uuid];
      while (!open.empty() && open.back() <= start) {
        end_slice(open.back(), uuid);
        open.pop_back();
      }
      event(start, uuid, pf::track_event::kSliceBegin, e.cat, e.name, &e.args, take_flows(e.tid, e.ts));
      open.push_back(end);
    } else if (e.ph == "i") {
      event(t0_ + us_text_to_ns(e.ts), thread_track(e.tid), pf::track_event::kInstant, e.cat, e.name, &e.args,
            take_flows(e.tid, e.ts));
    } else if (e.ph == "b" || e.ph == "e") {
      const std::uint64_t uuid = async_track(e.cat, e.id, e.name);
      const std::uint64_t ts = t0_ + us_text_to_ns(e.ts);
      if (e.ph == "b") event(ts, uuid, pf::track_event::kSliceBegin, e.cat, e.name, &e.args, nullptr);
      else end_slice(ts, uuid);
    } else if (e.ph == "C") {
      counter(e);
    }
    // "s" / "f": already attached to the slices they bind to (first pass).
    if (buf_.size() >= kFlushAt) flush();
    return ok_;
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 20;
  static constexpr std::uint64_t kProcessUuid = 1;

  std::vector<FlowEnd>* take_flows(std::uint64_t tid, const std::string& ts) {
    auto it = flows_.find({tid, us_text_to_ns(ts)});
    return it == flows_.end() || it->second.empty() ? nullptr : &it->second;
  }

  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) ok_ = false;
    buf_.clear();
  }

  // The sequence's first packet clears its incremental state (interning); the rest depend on it.
  void sequence(protozero::pbf_writer& pk, bool uses_state) {
    pk.add_uint32(pf::packet::trusted_packet_sequence_id, 1);
    if (first_) {
      pk.add_uint32(pf::packet::sequence_flags, pf::packet::kIncrementalStateCleared);
      first_ = false;
    } else if (uses_state) {
      pk.add_uint32(pf::packet::sequence_flags, pf::packet::kNeedsIncrementalState);
    }
  }

  void metadata(const JEvent& e) {
    auto arg = [&](std::string_view key) -> const JValue* {
      for (const auto& [k, v] : e.args)
        if (k == key) return &v;
      return nullptr;
    };
    if (e.name == "process_name") {
      const JValue* v = arg("name");
      pid_ = e.pid;
      protozero::pbf_writer trace(buf_);
      protozero::pbf_writer pk(trace, pf::trace::packet);
      sequence(pk, false);
      protozero::pbf_writer td(pk, pf::packet::track_descriptor);
      td.add_uint64(pf::track::uuid, kProcessUuid);
      protozero::pbf_writer pd(td, pf::track::process);
      pd.add_int32(pf::process::pid, static_cast<std::int32_t>(pid_));
      if (v) pd.add_string(pf::process::process_name, v->text);
    } else if (e.name == "thread_name") {
      const JValue* v = arg("name");
      describe_thread(e.tid, v ? v->text : "thread " + std::to_string(e.tid));
    }
  }

  std::uint64_t thread_track(std::uint64_t tid) {
    auto it = thread_uuids_.find(tid);
    if (it != thread_uuids_.end()) return it->second;
    return describe_thread(tid, "thread " + std::to_string(tid));
  }

  // Program threads are thread tracks (pid, tid); the writer's own lanes (devices, mutex holds, a
  // reused thread id) are named tracks of the process, since their ids are no OS thread's.
  std::uint64_t describe_thread(std::uint64_t tid, const std::string& name) {
    auto [it, fresh] = thread_uuids_.emplace(tid, next_uuid_);
    if (!fresh) return it->second;
    const std::uint64_t uuid = next_uuid_++;
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    sequence(pk, false);
    protozero::pbf_writer td(pk, pf::packet::track_descriptor);
    td.add_uint64(pf::track::uuid, uuid);
    if (thread_tids_.count(tid) && tid <= 0x7FFFFFFF) {
      protozero::pbf_writer th(td, pf::track::thread);
      th.add_int32(pf::thread::pid, static_cast<std::int32_t>(pid_));
      th.add_int32(pf::thread::tid, static_cast<std::int32_t>(tid));
      th.add_string(pf::thread::thread_name, name);
    } else {
      td.add_string(pf::track::name, name);
      td.add_uint64(pf::track::parent_uuid, kProcessUuid);
    }
    return uuid;
  }

  // Sections overlap freely: each section id is a track of its own under the process.
  std::uint64_t async_track(const std::string& cat, const std::string& id, const std::string& name) {
    auto [it, fresh] = named_uuids_.emplace(cat + '\x1f' + id, next_uuid_);
    if (!fresh) return it->second;
    ++next_uuid_;
    named_track(it->second, name + " (section " + id + ")", false);
    return it->second;
  }

  void named_track(std::uint64_t uuid, const std::string& name, bool counter) {
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    sequence(pk, false);
    protozero::pbf_writer td(pk, pf::packet::track_descriptor);
    td.add_uint64(pf::track::uuid, uuid);
    td.add_string(pf::track::name, name);
    td.add_uint64(pf::track::parent_uuid, kProcessUuid);
    if (counter) td.add_message(pf::track::counter, std::string());  // a plain counter
  }

  void counter(const JEvent& e) {
    auto [it, fresh] = named_uuids_.emplace("C\x1f" + e.name, next_uuid_);
    if (fresh) {
      ++next_uuid_;
      named_track(it->second, e.name, true);
    }
    std::int64_t value = 0;
    for (const auto& [k, v] : e.args) {
      if (v.kind == JValue::Num) std::from_chars(v.text.data(), v.text.data() + v.text.size(), value);
    }
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint64(pf::packet::timestamp, t0_ + us_text_to_ns(e.ts));
    sequence(pk, false);
    protozero::pbf_writer te(pk, pf::packet::track_event);
    te.add_uint32(pf::track_event::type, pf::track_event::kCounter);
    te.add_uint64(pf::track_event::track_uuid, it->second);
    te.add_int64(pf::track_event::counter_value, value);
  }

  struct Interned {
    std::uint32_t field;
    std::uint64_t iid;
    const std::string* name;
  };
  std::uint64_t intern(std::unordered_map<std::string, std::uint64_t>& table, std::uint32_t field, const std::string& s,
                       std::vector<Interned>& fresh) {
    auto [it, added] = table.emplace(s, table.size() + 1);
    if (added) fresh.push_back({field, it->second, &it->first});
    return it->second;
  }

  void event(std::uint64_t ts, std::uint64_t uuid, std::uint32_t type, const std::string& cat, const std::string& name,
             const std::vector<std::pair<std::string, JValue>>* args, std::vector<FlowEnd>* flows) {
    std::vector<Interned>& fresh = fresh_;
    fresh.clear();
    const std::uint64_t cat_iid = intern(cats_, pf::interned::event_categories, cat, fresh);
    const std::uint64_t name_iid = intern(names_, pf::interned::event_names, name, fresh);
    arg_iids_.clear();
    if (args) {
      for (const auto& a : *args) arg_iids_.push_back(intern(keys_, pf::interned::debug_annotation_names, a.first, fresh));
    }
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint64(pf::packet::timestamp, ts);
    sequence(pk, true);
    if (!fresh.empty()) {
      protozero::pbf_writer in(pk, pf::packet::interned_data);
      for (const Interned& n : fresh) {
        protozero::pbf_writer entry(in, n.field);
        entry.add_uint64(pf::interned::iid, n.iid);
        entry.add_string(pf::interned::name, *n.name);
      }
    }
    protozero::pbf_writer te(pk, pf::packet::track_event);
    te.add_uint32(pf::track_event::type, type);
    te.add_uint64(pf::track_event::track_uuid, uuid);
    te.add_uint64(pf::track_event::category_iids, cat_iid);
    te.add_uint64(pf::track_event::name_iid, name_iid);
    if (args) {
      for (std::size_t k = 0; k < args->size(); ++k) annotation(te, arg_iids_[k], (*args)[k].second);
    }
    if (flows) {
      for (const FlowEnd& fl : *flows)
        te.add_fixed64(fl.terminating ? pf::track_event::terminating_flow_ids : pf::track_event::flow_ids, fl.id);
      flows->clear();
    }
  }

  static void annotation(protozero::pbf_writer& te, std::uint64_t key_iid, const JValue& v) {
    protozero::pbf_writer a(te, pf::track_event::debug_annotations);
    a.add_uint64(pf::annotation::name_iid, key_iid);
    const char* b = v.text.data();
    const char* e = b + v.text.size();
    switch (v.kind) {
      case JValue::Str: a.add_string(pf::annotation::string_value, v.text); break;
      case JValue::True: a.add_bool(pf::annotation::bool_value, true); break;
      case JValue::False: a.add_bool(pf::annotation::bool_value, false); break;
      case JValue::Num:
        if (v.text.find_first_of(".eE") != std::string::npos) {
          double d = 0;
          std::from_chars(b, e, d);
          a.add_double(pf::annotation::double_value, d);
        } else if (v.text[0] == '-') {
          std::int64_t i = 0;
          std::from_chars(b, e, i);
          a.add_int64(pf::annotation::int_value, i);
        } else {
          std::uint64_t u = 0;
          std::from_chars(b, e, u);
          a.add_uint64(pf::annotation::uint_value, u);
        }
        break;
      default: break;  // null: the name alone
    }
  }

  void end_slice(std::uint64_t ts, std::uint64_t uuid) {
    protozero::pbf_writer trace(buf_);
    protozero::pbf_writer pk(trace, pf::trace::packet);
    pk.add_uint64(pf::packet::timestamp, ts);
    sequence(pk, false);
    protozero::pbf_writer te(pk, pf::packet::track_event);
    te.add_uint32(pf::track_event::type, pf::track_event::kSliceEnd);
    te.add_uint64(pf::track_event::track_uuid, uuid);
  }

  // Complete events come grouped by track, each track's nested and by start: a slice ends when
  // the next one on its track starts after it, or when the complete events are over.
  void close_slices() {
    for (auto& [uuid, open] : open_) {
      while (!open.empty()) {
        end_slice(open.back(), uuid);
        open.pop_back();
      }
    }
  }

  std::FILE* f_;
  std::uint64_t t0_;
  std::unordered_set<std::uint64_t> thread_tids_;
  FlowMap flows_;
  std::string buf_;
  bool ok_ = true, first_ = true;
  std::uint64_t pid_ = 0, next_uuid_ = 2;
  std::unordered_map<std::uint64_t, std::uint64_t> thread_uuids_;
  std::unordered_map<std::string, std::uint64_t> named_uuids_;
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> open_;
  std::unordered_map<std::string, std::uint64_t> cats_, names_, keys_;
  std::vector<Interned> fresh_;
  std::vector<std::uint64_t> arg_iids_;
};

}  // namespace

bool write_perfetto_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped) {
  FlowCollector flows;
  if (!write_chrome_trace(flows, t, info)) return false;
  // The Chrome writer's thread ids that are a program thread's own (first use of an OS id).
  std::unordered_set<std::uint64_t> thread_tids;
  for (const Track& tr : t.tracks) thread_tids.insert(tr.os_tid);
  PacketWriter out(f, t.t0, std::move(thread_tids), std::move(flows.flows));
  const bool ok = write_chrome_trace(out, t, info, clipped);
  return out.finish() && ok;
}

}  // namespace kob
