// One libdwfl session per module file, reported at base 0 so that the module's addresses are the
// file's own virtual addresses; libdwfl finds the debug information (the file itself, a separate
// debug file) and the symbol table, libdw reads the line table and the DIE tree. Three indexes of
// our own, built once per module or compilation unit and then searched by bisection, keep a
// lookup from walking the whole symbol table (dwfl_module_addrinfo scans it linearly), from
// needing .debug_aranges (libdwfl 0.188 finds no unit without it, and clang emits none) and from
// walking a unit's whole DIE tree (clang emits no DW_AT_sibling to skip subtrees).
#include "common/support/dwarf_lookup.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <utility>

#include "common/support/die_walk.hpp"

namespace kob::dwarf {

namespace {

// Separate debug files found on this machine only: by build id under /usr/lib/debug/.build-id,
// then by .gnu_debuglink beside the file, in its .debug/ and under /usr/lib/debug/DIR. Not
// dwfl_standard_find_debuginfo: with DEBUGINFOD_URLS set (the default profile of Debian and Ubuntu
// systems that have debuginfod installed) it asks debuginfod servers, which at the end of a run
// could wait for the network for minutes and download gigabytes.
int local_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base, const char* file_name,
                    const char* debuglink, GElf_Word crc, char** debuginfo_file_name) {
  int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc, debuginfo_file_name);
  if (fd >= 0 || debuglink == nullptr || file_name == nullptr || std::strchr(debuglink, '/') != nullptr) return fd;
  const std::string path(file_name);
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  for (const std::string& candidate :
       {dir + "/" + debuglink, dir + "/.debug/" + debuglink, "/usr/lib/debug" + (dir[0] == '/' ? dir : "/" + dir) + "/" + debuglink}) {
    if (candidate == path) continue;  // the link names the file itself: it has no separate part
    struct stat info;
    if (::stat(candidate.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    *debuginfo_file_name = ::strdup(candidate.c_str());
    return fd;
  }
  errno = ENOENT;
  return -1;
}


// Nesting deeper than this is a damaged DIE tree, not a program.
constexpr int kMaxScopeDepth = 512;

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (name[0] == '_' && name[1] == 'Z') {
    int status = -1;
    char* readable = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (readable != nullptr) {
      std::string out = status == 0 ? std::string(readable) : std::string(name);
      std::free(readable);
      return out;
    }
  }
  return name;
}

std::string to_hex(const unsigned char* bytes, int length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<std::size_t>(length) * 2);
  for (int i = 0; i < length; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// libdw joins a file's directory entry to its name but leaves the result relative when the
// directory entry is (meson's "../src/x.cpp" under the build directory).
std::string full_path(const char* file, const char* comp_dir) {
  if (file == nullptr) return {};
  std::filesystem::path path(file);
  if (path.is_relative() && comp_dir != nullptr && comp_dir[0] != '\0') path = std::filesystem::path(comp_dir) / path;
  return path.lexically_normal().string();
}

// Demangled names and joined paths by the address of libdw's string (stable while the module is
// open): many addresses share a function or a file, and demangling and joining cost more than the
// rest of a lookup. Bounded by the module's strings, like libdw's own tables.
struct TextCache {
  std::unordered_map<const char*, std::string> names, paths;

  const std::string& name(const char* mangled) {
    auto [at, fresh] = names.try_emplace(mangled);
    if (fresh) at->second = demangle(mangled);
    return at->second;
  }
  // Keyed by the file name alone: libdw's names are per unit, and so is the compile directory.
  const std::string& path(const char* file, const char* comp_dir) {
    auto [at, fresh] = paths.try_emplace(file);
    if (fresh) at->second = full_path(file, comp_dir);
    return at->second;
  }
};

const char* comp_dir_of(Dwarf_Die* cudie) {
  Dwarf_Attribute attr;
  return dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
}

const char* linkage_name(Dwarf_Die* die, bool through_origin) {
  Dwarf_Attribute attr;
  auto* get = through_origin ? dwarf_attr_integrate : dwarf_attr;
  const char* name = dwarf_formstring(get(die, DW_AT_linkage_name, &attr));
  return name != nullptr ? name : dwarf_formstring(get(die, DW_AT_MIPS_linkage_name, &attr));
}

std::uint32_t udata_attr(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_formudata(dwarf_attr(die, name, &attr), &value) != 0) return 0;
  return static_cast<std::uint32_t>(value);
}

// Where the inlined_subroutine DIE was called from: DW_AT_call_file indexes its unit's file table.
void call_site(Dwarf_Die* inlined, TextCache& text, Frame& caller) {
  caller.line = udata_attr(inlined, DW_AT_call_line);
  Dwarf_Attribute attr;
  Dwarf_Word file_index = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &file_index) != 0) return;
  Dwarf_Die cudie;
  if (dwarf_diecu(inlined, &cudie, nullptr, nullptr) == nullptr) return;
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_getsrcfiles(&cudie, &files, &file_count) != 0 || file_index >= file_count) return;
  if (const char* file = dwarf_filesrc(files, file_index, nullptr, nullptr)) caller.file = text.path(file, comp_dir_of(&cudie));
}

