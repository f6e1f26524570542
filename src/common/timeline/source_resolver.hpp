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
  // Short, for slice names and tables: "function file.cpp:12", "function+0xOFF", "module+0xOFF".
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
};

// One consumer's view of a resolver. Most events repeat the address of one of a few constructs:
// a small direct-mapped cache in front of the resolver keeps the price per event to a compare.
class SourceCache {
 public:
  explicit SourceCache(SourceResolver* resolver = nullptr) : resolver_(resolver) {}
  bool enabled() const { return resolver_ != nullptr; }
  // As SourceResolver::at; an empty location when there is no resolver.
  const SourceLocation& at(std::uint64_t codeptr) {
    if (resolver_ == nullptr) return none_;
    Front& f = front_[(codeptr >> 2) & (kFront - 1)];
    if (f.codeptr == codeptr && f.loc) return *f.loc;
    const SourceLocation& l = resolver_->at(codeptr);
    f = {codeptr, &l};
    return l;
  }

 private:
  static constexpr std::size_t kFront = 256;
  struct Front {
    std::uint64_t codeptr = 0;
    const SourceLocation* loc = nullptr;
  };
  SourceResolver* resolver_;
  Front front_[kFront];
  SourceLocation none_;
};

}  // namespace kob
