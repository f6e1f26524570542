#include "common/timeline/source_resolver.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string_view>

#include "common/support/dwarf_lookup.hpp"
#include "common/support/log.hpp"
#include "common/support/text_safe.hpp"

namespace kob {

namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The user's function for a function the compiler made out of a directive's body: clang outlines
// a parallel region or task of `f` into `f.omp_outlined`, `f.omp_outlined_debug__`,
// `f.omp_task_entry.`... (C++: the mangled name with that suffix, which the demangler refuses);
// GCC into `f._omp_fn.0`. The user wrote `f`.
std::string user_function(const std::string& name) {
  // Demangled already, as "ns::f(int) (.omp_outlined_debug__)".
  if (const std::size_t clone = name.find(" (."); clone != std::string::npos) return name.substr(0, clone);
  std::size_t cut = std::string::npos;
  for (std::string_view mark : {".omp_", "._omp_fn", ".omp."}) cut = std::min(cut, name.find(mark));
  if (cut == std::string::npos || cut == 0) return name;
  const std::string base = name.substr(0, cut);
  if (base.size() > 2 && base[0] == '_' && base[1] == 'Z') {
    int status = 0;
    char* readable = abi::__cxa_demangle(base.c_str(), nullptr, nullptr, &status);
    if (readable != nullptr) {
      std::string out = status == 0 ? readable : base;
      std::free(readable);
      return out;
    }
  }
  return base;
}

// The frames as the user wrote them: outlined bodies named after their function, and a function
// "inlined into itself" (the outlined body inside its wrapper) shown once.
std::vector<dwarf::Frame> user_frames(std::vector<dwarf::Frame> frames) {
  std::vector<dwarf::Frame> out;
  for (dwarf::Frame& f : frames) {
    f.function = user_function(f.function);
    if (!out.empty() && out.back().function == f.function) continue;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

SourceResolver::SourceResolver(std::vector<modules::Module> modules)
    : modules_(std::move(modules)), symbolizer_(std::make_unique<dwarf::Symbolizer>()) {}

SourceResolver::~SourceResolver() = default;

std::vector<modules::Module> SourceResolver::modules_from(const std::vector<raw::Kv>& facts) {
  std::map<unsigned long long, modules::Module> by_number;  // the order they were seen in
  for (const raw::Kv& kv : facts) {
    if (kv.section != modules::kSection) continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(kv.key.c_str(), &end, 10);
    if (kv.key.empty() || *end != '\0') continue;
    if (std::optional<modules::Module> m = modules::parse(kv.value)) by_number[n] = std::move(*m);
  }
  std::vector<modules::Module> out;
  out.reserve(by_number.size());
  for (auto& [n, m] : by_number) out.push_back(std::move(m));
  return out;
}

std::size_t SourceResolver::distinct() const {
  std::lock_guard<std::mutex> lock(mu_);
  return locs_.size();
}

const SourceLocation& SourceResolver::at(std::uint64_t codeptr) {
  if (codeptr == 0) return none_;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_address_.find(codeptr);
  if (it != by_address_.end()) return *it->second;
  locs_.push_back(resolve(codeptr));
  const SourceLocation* l = &locs_.back();
  by_address_.emplace(codeptr, l);
  return *l;
}

SourceLocation SourceResolver::resolve(std::uint64_t codeptr) {
  SourceLocation loc;
  // The return address is the instruction after the call into the runtime, which may belong to the
  // next statement; the call itself is the directive's.
  const std::uint64_t address = codeptr - 1;
  const modules::Module* m = modules::find(modules_, address);
  if (m == nullptr) {
    loc.offset = address;  // no module: the address itself tells places apart
    loc.source = loc.label = hex(codeptr);
    return loc;
  }
  loc.module = m->path;
  loc.offset = address - m->bias;
  const std::string module = base_name(m->path);
  const dwarf::Lookup found = symbolizer_->lookup(m->path, m->build_id, loc.offset);
  if (found.status != dwarf::Lookup::Status::Ok) {
    if (warned_.insert(m->path).second) {
      // The path comes from the raw trace: a damaged one may hold any bytes (one clean line).
      const std::string path = text::escape(m->path), shown = text::escape(module);
      if (found.status == dwarf::Lookup::Status::BuildIdMismatch)
        log::warn(path + " changed since the run (its build id differs): its code addresses are shown as " + shown +
                  "+0xOFF, not resolved");
      else
        log::warn("cannot read " + path + " to resolve code addresses: shown as " + shown + "+0xOFF");
    }
  } else if (!found.frames.empty() && found.frames[0].line != 0) {
    const std::vector<dwarf::Frame> frames = user_frames(found.frames);
    const dwarf::Frame& f = frames[0];
    loc.function = f.function.empty() ? user_function(found.symbol) : f.function;
    loc.file = f.file;
    loc.line = f.line;
    if (frames.size() > 1) loc.caller = frames[1].function;
    const std::string fn = loc.function.empty() ? module + "+" + hex(loc.offset) : loc.function;
    loc.source = fn + " (" + loc.file + ":" + std::to_string(loc.line) + ")";
    if (!loc.caller.empty()) loc.source += " in " + loc.caller;
    loc.label = labels_.label(fn, " " + base_name(loc.file) + ":" + std::to_string(loc.line));
    return loc;
  } else if (!found.symbol.empty()) {
    // The symbol's own name: the offset is from its start (an outlined body has its own).
    loc.function = found.symbol;
    loc.source = found.symbol + "+" + hex(found.symbol_offset) + " (" + module + ")";
    loc.label = labels_.label(found.symbol, "+" + hex(found.symbol_offset));
    return loc;
  }
  loc.source = loc.label = module + "+" + hex(loc.offset);
  return loc;
}

SourceCache::Slot& SourceCache::add(std::uint64_t codeptr) {
  const SourceLocation& loc = resolver_->at(codeptr);
  if (2 * (used_ + 1) > slots_.size()) {
    std::vector<Slot> old(std::max<std::size_t>(256, 2 * slots_.size()));
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.codeptr == 0) continue;
      std::size_t i = slot_of(s.codeptr) & mask;
      while (slots_[i].codeptr != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = slot_of(codeptr) & mask;
  while (slots_[i].codeptr != 0) i = (i + 1) & mask;
  slots_[i] = {codeptr, &loc, 0};
  ++used_;
  return slots_[i];
}

}  // namespace kob
