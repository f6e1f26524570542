// The symbolizer against this test program's own code, whose functions and lines the test knows:
// a plain call, an inlined call, copies stripped, with a separate debug file and with compressed
// debug sections, a wrong build id, missing and damaged files. This file is built with -g in every
// buildtype (tests/unit/meson.build).
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/support/dwarf_lookup.hpp"

namespace kob_dwarf_test {

// Where the call returns to; an address inside the calling function's call instruction once 1 is
// subtracted (what the tool does with OMPT's codeptr_ra).
[[gnu::noinline]] void* where() {
  asm volatile("");
  return __builtin_return_address(0);
}

struct Site {
  void* ra;
  int line;
};

// clang-format off
[[gnu::noinline]] Site plain_call() {
  Site site{where(), __LINE__};
  return site;
}

static inline __attribute__((always_inline)) Site inlined_body() {
  return Site{where(), __LINE__};
}

[[gnu::noinline]] Site inlined_caller(int* call_line) {
  Site site = inlined_body(); *call_line = __LINE__;
  return site;
}
// clang-format on

}  // namespace kob_dwarf_test

namespace {

namespace fs = std::filesystem;
using kob::dwarf::Lookup;
using Status = kob::dwarf::Lookup::Status;

// The loaded object holding an address, as the recording side sees it.
struct LoadedModule {
  std::string path;
  std::uintptr_t bias = 0;
  std::string build_id;
};

struct FindArgs {
  std::uintptr_t address;
  LoadedModule* out;
  bool found;
};

std::string note_build_id(const dl_phdr_info* info, const ElfW(Phdr) & phdr) {
  auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + phdr.p_vaddr);
  const unsigned char* end = p + phdr.p_memsz;
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
    const unsigned char* name = p + sizeof(ElfW(Nhdr));
    const unsigned char* desc = name + ((note->n_namesz + 3) & ~3u);
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
      std::string hex;
      for (unsigned i = 0; i < note->n_descsz; ++i) {
        static constexpr char kDigits[] = "0123456789abcdef";
        hex += kDigits[desc[i] >> 4];
        hex += kDigits[desc[i] & 0xf];
      }
      return hex;
    }
    p = desc + ((note->n_descsz + 3) & ~3u);
  }
  return {};
}

int find_module(dl_phdr_info* info, size_t, void* data) {
  auto* args = static_cast<FindArgs*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && start <= args->address && args->address < start + ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  args->out->bias = info->dlpi_addr;
  args->out->path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_NOTE && args->out->build_id.empty())
      args->out->build_id = note_build_id(info, info->dlpi_phdr[i]);
  args->found = true;
  return 1;
}

LoadedModule module_of(const void* address) {
  LoadedModule module;
  FindArgs args{reinterpret_cast<std::uintptr_t>(address), &module, false};
  dl_iterate_phdr(find_module, &args);
  REQUIRE(args.found);
  if (module.path.empty()) module.path = fs::read_symlink("/proc/self/exe").string();
  return module;
}

std::uint64_t vaddr_of(const LoadedModule& module, void* return_address) {
  return reinterpret_cast<std::uintptr_t>(return_address) - 1 - module.bias;
}

std::string basename(const std::string& path) { return fs::path(path).filename().string(); }

// A fresh directory under the temporary directory, removed with its files at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kob-dwarf-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