// DIEs under which a compilation unit declares its functions.
bool is_container(int tag) {
  return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
         tag == DW_TAG_union_type || tag == DW_TAG_module || tag == DW_TAG_interface_type;
}

// Code lies in the executable segments; a DWARF range elsewhere is a linker's tombstone for
// discarded code (address 0 or -1 onwards), which would shadow real code at low addresses.
struct CodeSegments {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [start, end), module addresses

  bool holds(std::uint64_t low, std::uint64_t high) const {
    for (const auto& [start, end] : ranges)
      if (start <= low && high <= end) return true;
    return false;
  }
};

CodeSegments code_segments(Dwfl_Module* mod) {
  CodeSegments segments;
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  size_t count = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &count) != 0) return segments;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) != 0)
      segments.ranges.emplace_back(phdr.p_vaddr + bias, phdr.p_vaddr + bias + phdr.p_memsz);
  }
  return segments;
}

// Items by the DWARF address ranges of their DIEs' code, searched by bisection.
template <class Item>
struct RangeIndex {
  struct Entry {
    Dwarf_Addr low = 0, high = 0;  // [low, high)
    Item item{};
  };
  std::vector<Entry> entries;  // sorted by low once finish() ran

  // The die's ranges that lie in code (a DWARF address plus bias is a module address).
  void add(Dwarf_Die* die, const Item& item, const CodeSegments& code, Dwarf_Addr bias) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    for (int count = 0; count < 65536 && (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0; ++count)
      if (low < high && code.holds(low + bias, high + bias)) entries.push_back({low, high, item});
  }

  // Stable: ranges starting at one address stay in the order added.
  void finish() {
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.low < b.low; });
    entries.shrink_to_fit();
  }

  const Item* find(Dwarf_Addr pc) const {
    auto after = std::upper_bound(entries.begin(), entries.end(), pc,
                                  [](Dwarf_Addr value, const Entry& e) { return value < e.low; });
    // Ranges of distinct units or functions do not overlap; a few steps back cover odd tables.
    for (int steps = 0; after != entries.begin() && steps < 8; ++steps) {
      --after;
      if (pc < after->high) return &after->item;
    }
    return nullptr;
  }
};

// One compilation unit. On the first lookup into it, one walk of its DIE tree down to the
// subprograms (through namespaces and classes, not into functions) indexes every out-of-line
// function by address; the first lookup into a subprogram then walks that subprogram's own subtree
// for its inlined calls (each with the instance it was inlined into). Most of a unit's DIEs lie
// inside functions (Kokkos' inlined templates), and a run asks about a few of them. Later lookups
// only bisect.
struct Unit {
  Dwarf_Die cu{};    // the unit DIE: line table, compile directory
  Dwarf_Die tree{};  // where its functions are: the unit DIE, or a skeleton's split unit
  bool indexed = false;

