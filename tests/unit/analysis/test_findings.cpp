// Findings (findings.hpp): each rule fires on synthetic figures past its threshold, stays silent
// below it or under the time-at-stake gate, and the list is ranked by time at stake; the figures
// the rules need come out of the fold; text and JSON carry the list.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/analysis/findings.hpp"
#include "common/analysis/summary.hpp"
#include "helpers.hpp"


using kob::Finding;
using kob::Summary;
namespace fd = kob::findings;

namespace {

constexpr std::uint64_t kRun = 100'000'000;  // 100 ms

Summary run_of(std::uint64_t ns = kRun) {
  Summary s;
  s.run_time = ns;
  return s;
}

// A kernel row and its OpenMP row: `regions` regions of a team of `team`.
void add_kernel(Summary& s, const std::string& name, std::uint64_t calls, std::uint64_t total, std::uint64_t busy_max,
                std::uint64_t busy_mean, double imbalance, std::uint64_t team = 2) {
  kob::KernelStats k;
  k.name = name;
  k.kind = "parallel_for";
  k.device = "OpenMP";
  k.calls = calls;
  k.total = total;
  s.kernels.push_back(k);
  kob::OmpKernelStats o;
  o.name = name;
  o.kind = "parallel_for";
  o.calls = calls;
  o.parallel_regions = calls;
  o.team_size_sum = team * calls;
  o.imbalance_regions = calls;
  o.imbalance_sum = imbalance * double(calls);
  o.busy_max = busy_max;
  o.busy_mean = busy_mean;
  o.task_time = busy_max * team;
  s.openmp.kernels.push_back(o);
}

// An `omp parallel` site outside kernels (a constructs row): `regions` regions of a team of `team`.
kob::OmpConstructStats& add_site(Summary& s, const std::string& label, std::uint64_t regions, std::uint64_t total,
                                 std::uint64_t busy_max, std::uint64_t busy_mean, double imbalance, std::uint64_t team = 2) {
  kob::OmpConstructStats c;
  c.kind = "parallel";
  c.label = label;
  c.calls = regions;
  c.total = total;
  c.parallel_regions = regions;
  c.team_size_sum = team * regions;
  c.imbalance_regions = regions;
  c.imbalance_sum = imbalance * double(regions);
  c.busy_max = busy_max;
  c.busy_mean = busy_mean;
  c.task_time = busy_max * team;
  s.openmp.constructs.push_back(c);
  return s.openmp.constructs.back();
}

void omp_threads(Summary& s, std::uint64_t n) {
  s.openmp.records = 1;
  s.openmp.parallel_regions = 1;
  s.openmp.threads_initial = 1;
  s.openmp.threads_worker = n - 1;
}

const Finding* only(const std::vector<Finding>& v, const std::string& id) {
  const Finding* f = nullptr;
  int count = 0;
  for (const Finding& x : v)
    if (x.id == id) {
      f = &x;
      ++count;
    }
  return count == 1 ? f : nullptr;
}

}  // namespace

TEST_CASE("findings: nothing to say about an empty or clean run") {
  CHECK(fd::find(Summary{}).empty());
  Summary s = run_of();
  omp_threads(s, 2);
  add_kernel(s, "big", 10, 90'000'000, 89'000'000, 88'000'000, 0.01);  // 1.1% overhead, 1% imbalance
  CHECK(fd::find(s).empty());
}