int run(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

// The known code sites of this file, in module addresses.
struct Sites {
  LoadedModule module;
  std::uint64_t plain = 0, inlined = 0;
  int plain_line = 0, inlined_line = 0, inlined_call_line = 0;
  std::uint64_t inlined_caller_start = 0;
};

Sites known_sites() {
  Sites sites;
  const kob_dwarf_test::Site plain = kob_dwarf_test::plain_call();
  int call_line = 0;
  const kob_dwarf_test::Site inlined = kob_dwarf_test::inlined_caller(&call_line);
  sites.module = module_of(plain.ra);
  sites.plain = vaddr_of(sites.module, plain.ra);
  sites.plain_line = plain.line;
  sites.inlined = vaddr_of(sites.module, inlined.ra);
  sites.inlined_line = inlined.line;
  sites.inlined_call_line = call_line;
  sites.inlined_caller_start = reinterpret_cast<std::uintptr_t>(&kob_dwarf_test::inlined_caller) - sites.module.bias;
  return sites;
}

void check_plain(const Lookup& found, const Sites& sites) {
  REQUIRE(found.frames.size() == 1);
  CHECK(found.frames[0].function == "kob_dwarf_test::plain_call()");
  CHECK(basename(found.frames[0].file) == "test_dwarf_lookup.cpp");
  CHECK(fs::path(found.frames[0].file).is_absolute());
  CHECK(found.frames[0].line == static_cast<std::uint32_t>(sites.plain_line));
}

// clang gives an internal-linkage function a linkage name (demangled with its parameters), gcc
// only its name (qualified from the DIE tree).
#if defined(__clang__)
constexpr const char* kInlinedBodyName = "kob_dwarf_test::inlined_body()";
#else
constexpr const char* kInlinedBodyName = "kob_dwarf_test::inlined_body";
#endif

void check_inlined(const Lookup& found, const Sites& sites) {
  REQUIRE(found.frames.size() == 2);
  CHECK(found.frames[0].function == kInlinedBodyName);
  CHECK(basename(found.frames[0].file) == "test_dwarf_lookup.cpp");
  CHECK(found.frames[0].line == static_cast<std::uint32_t>(sites.inlined_line));
  CHECK(found.frames[1].function == "kob_dwarf_test::inlined_caller(int*)");
  CHECK(basename(found.frames[1].file) == "test_dwarf_lookup.cpp");
  CHECK(fs::path(found.frames[1].file).is_absolute());
  CHECK(found.frames[1].line == static_cast<std::uint32_t>(sites.inlined_call_line));
}

void check_symbols(const Lookup& plain, const Lookup& inlined, const Sites& sites) {
  CHECK(plain.symbol == "kob_dwarf_test::plain_call()");
  CHECK(plain.symbol_offset > 0);
  CHECK(inlined.symbol == "kob_dwarf_test::inlined_caller(int*)");
  CHECK(inlined.symbol_offset == sites.inlined - sites.inlined_caller_start);
}

// Flips bytes all over the named sections of a 64-bit ELF file, headers left intact.
void damage_sections(const fs::path& file, const std::vector<std::string>& names, std::uint32_t seed) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  REQUIRE(eh.e_shoff + static_cast<std::uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) <= bytes.size());
  auto section = [&](unsigned i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  const Elf64_Shdr strings = section(eh.e_shstrndx);
  std::mt19937 random(seed);
  int damaged = 0;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size > bytes.size()) continue;
    const std::string name(bytes.data() + strings.sh_offset + sh.sh_name);
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    for (std::uint64_t at = random() % 64; at < sh.sh_size; at += 1 + random() % 64)
      bytes[sh.sh_offset + at] = static_cast<char>(random());
    ++damaged;
  }
  CHECK(damaged > 0);
  f.seekp(0);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The executable segments' virtual address ranges of a 64-bit ELF file.
std::vector<std::pair<std::uint64_t, std::uint64_t>> code_ranges(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (unsigned i = 0; in && i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    in.read(reinterpret_cast<char*>(&ph), sizeof ph);
    if (in && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) ranges.emplace_back(ph.p_vaddr, ph.p_vaddr + ph.p_memsz);
  }
  return ranges;
}

}  // namespace

TEST_CASE("dwarf lookup: this program's own functions, lines and symbols") {
  const Sites sites = known_sites();
  kob::dwarf::Symbolizer symbolizer;

  const Lookup plain = symbolizer.lookup(sites.module.path, "", sites.plain);
  REQUIRE(plain.status == Status::Ok);
  check_plain(plain, sites);

  const Lookup inlined = symbolizer.lookup(sites.module.path, "", sites.inlined);
  REQUIRE(inlined.status == Status::Ok);
  check_inlined(inlined, sites);
  check_symbols(plain, inlined, sites);

  SUBCASE("the recorded build id matches, in either case") {
    REQUIRE(!sites.module.build_id.empty());
    const Lookup again = symbolizer.lookup(sites.module.path, sites.module.build_id, sites.plain);
    CHECK(again.status == Status::Ok);
    check_plain(again, sites);
  }
  SUBCASE("another build id: a mismatch and nothing else") {
    const Lookup other = symbolizer.lookup(sites.module.path, "0123456789abcdef0123456789abcdef01234567", sites.plain);
    CHECK(other.status == Status::BuildIdMismatch);
    CHECK(other.frames.empty());
    CHECK(other.symbol.empty());
  }
  SUBCASE("an address outside any function: no frames, no symbol") {
    const Lookup nowhere = symbolizer.lookup(sites.module.path, "", 0x10);
    CHECK(nowhere.status == Status::Ok);
    CHECK(nowhere.frames.empty());
    CHECK(nowhere.symbol.empty());
  }
}

