#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/support/pooled_map.hpp"
#include "common/support/wide_zero.hpp"

TEST_CASE("pooled map: entries come and go by the thousand; nodes never move while they live") {
  kob::PooledMap<std::uint64_t, std::string> m;
  std::vector<const std::string*> at;
  for (std::uint64_t k = 0; k < 1000; ++k) {
    m[k] = "value " + std::to_string(k);
    at.push_back(&m[k]);
  }
  for (std::uint64_t k = 0; k < 1000; ++k) {
    REQUIRE(&m.at(k) == at[k]);  // a thousand inserts and the rehashes they caused moved none
    CHECK(m.at(k) == "value " + std::to_string(k));
  }
  // A sliding window of open entries, as the conversion keeps them: erased ones' nodes come back.
  for (std::uint64_t k = 1000; k < 50000; ++k) {
    m.emplace(k, "v");
    m.erase(k - 1000);
  }
  CHECK(m.size() == 1000);
  CHECK(m.count(49000) == 1);
  CHECK(m.count(49999) == 1);
  CHECK(m.count(48999) == 0);
  // A copy has a pool of its own: it outlives the original.
  kob::PooledMap<std::uint64_t, std::string> copy;
  {
    kob::PooledMap<std::uint64_t, std::string> tmp = m;
    copy = tmp;
  }
  CHECK(copy.size() == 1000);
  CHECK(copy.at(49999) == "v");
}

TEST_CASE("wide_zero: exactly the bytes asked, none beside them") {
  alignas(64) unsigned char buf[64 * 6];
  for (auto& b : buf) b = 0xab;
  kob::wide_zero(buf + 64, 64 * 4);
  for (int i = 0; i < 64; ++i) CHECK(buf[i] == 0xab);
  for (int i = 64; i < 64 * 5; ++i) CHECK(buf[i] == 0);
  for (int i = 64 * 5; i < 64 * 6; ++i) CHECK(buf[i] == 0xab);
}
