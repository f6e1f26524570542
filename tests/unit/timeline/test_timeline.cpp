// Matching records into spans: kernels, regions, sections, memory, deep copies, filters.
#include <doctest/doctest.h>

#include <string>

#include "common/analysis/summary.hpp"
#include "helpers.hpp"

using kob::KernelKind;
using kob::Timeline;
using kob_test::nm;
using kob_test::RecorderReset;
using kob_test::Synth;

namespace {

// Records for a long stretch of one track (the exact count does not matter).
constexpr std::uint64_t kFill = 2048;
bool has_problem(const Timeline& t, const std::string& part) {
  for (const auto& p : t.problems)
    if (p.find(part) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("timeline: kernels pair by id, across tracks and out of order") {
  RecorderReset reset;
  Synth s(2);
  s.kernel_begin(0, 100, 1, "tl_k1", KernelKind::ParallelFor, 0x01000000);
  s.kernel_begin(0, 150, 2, "tl_k2", KernelKind::ParallelReduce, 0x02020001);
  s.kernel_end(0, 300, 1);
  s.kernel_begin(1, 120, 3, "tl_k3", KernelKind::ParallelScan, 0);
  s.kernel_end(1, 400, 2);  // ends on another thread than it began
  s.kernel_end(1, 130, 3);
  s.bufs[1]->omp_thread_type = 2;
  const Timeline t = s.build();
  CHECK(t.problems.empty());
  REQUIRE(t.tracks.size() == 2);
  CHECK(t.tracks[1].index == 1);
  CHECK(t.tracks[1].os_tid == 1001);
  CHECK(t.tracks[1].omp_thread_type == 2);
  REQUIRE(t.kernels.size() == 3);  // sorted by start
  CHECK(t.kernels[0].id == 1);
  CHECK(t.kernels[0].start == 100);
  CHECK(t.kernels[0].end == 300);
  CHECK(t.kernels[0].track == 0);
  CHECK(t.kernels[0].name == nm("tl_k1"));
  CHECK(t.kernels[0].kind == KernelKind::ParallelFor);
  CHECK(t.kernels[0].devid == 0x01000000);
  CHECK(t.kernels[1].id == 3);
  CHECK(t.kernels[1].dur() == 10);
  CHECK(t.kernels[1].track == 1);
  CHECK(t.kernels[1].kind == KernelKind::ParallelScan);
  CHECK(t.kernels[2].id == 2);
  CHECK(t.kernels[2].start == 150);
  CHECK(t.kernels[2].end == 400);
  CHECK(t.kernels[2].track == 0);  // the launching thread
  CHECK(t.kernels[2].kind == KernelKind::ParallelReduce);
  CHECK(t.kernels[2].devid == 0x02020001);
  CHECK(t.t0 == 100);
  CHECK(t.t_end == 400);
  CHECK(t.dropped == 0);
}

TEST_CASE("timeline: a kernel begun again with an id still open replaces it; regions do not carry over") {
  RecorderReset reset;
  Synth s(1);
  s.push(0, 5, "tl_rep_region");
  s.kernel_begin(0, 10, 5, "tl_rep_a");
  s.kernel_begin(0, 20, 5, "tl_rep_b");  // the same id while the first is open: the later wins
  s.kernel_end(0, 30, 5);
  s.pop(0, 31);
  s.kernel_begin(0, 40, 7, "tl_rep_c");
  s.kernel_begin(0, 45, 8, "tl_rep_d");
  s.kernel_begin(0, 50, 7, "tl_rep_e");  // 7 again, no longer the latest begun
  s.kernel_end(0, 55, 7);
  s.kernel_end(0, 60, 8);
  s.kernel_end(0, 61, 7);  // nothing open with 7 any more
  const Timeline t = s.build();
  REQUIRE(t.kernels.size() == 3);
  CHECK(t.kernels[0].name == nm("tl_rep_b"));
  CHECK(t.kernels[0].start == 20);
  CHECK(t.kernels[0].end == 30);
  CHECK(t.kernels[0].region == "tl_rep_region");
  CHECK(t.kernels[1].name == nm("tl_rep_d"));
  CHECK(t.kernels[1].start == 45);
  CHECK(t.kernels[1].end == 60);
  CHECK(t.kernels[1].region.empty());
  CHECK(t.kernels[2].name == nm("tl_rep_e"));
  CHECK(t.kernels[2].start == 50);
  CHECK(t.kernels[2].end == 55);
  CHECK(t.problems.size() == 1);
  CHECK(has_problem(t, "kokkosp_end_parallel_* with an id that no begin hook returned"));
}

TEST_CASE("timeline: fences pair by id") {
  RecorderReset reset;
  Synth s(1);
  s.fence_begin(0, 10, 1, "tl_fence", 0x01000000);
  s.fence_end(0, 25, 1);
  const Timeline t = s.build();
  REQUIRE(t.fences.size() == 1);
  CHECK(t.fences[0].start == 10);
  CHECK(t.fences[0].end == 25);
  CHECK(t.fences[0].name == nm("tl_fence"));
  CHECK(t.fences[0].devid == 0x01000000);
  CHECK(t.problems.empty());
}

TEST_CASE("timeline: region paths three deep, and the region path of kernels") {
  RecorderReset reset;
  Synth s(1);
  s.kernel_begin(0, 5, 1, "tl_outside");
  s.kernel_end(0, 6, 1);
  s.push(0, 10, "tl_a");
  s.push(0, 20, "tl_b");
  s.push(0, 30, "tl_c");
  s.kernel_begin(0, 31, 2, "tl_in_c");
  s.kernel_end(0, 35, 2);
  s.pop(0, 40);
  s.kernel_begin(0, 41, 3, "tl_in_b");
  s.kernel_end(0, 45, 3);
  s.pop(0, 50);
  s.pop(0, 60);
  const Timeline t = s.build();
  CHECK(t.problems.empty());
  REQUIRE(t.regions.size() == 3);
  CHECK(t.regions[0].path == "tl_a");
  CHECK(t.regions[0].depth == 0);
  CHECK(t.regions[0].start == 10);
  CHECK(t.regions[0].end == 60);
  CHECK(t.regions[0].name == nm("tl_a"));
  CHECK(t.regions[1].path == "tl_a/tl_b");
  CHECK(t.regions[1].depth == 1);
  CHECK(t.regions[1].start == 20);
  CHECK(t.regions[1].end == 50);
  CHECK(t.regions[2].path == "tl_a/tl_b/tl_c");
  CHECK(t.regions[2].depth == 2);
  CHECK(t.regions[2].start == 30);
  CHECK(t.regions[2].end == 40);
  CHECK(t.regions[2].name == nm("tl_c"));
  REQUIRE(t.kernels.size() == 3);
  CHECK(t.kernels[0].region == "");
  CHECK(t.kernels[1].region == "tl_a/tl_b/tl_c");
  CHECK(t.kernels[2].region == "tl_a/tl_b");
}

TEST_CASE("timeline: unknown end ids give one problem line each kind") {
  RecorderReset reset;
  Synth s(1);
  s.kernel_end(0, 10, 99);
  s.kernel_end(0, 11, 98);
  s.fence_end(0, 12, 7);
  s.copy_end(0, 13, 5);
  const Timeline t = s.build();
  CHECK(t.kernels.empty());
  CHECK(t.fences.empty());
  CHECK(t.deep_copies.empty());
  REQUIRE(t.problems.size() == 3);
  CHECK(has_problem(t, "kokkosp_end_parallel_* with an id that no begin hook returned: ignored (2 times)"));
  CHECK(has_problem(t, "kokkosp_end_fence with an id that no begin hook returned: ignored (1 time)"));
  CHECK(has_problem(t, "kokkosp_end_deep_copy"));
}

TEST_CASE("timeline: pop without push is one problem line") {
  RecorderReset reset;
  Synth s(2);
  s.push(0, 10, "tl_r");
  s.pop(1, 20);  // the region is open on track 0, not on track 1
  s.pop(0, 30);
  const Timeline t = s.build();
  REQUIRE(t.regions.size() == 1);
  CHECK(t.regions[0].end == 30);
  REQUIRE(t.problems.size() == 1);
  CHECK(t.problems[0] == "kokkosp_pop_profile_region with no region open on that thread: ignored (1 time)");
}

TEST_CASE("timeline: overlapping sections, and a section stopped on another thread") {
  RecorderReset reset;
  Synth s(2);
  s.section_create(0, 1, 1, "tl_s1");
  s.section_create(0, 2, 2, "tl_s2");
  s.section_start(0, 10, 1);
  s.section_start(0, 20, 2);
  s.section_stop(0, 30, 1);
  s.section_stop(1, 40, 2);  // stopped on track 1
  s.section_start(1, 50, 1);  // section 1 again, on track 1
  s.section_stop(1, 55, 1);
  const Timeline t = s.build();
  CHECK(t.problems.empty());
  REQUIRE(t.sections.size() == 3);
  CHECK(t.sections[0].section == 1);
  CHECK(t.sections[0].name == nm("tl_s1"));
  CHECK(t.sections[0].start == 10);
  CHECK(t.sections[0].end == 30);
  CHECK(t.sections[1].section == 2);
  CHECK(t.sections[1].name == nm("tl_s2"));
  CHECK(t.sections[1].start == 20);
  CHECK(t.sections[1].end == 40);
  CHECK(t.sections[1].track == 0);
  CHECK(t.sections[1].end_track == 1);
  CHECK(t.sections[2].section == 1);
  CHECK(t.sections[2].start == 50);
  CHECK(t.sections[2].track == 1);
}

TEST_CASE("timeline: section misuse") {
  RecorderReset reset;
  Synth s(1);
  s.section_create(0, 1, 1, "tl_sm");
  s.section_stop(0, 5, 1);    // not started
  s.section_start(0, 10, 1);
  s.section_start(0, 11, 1);  // already started
  s.section_start(0, 12, 9);  // never created
  s.section_stop(0, 13, 9);
  s.rec(0, 100, kob::Ev::None);  // the end of the run; section 1 stays open
  const Timeline t = s.build();
  CHECK(t.problems.size() == 4);
  CHECK(has_problem(t, "kokkosp_stop_profile_section on a section not started"));
  CHECK(has_problem(t, "kokkosp_start_profile_section on a section already started"));
  CHECK(has_problem(t, "never returned"));
  CHECK(has_problem(t, "a profile section never stopped"));
  REQUIRE(t.sections.size() == 2);
  CHECK(t.sections[0].section == 1);
  CHECK(t.sections[0].start == 10);
  CHECK(t.sections[0].end == 100);
  CHECK(t.sections[1].section == 9);
  CHECK(t.sections[1].name == kob::InternTable::kNullName);
}

TEST_CASE("timeline: what never ends is closed at the end of the run") {
  RecorderReset reset;
  Synth s(2);
  s.push(0, 10, "tl_open_outer");
  s.push(0, 15, "tl_open_inner");
  s.kernel_begin(0, 20, 1, "tl_open_kernel");
  s.fence_begin(0, 21, 1, "tl_open_fence");
  s.copy_begin(0, 22, 1, "Host", "dst", "Host", "src", 8);
  s.kernel_begin(1, 30, 2, "tl_closed");
  s.kernel_end(1, 90, 2);
  const Timeline t = s.build();
  CHECK(t.t_end == 90);
  REQUIRE(t.regions.size() == 2);
  CHECK(t.regions[0].path == "tl_open_outer");
  CHECK(t.regions[0].start == 10);
  CHECK(t.regions[0].end == 90);
  CHECK(t.regions[0].depth == 0);
  CHECK(t.regions[1].path == "tl_open_outer/tl_open_inner");
  CHECK(t.regions[1].end == 90);
  CHECK(t.regions[1].depth == 1);
  REQUIRE(t.kernels.size() == 2);
  CHECK(t.kernels[0].id == 1);
  CHECK(t.kernels[0].end == 90);
  CHECK(t.kernels[0].region == "tl_open_outer/tl_open_inner");
  REQUIRE(t.fences.size() == 1);
  CHECK(t.fences[0].end == 90);
  REQUIRE(t.deep_copies.size() == 1);
  CHECK(t.deep_copies[0].end == 90);
  CHECK(t.problems.size() == 4);
  CHECK(has_problem(t, "a Kokkos profile region never popped: shown until the end of the run (2 times)"));
  CHECK(has_problem(t, "a Kokkos kernel never ended"));
  CHECK(has_problem(t, "a Kokkos fence never ended"));
  CHECK(has_problem(t, "a Kokkos deep copy never ended"));
}

TEST_CASE("timeline: with dropped events an open kernel is discarded, not stretched") {
  RecorderReset reset;
  Synth s(1);
  s.kernel_begin(0, 1, 1, "tl_lost_end");
  for (std::uint64_t i = 1; i < kFill; ++i) s.rec(0, 1 + i, kob::Ev::None);
  s.bufs[0]->dropped = 1;  // its end, past the cap
  const Timeline t = s.build();
  CHECK(t.dropped == 1);
  CHECK(t.kernels.empty());
  REQUIRE(t.problems.size() == 1);
  CHECK(t.problems[0] == "a Kokkos kernel without an end, discarded (events were dropped) (1 time)");
}

TEST_CASE("timeline: memory levels and per-space order across tracks") {
  RecorderReset reset;
  Synth s(2);
  s.alloc(0, 10, "Host", "tl_a", 0x1000, 100);
  s.alloc(1, 20, "Host", "tl_b", 0x2000, 50);
  s.alloc(0, 25, "Cuda", "tl_c", 0x3000, 1000);
  s.dealloc(1, 30, "Host", "tl_a", 0x1000, 100);
  s.alloc(0, 40, "Host", "tl_d", 0x4000, 200);
  s.dealloc(1, 50, "Cuda", "tl_c", 0x3000, 1000);
  const Timeline t = s.build();
  CHECK(t.problems.empty());
  REQUIRE(t.memory.size() == 6);
  const std::uint64_t times[] = {10, 20, 25, 30, 40, 50};
  const std::uint64_t levels[] = {100, 150, 1000, 50, 250, 0};
  const bool allocs[] = {true, true, true, false, true, false};
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(t.memory[i].time == times[i]);
    CHECK(t.memory[i].space_level == levels[i]);
    CHECK(t.memory[i].alloc == allocs[i]);
  }
  CHECK(t.memory[1].track == 1);
  CHECK(t.memory[1].space == nm("Host"));
  CHECK(t.memory[1].name == nm("tl_b"));
  CHECK(t.memory[1].ptr == 0x2000);
  CHECK(t.memory[1].bytes == 50);
}

TEST_CASE("timeline: a free takes its block's size off the level; what no allocation covers is counted, said by cause") {
  RecorderReset reset;
  Synth s(1);
  s.alloc(0, 10, "Host", "tl_x", 0x10, 10);
  s.dealloc(0, 20, "Host", "tl_y", 0x20, 30);          // no allocation of 0x20 recorded
  s.alloc(0, 30, "Host", "tl_z", 0x30, 5);
  s.dealloc(0, 40, "Host", "tl_x", 0x10, 12);          // its block of 10, reported as 12
  s.dealloc(0, 50, "Host", "[unlabeled]", 0x40, 8);    // Kokkos' own scratch, allocated before the tool
  s.dealloc(0, 60, "Host", "tl_z", 0x30, 5);
  const Timeline t = s.build();
  REQUIRE(t.memory.size() == 6);
  CHECK((t.memory[1].space_level == 10 && t.memory[1].unmatched == 30 && t.memory[1].unmatched_block));
  CHECK(t.memory[2].space_level == 15);
  CHECK((t.memory[3].space_level == 5 && t.memory[3].unmatched == 2 && !t.memory[3].unmatched_block));
  CHECK((t.memory[4].space_level == 5 && t.memory[4].unmatched == 8 && t.memory[4].unmatched_block));
  CHECK((t.memory[5].space_level == 0 && t.memory[5].unmatched == 0));
  REQUIRE(t.problems.size() == 2);
  CHECK(has_problem(t, "kokkosp_deallocate_data of a block with no recorded allocation"));
  CHECK(has_problem(t, "kokkosp_deallocate_data of Kokkos' own scratch or thread data"));
  const kob::Summary sum = kob::summarize(t);
  REQUIRE(sum.memory.size() == 1);
  CHECK((sum.memory[0].unmatched_frees == 3 && sum.memory[0].unmatched_bytes == 40 && sum.memory[0].final_level == 0 &&
         sum.memory[0].high_water == 15));
}

TEST_CASE("timeline: deep copies pair by id, nested") {
  RecorderReset reset;
  Synth s(1);
  s.copy_begin(0, 100, 1, "Cuda", "tl_dst", "Host", "tl_src", 4096);
  s.copy_begin(0, 110, 2, "Host", "tl_inner_dst", "Host", "tl_inner_src", 16);
  s.copy_end(0, 120, 2);
  s.copy_end(0, 300, 1);
  const Timeline t = s.build();
  CHECK(t.problems.empty());
  REQUIRE(t.deep_copies.size() == 2);
  const auto& d = t.deep_copies[0];
  CHECK(d.id == 1);
  CHECK(d.start == 100);
  CHECK(d.end == 300);
  CHECK(d.dst_space == nm("Cuda"));
  CHECK(d.dst_name == nm("tl_dst"));
  CHECK(d.src_space == nm("Host"));
  CHECK(d.src_name == nm("tl_src"));
  CHECK(d.bytes == 4096);
  CHECK(t.deep_copies[1].id == 2);
  CHECK(t.deep_copies[1].dur() == 10);
}

TEST_CASE("timeline: profile events and dual views") {
  RecorderReset reset;
  Synth s(1);
  s.rec(0, 10, kob::Ev::ProfileEvent, nm("tl_event"));
  s.rec(0, 20, kob::Ev::DualView, nm("tl_dv"), {0xabc, 1}, 1);
  s.rec(0, 30, kob::Ev::DualView, nm("tl_dv"), {0xabc, 0}, 0);
  const Timeline t = s.build();
  REQUIRE(t.events.size() == 1);
  CHECK(t.events[0].time == 10);
  CHECK(t.events[0].name == nm("tl_event"));
  REQUIRE(t.dual_views.size() == 2);
  CHECK(t.dual_views[0].modify);
  CHECK(t.dual_views[0].on_device);
  CHECK(t.dual_views[0].ptr == 0xabc);
  CHECK_FALSE(t.dual_views[1].modify);
  CHECK_FALSE(t.dual_views[1].on_device);
}

TEST_CASE("timeline: an empty run") {
  RecorderReset reset;
  Synth s(1);
  const Timeline t = s.build();
  CHECK(t.tracks.size() == 1);
  CHECK(t.t0 == 0);
  CHECK(t.t_end == 0);
  CHECK(t.problems.empty());
}

TEST_CASE("timeline: filter by kernel and region names") {
  RecorderReset reset;
  Synth s(1);
  s.push(0, 1, "flt_foo_region");
  s.push(0, 2, "flt_baz_region");
  s.kernel_begin(0, 3, 1, "flt_foo_a");
  s.kernel_end(0, 4, 1);
  s.kernel_begin(0, 5, 2, "flt_bar_b");
  s.kernel_end(0, 6, 2);
  s.kernel_begin(0, 7, 3, "flt_foo_c");
  s.kernel_end(0, 8, 3);
  s.pop(0, 9);
  s.pop(0, 10);
  const Timeline all = s.build();
  REQUIRE(all.kernels.size() == 3);
  REQUIRE(all.regions.size() == 2);

  auto names_of = [](const auto& spans) {
    std::vector<std::string> v;
    for (const auto& x : spans) v.push_back(kob::names().str(x.name));
    return v;
  };
  using V = std::vector<std::string>;

  Timeline t = all;
  kob::filter_timeline(t, "", "");
  CHECK(t.kernels.size() == 3);
  CHECK(t.filtered_kernels == 0);

  t = all;
  kob::filter_timeline(t, "foo", "");
  CHECK(names_of(t.kernels) == V{"flt_foo_a", "flt_foo_c"});
  CHECK(names_of(t.regions) == V{"flt_foo_region"});
  CHECK(t.filtered_kernels == 1);
  CHECK(t.filtered_regions == 1);

  t = all;
  kob::filter_timeline(t, "", "_c$|baz");
  CHECK(names_of(t.kernels) == V{"flt_foo_a", "flt_bar_b"});
  CHECK(names_of(t.regions) == V{"flt_foo_region"});
  CHECK(t.filtered_kernels == 1);
  CHECK(t.filtered_regions == 1);

  t = all;
  kob::filter_timeline(t, "^flt_foo", "_a$");
  CHECK(names_of(t.kernels) == V{"flt_foo_c"});
  CHECK(names_of(t.regions) == V{"flt_foo_region"});
  CHECK(t.filtered_kernels == 2);
  CHECK(t.filtered_regions == 1);
}

TEST_CASE("timeline: the OpenMP runtime's code range, as the raw trace carries it") {
  const kob::CodeRange r = kob::parse_code_range("1000-2000");
  CHECK(kob::format_code_range(r) == "1000-2000");
  CHECK(r.contains(0x1000));
  CHECK(r.contains(0x1fff));
  CHECK_FALSE(r.contains(0x2000));
  CHECK_FALSE(r.contains(0xfff));
  for (const char* bad : {"", "2000-1000", "x-2000", "1000", "1000-", "-2000", "1-2-3", "1000-2000 "}) {
    CAPTURE(bad);
    const kob::CodeRange b = kob::parse_code_range(bad);
    CHECK(b.empty());
    CHECK(kob::format_code_range(b).empty());
    CHECK_FALSE(b.contains(0x1800));
  }
}

TEST_CASE("timeline: with dropped events each open kernel is discarded and counted") {
  RecorderReset reset;
  Synth s(2);
  s.kernel_begin(0, 1, 1, "tl_lost_a");
  s.kernel_begin(1, 2, 2, "tl_lost_b");
  s.bufs[0]->dropped = 1;
  s.bufs[1]->dropped = 1;
  const Timeline t = s.build();
  CHECK(t.kernels.empty());
  REQUIRE(t.problems.size() == 1);
  CHECK(t.problems[0] == "a Kokkos kernel without an end, discarded (events were dropped) (2 times)");
}

TEST_CASE("timeline: a stretch lost before every recorded event starts the run, so the summary can place it") {
  RecorderReset reset;
  Synth s(2);
  s.kernel_begin(0, 1000, 1, "tl_after_loss");
  s.kernel_end(0, 1100, 1);
  // Thread 1's whole run was lost (e.g. past --max-trace-size), before thread 0's first event.
  s.bufs[1]->dropped = 50;
  s.bufs[1]->losses.push_back({200, 400, 50, kob::LossReason::TraceSizeCap});
  const kob::Timeline t = kob::build_timeline(s.list());
  CHECK(t.t0 == 200);
  CHECK(t.t_end == 1100);
  const kob::Summary sum = kob::summarize(t);
  REQUIRE(sum.coverage.lost.size() == 1);
  CHECK(sum.coverage.lost[0].from == 0);
  CHECK(sum.coverage.lost[0].to == 200);  // was 0 to 0 while the time line began at the first recorded event
  CHECK(sum.coverage.lost[0].events == 50);
}