TEST_CASE("dwarf lookup: a file's own .symtab, read straight, gives libdwfl's function symbols") {
  const Sites sites = known_sites();
  // This program's thousands of functions.
  CHECK(kob::dwarf::symbol_readers_agree_for_test(sites.module.path) > 1000);
  // Debian's libc has no .symtab (stripped): libdwfl reads its .dynsym instead.
  CHECK(kob::dwarf::symbol_readers_agree_for_test("/lib/x86_64-linux-gnu/libc.so.6") == -1);
}

TEST_CASE("dwarf lookup: missing, non-ELF and damaged files") {
  const Sites sites = known_sites();
  TempDir dir;
  kob::dwarf::Symbolizer symbolizer;

  CHECK(symbolizer.lookup((dir.path / "missing").string(), "", sites.plain).status == Status::NoFile);
  CHECK(symbolizer.lookup(dir.path.string(), "", sites.plain).status == Status::NoFile);
  CHECK(symbolizer.lookup("/dev/null", "", sites.plain).status == Status::NoFile);
  CHECK(symbolizer.lookup((dir.path / "missing").string(), "abcd", sites.plain).status == Status::NoFile);

  // A lookup into a damaged file ends; what it finds does not matter.
  auto survives = [&](const fs::path& file) {
    const Lookup a = symbolizer.lookup(file.string(), "", sites.plain);
    const Lookup b = symbolizer.lookup(file.string(), "", sites.inlined);
    for (std::uint64_t at = 0; at < 0x100000; at += 0x1000) (void)symbolizer.lookup(file.string(), "", at);
    return std::make_pair(a.status, b.status);
  };

  const fs::path truncated = dir.path / "truncated";
  fs::copy_file(sites.module.path, truncated);
  fs::resize_file(truncated, 1000);
  const auto truncated_status = survives(truncated);
  CHECK((truncated_status.first == Status::NoFile || truncated_status.first == Status::Ok));

  const fs::path noise = dir.path / "noise";
  {
    std::mt19937 random(19);
    std::ofstream out(noise, std::ios::binary);
    for (int i = 0; i < 65536; ++i) out.put(static_cast<char>(random()));
  }
  CHECK(survives(noise).first == Status::NoFile);

  const fs::path text = dir.path / "text";
  std::ofstream(text) << "#!/bin/sh\necho not elf\n";
  CHECK(survives(text).first == Status::NoFile);

  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    const fs::path scrambled = dir.path / ("scrambled-" + std::to_string(seed));
    fs::copy_file(sites.module.path, scrambled);
    damage_sections(scrambled,
                    {".debug_info", ".debug_abbrev", ".debug_line", ".debug_str_offsets", ".debug_rnglists",
                     ".debug_ranges", ".debug_addr", ".debug_aranges", ".symtab", ".strtab"},
                    seed);
    (void)survives(scrambled);
  }
}