  struct Function {
    Dwarf_Off offset = 0;      // the DIE, in tree's Dwarf
    std::int32_t caller = -1;  // an inlined call's enclosing function instance; -1 for a subprogram
    bool walked = false;       // a subprogram: its inlined calls are indexed
  };
  std::vector<Function> functions;
  RangeIndex<std::int32_t> ranges;  // into functions; for one low address the outer one first
  // "ns::Class::" of the functions declared in a namespace or class without a linkage name (gcc's
  // internal-linkage functions), by the DIE's address in libdw's memory.
  std::unordered_map<const void*, std::string> scope_of;
  const CodeSegments* code_ = nullptr;
  Dwarf_Addr bias_ = 0;

  // The unit's DIEs walked by their bytes (die_walk.hpp); false when it cannot read them, or
  // could not: libdw's walk (collect) does it all again.
  DieWalk walker;
  bool fast = false;

  void index(const CodeSegments& code, Dwarf_Addr bias) {
    indexed = true;
    code_ = &code;
    bias_ = bias;
    fast = walker.open(&tree);
    if (!fast || !collect_fast(dwarf_dieoffset(&tree), -1, {}, 0, false)) {
      fast = false;
      functions.clear();
      ranges.entries.clear();
      scope_of.clear();
      collect(&tree, -1, {}, 0, false);
    }
    ranges.finish();
  }

  // collect by the walker from the DIE at `parent`: the same functions, ranges and scopes in the
  // same order, what libdw reads of a DIE read only where collect acts on it. False: the bytes
  // could not be read (what was added stays: the caller starts again).
  bool collect_fast(Dwarf_Off parent, std::int32_t enclosing, const std::string& scope, int depth, bool deep) {
    const std::uint8_t* p = walker.children_of(parent);
    if (p == nullptr) return !walker.failed();
    return collect_children(p, enclosing, scope, depth, deep);
  }

