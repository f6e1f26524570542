#include <doctest/doctest.h>

#include <array>
#include <random>
#include <vector>

#include "common/record/record_codec.hpp"
#include "helpers.hpp"

using kob::Ev;
using kob::Record;

namespace {
// (tick, type, sub, a, fields): the codec's field order, to kob_test::rec's.
Record rec(std::uint64_t tick, Ev type, std::uint16_t sub, std::uint32_t a, std::initializer_list<std::uint64_t> u) {
  return kob_test::rec(tick, type, a, u, sub);
}

using kob_test::declared_only;

bool same(const Record& x, const Record& y) {
  if (x.tick != y.tick || x.type != y.type || x.sub != y.sub || x.a != y.a) return false;
  for (int i = 0; i < 6; ++i)
    if (x.u[i] != y.u[i]) return false;
  return true;
}

std::vector<Record> round_trip(const std::vector<Record>& in, std::uint64_t base, std::size_t* bytes_out = nullptr) {
  std::vector<std::uint8_t> buf(in.size() * kob::codec::kMaxRecordBytes + 1);
  const std::size_t bytes = kob::codec::encode(in.data(), in.size(), base, buf.data());
  if (bytes_out) *bytes_out = bytes;
  std::vector<Record> out;
  const std::size_t n = kob::codec::decode(buf.data(), bytes, in.size(), base, [&](const Record& r) { out.push_back(r); });
  CHECK(n == in.size());
  return out;
}
}  // namespace

TEST_CASE("codec: records come back exactly, extreme values and backwards ticks included") {
  std::vector<Record> in = {
      rec(1000, Ev::KernelBegin, 1, 7, {1, 0, 0, 0, 0, 0}),
      rec(1500, Ev::OmpParallelBegin, 0, 2, {1, 1, 0, 0x7f00deadbeefull, 0, 0}),
      rec(1400, Ev::KernelEnd, 0, 0, {1}),  // a tick going backwards (another core's TSC)
      rec(~0ull, Ev::DeepCopyBegin, 0, 0xffffffffu, {~0ull, 0, ~0ull, 1ull << 63, 5, 6}),
      rec(7, Ev::OmpMutexAcquire, 0xffff, 0xffffffffu, {~0ull, 1, 2, ~0ull}),
      rec(0, Ev::OmpDeviceRecord, 3, 1, {1, 2, 3, 4, 5, 6}),
      rec(5, Ev::KernelBegin, 1, 7, {2, 0, 0, 0, 0, 0}),
  };
  const auto out = round_trip(in, 900);
  REQUIRE(out.size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i) CHECK(same(in[i], out[i]));
}

TEST_CASE("codec: random records round-trip; a repeating kernel loop takes a few bytes per record") {
  std::mt19937_64 rng(42);
  std::vector<Record> in;
  std::uint64_t t = 123456789;
  for (int i = 0; i < 5000; ++i) {
    t += rng() % 100000;
    Record r = rec(t, static_cast<Ev>(1 + rng() % (static_cast<int>(Ev::OmpLast) - 1)), rng() & 0xffff, rng() & 0xffffffffu, {});
    for (auto& u : r.u) u = (rng() & 1) ? rng() : rng() % 10;
    in.push_back(declared_only(r));
  }
  const auto out = round_trip(in, 0);
  REQUIRE(out.size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i) CHECK(same(in[i], out[i]));

  std::vector<Record> loop;
  t = 1ull << 40;
  for (std::uint64_t k = 1; k <= 1000; ++k) {
    loop.push_back(rec(t += 300, Ev::KernelBegin, 0, 12, {k, 0}));
    loop.push_back(rec(t += 900, Ev::KernelEnd, 0, 0, {k}));
  }
  std::size_t bytes = 0;
  const auto back = round_trip(loop, loop[0].tick, &bytes);
  REQUIRE(back.size() == loop.size());
  CHECK(same(back.back(), loop.back()));
  // Each record its 5-byte head (type, mask, tick step); the begin one id byte more (the end has
  // the id from its lane), the first begin its name too.
  CHECK(bytes == loop.size() / 2 * 11 + 1);
}