TEST_CASE("dwarf lookup: stripped copies, a separate debug file, compressed debug sections") {
  if (run("command -v objcopy") != 0) {
    MESSAGE("objcopy (binutils) is missing: stripped and separate-debug copies not checked");
    return;
  }
  const Sites sites = known_sites();
  TempDir dir;
  kob::dwarf::Symbolizer symbolizer;
  const fs::path self = sites.module.path;

  SUBCASE("no debug information: no frames, the symbol table still names the function") {
    const fs::path copy = dir.path / "no-debug";
    REQUIRE(run("objcopy --strip-debug " + quoted(self) + " " + quoted(copy)) == 0);
    const Lookup plain = symbolizer.lookup(copy.string(), sites.module.build_id, sites.plain);
    const Lookup inlined = symbolizer.lookup(copy.string(), sites.module.build_id, sites.inlined);
    REQUIRE(plain.status == Status::Ok);
    CHECK(plain.frames.empty());
    CHECK(inlined.frames.empty());
    check_symbols(plain, inlined, sites);
  }
  SUBCASE("stripped of all symbols: only what .dynsym exports") {
    const fs::path copy = dir.path / "stripped";
    REQUIRE(run("objcopy --strip-all " + quoted(self) + " " + quoted(copy)) == 0);
    const Lookup plain = symbolizer.lookup(copy.string(), sites.module.build_id, sites.plain);
    REQUIRE(plain.status == Status::Ok);
    CHECK(plain.frames.empty());
    // An executable exports its functions only when linked with --export-dynamic.
    const bool exported = dlsym(RTLD_DEFAULT, "_ZN14kob_dwarf_test10plain_callEv") != nullptr;
    CHECK(plain.symbol == (exported ? "kob_dwarf_test::plain_call()" : ""));
  }
  SUBCASE("debug information in a separate file named by .gnu_debuglink") {
    const fs::path debug = dir.path / "linked.debug";
    const fs::path copy = dir.path / "linked";
    REQUIRE(run("objcopy --only-keep-debug " + quoted(self) + " " + quoted(debug)) == 0);
    REQUIRE(run("objcopy --strip-debug --add-gnu-debuglink=" + quoted(debug) + " " + quoted(self) + " " + quoted(copy)) == 0);
    const Lookup plain = symbolizer.lookup(copy.string(), sites.module.build_id, sites.plain);
    const Lookup inlined = symbolizer.lookup(copy.string(), sites.module.build_id, sites.inlined);
    REQUIRE(plain.status == Status::Ok);
    check_plain(plain, sites);
    check_inlined(inlined, sites);
    check_symbols(plain, inlined, sites);
  }
  SUBCASE("compressed debug sections") {
    const fs::path copy = dir.path / "compressed";
    REQUIRE(run("objcopy --compress-debug-sections=zlib " + quoted(self) + " " + quoted(copy)) == 0);
    const Lookup plain = symbolizer.lookup(copy.string(), sites.module.build_id, sites.plain);
    const Lookup inlined = symbolizer.lookup(copy.string(), sites.module.build_id, sites.inlined);
    REQUIRE(plain.status == Status::Ok);
    check_plain(plain, sites);
    check_inlined(inlined, sites);
  }
}

// The conversion's worst case: many distinct code addresses in one module. Run it with
// `unit_tests --no-skip -tc='*10^5*'`; KOB_DWARF_BENCH_MODULE names another module than this
// program (its executable segments are sampled).
TEST_CASE("dwarf lookup: 10^5 distinct addresses in one module" * doctest::skip()) {
  const char* chosen = std::getenv("KOB_DWARF_BENCH_MODULE");
  const std::string path = chosen != nullptr ? chosen : fs::read_symlink("/proc/self/exe").string();
  const auto ranges = code_ranges(path);
  REQUIRE(!ranges.empty());
  std::uint64_t span = 0;
  for (const auto& [start, end] : ranges) span += end - start;
  constexpr std::uint64_t kLookups = 100000;
  REQUIRE(span >= kLookups);

  std::vector<std::uint64_t> addresses;
  for (std::uint64_t i = 0; i < kLookups; ++i) {
    std::uint64_t offset = i * (span / kLookups) + 1;
    for (const auto& [start, end] : ranges) {
      if (offset < end - start) {
        addresses.push_back(start + offset);
        break;
      }
      offset -= end - start;
    }
  }

  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  kob::dwarf::Symbolizer symbolizer;
  std::uint64_t with_frames = 0, with_symbol = 0, inlined = 0;
  // The first pass opens the module and indexes every unit it touches; the second, over the same
  // addresses, costs only the lookups.
  double seconds[2] = {0, 0};
  for (double& pass : seconds) {
    with_frames = with_symbol = inlined = 0;
    const auto start_time = std::chrono::steady_clock::now();
    for (const std::uint64_t address : addresses) {
      const Lookup found = symbolizer.lookup(path, "", address);
      with_frames += !found.frames.empty();
      with_symbol += !found.symbol.empty();
      inlined += found.frames.size() > 1;
    }
    pass = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  MESSAGE(path << ": " << addresses.size() << " distinct addresses: first pass " << seconds[0] << " s ("
               << seconds[0] * 1e6 / static_cast<double>(addresses.size()) << " us each), again " << seconds[1]
               << " s; with frames " << with_frames << ", inlined " << inlined << ", with symbol " << with_symbol
               << "; peak RSS " << before.ru_maxrss / 1024 << " -> " << after.ru_maxrss / 1024 << " MiB");
}
