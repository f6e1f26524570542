#include "common/support/log.hpp"

#include <atomic>
#include <cstdio>
#include <memory>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace kob::log {

namespace {
std::atomic<Level> g_level{Level::Warn};
std::atomic<bool> g_once[static_cast<int>(Once::Count)];
std::atomic<const char*> g_program{"kokkos-ompt-bridge"};

// A private logger, never registered: the measured program may use spdlog's default logger and
// must not see ours, nor we its settings. Unsynchronised stderr writes are fine: messages are rare.
spdlog::logger* make_logger() {
  auto* lg = new spdlog::logger("kokkos-ompt-bridge", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  lg->set_pattern(std::string(g_program.load()) + ": %l: %v");
  lg->set_level(spdlog::level::trace);  // filtering is ours, by g_level
  lg->flush_on(spdlog::level::trace);
  return lg;
}
std::atomic<spdlog::logger*> g_logger{nullptr};

spdlog::logger& logger() {
  static const bool made = (g_logger.store(make_logger()), true);
  (void)made;
  return *g_logger.load();
}

bool enabled(Level l) { return static_cast<int>(l) >= static_cast<int>(g_level.load(std::memory_order_relaxed)); }
}  // namespace

void set_level(Level level) { g_level.store(level, std::memory_order_relaxed); }

void set_program(const char* name) {
  g_program.store(name);
  if (spdlog::logger* lg = g_logger.load()) lg->set_pattern(std::string(name) + ": %l: %v");
}
const char* program() { return g_program.load(); }
Level level() { return g_level.load(std::memory_order_relaxed); }

bool parse_level(std::string_view t, Level& out) {
  static constexpr std::pair<std::string_view, Level> kNames[] = {
      {"trace", Level::Trace}, {"debug", Level::Debug}, {"info", Level::Info},
      {"warn", Level::Warn},   {"error", Level::Error}, {"off", Level::Off}};
  for (const auto& [name, l] : kNames) {
    if (t == name) {
      out = l;
      return true;
    }
  }
  return false;
}

void trace(const std::string& m) { if (enabled(Level::Trace)) logger().trace(m); }
void debug(const std::string& m) { if (enabled(Level::Debug)) logger().debug(m); }
void info(const std::string& m) { if (enabled(Level::Info)) logger().info(m); }
void warn(const std::string& m) { if (enabled(Level::Warn)) logger().warn(m); }
void error(const std::string& m) { if (enabled(Level::Error)) logger().error(m); }

void plain(const std::string& m) {
  std::fwrite(m.data(), 1, m.size(), stderr);
  std::fflush(stderr);
}

void after_fork_child() {
  // The old logger is left behind (its lock may be held by a thread the child does not have).
  if (g_logger.load() != nullptr) g_logger.store(make_logger());
}

void warn_once(Once which, const std::string& msg) {
  if (!g_once[static_cast<int>(which)].exchange(true, std::memory_order_relaxed)) warn(msg);
}

}  // namespace kob::log
