// A progress line on stderr for long conversions: only on a terminal, only after about a second,
// updated in place with carriage returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kob::cli {

class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();  // clears the line if one was shown
  void update(std::uint64_t done, std::uint64_t total);

 private:
  std::string what_;
  bool tty_ = false;
  bool shown_ = false;
  std::chrono::milliseconds quiet_for_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace kob::cli