TEST_CASE("codec: a tick step of 2^24 - 1 ticks or more, or negative, is escaped; sync steps are values, absent when 0") {
  std::vector<Record> in;
  const std::uint64_t t0 = 1ull << 40;
  for (std::uint64_t step : {0ull, 1ull, 0xfffffeull, 0xffffffull, 0x1000000ull, 1ull << 50}) {
    in.push_back(rec(in.empty() ? t0 : in.back().tick + step, Ev::KernelBegin, 0, 3, {in.size() + 1, 0}));
  }
  in.push_back(rec(in.back().tick - 1, Ev::KernelEnd, 0, 0, {in.size()}));  // backwards by one
  in.push_back(rec(t0, Ev::KernelEnd, 0, 0, {in.size()}));
  // A folded barrier, an unfolded one, one folded up to its wait end, then the three steps again.
  for (std::array<std::uint64_t, 3> steps : std::vector<std::array<std::uint64_t, 3>>{
           {21, 81, 11}, {0, 0, 0}, {5, 1ull << 40, 0}, {21, 81, 11}, {1, 1, 1}}) {
    in.push_back(rec(in.back().tick + 100, Ev::OmpSyncBegin, 1, 0, {9, 4, 0, steps[0], steps[1], steps[2]}));
    in.push_back(rec(in.back().tick + 100, Ev::OmpSyncEnd, 1, 0, {9, 4, 0, 0, 0, 0}));
  }
  std::size_t bytes = 0;
  const auto out = round_trip(in, t0, &bytes);
  REQUIRE(out.size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    CHECK(same(in[i], out[i]));
  }
  // The same records cut at every length: the complete ones come back, nothing is read past the end.
  std::vector<std::uint8_t> buf(in.size() * kob::codec::kMaxRecordBytes);
  REQUIRE(kob::codec::encode(in.data(), in.size(), t0, buf.data()) == bytes);
  for (std::size_t cut = 0; cut < bytes; ++cut) {
    std::vector<std::uint8_t> part(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(cut));
    std::size_t n = 0;
    const std::size_t done = kob::codec::decode(part.data(), part.size(), in.size(), t0, [&](const Record& r) {
      CHECK(same(r, in[n]));
      ++n;
    });
    CHECK(done == n);
    CHECK(n < in.size());
  }
}

TEST_CASE("codec: a block cut short decodes its complete records and stops") {
  std::vector<Record> in;
  for (std::uint64_t k = 1; k <= 10; ++k) in.push_back(rec(k * 1000, Ev::KernelBegin, 0, 3, {k, 1}));
  std::vector<std::uint8_t> buf(in.size() * kob::codec::kMaxRecordBytes);
  const std::size_t bytes = kob::codec::encode(in.data(), in.size(), 0, buf.data());
  std::size_t n = 0;
  CHECK(kob::codec::decode(buf.data(), bytes - 1, in.size(), 0, [&](const Record&) { ++n; }) == 9);
  CHECK(n == 9);
  buf[0] = 0;  // not a record type
  CHECK(kob::codec::decode(buf.data(), bytes, in.size(), 0, [&](const Record&) {}) == 0);
}

TEST_CASE("codec: each type's fields are declared; a field outside them is not coded (zero in every slot)") {
  // The hot path's writers and the table agree: what each sets (kokkos_events.hpp, host_callbacks.cpp,
  // target_callbacks.cpp...) is in kCarried; the types a test or a damaged file may carry anything in
  // keep all eight.
  using kob::fields::kAllSlots;
  using kob::fields::kCarried;
  CHECK(kCarried[static_cast<unsigned>(Ev::KernelEnd)] == kob::fields::slots(kob::fields::Kernel::id));
  CHECK(kCarried[static_cast<unsigned>(Ev::KernelEnd)] == 4);  // u0 alone
  CHECK(kCarried[static_cast<unsigned>(Ev::OmpSyncBegin)] == kAllSlots);
  CHECK(kCarried[static_cast<unsigned>(Ev::ProfileEvent)] == kAllSlots);
  CHECK(kCarried[0] == kAllSlots);
  for (unsigned t = static_cast<unsigned>(Ev::OmpLast); t < kob::codec::kTypes; ++t) CHECK(kCarried[t] == kAllSlots);
#ifdef NDEBUG
  // Release builds: an undeclared field is left out (a test build stops at it instead).
  const auto out = round_trip({rec(10, Ev::KernelEnd, 3, 4, {5, 6})}, 0);
  REQUIRE(out.size() == 1);
  CHECK(same(out[0], rec(10, Ev::KernelEnd, 0, 0, {5})));
#endif
}
