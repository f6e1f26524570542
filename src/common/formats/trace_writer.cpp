// The Chrome JSON sink: one line per event, written straight into a buffer that is flushed to
// the file in large blocks.
#include "common/formats/trace_writer.hpp"

#include <charconv>
#include <cstring>
#include <memory>
#include <vector>

#include "common/support/chunk_writer.hpp"
#include "common/support/json.hpp"
#include "common/formats/fixed_text_cache.hpp"
#include "common/formats/trace_events.hpp"

namespace kob {

namespace {

using trace::Arg;
using trace::Phase;

// A byte buffer written through a pointer: each write makes room for itself first (one compare),
// then copies or formats in place, with no std::string bookkeeping per piece.
class Out {
 public:
  explicit Out(std::size_t capacity) : buf_(new char[capacity]), p_(buf_.get()), end_(p_ + capacity) {}

  const char* data() const { return buf_.get(); }
  std::size_t size() const { return static_cast<std::size_t>(p_ - buf_.get()); }
  void clear() { p_ = buf_.get(); }
  // Hands the bytes written so far to w and goes on in the storage it gives back (or a new one).
  void hand_over(ChunkWriter& w) {
    const std::size_t cap = static_cast<std::size_t>(end_ - buf_.get()), n = size();
    ChunkWriter::Chunk c{std::move(buf_), n, cap};
    w.write(c);
    if (c.data == nullptr || c.capacity < cap) c = {std::unique_ptr<char[]>(new char[cap]), 0, cap};
    buf_ = std::move(c.data);
    p_ = buf_.get();
    end_ = p_ + c.capacity;
  }

  void lit(std::string_view s) {
    need(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void ch(char c) {
    need(1);
    *p_++ = c;
  }
  void uint(std::uint64_t v) {
    need(20);
    p_ = json::write_uint(p_, v);
  }
  void sint(std::int64_t v) {
    need(20);
    p_ = std::to_chars(p_, p_ + 20, v).ptr;
  }
  // ns / 1000 with three decimals, as json::append_us.
  void us(std::uint64_t ns) {
    need(24);
    p_ = json::write_us(p_, ns);
  }
  void str(std::string_view s) {
    ch('"');
    for (std::size_t at = 0; at < s.size();) {
      const std::size_t end = json::piece_end(s, at);
      need(6 * (end - at));
      p_ = json::write_chars(p_, s.substr(at, end - at));
      at = end;
    }
    ch('"');
  }

 private:
  void need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) >= n) return;
    const std::size_t used = size();
    std::size_t cap = static_cast<std::size_t>(end_ - buf_.get()) * 2;
    while (cap - used < n) cap *= 2;
    std::unique_ptr<char[]> b(new char[cap]);
    std::memcpy(b.get(), buf_.get(), used);
    buf_ = std::move(b);
    p_ = buf_.get() + used;
    end_ = buf_.get() + cap;
  }

  std::unique_ptr<char[]> buf_;
  char* p_;
  char* end_;
};

class ChromeSink : public trace::TraceSink {
 public:
  explicit ChromeSink(std::FILE* f) : owned_(std::make_unique<ChunkWriter>(f)), out_(*owned_), o_(kFlushAt + 65536) {}
  // A shard (TraceSink::split): events of its tracks into its own buffer, to the same file. Every
  // event begins with a comma: the shards' buffers may land in any order after the header.
  explicit ChromeSink(ChunkWriter& out) : out_(out), o_(kFlushAt + 65536) {}

