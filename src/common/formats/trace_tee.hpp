// Gives one trace to several format sinks (the .pftrace and the Chrome JSON in one pass), and
// remembers which of them finished well.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/formats/trace_events.hpp"

namespace kob::trace {

class TeeTraceSink : public TraceSink {
 public:
  void add(TraceSink* s) {
    sinks_.push_back(s);
    ok_.push_back(false);
  }
  void process(std::uint64_t pid, std::string_view name, std::uint64_t t0) override {
    for (TraceSink* s : sinks_) s->process(pid, name, t0);
  }
  void track(const TrackDesc& t) override {
    for (TraceSink* s : sinks_) s->track(t);
  }
  void event(const Event& e) override {
    for (TraceSink* s : sinks_) s->event(e);
  }
  void flow(const Flow& f) override {
    for (TraceSink* s : sinks_) s->flow(f);
  }
  void window_end() override {
    for (TraceSink* s : sinks_) s->window_end();
  }
  bool finish(const std::string& other_data_json) override {
    bool all = true;
    for (std::size_t i = 0; i < sinks_.size(); ++i) all = (ok_[i] = sinks_[i]->finish(other_data_json)) && all;
    return all;
  }
  // After finish: what the i-th sink added returned.
  bool ok(std::size_t i) const { return ok_[i]; }

  // Split when every sink splits: shard i is the tee of their shards i.
  bool split(unsigned n) override {
    if (sinks_.empty()) return false;
    for (TraceSink* s : sinks_)
      if (!s->split(n)) return false;
    if (shards_.size() != n) {
      shards_.clear();
      for (unsigned i = 0; i < n; ++i) {
        shards_.push_back(std::make_unique<TeeTraceSink>());
        for (TraceSink* s : sinks_) shards_.back()->add(&s->shard(i));
      }
    }
    return true;
  }
  TraceSink& shard(unsigned i) override { return i < shards_.size() ? *shards_[i] : *this; }
  void shards_begin() override {
    for (TraceSink* s : sinks_) s->shards_begin();
  }

 private:
  std::vector<TraceSink*> sinks_;
  std::vector<bool> ok_;
  std::vector<std::unique_ptr<TeeTraceSink>> shards_;
};

}  // namespace kob::trace
