// Resolving a code address of one module file to function, file and line, with elfutils' libdw
// (DWARF 5, compressed sections, separate debug files under /usr/lib/debug/.build-id), falling
// back to the symbol table. Used at conversion only, once per distinct address.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kob::dwarf {

struct Frame {
  // Demangled linkage name with its parameter types ("ns::f(int)"); DW_AT_name, qualified by its
  // namespaces and classes, when there is no linkage name (gcc's internal-linkage functions, C)
  // or the demangler cannot read it.
  std::string function;
  // Absolute and lexically normalised when the compile directory is known ("/src/a/../b.cpp"
  // becomes "/src/b.cpp"); "" when the line table has no row for the address.
  std::string file;
  std::uint32_t line = 0;  // 0: no row, or code the compiler attributes to no line
};

struct Lookup {
  enum class Status {
    Ok,               // see frames / symbol
    NoFile,           // the file cannot be opened or is not ELF
    BuildIdMismatch,  // the file's build id is not the one recorded (rebuilt since the run)
  };
  Status status = Status::NoFile;
  // From DWARF, innermost first: frames[0] is the function whose code holds the address with the
  // address's line; when that function was inlined, frames[1] is the function it was inlined into
  // with the line of the inlined call, and so on outwards to the out-of-line function. Empty
  // without DWARF for the address (no debug information, stripped, padding between functions);
  // a unit with a line table but no function DIEs (assembly) gives one frame named by `symbol`.
  std::vector<Frame> frames;
  // From the symbol table (.symtab, else .dynsym; a separate debug file's when found), demangled
  // (left mangled where the demangler cannot read it): the function holding the address and the
  // address's offset from its start. Filled whenever a symbol covers the address, DWARF or not.
  // Empty when none does (a stripped executable's own functions: it exports none).
  std::string symbol;
  std::uint64_t symbol_offset = 0;
};
// The strings come from the file: a damaged one may give bytes that are not UTF-8.

// Keeps each module file open (its DWARF indexed once) for later lookups: memory grows with the
// modules looked into, not with the addresses (about 50-80 MiB for a 25-45 MiB module with full
// debug information looked into everywhere; the symbol table and each compilation unit are
// indexed on the first lookup that needs them). Not thread-safe: one thread at a time.
// Separate debug files are found as gdb finds them (/usr/lib/debug/.build-id/xx/yyyy.debug,
// .gnu_debuglink beside the file, in its .debug/ or under /usr/lib/debug); where DEBUGINFOD_URLS
// is set, libdwfl also asks those servers for a module without local debug information.
class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // path: the module's file; build_id: lowercase hex as recorded at run time ("": not checked; a
  // file without a build id then mismatches); vaddr: the address in the file's own virtual
  // address space (runtime address - load bias; for a return address, minus 1 as well). A path is
  // opened once: a file that was missing stays NoFile for this Symbolizer.
  // Never throws; a damaged file gives NoFile or an empty lookup.
  Lookup lookup(const std::string& path, const std::string& build_id, std::uint64_t vaddr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// For tests: the function symbols of the ELF file at path as kob reads its own .symtab and as
// libdwfl gives them, ordered: how many when the two are the same, -1 when they differ or the file
// has no .symtab kob reads.
int symbol_readers_agree_for_test(const std::string& path);

}  // namespace kob::dwarf
