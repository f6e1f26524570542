#include "kob/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kob::cli {

namespace {
// Short conversions show nothing: the line appears after this long (KOB_PROGRESS_DELAY_MS, for
// tests), and is redrawn at most every kEvery.
std::chrono::milliseconds quiet_for() {
  const char* v = std::getenv("KOB_PROGRESS_DELAY_MS");
  return std::chrono::milliseconds(v && *v ? std::atol(v) : 1000);
}
constexpr auto kEvery = std::chrono::milliseconds(200);
}  // namespace

Progress::Progress(std::string what)
    : what_(std::move(what)), tty_(isatty(STDERR_FILENO) == 1), quiet_for_(quiet_for()),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

void Progress::update(std::uint64_t done, std::uint64_t total) {
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < quiet_for_ || (shown_ && now - last_ < kEvery)) return;
  last_ = now;
  shown_ = true;
  const double pct = total ? 100.0 * double(done) / double(total) : 100.0;
  std::fprintf(stderr, "\rkob: converting %s: %3.0f%% (%.1f M of %.1f M events)\033[K", what_.c_str(), pct, double(done) / 1e6,
               double(total) / 1e6);
  std::fflush(stderr);
}

}  // namespace kob::cli
