// String interning and the per-thread pointer cache.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/record/intern.hpp"
#include "common/support/log.hpp"

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

TEST_CASE("intern: texts taking turns at one address are answered by the slot, not the table") {
  // Kokkos 3.x's labels: one stack temporary, the kernels of a loop body by turns.
  InternCache cache;
  char buf[64];
  // One prefix, so that they share a slot and its ways.
  const char* texts[] = {"intern_turns_force", "intern_turns_integrate", "intern_turns_energy"};
  static_assert(std::size(texts) == InternCache::kWays);
  std::uint32_t ids[3];
  for (int i = 0; i < 3; ++i) ids[i] = names().intern(texts[i]);
  for (int i = 0; i < 3; ++i) {  // the first round fills the ways from the table
    std::strcpy(buf, texts[i]);
    CHECK(cache.lookup(buf) == ids[i]);
  }
  const std::uint64_t before = names().lookups();
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 3; ++i) {
      std::strcpy(buf, texts[(i + round) % 3]);
      CHECK(cache.lookup(buf) == ids[(i + round) % 3]);
    }
  }
  CHECK(names().lookups() == before);
  // A fourth text at the same address and with the same first characters takes the oldest way:
  // still right, one table lookup.
  std::strcpy(buf, "intern_turns_virial");
  const std::uint32_t fourth = cache.lookup(buf);
  CHECK(std::string(names().str(fourth)) == "intern_turns_virial");
  CHECK(names().lookups() == before + 1);
  for (int i = 0; i < 3; ++i) {
    std::strcpy(buf, texts[i]);
    CHECK(cache.lookup(buf) == ids[i]);
  }
}

TEST_CASE("intern: an MD step's labels by turns at one address stay off the table") {
  InternCache cache;
  char buf[64];
  const char* texts[] = {"force", "integrate_v", "integrate_x", "kinetic_energy", "virial", "neighbor_build"};
  std::uint32_t ids[6];
  for (int i = 0; i < 6; ++i) {
    ids[i] = names().intern(texts[i]);
    std::strcpy(buf, texts[i]);
    CHECK(cache.lookup(buf) == ids[i]);
  }
  const std::uint64_t before = names().lookups();
  for (int step = 0; step < 50; ++step) {
    for (int i = 0; i < 6; ++i) {
      std::strcpy(buf, texts[i]);
      CHECK(cache.lookup(buf) == ids[i]);
    }
  }
  CHECK(names().lookups() == before);
}

