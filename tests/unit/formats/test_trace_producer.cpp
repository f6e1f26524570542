// The producer's contract with the format sinks (trace_events.hpp): the order of the calls, slices
// per track by start and nested, the arrows given to the events at both their ends.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/formats/trace_producer.hpp"
#include "helpers.hpp"

using kob::Timeline;
using kob_test::nm;

namespace {

struct Recorded {
  explicit Recorded(std::string c) : call(std::move(c)) {}
  std::string call;  // process, track, event, flow, finish
  kob::trace::Event e;
  std::string name, cat;
  std::vector<std::uint64_t> out, in;
  kob::trace::Flow f;
  kob::trace::TrackDesc t;
};

class RecordingSink : public kob::trace::TraceSink {
 public:
  std::vector<Recorded> calls;
  void process(std::uint64_t, std::string_view, std::uint64_t) override { calls.emplace_back("process"); }
  void track(const kob::trace::TrackDesc& t) override {
    Recorded r{"track"};
    r.t = t;
    calls.push_back(r);
  }
  void event(const kob::trace::Event& e) override {
    Recorded r{"event"};
    r.e = e;
    r.name = std::string(e.name);
    r.cat = e.cat;
    r.out.assign(e.flows_out.begin(), e.flows_out.end());
    r.in.assign(e.flows_in.begin(), e.flows_in.end());
    r.e.args = nullptr;  // not kept past the call
    calls.push_back(r);
  }
  void flow(const kob::trace::Flow& f) override {
    Recorded r{"flow"};
    r.f = f;
    calls.push_back(r);
  }
  bool finish(const std::string&) override {
    calls.emplace_back("finish");
    return true;
  }
};

using kob_test::span;

}  // namespace

TEST_CASE("trace producer: call order, nesting per track, arrows on both ends") {
  Timeline t;
  t.tracks = {kob::Track{0, 2001, 1}, kob::Track{1, 2002, 1}};
  t.t0 = 10;
  auto k = span<kob::KernelSpan>(0, 100, 900);
  k.name = nm("tp_kernel");
  k.id = 5;
  t.kernels.push_back(k);
  auto r = span<kob::RegionSpan>(0, 50, 950);
  r.name = nm("tp_region");
  r.path = "tp_region";
  t.regions.push_back(r);
  auto p = span<kob::OmpParallelSpan>(0, 200, 800);
  p.id = 9;
  p.kernel = 5;
  t.omp_parallels.push_back(p);
  auto i0 = span<kob::OmpImplicitTaskSpan>(0, 210, 790);
  i0.parallel_id = 9;
  auto i1 = span<kob::OmpImplicitTaskSpan>(1, 220, 780);
  i1.parallel_id = 9;
  i1.thread_num = 1;
  t.omp_implicit_tasks = {i0, i1};
  t.events.push_back({300, 1, nm("tp_event")});

  RecordingSink sink;
  kob::TraceInfo info;
  std::uint64_t clipped = 7;
  CHECK(kob::produce_trace(t, info, sink, &clipped));
  CHECK(clipped == 0);

  // process first, finish last; a track is declared before any event on it, the flows come after
  // the events (one window).
  std::set<std::uint32_t> declared;
  bool flows_begun = false;
  for (std::size_t n = 0; n < sink.calls.size(); ++n) {
    const Recorded& c = sink.calls[n];
    CHECK((c.call == "process") == (n == 0));
    CHECK((c.call == "finish") == (n + 1 == sink.calls.size()));
    if (c.call == "track") declared.insert(c.t.index);
    if (c.call == "event") {
      CHECK(declared.count(c.e.track) == 1);
      CHECK_FALSE(flows_begun);
    }
    flows_begun = flows_begun || c.call == "flow";
  }
  CHECK(declared.size() == 2);
  CHECK(sink.calls.front().call == "process");
  CHECK(sink.calls.back().call == "finish");

  // Slices of one track: by start, each inside the one still open before it.
  std::map<std::uint32_t, std::vector<std::uint64_t>> open;
  std::map<std::uint32_t, std::uint64_t> last_start;
  int slices = 0;
  for (const Recorded& c : sink.calls) {
    if (c.call != "event" || c.e.phase != kob::trace::Phase::Slice) continue;
    ++slices;
    CHECK(c.e.ts >= last_start[c.e.track]);
    last_start[c.e.track] = c.e.ts;
    auto& st = open[c.e.track];
    while (!st.empty() && st.back() <= c.e.ts) st.pop_back();
    if (!st.empty()) CHECK(c.e.end <= st.back());
    st.push_back(c.e.end);
  }
  CHECK(slices == 5);

  // Two arrows: kernel -> parallel region, parallel region -> the implicit task on thread 1.
  std::vector<kob::trace::Flow> flows;
  for (const Recorded& c : sink.calls)
    if (c.call == "flow") flows.push_back(c.f);
  REQUIRE(flows.size() == 2);
  CHECK(flows[0].id == 1);
  CHECK(std::string(flows[0].name) == "parallel");
  CHECK(flows[1].id == 2);
  CHECK(std::string(flows[1].name) == "implicit task");
  CHECK(flows[1].to_track == 1);
  std::map<std::string, const Recorded*> by_name;
  for (const Recorded& c : sink.calls)
    if (c.call == "event") by_name[c.name + "@" + std::to_string(c.e.track)] = &c;
  REQUIRE(by_name.count("tp_kernel@0"));
  REQUIRE(by_name.count("parallel@0"));
  REQUIRE(by_name.count("implicit task@1"));
  CHECK(by_name["tp_kernel@0"]->out == std::vector<std::uint64_t>{1});
  CHECK(by_name["tp_kernel@0"]->in.empty());
  CHECK(by_name["parallel@0"]->in == std::vector<std::uint64_t>{1});
  CHECK(by_name["parallel@0"]->out == std::vector<std::uint64_t>{2});
  CHECK(by_name["implicit task@1"]->in == std::vector<std::uint64_t>{2});
  CHECK(by_name["implicit task@0"]->in.empty());  // on the parallel region's own thread: no arrow
  REQUIRE(by_name.count("tp_event@1"));
  CHECK(by_name["tp_event@1"]->e.phase == kob::trace::Phase::Instant);
}
