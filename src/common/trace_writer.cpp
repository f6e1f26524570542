// The Chrome JSON sink: one line per event, streamed through a buffer.
#include "common/trace_writer.hpp"

#include <vector>

#include "common/json.hpp"
#include "common/trace_events.hpp"

namespace kob {

namespace {

using trace::Arg;
using trace::Phase;

class ChromeSink : public trace::TraceSink {
 public:
  explicit ChromeSink(std::FILE* f) : f_(f) { o_.reserve(kFlushAt + 4096); }

  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override {
    pid_ = std::to_string(pid);
    t0_ = t0;
    o_ += "{\"traceEvents\":[";
    o_ += "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid_ + ",\"tid\":0,\"args\":{\"name\":";
    json::append_string(o_, name);
    o_ += "}}";
  }

  void track(const trace::TrackDesc& d) override {
    if (tids_.size() <= d.index) tids_.resize(d.index + 1);
    tids_[d.index] = std::to_string(d.id);
    if (!d.listed) return;
    const std::string& tid = tids_[d.index];
    o_ += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid_ + ",\"tid\":" + tid + ",\"args\":{\"name\":";
    json::append_string(o_, d.name);
    o_ += "}}";
    o_ += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + pid_ + ",\"tid\":" + tid +
          ",\"args\":{\"sort_index\":" + std::to_string(d.sort_index) + "}}";
  }

  void event(const trace::Event& e) override {
    switch (e.phase) {
      case Phase::Slice:
        head("X", e.cat, e.name, e.track, e.ts);
        o_ += ",\"dur\":";
        json::append_us(o_, e.end - e.ts);
        break;
      case Phase::Instant:
        head("i", e.cat, e.name, e.track, e.ts);
        o_ += ",\"s\":\"t\"";
        break;
      case Phase::Counter:
        head("C", e.cat, e.name, e.track, e.ts);
        break;
      case Phase::AsyncBegin:
      case Phase::AsyncEnd:
        head(e.phase == Phase::AsyncBegin ? "b" : "e", e.cat, e.name, e.track, e.ts);
        o_ += ",\"id\":";
        json::append_uint(o_, e.id);
        break;
    }
    if (e.args) args(*e.args);
    o_ += '}';
    maybe_flush();
  }

  void flow(const trace::Flow& f) override {
    head("s", "correlation", f.name, f.from_track, f.from_ts);
    o_ += ",\"id\":";
    json::append_uint(o_, f.id);
    o_ += '}';
    head("f", "correlation", f.name, f.to_track, f.to_ts);
    o_ += ",\"bp\":\"e\",\"id\":";
    json::append_uint(o_, f.id);
    o_ += '}';
    maybe_flush();
  }

  bool finish(const std::string& other_data_json) override {
    o_ += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":";
    o_ += other_data_json;
    o_ += "\n}\n";
    flush();
    return ok_;
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 22;

  // Common head of every event: ,\n{"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":..
  void head(const char* ph, const char* cat, std::string_view name, std::uint32_t track, std::uint64_t ts) {
    o_ += ",\n{\"ph\":\"";
    o_ += ph;
    o_ += "\",\"cat\":\"";
    o_ += cat;
    o_ += "\",\"name\":";
    json::append_string(o_, name);
    o_ += ",\"pid\":";
    o_ += pid_;
    o_ += ",\"tid\":";
    o_ += tids_[track];
    o_ += ",\"ts\":";
    json::append_us(o_, ts - t0_);
  }

  void args(const trace::Args& a) {
    o_ += ",\"args\":{";
    bool first = true;
    for (const Arg& x : a) {
      if (!first) o_ += ',';
      first = false;
      o_ += '"';
      o_ += x.key;
      o_ += "\":";
      switch (x.type) {
        case Arg::Type::Uint: json::append_uint(o_, x.u); break;
        case Arg::Type::Int: json::append_int(o_, x.i); break;
        case Arg::Type::Bool: o_ += x.u ? "true" : "false"; break;
        case Arg::Type::Str: json::append_string(o_, x.s); break;
        case Arg::Type::Null: o_ += "null"; break;
      }
    }
    o_ += '}';
  }

  void maybe_flush() {
    if (o_.size() >= kFlushAt) flush();
  }
  void flush() {
    if (!o_.empty() && std::fwrite(o_.data(), 1, o_.size(), f_) != o_.size()) ok_ = false;
    o_.clear();
  }

  std::FILE* f_;
  std::string o_;
  std::string pid_;
  std::uint64_t t0_ = 0;
  std::vector<std::string> tids_;  // per track index
  bool ok_ = true;
};

}  // namespace

bool write_chrome_trace(std::FILE* f, const Timeline& t, const TraceInfo& info, std::uint64_t* clipped) {
  ChromeSink sink(f);
  return produce_trace(t, info, sink, clipped);
}

}  // namespace kob