  bool collect_children(const std::uint8_t*& p, std::int32_t enclosing, const std::string& scope, int depth, bool deep) {
    if (depth > kMaxScopeDepth) {
      walker.skip_children(p);
      return !walker.failed();
    }
    Dwarf* dwarf = dwarf_cu_getdwarf(tree.cu);
    DieWalk::Die d;
    while (walker.next(p, d)) {
      const unsigned tag = d.tag;
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
        if (!scope.empty() && tag == DW_TAG_subprogram && !d.linkage) scope_of.emplace(walker.addr(d.offset), scope);
        const auto self = static_cast<std::int32_t>(functions.size());
        const std::size_t before = ranges.entries.size();
        Dwarf_Die child;
        if (d.code && dwarf != nullptr && dwarf_offdie(dwarf, d.offset, &child) != nullptr) ranges.add(&child, self, *code_, bias_);
        // Without code (a declaration, an abstract instance) nothing below it has any either.
        if (ranges.entries.size() == before) {
          if (d.children) walker.skip_children(p);
          continue;
        }
        const bool inlined = tag == DW_TAG_inlined_subroutine;
        functions.push_back({d.offset, inlined ? enclosing : -1, deep});
        if (!d.children) continue;
        if (!deep) walker.skip_children(p);
        else if (!collect_children(p, self, {}, depth + 1, true)) return false;
      } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
        if (d.children && !collect_children(p, enclosing, {}, depth + 1, deep)) return false;
      } else if (is_container(static_cast<int>(tag))) {
        if (!d.children) continue;
        Dwarf_Die child;
        const char* name = dwarf != nullptr && dwarf_offdie(dwarf, d.offset, &child) != nullptr ? dwarf_diename(&child) : nullptr;
        const std::string inner = scope + (name != nullptr ? name : "(anonymous namespace)") + "::";
        if (!collect_children(p, enclosing, inner, depth + 1, deep)) return false;
      } else if (d.children) {
        walker.skip_children(p);
      }
    }
    return !walker.failed();
  }

  // deep: into the functions found (a subprogram's own walk); else down to them only.
  void collect(Dwarf_Die* parent, std::int32_t enclosing, const std::string& scope, int depth, bool deep) {
    if (depth > kMaxScopeDepth) return;
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      const int tag = dwarf_tag(&child);
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
        if (!scope.empty() && tag == DW_TAG_subprogram && linkage_name(&child, false) == nullptr)
          scope_of.emplace(child.addr, scope);
        const auto self = static_cast<std::int32_t>(functions.size());
        const std::size_t before = ranges.entries.size();
        ranges.add(&child, self, *code_, bias_);
        // Without code (a declaration, an abstract instance) nothing below it has any either.
        if (ranges.entries.size() == before) continue;
        const bool inlined = tag == DW_TAG_inlined_subroutine;
        functions.push_back({dwarf_dieoffset(&child), inlined ? enclosing : -1, deep});
        if (deep) collect(&child, self, {}, depth + 1, true);
      } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
        collect(&child, enclosing, {}, depth + 1, deep);
      } else if (is_container(tag)) {
        const char* name = dwarf_diename(&child);
        const std::string inner = scope + (name != nullptr ? name : "(anonymous namespace)") + "::";
        collect(&child, enclosing, inner, depth + 1, deep);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  // The subprogram's inlined calls indexed, once.
  void walk(std::int32_t subprogram) {
    Function& f = functions[static_cast<std::size_t>(subprogram)];
    if (f.walked) return;
    f.walked = true;
    if (fast) {
      const std::size_t functions_before = functions.size(), ranges_before = ranges.entries.size();
      if (collect_fast(f.offset, subprogram, {}, 1, true)) {
        ranges.finish();
        return;
      }
      fast = false;
      functions.resize(functions_before);
      ranges.entries.resize(ranges_before);
    }
    Dwarf_Die die;
    if (!die_of(subprogram, die)) return;
    collect(&die, subprogram, {}, 1, true);
    ranges.finish();  // stable: the entries already sorted keep their order before those added
  }

  // The function's source-level name: the mangled linkage name demangled (it carries namespaces,
  // classes and parameter types), else DW_AT_name qualified by the namespaces and classes that
  // declare it; both looked up through the abstract origin of an inlined or out-of-line instance
  // and through the declaration it specifies. A name the demangler cannot read (C++20 constraints
  // with libstdc++ 12) gives way to DW_AT_name too.
  std::string function_name(Dwarf_Die* die, TextCache& text) const {
    if (const char* linkage = linkage_name(die, true)) {
      const std::string& readable = text.name(linkage);
      if (readable != linkage || dwarf_diename(die) == nullptr) return readable;
    }
    const char* name = dwarf_diename(die);
    if (name == nullptr) return {};
    Dwarf_Die at = *die;
    for (int hops = 0; hops < 8; ++hops) {
      if (auto found = scope_of.find(at.addr); found != scope_of.end()) return found->second + name;
      Dwarf_Attribute attr;
      Dwarf_Attribute* link = dwarf_attr(&at, DW_AT_abstract_origin, &attr);
      if (link == nullptr) link = dwarf_attr(&at, DW_AT_specification, &attr);
      if (link == nullptr || dwarf_formref_die(link, &at) == nullptr) break;
    }
    return name;
  }

  bool die_of(std::int32_t function, Dwarf_Die& die) const {
    Dwarf* dwarf = dwarf_cu_getdwarf(tree.cu);
    return dwarf != nullptr && dwarf_offdie(dwarf, functions[static_cast<std::size_t>(function)].offset, &die) != nullptr;
  }

  // The innermost function instance whose code holds pc; -1 when none. The subprogram that holds
  // it is walked first (its inlined calls indexed).
  std::int32_t innermost(Dwarf_Addr pc) {
    const std::int32_t found = indexed_innermost(pc);
    std::int32_t top = found;
    for (int hops = 0; top >= 0 && functions[static_cast<std::size_t>(top)].caller >= 0 && hops < kMaxScopeDepth; ++hops)
      top = functions[static_cast<std::size_t>(top)].caller;
    if (top < 0 || functions[static_cast<std::size_t>(top)].walked) return found;
    walk(top);
    return indexed_innermost(pc);
  }

  std::int32_t indexed_innermost(Dwarf_Addr pc) const {
    auto after = std::upper_bound(ranges.entries.begin(), ranges.entries.end(), pc,
                                  [](Dwarf_Addr value, const auto& e) { return value < e.low; });
    // The last range starting at or below pc is the innermost one when it holds pc; when it ends
    // before pc, the instance holding pc is one it was inlined into (ranges nest as the DIEs do).
    for (int steps = 0; after != ranges.entries.begin() && steps < 8; ++steps) {
      --after;
      if (pc < after->high) return after->item;
      std::int32_t outer = functions[static_cast<std::size_t>(after->item)].caller;
      for (int hops = 0; outer >= 0 && hops < kMaxScopeDepth; ++hops) {
        Dwarf_Die die;
        if (die_of(outer, die) && dwarf_haspc(&die, pc) > 0) return outer;
        outer = functions[static_cast<std::size_t>(outer)].caller;
      }
    }
    return -1;
  }

  // The function instances holding pc, innermost first: an inlined call, the instance it was
  // inlined into, and so on out to the subprogram.
  std::vector<Dwarf_Die> chain(Dwarf_Addr pc) {
    std::vector<Dwarf_Die> dies;
    std::int32_t at = innermost(pc);
    for (int hops = 0; at >= 0 && hops < kMaxScopeDepth; ++hops) {
      Dwarf_Die die;
      if (!die_of(at, die)) break;
      dies.push_back(die);
      at = functions[static_cast<std::size_t>(at)].caller;
    }
    return dies;
  }
};

