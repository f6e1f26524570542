// The source location of an OpenMP construct from the code address the runtime reported for it
// (codeptr_ra), through the run's module map (common/record/module_map.hpp) and the modules' DWARF
// (common/support/dwarf_lookup.hpp). Conversion only: each distinct address is resolved once.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/record/module_map.hpp"
#include "common/timeline/function_name.hpp"
#include "common/timeline/raw_reader.hpp"

namespace kob {

namespace dwarf {
class Symbolizer;
}

struct SourceLocation {
  std::string function;   // demangled; the innermost inlined function when the directive was inlined
  std::string file;       // full path as DWARF gives it; "" without line information
  std::uint32_t line = 0;
  std::string caller;     // the function it was inlined into ("" when not inlined)
  std::string module;     // the module's file ("" when no module held the address)
  std::uint64_t offset = 0;  // the address looked up (codeptr - 1) in the module's own address space (no module: itself)
  // The trace's `source` arg (CONTRACT.md): "function (file:line)", "inlined (file:line) in caller",
  // "function+0xOFF (module)", "module+0xOFF", or the bare address "0x..." when no module held it.
  std::string source;
  // Short, for slice names and tables: "function file.cpp:12", "function+0xOFF", "module+0xOFF",
  // the function without its parameter list (common/timeline/function_name.hpp).
  std::string label;
  bool known() const { return !source.empty(); }
  // The same construct whatever address the compiler gave it (a duplicated loop has two).
  bool same_place(const SourceLocation& o) const {
    return function == o.function && file == o.file && line == o.line && module == o.module &&
           (line != 0 || offset == o.offset);
  }
};

// Shared by the conversion's consumers (the trace windows are written on a thread of their own
// while the summary folds on the reading thread): at() is thread-safe. Each consumer reads it
// through a SourceCache of its own.
class SourceResolver {
 public:
  explicit SourceResolver(std::vector<modules::Module> modules);
  ~SourceResolver();
  SourceResolver(const SourceResolver&) = delete;
  SourceResolver& operator=(const SourceResolver&) = delete;

  // The modules the raw trace's `module` KV entries name (later entries of one key win).
  static std::vector<modules::Module> modules_from(const std::vector<raw::Kv>& facts);

  // The location of `codeptr`; an empty one for 0. The reference stays valid for the resolver's life.
  const SourceLocation& at(std::uint64_t codeptr);
  std::size_t distinct() const;

 private:
  SourceLocation resolve(std::uint64_t codeptr);

  mutable std::mutex mu_;
  std::vector<modules::Module> modules_;
  std::unique_ptr<dwarf::Symbolizer> symbolizer_;
  std::unordered_map<std::uint64_t, const SourceLocation*> by_address_;
  std::deque<SourceLocation> locs_;  // stable addresses
  SourceLocation none_;
  std::set<std::string> warned_;  // modules already reported as rebuilt or unreadable
  FunctionLabels labels_;
};

// One consumer's view of a resolver: its own table of the addresses it has met (open addressing
// in one flat array, no lock), so an event costs one probe, mostly one cache line, whatever the
// number of distinct addresses; the resolver (a lock, its map, libdw) only sees each address once.
class SourceCache {
 public:
  explicit SourceCache(SourceResolver* resolver = nullptr) : resolver_(resolver) {}
  bool enabled() const { return resolver_ != nullptr; }
  // An address's location, and a number the consumer may keep with it (0 until it sets one).
  struct Slot {
    std::uint64_t codeptr = 0;  // 0: empty
    const SourceLocation* loc = nullptr;
    std::uint32_t mine = 0;
  };
  // codeptr != 0 and a resolver (enabled()). The reference is valid until the next call.
  Slot& slot(std::uint64_t codeptr) {
    if (!slots_.empty()) {
      const std::size_t mask = slots_.size() - 1;
      for (std::size_t i = slot_of(codeptr) & mask;; i = (i + 1) & mask) {
        Slot& s = slots_[i];
        if (s.codeptr == codeptr) return s;
        if (s.codeptr == 0) break;
      }
    }
    return add(codeptr);
  }
  // As SourceResolver::at; an empty location when there is no resolver.
  const SourceLocation& at(std::uint64_t codeptr) {
    if (resolver_ == nullptr || codeptr == 0) return none_;
    return *slot(codeptr).loc;
  }

 private:
  static std::size_t slot_of(std::uint64_t codeptr) { return static_cast<std::size_t>((codeptr * 0x9E3779B97F4A7C15ull) >> 32); }
  Slot& add(std::uint64_t codeptr);

  SourceResolver* resolver_;
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::size_t used_ = 0;
  SourceLocation none_;
};

}  // namespace kob