  bool split(unsigned n) override {
    while (shards_.size() < n) shards_.push_back(std::make_unique<ChromeSink>(out_));
    return true;
  }
  TraceSink& shard(unsigned i) override { return i < shards_.size() ? *shards_[i] : *this; }
  void shards_begin() override {
    flush();  // the header and the metadata first
    for (auto& sh : shards_) {
      if (sh->pid_ != pid_) {
        sh->fixed_.clear();
        sh->pid_ = pid_;
      }
      sh->t0_ = t0_;
      sh->tids_ = tids_;
    }
  }

  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override {
    fixed_.clear();  // a later process's texts may sit at the same addresses
    pid_ = std::to_string(pid);
    t0_ = t0;
    o_.lit("{\"traceEvents\":[");
    o_.lit("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    o_.lit(pid_);
    o_.lit(",\"tid\":0,\"args\":{\"name\":");
    o_.str(name);
    o_.lit("}}");
  }

  void track(const trace::TrackDesc& d) override {
    if (tids_.size() <= d.index) tids_.resize(d.index + 1);
    const std::string tid = std::to_string(d.id);
    // What every event on the track writes after its name.
    tids_[d.index] = ",\"pid\":" + pid_ + ",\"tid\":" + tid + ",\"ts\":";
    if (!d.listed) return;
    o_.lit(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    o_.lit(pid_);
    o_.lit(",\"tid\":");
    o_.lit(tid);
    o_.lit(",\"args\":{\"name\":");
    o_.str(d.name);
    o_.lit("}}");
    o_.lit(",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":");
    o_.lit(pid_);
    o_.lit(",\"tid\":");
    o_.lit(tid);
    o_.lit(",\"args\":{\"sort_index\":");
    o_.uint(d.sort_index);
    o_.lit("}}");
  }

  void event(const trace::Event& e) override {
    switch (e.phase) {
      case Phase::Slice:
        head('X', e.cat, e.name, e.name_fixed, e.track, e.ts);
        o_.lit(",\"dur\":");
        o_.us(e.end - e.ts);
        break;
      case Phase::Instant:
        head('i', e.cat, e.name, e.name_fixed, e.track, e.ts);
        o_.lit(",\"s\":\"t\"");
        break;
      case Phase::Counter:
        head('C', e.cat, e.name, e.name_fixed, e.track, e.ts);
        break;
      case Phase::AsyncBegin:
      case Phase::AsyncEnd:
        head(e.phase == Phase::AsyncBegin ? 'b' : 'e', e.cat, e.name, e.name_fixed, e.track, e.ts);
        o_.lit(",\"id\":");
        o_.uint(e.id);
        break;
    }
    if (e.args) args(*e.args);
    o_.ch('}');
    maybe_flush();
  }

  void flow(const trace::Flow& f) override {
    head('s', "correlation", f.name, true, f.from_track, f.from_ts);  // a literal: fixed text
    o_.lit(",\"id\":");
    o_.uint(f.id);
    o_.ch('}');
    head('f', "correlation", f.name, true, f.to_track, f.to_ts);
    o_.lit(",\"bp\":\"e\",\"id\":");
    o_.uint(f.id);
    o_.ch('}');
    maybe_flush();
  }

  bool finish(const std::string& other_data_json) override {
    for (auto& sh : shards_) sh->flush();
    o_.lit("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":");
    o_.lit(other_data_json);
    o_.lit("\n}\n");
    flush();
    return out_.finish();
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 20;  // a chunk (ChunkWriter): two or three per sink at once

  // Categories and argument keys are the producer's literals: the text written for them is made
  // once per address and phase (a cache of two ways, hashed: literals lie anywhere in the binary,
  // and a low-bits index let a few of them evict each other at every event).
  struct Lit {
    const char* p = nullptr;
    char ph = 0;  // 0: an argument key
    std::string text;
  };
  Lit& lit_slot(const char* p, char ph) {
    const std::size_t i = ((reinterpret_cast<std::uintptr_t>(p) ^ static_cast<unsigned char>(ph)) * 0x9E3779B97F4A7C15ull) >> 55;
    Lit& a = lits_[i];
    if (a.p == p && a.ph == ph) return a;
    Lit& b = lits_[i ^ 1];
    if (b.p == p && b.ph == ph) return b;
    Lit& had = a.p == nullptr || b.p != nullptr ? a : b;
    had.p = p;
    had.ph = ph;
    had.text.clear();
    return had;
  }
  std::string_view prefix(char ph, const char* cat) {  // ,\n{"ph":"X","cat":"CAT","name":
    Lit& l = lit_slot(cat, ph);
    if (l.text.empty()) l.text.assign(",\n{\"ph\":\"").append(1, ph).append("\",\"cat\":\"").append(cat).append("\",\"name\":");
    return l.text;
  }
  std::string_view key(const char* k) {  // "KEY":
    Lit& l = lit_slot(k, 0);
    if (l.text.empty()) l.text.assign("\"").append(k).append("\":");
    return l.text;
  }

  // Common head of every event: ,\n{"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":..
  void head(char ph, const char* cat, std::string_view name, bool name_fixed, std::uint32_t track,
            std::uint64_t ts) {
    o_.lit(prefix(ph, cat));
    text(name, name_fixed);
    o_.lit(tids_[track]);
    o_.us(ts - t0_);
  }

  void args(const trace::Args& a) {
    o_.lit(",\"args\":{");
    bool first = true;
    for (const Arg& x : a) {
      if (!first) o_.ch(',');
      first = false;
      o_.lit(key(x.key));
      switch (x.type) {
        case Arg::Type::Uint: o_.uint(x.u); break;
        case Arg::Type::Int: o_.sint(x.i); break;
        case Arg::Type::Bool: o_.lit(x.u ? "true" : "false"); break;
        case Arg::Type::Str: o_.str(x.s); break;
        case Arg::Type::SharedStr: text(x.s, x.fixed); break;
        case Arg::Type::Null: o_.lit("null"); break;
      }
    }
    o_.ch('}');
  }

  // A text that never changes at its address (Event::name_fixed, Arg::fixed) is quoted once and
  // then copied: names and source locations are most of a trace's bytes.
  void text(std::string_view s, bool fixed) {
    if (!fixed) return o_.str(s);
    bool had = false;
    auto& slot = fixed_.slot(s, had);
    if (!had) fixed_.fill(slot, s, nullptr, json::quote(s));
    o_.lit(slot.value);
  }

  void maybe_flush() {
    if (o_.size() >= kFlushAt) flush();
  }
  void flush() {
    if (o_.size() != 0) o_.hand_over(out_);
  }

  static constexpr std::size_t kLits = 512;  // lit_slot's hash: its top 9 bits

  std::unique_ptr<ChunkWriter> owned_;  // null in a shard
  ChunkWriter& out_;
  std::vector<std::unique_ptr<ChromeSink>> shards_;
  Out o_;
  std::string pid_;
  std::uint64_t t0_ = 0;
  std::vector<std::string> tids_;  // per track index: `,"pid":P,"tid":T,"ts":`
  Lit lits_[kLits];
  trace::FixedTextCache<std::string, 10> fixed_;  // quoted
};

}  // namespace

bool write_chrome_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped) {
  ChromeSink sink(f);
  return produce_trace(t, info, sink, clipped);
}

std::unique_ptr<trace::TraceSink> make_chrome_sink(std::FILE* f) { return std::make_unique<ChromeSink>(f); }

}  // namespace kob