TEST_CASE("intern: two pointers sharing a cache slot do not mix up") {
  InternCache cache;
  // Slot: (pointer >> 4) and the first two characters; texts that share those share a slot.
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

namespace {
// Two pages, the second PROT_NONE: a string ending at the end of the first faults when read past
// its NUL, under any build.
struct GuardedPage {
  char* page = nullptr;
  std::size_t size = 0;
  GuardedPage() {
    size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    page = static_cast<char*>(p);
    REQUIRE(mprotect(page + size, size, PROT_NONE) == 0);
  }
  ~GuardedPage() { munmap(page, 2 * size); }
  // Writes text so that its NUL is the last byte before the guard page.
  char* at_end(const std::string& text) {
    char* s = page + size - text.size() - 1;
    std::memcpy(s, text.c_str(), text.size() + 1);
    return s;
  }
};

std::string name_of_length(std::size_t n, char fill = 'k') {
  std::string s = "L" + std::to_string(n) + "_";
  s.resize(n < s.size() ? n : s.size());
  s.resize(n, fill);
  return s;
}
}  // namespace

TEST_CASE("intern: names of length 0..64 ending at the end of a page, followed by an unreadable page") {
  GuardedPage g;
  InternCache cache;
  for (std::size_t n = 0; n <= 64; ++n) {
    const std::string text = name_of_length(n);
    const std::uint32_t id = names().intern(text);
    char* s = g.at_end(text);
    CHECK(cache.lookup(s) == id);  // miss
    CHECK(cache.lookup(s) == id);  // hit: compared in place, at the page end
    CHECK(std::string(names().str(id)) == text);
  }
}

TEST_CASE("intern: a reused address holding a shorter text, a prefix of the cached one, now ending at a page end") {
  GuardedPage g;
  InternCache cache;
  for (std::size_t n = 0; n <= 64; ++n) {
    // The cached text runs on into the second page...
    REQUIRE(mprotect(g.page + g.size, g.size, PROT_READ | PROT_WRITE) == 0);
    const std::string longer = name_of_length(n + 17, 'p');
    char* s = g.page + g.size - n - 1;
    std::memcpy(s, longer.c_str(), longer.size() + 1);
    const std::uint32_t long_id = cache.lookup(s);
    CHECK(std::string(names().str(long_id)) == longer);
    // ...then the same address holds its first n bytes, the NUL the last byte of the first page,
    // and the second page becomes unreadable.
    s[n] = '\0';
    REQUIRE(mprotect(g.page + g.size, g.size, PROT_NONE) == 0);
    const std::uint32_t short_id = cache.lookup(s);
    CHECK(short_id != long_id);
    CHECK(std::string(names().str(short_id)) == longer.substr(0, n));
    CHECK(cache.lookup(s) == short_id);
  }
}

TEST_CASE("intern: names in heap blocks of exactly their size (ASan sees any read past the NUL)") {
  InternCache cache;
  std::vector<std::unique_ptr<char[]>> keep;
  for (std::size_t n = 0; n <= 64; ++n) {
    const std::string text = name_of_length(n, 'h');
    auto block = std::make_unique<char[]>(n + 1);
    std::memcpy(block.get(), text.c_str(), n + 1);
    const std::uint32_t id = names().intern(text);
    CHECK(cache.lookup(block.get()) == id);
    CHECK(cache.lookup(block.get()) == id);
    keep.push_back(std::move(block));
  }
  // A block reused at the same address: a longer text first, then a shorter one in a block of
  // its exact size (freed and reallocated, as Kokkos' temporary label strings are).
  for (std::size_t n = 0; n <= 40; ++n) {
    const std::string longer = name_of_length(n + 24, 'r'), shorter = name_of_length(n, 's');
    char* block = static_cast<char*>(std::malloc(longer.size() + 1));
    REQUIRE(block != nullptr);
    std::memcpy(block, longer.c_str(), longer.size() + 1);
    CHECK(cache.lookup(block) == names().intern(longer));
    char* again = static_cast<char*>(std::realloc(block, shorter.size() + 1));
    REQUIRE(again != nullptr);
    std::memcpy(again, shorter.c_str(), shorter.size() + 1);
    CHECK(cache.lookup(again) == names().intern(shorter));
    std::free(again);
  }
}

TEST_CASE("intern: equal prefixes at one address: the cached text longer, then shorter, then equal") {
  InternCache cache;
  char buf[80];
  for (std::size_t n = 0; n <= 64; ++n) {
    const std::string base = name_of_length(n, 'e');
    const std::string longer = base + "x";
    std::memcpy(buf, base.c_str(), base.size() + 1);
    const std::uint32_t id_base = cache.lookup(buf);
    std::memcpy(buf, longer.c_str(), longer.size() + 1);
    const std::uint32_t id_longer = cache.lookup(buf);  // the cached text is a prefix of buf
    CHECK(id_longer != id_base);
    CHECK(std::string(names().str(id_longer)) == longer);
    buf[n] = '\0';  // back to base: buf is a prefix of the cached text
    CHECK(cache.lookup(buf) == id_base);
    if (n > 0) {
      buf[n - 1] = static_cast<char>(buf[n - 1] + 1);  // same length, last byte differs
      const std::uint32_t id_last = cache.lookup(buf);
      CHECK(id_last != id_base);
      CHECK(std::string(names().str(id_last)) == std::string(buf));
    }
  }
}
