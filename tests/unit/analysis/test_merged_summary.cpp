#include <doctest/doctest.h>

#include <string>

#include "common/analysis/merged_summary.hpp"
#include <nlohmann/json.hpp>

namespace {
kob::MergedRun run(int rank, std::uint64_t flushes, std::uint64_t flush_ns) {
  kob::MergedRun r;
  r.rank = rank;
  r.host = "node" + std::to_string(rank);
  r.alignment = rank == 0 ? "reference" : "mpi";
  r.summary.run_time = 2'000'000'000;
  r.summary.tool.flushes = flushes;
  r.summary.tool.flush_ns = flush_ns;
  return r;
}
}  // namespace

TEST_CASE("merged summary: each run's tool flushes, as its own summary counts them, in the JSON and the text") {
  const kob::MergedSummary m = kob::merge_summaries({run(0, 0, 0), run(1, 3, 4'500'000), run(2, 0, 0), run(3, 12, 30'000'000)});
  const std::string json = kob::merged_summary_json(m);
  const nlohmann::json doc = nlohmann::json::parse(json);  // .at(): a key missing throws, fails the case
  const nlohmann::json& runs = doc.at("runs");
  REQUIRE(runs.size() == 4);
  const std::uint64_t want[4][2] = {{0, 0}, {3, 4'500'000}, {0, 0}, {12, 30'000'000}};
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(runs.at(i).at("rank").get<std::int64_t>() == static_cast<std::int64_t>(i));
    CHECK(runs.at(i).at("tool").at("flushes").get<std::uint64_t>() == want[i][0]);
    CHECK(runs.at(i).at("tool").at("flush_ns").get<std::uint64_t>() == want[i][1]);
  }
  const std::string text = kob::merged_summary_text(m);
  CHECK(text.find("tool flushes (threads that copied their own full slots): rank 1 3 in ") != std::string::npos);
  CHECK(text.find(", rank 3 12 in ") != std::string::npos);
  CHECK(text.find("rank 0 0") == std::string::npos);
}

TEST_CASE("merged summary: no flushes, no line") {
  const kob::MergedSummary m = kob::merge_summaries({run(0, 0, 0), run(1, 0, 0)});
  CHECK(kob::merged_summary_text(m).find("tool flushes") == std::string::npos);
  const nlohmann::json doc = nlohmann::json::parse(kob::merged_summary_json(m));
  CHECK(doc.at("runs").at(1).at("tool").at("flushes").get<std::uint64_t>() == 0);
}
