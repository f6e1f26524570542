// Tool messages on stderr, through spdlog, one line each. Quiet by default: warnings and the
// end-of-run summary only. Never used on the hot path except for one-time warnings.
#pragma once

#include <string>
#include <string_view>

namespace kob::log {

enum class Level { Trace, Debug, Info, Warn, Error, Off };

void set_level(Level level);
Level level();
bool parse_level(std::string_view text, Level& out);

void trace(const std::string& msg);
void debug(const std::string& msg);
void info(const std::string& msg);
void warn(const std::string& msg);
void error(const std::string& msg);
// Prints msg unprefixed (the summary, help text).
void plain(const std::string& msg);
// The name messages start with: "kokkos-ompt-bridge" in the library, "kob" in kob (set first
// thing in its main, so that one program speaks with one prefix).
void set_program(const char* name);
const char* program();

// Conditions warned about at most once per process, whatever the number of occurrences.
enum class Once { NullName, BadKernelId, EventsAfterOutput, KokkosWithoutOmpt, RawRingFull, RawWriteFailed, RawSizeCap, RawNoSlots, ChainUnloadable, ChainNoHook, ChainDeviceTrace, Count };
void warn_once(Once which, const std::string& msg);

// In a fork() child: a fresh logger, since another thread of the parent may have held the old
// one's lock at the fork.
void after_fork_child();

}  // namespace kob::log