// A function symbol's extent in module addresses.
struct SymbolRange {
  std::uint64_t start = 0, end = 0;  // [start, end)
  const char* name = nullptr;        // into the symbol file's string table, alive with the module
  int rank = 0;                      // the better name where several start at one address
};

// A symbol type that may name a function (untyped ones too: assembly).
bool function_type(const GElf_Sym& sym) {
  const int type = GELF_ST_TYPE(sym.st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}

// One symbol's range, when it is a function's in an executable section (section_end: that
// section's end in module addresses, 0 when it is not executable).
void add_symbol(std::vector<SymbolRange>& symbols, const GElf_Sym& sym, const char* name, std::uint64_t address, std::uint64_t section_end) {
  if (name == nullptr || name[0] == '\0' || section_end == 0 || address >= section_end || !function_type(sym)) return;
  const int type = GELF_ST_TYPE(sym.st_info);
  const int bind = GELF_ST_BIND(sym.st_info);
  const int rank = (sym.st_size != 0 ? 8 : 0) + (type != STT_NOTYPE ? 4 : 0) + (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0);
  const std::uint64_t end = sym.st_size != 0 ? address + sym.st_size : section_end;
  symbols.push_back({address, end, name, rank});
}

// The end of section shndx of elf in module addresses when it holds code, else 0.
std::uint64_t code_section_end(Elf* elf, std::size_t shndx, Dwarf_Addr bias) {
  GElf_Shdr shdr;
  Elf_Scn* section = elf_getscn(elf, shndx);
  if (section == nullptr || gelf_getshdr(section, &shdr) == nullptr || (shdr.sh_flags & SHF_EXECINSTR) == 0) return 0;
  return shdr.sh_addr + bias + shdr.sh_size;
}

// The main file's own .symtab read straight (libdwfl's per-symbol call was a quarter million
// instructions for kob's thousand symbols, every conversion): false when the file has none, or one
// this does not read (a relocatable file, extended section indices), which libdwfl then reads.
bool read_own_symtab(Dwfl_Module* mod, std::vector<SymbolRange>& symbols) {
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  GElf_Ehdr ehdr;
  if (elf == nullptr || gelf_getehdr(elf, &ehdr) == nullptr || (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)) return false;
  Elf_Scn* symtab = nullptr;
  GElf_Shdr symtab_shdr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr && symtab == nullptr; scn = elf_nextscn(elf, scn))
    if (gelf_getshdr(scn, &symtab_shdr) != nullptr && symtab_shdr.sh_type == SHT_SYMTAB) symtab = scn;
  Elf_Data* data = symtab != nullptr ? elf_getdata(symtab, nullptr) : nullptr;
  std::size_t sections = 0;
  if (data == nullptr || symtab_shdr.sh_entsize == 0 || elf_getshdrnum(elf, &sections) != 0) return false;
  std::vector<std::uint64_t> ends(sections, ~std::uint64_t{0});  // ~0: not looked up yet
  const std::size_t count = symtab_shdr.sh_size / symtab_shdr.sh_entsize;
  // A 64-bit file's symbols and names are read where libelf holds them (gelf_getsym and
  // elf_strptr were 136 instructions a symbol); a string table whose last byte is 0 ends every
  // name in it, which is what elf_strptr checks.
  const bool syms_in_place = gelf_getclass(elf) == ELFCLASS64 && data->d_type == ELF_T_SYM && data->d_size >= count * sizeof(GElf_Sym);
  Elf_Scn* strtab = elf_getscn(elf, symtab_shdr.sh_link);
  const Elf_Data* strings = strtab != nullptr ? elf_getdata(strtab, nullptr) : nullptr;
  const bool names_in_place = strings != nullptr && strings->d_type == ELF_T_BYTE && strings->d_size != 0 &&
                              static_cast<const char*>(strings->d_buf)[strings->d_size - 1] == '\0';
  for (std::size_t i = 1; i < count; ++i) {
    GElf_Sym copy;
    const GElf_Sym* sym = syms_in_place ? static_cast<const GElf_Sym*>(data->d_buf) + i : gelf_getsym(data, static_cast<int>(i), &copy);
    if (sym == nullptr) return false;
    if (sym->st_shndx == SHN_XINDEX) return false;
    if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= sections) continue;  // SHN_ABS and the other reserved ones too
    if (!function_type(*sym)) continue;  // add_symbol's test, before the section's look-up
    std::uint64_t& end = ends[sym->st_shndx];
    if (end == ~std::uint64_t{0}) end = code_section_end(elf, sym->st_shndx, bias);
    if (end == 0) continue;
    const char* name = !names_in_place                   ? elf_strptr(elf, symtab_shdr.sh_link, sym->st_name)
                       : sym->st_name < strings->d_size ? static_cast<const char*>(strings->d_buf) + sym->st_name
                                                         : nullptr;
    add_symbol(symbols, *sym, name, sym->st_value + bias, end);
  }
  return true;
}

