// Writes a raw trace PREFIX.kob by hand (tests/unit/raw_test_writer.hpp) of a run with known call
// distributions, for the noise model of `kob diff`:
//   make_noisy_run PATH SEED SLOW CALLS
// CALLS iterations of the region "iteration", each running the kernels "alpha" (20 us), "beta"
// (50 us), "gamma" (100 us) and "delta" (400 us) once. Every call's time is its base times
// exp(N(0, 0.08)) (the jitter of calls on a quiet machine), and 3% of calls are 1.5x to 3x longer (an
// interrupt, a descheduled thread). The kernel named SLOW takes twice its base ("none": none does).
// SEED picks the draws: two seeds are two runs of one program.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/record/record_fields.hpp"
#include "raw_test_writer.hpp"

using kob::Ev;
using kob::Record;

namespace {

Record at(std::uint64_t ns, Ev type) {
  Record r{};
  r.tick = ns;  // clock 0: ticks are ns
  r.type = type;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const std::string path = argv[1], slow = argv[3];
  const auto seed = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  const int calls = std::atoi(argv[4]);
  const char* names[] = {"alpha", "beta", "gamma", "delta"};
  const double base_us[] = {20, 50, 100, 400};

  kob_test::RawStart start;
  start.pid = 1000 + seed;
  kob_test::RawTraceWriter w(start);
  for (std::uint32_t i = 0; i < 4; ++i) w.name(i + 1, names[i]);
  w.name(5, "iteration");
  w.kv("kob", "exe", "noisy_program");
  w.kv("kob", "args", "--format=summary");
  w.thread(0, 7000 + seed, 1);

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, 0.08);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Record> recs;
  std::uint64_t now = 1000, id = 0;
  for (int i = 0; i < calls; ++i) {
    Record push = at(now, Ev::RegionPush);
    kob::fields::Named::name.set(push, 5);
    recs.push_back(push);
    for (std::uint32_t k = 0; k < 4; ++k) {
      double us = base_us[k] * (slow == names[k] ? 2.0 : 1.0) * std::exp(jitter(rng));
      if (unit(rng) < 0.03) us *= 1.5 + 1.5 * unit(rng);
      Record b = at(now += 500, Ev::KernelBegin);
      kob::fields::Kernel::id.set(b, ++id);
      kob::fields::Kernel::name.set(b, k + 1);
      kob::fields::Kernel::devid.set(b, 0);
      recs.push_back(b);
      Record e = at(now += static_cast<std::uint64_t>(us * 1000), Ev::KernelEnd);
      kob::fields::Kernel::id.set(e, id);
      recs.push_back(e);
    }
    recs.push_back(at(now += 500, Ev::RegionPop));
  }
  for (std::size_t from = 0, seq = 1; from < recs.size(); from += 1000, ++seq)
    w.compact(0, seq, std::vector<Record>(recs.begin() + long(from), recs.begin() + long(std::min(recs.size(), from + 1000))));
  w.calib(now, now);
  w.end(now + 1000);
  return w.write(path) ? 0 : 1;
}
