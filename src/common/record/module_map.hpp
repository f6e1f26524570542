// The loaded objects of the process (executable, shared libraries), so that the code addresses
// OMPT hands us (codeptr_ra) can be resolved to function, file and line at conversion, also after
// a library was dlclose'd or the run ended. The writer thread keeps the raw trace's copy up to
// date (poll: dl_iterate_phdr's dlpi_adds/dlpi_subs tell cheaply whether the set changed); each
// module is one KV entry, section `module` (docs/raw-format.md). Never called on the hot path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kob::modules {

// One loaded object as the process saw it.
struct Module {
  std::string path;      // absolute file path (the executable's from /proc/self/exe)
  std::uint64_t bias = 0;  // load bias (dlpi_addr): runtime address = ELF virtual address + bias
  std::string build_id;  // GNU build id, lowercase hex; "" when the object has none
  // The executable PT_LOAD segments, runtime addresses [start, end).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> code;
  bool contains(std::uint64_t address) const {
    for (const auto& [s, e] : code)
      if (s <= address && address < e) return true;
    return false;
  }
};

// The KV entry's section; its key is the module's number (1, 2, ... in the order first seen).
inline constexpr std::string_view kSection = "module";

// The entry's value, one line: "BIAS BUILD_ID START-END[,START-END...] PATH" (hex without 0x;
// BUILD_ID "-" when none, the ranges "-" when none; the path is the rest of the line and may hold
// spaces).
std::string format(const Module& m);
// Its inverse; nullopt when the text is malformed (a damaged file).
std::optional<Module> parse(std::string_view value);

// The module whose code holds `address`; where several did (a library unloaded and another
// loaded at its place), the one seen last. nullptr when none.
const Module* find(const std::vector<Module>& modules, std::uint64_t address);

// ---- the recording process ----
// Looks at the loaded objects when they changed since the last call (cheap otherwise) and writes
// a KV entry for each one not seen before. raw::open calls it once the file is made (the objects
// loaded at start), the writer thread on every pass; the dlclose interposer (effective when the
// library is LD_PRELOADed), finish() and the exit's facts call it too.
void poll();
// True once poll() has run in this process (the session started): the dlclose interposer polls
// only then, so that a program the tool never started in is left alone.
bool watching();
// Every module seen so far, in the order seen (the session's facts at exit).
std::vector<Module> seen();
// fork(): before_fork takes the map's lock (before the raw file's: poll nests them in that
// order; raw::before_fork calls it), the parent releases it. The child releases it too: the map
// is inherited (the KV entries are rewritten into the child's own file with the others); only the
// change counters are forgotten so the next poll looks again.
void before_fork();
void after_fork_parent();
void after_fork_child();
// Tests only: forgets every module and the counters (raw::reset_for_test calls it).
void reset_for_test();

}  // namespace kob::modules