// Each function symbol libdwfl gives for the module (its choice of table).
void read_dwfl_symbols(Dwfl_Module* mod, std::vector<SymbolRange>& symbols) {
  const int count = dwfl_module_getsymtab(mod);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &address, &shndx, &elf, &bias);
    if (name == nullptr || shndx == SHN_UNDEF || shndx == SHN_ABS || elf == nullptr) continue;
    add_symbol(symbols, sym, name, address, code_section_end(elf, shndx, bias));
  }
}

// The symbols by address, the better name first where several start at one; symbols without a
// size extend to the next symbol or their section's end.
void order_symbols(std::vector<SymbolRange>& symbols) {
  std::sort(symbols.begin(), symbols.end(), [](const SymbolRange& a, const SymbolRange& b) {
    return a.start != b.start ? a.start < b.start : a.rank > b.rank;
  });
  symbols.erase(std::unique(symbols.begin(), symbols.end(),
                            [](const SymbolRange& a, const SymbolRange& b) { return a.start == b.start; }),
                symbols.end());
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
    if (symbols[i].rank < 8) symbols[i].end = std::min(symbols[i].end, symbols[i + 1].start);
  symbols.shrink_to_fit();
}

// The module's function symbols by address (.symtab, else .dynsym; libdwfl picks the table, also
// from a separate debug file).
std::vector<SymbolRange> index_symbols(Dwfl_Module* mod) {
  std::vector<SymbolRange> symbols;
  if (!read_own_symtab(mod, symbols)) {
    symbols.clear();
    read_dwfl_symbols(mod, symbols);
  }
  order_symbols(symbols);
  return symbols;
}