TEST_CASE("findings: load_imbalance fires past 25% with busiest minus mean busy time at stake") {
  Summary s = run_of();
  omp_threads(s, 2);
  add_kernel(s, "skewed", 5, 60'000'000, 59'000'000, 31'000'000, 0.47);
  const auto v = fd::find(s);
  const Finding* f = only(v, "load_imbalance");
  REQUIRE(f != nullptr);
  CHECK(f->subject == "skewed");
  CHECK(f->time_at_stake == 28'000'000);
  CHECK(f->share_of_run == doctest::Approx(0.28));
  CHECK(f->evidence.find("47.0%") != std::string::npos);
  CHECK(f->fix.find("Kokkos::Schedule<Kokkos::Dynamic>") != std::string::npos);
  CHECK(v.size() == 1);  // 1.7% overhead: no fork_join_overhead

  Summary below = run_of();
  omp_threads(below, 2);
  add_kernel(below, "skewed", 5, 60'000'000, 59'000'000, 45'000'000, 0.24);  // under 25%
  CHECK(only(fd::find(below), "load_imbalance") == nullptr);
  Summary small = run_of();
  omp_threads(small, 2);
  add_kernel(small, "skewed", 5, 1'500'000, 1'400'000, 700'000, 0.5);  // 0.7 ms at stake: under 1% of 100 ms
  CHECK(only(fd::find(small), "load_imbalance") == nullptr);
}

TEST_CASE("findings: fork_join_overhead fires when half a kernel's time is no thread's work") {
  Summary s = run_of();
  omp_threads(s, 2);
  add_kernel(s, "tiny", 5000, 40'000'000, 4'000'000, 3'000'000, 0.25);
  const auto v = fd::find(s);
  const Finding* f = only(v, "fork_join_overhead");
  REQUIRE(f != nullptr);
  CHECK(f->subject == "tiny");
  CHECK(f->time_at_stake == 36'000'000);
  CHECK(f->fix.find("fuse") != std::string::npos);
  // A load imbalance of 25% (1 ms at stake) is no finding of its own beside it, only its evidence.
  REQUIRE(v.size() == 1);
  CHECK(f->evidence.find("Its work is also split unevenly (load imbalance 25.0%): worth a look once each launch does "
                         "more work.") != std::string::npos);

  Summary below = run_of();
  omp_threads(below, 2);
  add_kernel(below, "tiny", 5000, 40'000'000, 21'000'000, 20'000'000, 0.05);  // 47.5% overhead
  CHECK(fd::find(below).empty());
  // A View's initialization kernel is the allocation's business (alloc_in_loop), not this rule's.
  Summary init = run_of();
  omp_threads(init, 2);
  add_kernel(init, "Kokkos::View::initialization [x]", 5000, 40'000'000, 4'000'000, 3'000'000, 0.25);
  CHECK(fd::find(init).empty());
}

TEST_CASE("findings: serialized_kernel fires for an OpenMP kernel with teams of 1 or no region when threads were there") {
  Summary s = run_of();
  omp_threads(s, 4);
  add_kernel(s, "alone", 10, 40'000'000, 39'000'000, 39'000'000, 0.0, 1);
  kob::KernelStats none;
  none.name = "no_region";
  none.kind = "parallel_reduce";
  none.device = "OpenMP";
  none.calls = 3;
  none.total = 20'000'000;
  s.kernels.push_back(none);
  kob::KernelStats serial = none;
  serial.name = "serial_backend";
  serial.device = "Serial";  // runs on one thread by design
  s.kernels.push_back(serial);
  const auto v = fd::find(s);
  REQUIRE(v.size() == 2);
  CHECK(v[0].id == "serialized_kernel");
  CHECK(v[0].subject == "alone");
  CHECK(v[0].time_at_stake == 30'000'000);  // 40 ms x 3/4
  CHECK(v[1].subject == "no_region");
  CHECK(v[1].time_at_stake == 15'000'000);
  CHECK(v[1].evidence.find("opened no OpenMP parallel region") != std::string::npos);

  // One OpenMP thread in the run: nothing more was available.
  Summary one = s;
  one.openmp.threads_worker = 0;
  CHECK(fd::find(one).empty());
  // No parallel region recorded at all (--events without omp-parallel): no way to tell.
  Summary blind = s;
  blind.openmp.parallel_regions = 0;
  CHECK(fd::find(blind).empty());
}

TEST_CASE("findings: repeated_deep_copy fires for the same copy 10 times, all but one call at stake") {
  Summary s = run_of();
  s.copy_sites.push_back({"dst", "src", "HostSpace", "HostSpace", 8 << 20, 50, 50'000'001});
  s.copy_sites.push_back({"a", "b", "HostSpace", "HostSpace", 64, 9, 90'000'000});  // 9 calls: under 10
  const auto v = fd::find(s);
  REQUIRE(v.size() == 1);
  CHECK(v[0].id == "repeated_deep_copy");
  CHECK(v[0].subject == "dst <- src");
  CHECK(v[0].time_at_stake == 50'000'001ull * 49 / 50);
  CHECK(v[0].fix.find("outside the loop") != std::string::npos);
  s.copy_sites[0].dst_space = "CudaSpace";  // between spaces: the DualView advice
  CHECK(fd::find(s)[0].fix.find("DualView") != std::string::npos);
}

TEST_CASE("findings: alloc_in_loop fires for a view allocated and initialised 10 times") {
  Summary s = run_of();
  s.alloc_sites.push_back({"tmp", "HostSpace", 8 << 20, 30});
  s.alloc_sites.push_back({"tmp", "HostSpace", 16, 12});  // same name, other size: one finding per name
  s.alloc_sites.push_back({"raw", "HostSpace", 8 << 20, 30});  // WithoutInitializing already: no kernel
  kob::KernelStats init;
  init.name = "Kokkos::View::initialization [tmp]";
  init.kind = "parallel_for";
  init.device = "Serial";
  init.calls = 42;
  init.total = 42'000'000;
  s.kernels.push_back(init);
  const auto v = fd::find(s);
  REQUIRE(v.size() == 1);
  CHECK(v[0].id == "alloc_in_loop");
  CHECK(v[0].subject == "tmp");
  CHECK(v[0].time_at_stake == 41'000'000);
  CHECK(v[0].fix.find("Kokkos::view_alloc(Kokkos::WithoutInitializing, \"tmp\")") != std::string::npos);
  s.alloc_sites[0].allocations = 9;
  s.alloc_sites[1].allocations = 9;
  CHECK(fd::find(s).empty());
}

TEST_CASE("findings: lock_contention fires when waits are a quarter of wait + hold, wait / threads at stake") {
  Summary s = run_of();
  omp_threads(s, 2);
  kob::OmpMutexStats m;
  m.kind = "critical";
  m.holds = 4000;
  m.wait = 60'000'000;
  m.hold = 80'000'000;
  s.openmp.mutex.push_back(m);
  kob::OmpMutexStats calm = m;
  calm.kind = "lock";
  calm.wait = 20'000'000;  // 20% of wait + hold
  s.openmp.mutex.push_back(calm);
  const auto v = fd::find(s);
  REQUIRE(v.size() == 1);
  CHECK(v[0].id == "lock_contention");
  CHECK(v[0].subject == "critical");
  CHECK(v[0].time_at_stake == 30'000'000);
  CHECK(v[0].fix.find("Kokkos::atomic_add") != std::string::npos);
}

TEST_CASE("findings: fence_dominated and transfer_hotspot fire past 10% of the run") {
  Summary s = run_of();
  s.fences.push_back({"Kokkos::fence: big", 100, 12'000'000});
  s.fences.push_back({"Kokkos::fence: small", 100, 9'000'000});
  kob::TargetDeviceStats d;
  d.device = 0;
  d.transfers.push_back({"host_to_device", 10, 1 << 30, 30'000'000});
  d.transfers.push_back({"device_to_host", 10, 1 << 30, 5'000'000});
  s.target.records = 1;
  s.target.devices.push_back(d);
  kob::TargetDeviceStats host;
  host.device = kob::kHostDevice;
  host.transfers = d.transfers;
  s.target.devices.push_back(host);
  const auto v = fd::find(s);
  REQUIRE(v.size() == 2);
  CHECK(v[0].id == "transfer_hotspot");
  CHECK(v[0].subject == "device 0");
  CHECK(v[0].time_at_stake == 35'000'000);
  CHECK(v[1].id == "fence_dominated");
  CHECK(v[1].subject == "Kokkos::fence: big");
  CHECK(v[1].time_at_stake == 12'000'000);
}

TEST_CASE("findings: incomplete_data always fires when events were dropped or the run was cut") {
  Summary s = run_of();
  s.dropped = 7;
  s.coverage.threads.push_back({1, 99, 7, 40'000'000});
  s.coverage.complete_until = 40'000'000;
  s.coverage.run_end = kRun;
  auto v = fd::find(s);
  REQUIRE(v.size() == 1);
  CHECK(v[0].id == "incomplete_data");
  CHECK(v[0].time_at_stake == 60'000'000);
  CHECK(v[0].fix.find("--memory-limit") != std::string::npos);
  Summary cut = run_of();
  cut.cut_short = true;
  cut.cut_spans = 3;
  v = fd::find(cut);
  REQUIRE(v.size() == 1);
  CHECK(v[0].time_at_stake == 0);
  CHECK(v[0].evidence.find("3 spans") != std::string::npos);
}

TEST_CASE("findings: ranked by time at stake across kinds") {
  Summary s = run_of();
  omp_threads(s, 2);
  add_kernel(s, "skewed", 5, 60'000'000, 59'000'000, 49'000'000, 0.3);       // imbalance: 10 ms
  s.copy_sites.push_back({"dst", "src", "HostSpace", "HostSpace", 8, 20, 40'000'000});  // 38 ms
  kob::OmpMutexStats m;
  m.kind = "critical";
  m.wait = 40'000'000;
  m.hold = 40'000'000;
  s.openmp.mutex.push_back(m);  // 20 ms
  const auto v = fd::find(s);
  REQUIRE(v.size() == 3);
  CHECK(v[0].id == "repeated_deep_copy");
  CHECK(v[1].id == "lock_contention");
  CHECK(v[2].id == "load_imbalance");
}

TEST_CASE("findings: the fold gives the figures the rules read, and text and JSON carry the list") {
  kob_test::RecorderReset reset;
  kob::Timeline t;
  t.tracks.resize(2);
  t.tracks[0].omp_thread_type = 1;
  t.tracks[1].omp_thread_type = 2;
  t.omp_records = 1;
  t.t0 = 0;
  t.t_end = 10'000'000;
  // One kernel, two calls, each one region of two tasks: busy 4 and 1 ms, then 3 and 3 ms.
  for (int call = 0; call < 2; ++call) {
    const std::uint64_t at = 100'000 + call * 5'000'000;
    kob::KernelSpan k = kob_test::span<kob::KernelSpan>(0, at, at + 4'500'000);
    k.id = 1 + call;
    k.name = kob_test::nm("fold_skewed");
    k.devid = 0x01000000;
    t.kernels.push_back(k);
    kob::OmpParallelSpan p = kob_test::span<kob::OmpParallelSpan>(0, at + 100, at + 4'400'000);
    p.id = 10 + call;
    p.kernel = k.id;
    p.team_size = 2;
    t.omp_parallels.push_back(p);
    for (std::uint32_t th = 0; th < 2; ++th) {
      const std::uint64_t busy = call == 0 ? (th == 0 ? 4'000'000 : 1'000'000) : 3'000'000;
      kob::OmpImplicitTaskSpan i = kob_test::span<kob::OmpImplicitTaskSpan>(th, at + 200, at + 200 + busy);
      i.parallel_id = p.id;
      i.kernel = k.id;
      i.thread_num = th;
      i.team_size = 2;
      t.omp_implicit_tasks.push_back(i);
    }
  }
  for (int c = 0; c < 12; ++c) {
    kob::DeepCopySpan d = kob_test::span<kob::DeepCopySpan>(0, 9'000'000 + c * 10'000, 9'000'000 + c * 10'000 + 5'000);
    d.dst_name = kob_test::nm("fold_dst");
    d.src_name = kob_test::nm("fold_src");
    d.dst_space = d.src_space = kob_test::nm("HostSpace");
    d.bytes = c < 11 ? 800 : 16;
    t.deep_copies.push_back(d);
    kob::MemoryEvent m;
    m.time = 9'000'000 + c * 10'000;
    m.name = kob_test::nm("fold_tmp");
    m.space = kob_test::nm("HostSpace");
    m.bytes = 64;
    t.memory.push_back(m);
  }
  const Summary s = kob::summarize(t);
  REQUIRE(s.openmp.kernels.size() == 1);
  CHECK(s.openmp.kernels[0].busy_max == 7'000'000);   // 4 + 3 ms
  CHECK(s.openmp.kernels[0].busy_mean == 5'500'000);  // 2.5 + 3 ms
  REQUIRE(s.copy_sites.size() == 2);
  CHECK(s.copy_sites[0].dst_name == "fold_dst");
  CHECK(s.copy_sites[0].bytes == 800);
  CHECK(s.copy_sites[0].calls == 11);
  CHECK(s.copy_sites[0].time == 55'000);
  CHECK(s.copy_sites[1].calls == 1);
  REQUIRE(s.alloc_sites.size() == 1);
  CHECK(s.alloc_sites[0].allocations == 12);
  // Imbalance (0.375 + 0) / 2 = 18.75%: under the rule. Nothing fires.
  CHECK(s.findings.empty());
  CHECK(kob_test::python_json_check(kob::summary_json(s, "{}"), "assert d['findings'] == []") == 0);
  CHECK(kob::summary_text(s, "x").find("\nfindings: none") != std::string::npos);

  Summary with = s;
  with.findings = fd::find(with);
  Finding f;
  f.id = "load_imbalance";
  f.title = "Kernel \"k\" keeps threads idle";
  f.subject = "k";
  f.evidence = "figures";
  f.time_at_stake = 1'234'567;
  f.share_of_run = 0.125;
  f.fix = "do this";
  f.threshold = "the rule";
  with.findings = {f};
  const std::string js = kob::summary_json(with, "{}");
  CHECK(kob_test::python_json_check(js, R"PY(
assert d['findings'] == [{'id': 'load_imbalance', 'rank': 1, 'title': 'Kernel "k" keeps threads idle', 'subject': 'k',
                         'evidence': 'figures', 'time_at_stake_us': 1234.567, 'time_at_stake_ns': 1234567,
                         'share_of_run': 0.125, 'fix': 'do this', 'threshold': 'the rule'}], d['findings']
assert list(d['findings'][0]) == ['id', 'rank', 'title', 'subject', 'evidence', 'time_at_stake_us', 'time_at_stake_ns',
                                  'share_of_run', 'fix', 'threshold'], list(d['findings'][0])
)PY") == 0);
  CHECK(kob_test::python_json_check(js, "assert d['findings'][0]['rank'] == 1 and d['alloc_sites'][0]['allocations'] == 12") == 0);
  const std::string text = kob::summary_text(with, "x");
  const std::size_t at = text.find("\nFindings (ranked by time at stake");
  CHECK(at != std::string::npos);
  CHECK(at < text.find("Kokkos kernels"));  // near the top
  CHECK(text.find("  1. Kernel \"k\" keeps threads idle [load_imbalance]: 1234.6 us at stake (12.5% of the run)\n"
                  "     evidence: figures\n     fix: do this\n") != std::string::npos);
}

TEST_CASE("findings: load_imbalance and fork_join_overhead fire for a plain parallel region, named by its location") {
  // The same figures as a kernel's: the same findings, at the same stake, about the site.
  Summary kernel = run_of(), site = run_of();
  omp_threads(kernel, 2);
  omp_threads(site, 2);
  add_kernel(kernel, "skewed", 5, 60'000'000, 59'000'000, 31'000'000, 0.47);
  add_site(site, "work imbalanced.c:31", 5, 60'000'000, 59'000'000, 31'000'000, 0.47).loop_regions = 5;
  const auto k = fd::find(kernel), v = fd::find(site);
  REQUIRE(v.size() == 1);
  REQUIRE(k.size() == 1);
  const Finding& f = v[0];
  CHECK(f.id == "load_imbalance");
  CHECK(f.subject == "work imbalanced.c:31");
  CHECK(f.location == "work imbalanced.c:31");
  CHECK(k[0].location.empty());
  CHECK(f.time_at_stake == k[0].time_at_stake);
  CHECK(f.title == "The OpenMP parallel region at work imbalanced.c:31 keeps threads idle: its work is split unevenly");
  CHECK(f.evidence.find("47.0%") != std::string::npos);
  CHECK(f.evidence.find("(region time 60.0 ms)") != std::string::npos);
  CHECK(f.fix.find("schedule(dynamic[,chunk])") != std::string::npos);
  CHECK(f.fix.find("schedule(guided)") != std::string::npos);
  CHECK(f.fix.find("Kokkos") == std::string::npos);
  CHECK(f.threshold == k[0].threshold);

  Summary tiny = run_of();
  omp_threads(tiny, 2);
  add_site(tiny, "step tiny.c:12", 5000, 40'000'000, 4'000'000, 3'000'000, 0.1);
  const auto t = fd::find(tiny);
  REQUIRE(t.size() == 1);
  CHECK(t[0].id == "fork_join_overhead");
  CHECK(t[0].location == "step tiny.c:12");
  CHECK(t[0].time_at_stake == 36'000'000);
  CHECK(t[0].title == "The OpenMP parallel region at step tiny.c:12 spends most of its time starting and joining its team");
  CHECK(t[0].evidence.find("5000 regions of 8000 ns on average (40.0 ms in all)") != std::string::npos);
  CHECK(t[0].evidence.find("split unevenly") == std::string::npos);  // 10% imbalance: not worth a word
  CHECK(t[0].fix.find("for nowait") != std::string::npos);
  CHECK(t[0].fix.find("if(") != std::string::npos);
  CHECK(t[0].threshold.find("region time") != std::string::npos);
  const std::string js = kob::summary_json([&] {
    Summary w = tiny;
    w.findings = t;
    return w;
  }(), "{}");
  CHECK(kob_test::python_json_check(js, R"PY(
f = d['findings'][0]
assert list(f)[-2:] == ['threshold', 'location'] and f['location'] == 'step tiny.c:12', f
)PY") == 0);
  CHECK(kob_test::python_json_check(js, "assert d['findings'][0]['threshold'] == " + nlohmann::json(t[0].threshold).dump()) == 0);

  // A region that held Kokkos kernels is left to their rules; other categories, and figures under
  // the thresholds, say nothing.
  Summary held = run_of();
  omp_threads(held, 2);
  add_site(held, "outer nested.c:9", 5, 60'000'000, 59'000'000, 31'000'000, 0.47).regions_with_kernels = 1;
  kob::OmpConstructStats& loop = add_site(held, "work imbalanced.c:32", 5, 60'000'000, 59'000'000, 31'000'000, 0.47);
  loop.category = kob::OmpConstructStats::Category::Work;
  loop.kind = "loop_static";
  add_site(held, "calm even.c:5", 5, 60'000'000, 59'000'000, 45'000'000, 0.24);
  add_site(held, "small few.c:7", 5, 1'500'000, 1'400'000, 700'000, 0.5);  // 0.7 ms at stake: under 1% of 100 ms
  add_site(held, "once start.c:3", 1, 40'000'000, 4'000'000, 3'000'000, 0.1);  // one region: no stream of small ones
  kob::OmpConstructStats& init = add_site(held, "Kokkos::OpenMP::impl_initialize(int)+0x121", 1, 60'000'000, 59'000'000,
                                          31'000'000, 0.47);
  init.function = "Kokkos::OpenMP::impl_initialize(int)";  // Kokkos' own, not the program's
  kob::OmpConstructStats& lib = add_site(held, "libkokkoscore.so.3.4+0x1234", 2, 40'000'000, 4'000'000, 3'000'000, 0.47);
  lib.module = "/opt/kokkos/lib/libkokkoscore.so.3.4";
  CHECK(fd::find(held).empty());
}

TEST_CASE("findings: lock_contention per acquire site, and per mutex kind for the waits no site holds") {
  Summary s = run_of();
  omp_threads(s, 2);
  kob::OmpMutexStats m;  // every critical of the run
  m.kind = "critical";
  m.holds = 4000;
  m.wait = 60'000'000;
  m.hold = 80'000'000;
  s.openmp.mutex.push_back(m);
  kob::OmpConstructStats site;  // the part outside kernels, at one site
  site.category = kob::OmpConstructStats::Category::Mutex;
  site.kind = "critical";
  site.label = "accumulate sum.c:80";
  site.calls = 3000;
  site.wait = 45'000'000;
  site.hold = 60'000'000;
  site.total = site.wait + site.hold;
  s.openmp.constructs.push_back(site);
  const auto v = fd::find(s);
  REQUIRE(v.size() == 2);
  CHECK(v[0].id == "lock_contention");
  CHECK(v[0].subject == "critical");
  CHECK(v[0].location == "accumulate sum.c:80");
  CHECK(v[0].time_at_stake == 22'500'000);
  CHECK(v[0].title == "Threads queue for OpenMP critical sections at accumulate sum.c:80");
  CHECK(v[0].evidence.find("3000 holds") != std::string::npos);
  CHECK(v[0].fix.find("reduction(+:sum)") != std::string::npos);
  CHECK(v[0].fix.find("omp atomic") != std::string::npos);
  CHECK(v[0].threshold.find("acquire site") != std::string::npos);
  // The rest (inside kernels, or without an address): 1000 holds, 15 ms wait, 20 ms held.
  CHECK(v[1].id == "lock_contention");
  CHECK(v[1].location.empty());
  CHECK(v[1].subject == "critical");
  CHECK(v[1].time_at_stake == 7'500'000);
  CHECK(v[1].title == "Threads queue for OpenMP critical sections");
  CHECK(v[1].evidence.find("1000 holds") != std::string::npos);
  CHECK(v[1].fix.find("Kokkos::atomic_add") != std::string::npos);

  // The site holds every wait: one finding, the kind's figures.
  s.openmp.constructs[0].calls = m.holds;
  s.openmp.constructs[0].wait = m.wait;
  s.openmp.constructs[0].hold = m.hold;
  const auto all = fd::find(s);
  REQUIRE(all.size() == 1);
  CHECK(all[0].location == "accumulate sum.c:80");
  CHECK(all[0].time_at_stake == 30'000'000);
}

TEST_CASE("findings: load_imbalance advice names what the region holds") {
  // A loop: its schedule. Tasks from one thread: creating them from every thread. Tasks: more,
  // even ones. Nothing: the threads' own split. Never a schedule for a region without a loop.
  struct Case {
    std::uint64_t loops, tasks, producers;
    const char* says;
    bool schedule;  // names a loop schedule (the last: as the way to hand the split to the runtime)
  };
  const Case cases[] = {{5, 0, 0, "schedule(dynamic[,chunk])", true},
                        {0, 5, 5, "create them from every thread", false},
                        {0, 5, 1, "more tasks of similar size", false},
                        {0, 0, 0, "omp_get_thread_num", true}};
  for (const Case& c : cases) {
    Summary s = run_of();
    omp_threads(s, 2);
    kob::OmpConstructStats& site = add_site(s, "work w.c:9", 5, 60'000'000, 59'000'000, 31'000'000, 0.47);
    site.loop_regions = c.loops;
    site.task_regions = c.tasks;
    site.producer_regions = c.producers;
    site.construct_regions = c.loops + c.tasks;
    const auto f_all = fd::find(s);
    const Finding* f = only(f_all, "load_imbalance");
    INFO(c.says);
    REQUIRE(f != nullptr);
    CHECK(f->fix.find(c.says) != std::string::npos);
    CHECK((f->fix.find("schedule(") != std::string::npos) == c.schedule);
  }
}

TEST_CASE("findings: fork_join_overhead counts a region's worksharing constructs as its work, and says both figures") {
  // 20000 regions of 2 us, whose loops are 0.15 us: the whole implicit task less its waits (1.2
  // us) would call them busy, the loops say 92.5% of the time went to fork, join and the combine.
  Summary s = run_of();
  omp_threads(s, 2);
  kob::OmpConstructStats& c = add_site(s, "sum r.c:7", 20000, 40'000'000, 3'000'000, 2'900'000, 0.03);
  c.implicit_busy_max = 24'000'000;
  c.construct_regions = c.loop_regions = 20000;
  const auto f_all = fd::find(s);
  const Finding* f = only(f_all, "fork_join_overhead");
  REQUIRE(f != nullptr);
  CHECK(f->time_at_stake == 37'000'000);
  CHECK(f->evidence.find("worked 3000.0 us inside its worksharing constructs and tasks and 24.0 ms in the region but its waits") !=
        std::string::npos);
  CHECK(f->threshold.find("worksharing constructs and tasks") != std::string::npos);
  // All work: nothing.
  c.busy_max = 39'000'000;
  CHECK(only(fd::find(s), "fork_join_overhead") == nullptr);
}

TEST_CASE("findings: serialized_region for a plain parallel site whose teams were all of one thread") {
  Summary s = run_of();
  omp_threads(s, 2);
  kob::OmpConstructStats& c = add_site(s, "inner n.c:20", 100, 20'000'000, 20'000'000, 20'000'000, 0.0, 1);
  c.nested_regions = 100;
  const auto all = fd::find(s);
  const Finding* f = only(all, "serialized_region");
  REQUIRE(f != nullptr);
  CHECK(f->location == "inner n.c:20");
  CHECK(f->time_at_stake == 10'000'000);
  CHECK(f->evidence.find("each nested in another parallel region") != std::string::npos);
  CHECK(f->fix.find("OMP_MAX_ACTIVE_LEVELS") != std::string::npos);
  // Asking for one thread in a run that started no other: the threads it could have had count.
  Summary one = run_of();
  omp_threads(one, 1);
  one.openmp.available_threads = 4;
  kob::OmpConstructStats& d = add_site(one, "solo n.c:30", 50, 20'000'000, 20'000'000, 20'000'000, 0.0, 1);
  d.requested_one = 50;
  const auto g_all = fd::find(one);
  const Finding* g = only(g_all, "serialized_region");
  REQUIRE(g != nullptr);
  CHECK(g->time_at_stake == 15'000'000);
  CHECK(g->evidence.find("could have had 4") != std::string::npos);
  CHECK(g->fix.find("num_threads(1)") != std::string::npos);
  one.openmp.available_threads = 1;
  CHECK(only(fd::find(one), "serialized_region") == nullptr);
  // A team of 2 in one region of the site: not serialized.
  c.team_size_sum = 101;
  CHECK(only(fd::find(s), "serialized_region") == nullptr);
}

TEST_CASE("findings: task_granularity for many tasks smaller than what creating them costs") {
  Summary s = run_of();
  omp_threads(s, 2);
  kob::OmpConstructStats c;
  c.category = kob::OmpConstructStats::Category::Task;
  c.kind = "task";
  c.label = "spawn t.c:64";
  c.calls = c.tasks_started = c.stretches = 100'000;
  c.total = 9'000'000;  // 90 ns each
  c.create_gap = 40'000'000;  // 500 ns each
  c.create_gaps = 80'000;
  c.start_delay = 100'000 * 2'000ull;
  s.openmp.constructs.push_back(c);
  const auto f_all = fd::find(s);
  const Finding* f = only(f_all, "task_granularity");
  REQUIRE(f != nullptr);
  CHECK(f->location == "spawn t.c:64");
  CHECK(f->time_at_stake == 50'000'000);
  CHECK(f->evidence.find("90 ns of run time each") != std::string::npos);
  CHECK(f->evidence.find("creating one took 500 ns") != std::string::npos);
  CHECK(f->fix.find("grainsize") != std::string::npos);
  // Large tasks (20 us each, more than creating and starting one): nothing; few tasks: nothing.
  s.openmp.constructs[0].total = 2'000'000'000;
  CHECK(only(fd::find(s), "task_granularity") == nullptr);
  s.openmp.constructs[0].total = 9'000'000;
  s.openmp.constructs[0].tasks_started = 999;
  CHECK(only(fd::find(s), "task_granularity") == nullptr);
}
