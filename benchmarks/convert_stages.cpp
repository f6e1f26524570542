// The stages of `kob convert` timed one by one on a raw trace (benchmarks/convert_bench.py runs
// it): open (header, block index, META), decode (every record, nothing done with it), the pass
// kob convert makes (streaming builder, summary fold and the timeline kept; decoding included),
// the builder alone (the fold's share is the difference), the trace producer with a sink that
// keeps nothing, each trace format and the two summary files.
// Prints one line per stage: `stage NAME ns WALL_NS cpu CPU_NS` (CPU: this thread's CPU time,
// less disturbed by other processes on a loaded machine), and `records N`.
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/timeline/filter_sink.hpp"
#include "common/formats/perfetto_writer.hpp"
#include "common/timeline/raw_reader.hpp"
#include "common/record/record_codec.hpp"
#include "common/session/run_outputs.hpp"
#include "common/analysis/summary.hpp"
#include "common/analysis/summary_fold.hpp"
#include "common/timeline/tee_sink.hpp"
#include "common/timeline/timeline.hpp"
#include "common/timeline/thread_merge.hpp"
#include "common/timeline/timeline_builder.hpp"
#include "common/formats/trace_producer.hpp"
#include "common/formats/trace_writer.hpp"

namespace {

std::uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

struct Mark {
  std::uint64_t wall, cpu;
};
Mark now() { return {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_THREAD_CPUTIME_ID)}; }
Mark since(Mark t) {
  const Mark n = now();
  return {n.wall - t.wall, n.cpu - t.cpu};
}

void stage(const char* name, Mark m) {
  std::printf("stage %s ns %llu cpu %llu\n", name, static_cast<unsigned long long>(m.wall), static_cast<unsigned long long>(m.cpu));
}

// Takes every event and throws it away: the producer's own cost (nesting, flows, arguments).
class NullSink : public kob::trace::TraceSink {
 public:
  void process(std::uint64_t, std::string_view, std::uint64_t) override {}
  void track(const kob::trace::TrackDesc&) override {}
  void event(const kob::trace::Event& e) override { sum += e.ts + e.name.size(); }
  void flow(const kob::trace::Flow& f) override { sum += f.id; }
  bool finish(const std::string&) override { return true; }
  std::uint64_t sum = 0;
};

// Writes through f into path; false when it cannot be opened or written.
template <class F>
bool write_file(const std::string& path, F&& f) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) return false;
  const bool ok = f(out);
  return std::fclose(out) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: convert_stages RAW.kob OUTPUT_PREFIX [LAST_STAGE]\n");
    return 2;
  }
  const std::string path = argv[1], prefix = argv[2];
  const std::string last = argc == 4 ? argv[3] : "";  // for a profiler: stop after this stage
  auto t = now();
  kob::raw::Reader reader;
  std::string error;
  if (!reader.open(path, error)) {
    std::fprintf(stderr, "convert_stages: %s\n", error.c_str());
    return 1;
  }
  reader.apply_clock();
  reader.load_names();
  stage("open", since(t));
  std::printf("records %llu\n", static_cast<unsigned long long>(reader.total_records()));

  t = now();
  std::uint64_t seen = 0, sum = 0;
  std::uint64_t by_type[kob::codec::kTypes] = {};
  for (const kob::ThreadSource* th : reader.threads())
    th->for_each_chunk([&](const kob::Record* recs, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        sum += recs[i].tick;
        ++by_type[static_cast<std::uint8_t>(recs[i].type) & 127];
      }
      seen += n;
    });
  stage("decode", since(t));
  if (seen == 0) std::printf("checksum %llu\n", static_cast<unsigned long long>(sum));
  // How many records of each type (by Ev value): what a kernel costs in records.
  for (unsigned i = 0; i < kob::codec::kTypes; ++i)
    if (by_type[i]) std::printf("type %u %llu\n", i, static_cast<unsigned long long>(by_type[i]));
  if (last == "decode") return 0;

  kob::Facts facts{{std::string(kob::fact::kSection), std::string(kob::fact::kPid), std::to_string(reader.header().pid)}};
  facts.insert(facts.end(), reader.kv().begin(), reader.kv().end());
  const kob::CodeRange omp_code = kob::parse_code_range(kob::fact_value(facts, kob::fact::kSection, kob::fact::kOmpRuntimeCode));
  int initial = -1;
  try {
    initial = std::stoi(kob::fact_value(facts, kob::fact::kSection, kob::fact::kOmpInitialDevice, "-1"));
  } catch (...) {
  }
  const kob::Config c = kob::config_from_facts(facts);
  // As kob convert does it (run_outputs.cpp): one pass of the streaming builder, the summary
  // folded from the stream and the timeline kept for the trace writers.
  t = now();
  kob::SummaryFold fold;
  kob::TimelineCollector collected;
  kob::TeeSink both(fold, collected);
  kob::FilterSink filtered(both, c.include, c.exclude);
  {
    kob::TimelineBuilder builder(filtered, initial, omp_code);
    kob::read_threads(reader.threads(), builder);
    builder.finish(reader.complete(), 0);
  }
  const kob::Summary sum_ = fold.result();
  const kob::Timeline tl = collected.take();
  stage("build_and_fold", since(t));
  if (last == "build_and_fold") return 0;

  // The builder alone (decoding included), the timeline collected: the fold's share is the
  // difference.
  t = now();
  {
    const kob::Timeline alone = kob::build_timeline(reader.threads(), initial, reader.complete(), omp_code);
    if (alone.tracks.size() != tl.tracks.size()) return 1;
  }
  stage("build_timeline", since(t));

  kob::TraceInfo info;
  info.pid = reader.header().pid;
  info.process_name = kob::process_name(facts);
  info.other_data_json = kob::other_data_json(facts, sum_);

  t = now();
  NullSink null;
  kob::produce_trace(tl, info, null);
  stage("producer", since(t));
  if (last == "producer") return 0;

  t = now();
  if (!write_file(prefix + ".pftrace", [&](std::FILE* f) { return kob::write_perfetto_trace(f, tl, info); })) return 1;
  stage("perfetto", since(t));
  if (last == "perfetto") return 0;

  t = now();
  if (!write_file(prefix + ".trace.json", [&](std::FILE* f) { return kob::write_chrome_trace(f, tl, info); })) return 1;
  stage("chrome", since(t));

  t = now();
  const std::string text = kob::summary_text(sum_, "bench");
  const std::string js = kob::summary_json(sum_, info.other_data_json);
  stage("summary_files", since(t));
  if (text.empty() || js.empty()) return 1;
  return 0;
}