const SymbolRange* find_symbol(const std::vector<SymbolRange>& symbols, std::uint64_t address) {
  auto after = std::upper_bound(symbols.begin(), symbols.end(), address,
                                [](std::uint64_t value, const SymbolRange& s) { return value < s.start; });
  // A symbol nested in a larger one (rare) hides it for the addresses after its end.
  for (int steps = 0; after != symbols.begin() && steps < 8; ++steps) {
    --after;
    if (address < after->end) return &*after;
  }
  return nullptr;
}

}  // namespace

// One module file: its libdwfl session and our indexes, all freed with it.
struct ModuleFile {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;  // null: the file is missing or not ELF
  std::string build_id;        // lowercase hex, "" without one
  CodeSegments code;

  bool symbols_indexed = false;
  std::vector<SymbolRange> symbols;

  TextCache text;

  bool units_indexed = false;
  Dwarf_Addr dwarf_bias = 0;  // module address - DWARF address
  std::vector<Unit> units;
  RangeIndex<std::size_t> unit_ranges;  // into units

  ModuleFile() = default;
  ModuleFile(const ModuleFile&) = delete;
  ModuleFile& operator=(const ModuleFile&) = delete;
  ~ModuleFile() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  void open(const std::string& path) {
    // A FIFO or device would block or never end; only a regular file can be a module.
    struct stat info;
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return;
    // Separate debug files: local_debuginfo.
    static char* default_debuginfo_path = nullptr;
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = local_debuginfo,
        .section_address = dwfl_offline_section_address,
        .debuginfo_path = &default_debuginfo_path,
    };
    dwfl = dwfl_begin(&callbacks);
    if (dwfl == nullptr) return;
    dwfl_report_begin(dwfl);
    // Base 0 with add_p_vaddr: module address = file vaddr (bias 0) for ET_DYN and ET_EXEC alike.
    mod = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), -1, 0, true);
    if (dwfl_report_end(dwfl, nullptr, nullptr) != 0) mod = nullptr;
    if (mod == nullptr) return;
    code = code_segments(mod);
    const unsigned char* bits = nullptr;
    GElf_Addr note_vaddr = 0;
    const int length = dwfl_module_build_id(mod, &bits, &note_vaddr);
    if (length > 0 && bits != nullptr) build_id = to_hex(bits, length);
  }

  const SymbolRange* symbol_at(std::uint64_t address) {
    if (!symbols_indexed) {
      symbols_indexed = true;
      symbols = index_symbols(mod);
    }
    return find_symbol(symbols, address);
  }

  // The compilation units by their code ranges (libdwfl would ask .debug_aranges, which clang
  // does not emit by default).
  void index_units() {
    units_indexed = true;
    Dwarf* dwarf = dwfl_module_getdwarf(mod, &dwarf_bias);
    if (dwarf == nullptr) return;
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Unit unit;
    std::uint8_t unit_type = 0;
    for (; dwarf_get_units(dwarf, cu, &next, nullptr, &unit_type, &unit.cu, &unit.tree) == 0; cu = next) {
      if (unit.cu.addr == nullptr || (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)) continue;
      // A skeleton's functions are in its split unit (a .dwo file), when that was found.
      if (unit_type != DW_UT_skeleton || unit.tree.addr == nullptr) unit.tree = unit.cu;
      const std::size_t ordinal = units.size();
      const std::size_t before = unit_ranges.entries.size();
      unit_ranges.add(&unit.cu, ordinal, code, dwarf_bias);
      if (unit_ranges.entries.size() != before) units.push_back(unit);
    }
    unit_ranges.finish();
    units.shrink_to_fit();
  }

  Unit* unit_at(std::uint64_t address) {
    if (!units_indexed) index_units();
    const std::size_t* ordinal = unit_ranges.find(address - dwarf_bias);
    return ordinal != nullptr && *ordinal < units.size() ? &units[*ordinal] : nullptr;
  }

  void frames_at(std::uint64_t address, const std::string& symbol, std::vector<Frame>& frames) {
    Unit* unit = unit_at(address);
    if (unit == nullptr) return;
    const Dwarf_Addr pc = address - dwarf_bias;

    Frame innermost;
    Dwarf_Line* line = dwarf_getsrc_die(&unit->cu, pc);
    if (line != nullptr) {
      int lineno = 0;
      if (dwarf_lineno(line, &lineno) == 0 && lineno > 0) innermost.line = static_cast<std::uint32_t>(lineno);
      if (const char* file = dwarf_linesrc(line, nullptr, nullptr)) innermost.file = text.path(file, comp_dir_of(&unit->cu));
    }

    if (!unit->indexed) unit->index(code, dwarf_bias);
    std::vector<Dwarf_Die> chain = unit->chain(pc);
    if (chain.empty()) {
      // A unit with a line table but no function DIEs (assembly): the symbol names the function.
      // Without one either, the address is padding between functions that a line row runs over.
      if (line != nullptr && !symbol.empty()) {
        innermost.function = symbol;
        frames.push_back(std::move(innermost));
      }
      return;
    }
    innermost.function = unit->function_name(&chain[0], text);
    frames.push_back(std::move(innermost));
    for (std::size_t i = 1; i < chain.size(); ++i) {
      Frame caller;
      caller.function = unit->function_name(&chain[i], text);
      call_site(&chain[i - 1], text, caller);
      frames.push_back(std::move(caller));
    }
  }
};

