// String interning and the per-thread pointer cache.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/intern.hpp"
#include "common/log.hpp"

using kob::InternCache;
using kob::names;

TEST_CASE("intern: same text gives the same id, through the table and the cache") {
  const std::uint32_t a = names().intern("intern_test_alpha");
  CHECK(a != 0);
  CHECK(names().intern("intern_test_alpha") == a);
  CHECK(std::string(names().str(a)) == "intern_test_alpha");
  const std::uint32_t b = names().intern("intern_test_beta");
  CHECK(b != a);

  InternCache cache;
  const std::string copy1 = "intern_test_alpha", copy2 = "intern_test_alpha";
  REQUIRE(copy1.c_str() != copy2.c_str());
  CHECK(cache.lookup(copy1.c_str()) == a);  // different pointers, same text: same id
  CHECK(cache.lookup(copy2.c_str()) == a);
  CHECK(cache.lookup(copy1.c_str()) == a);  // cache hit
  const std::size_t before = names().size();
  CHECK(cache.lookup("intern_test_beta") == b);
  CHECK(names().size() == before);  // nothing new interned

  const char* stable = nullptr;
  CHECK(names().intern("intern_test_alpha", &stable) == a);
  CHECK(stable == names().str(a));
}

TEST_CASE("intern: a reused pointer with new text gets a new id, never a stale one") {
  InternCache cache;
  char buf[64];
  std::strcpy(buf, "intern_reuse_first");
  const std::uint32_t first = cache.lookup(buf);
  std::strcpy(buf, "intern_reuse_second");
  const std::uint32_t second = cache.lookup(buf);
  CHECK(second != first);
  CHECK(std::string(names().str(second)) == "intern_reuse_second");
  std::strcpy(buf, "intern_reuse_first");  // back to the first text
  CHECK(cache.lookup(buf) == first);
  std::strcpy(buf, "intern_reuse_firs");  // a prefix of it
  const std::uint32_t prefix = cache.lookup(buf);
  CHECK(prefix != first);
  CHECK(std::string(names().str(prefix)) == "intern_reuse_firs");
}

TEST_CASE("intern: two pointers sharing a cache slot do not mix up") {
  InternCache cache;
  // Slot = (pointer >> 4) & 255: pointers 4096 bytes apart share a slot.
  std::vector<char> mem(8192, '\0');
  char* p = mem.data();
  char* q = mem.data() + 4096;
  std::strcpy(p, "intern_slot_p");
  std::strcpy(q, "intern_slot_q");
  const std::uint32_t ip = names().intern("intern_slot_p"), iq = names().intern("intern_slot_q");
  for (int i = 0; i < 3; ++i) {
    CHECK(cache.lookup(p) == ip);
    CHECK(cache.lookup(q) == iq);
  }
}

TEST_CASE("intern: null name is id 0 \"<null>\", unknown ids give \"\"") {
  const kob::log::Level old = kob::log::level();
  kob::log::set_level(kob::log::Level::Off);  // the one-time warning is not the point here
  InternCache cache;
  CHECK(cache.lookup(nullptr) == kob::InternTable::kNullName);
  CHECK(kob::InternTable::kNullName == 0);
  CHECK(std::string(names().str(0)) == "<null>");
  CHECK(names().intern("<null>") == 0);
  CHECK(std::string(names().str(0xfffffff0u)) == "");
  kob::log::set_level(old);
}

TEST_CASE("intern: threads interning the same names agree on the ids") {
  constexpr int kThreads = 8, kNames = 100;
  const std::size_t before = names().size();
  std::vector<std::vector<std::uint32_t>> ids(kThreads, std::vector<std::uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      InternCache cache;
      for (int i = 0; i < kNames; ++i) {
        const std::string s = "intern_mt_" + std::to_string(i);
        ids[t][i] = cache.lookup(s.c_str());
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(names().size() == before + kNames);
  for (int t = 1; t < kThreads; ++t) CHECK(ids[t] == ids[0]);
  for (int i = 0; i < kNames; ++i) CHECK(std::string(names().str(ids[0][i])) == "intern_mt_" + std::to_string(i));
  const auto snap = names().snapshot();
  REQUIRE(snap.size() >= before + kNames);
  CHECK(snap[ids[0][42]] == "intern_mt_42");
}