struct Symbolizer::Impl {
  std::unordered_map<std::string, std::unique_ptr<ModuleFile>> files;
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {}
Symbolizer::~Symbolizer() = default;

Lookup Symbolizer::lookup(const std::string& path, const std::string& build_id, std::uint64_t vaddr) {
  Lookup result;
  try {
    auto entry = impl_->files.try_emplace(path).first;
    if (entry->second == nullptr) {
      entry->second = std::make_unique<ModuleFile>();
      entry->second->open(path);
    }
    ModuleFile& file = *entry->second;
    if (file.mod == nullptr) return result;
    if (!build_id.empty() && lowercase(build_id) != file.build_id) {
      result.status = Lookup::Status::BuildIdMismatch;
      return result;
    }
    result.status = Lookup::Status::Ok;
    if (const SymbolRange* symbol = file.symbol_at(vaddr)) {
      result.symbol = file.text.name(symbol->name);
      result.symbol_offset = vaddr - symbol->start;
    }
    file.frames_at(vaddr, result.symbol, result.frames);
  } catch (...) {
    // Out of memory: what was found so far stands.
  }
  return result;
}

int symbol_readers_agree_for_test(const std::string& path) {
  ModuleFile file;
  file.open(path);
  if (file.mod == nullptr) return -1;
  std::vector<SymbolRange> own, dwfl;
  if (!read_own_symtab(file.mod, own)) return -1;
  read_dwfl_symbols(file.mod, dwfl);
  order_symbols(own);
  order_symbols(dwfl);
  if (own.size() != dwfl.size()) return -1;
  for (std::size_t i = 0; i < own.size(); ++i)
    if (own[i].start != dwfl[i].start || own[i].end != dwfl[i].end || own[i].rank != dwfl[i].rank ||
        std::strcmp(own[i].name, dwfl[i].name) != 0)
      return -1;
  return static_cast<int>(own.size());
}

}  // namespace kob::dwarf
