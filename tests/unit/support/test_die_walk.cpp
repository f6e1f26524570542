// The DIE walker against libdw's own walk (dwarf_child, dwarf_siblingof) over every unit of this
// test program, built with -g (tests/unit/meson.build): the same DIEs, tags and children, in the
// same order; and over copies with scrambled bytes, where the walk ends.
#include <doctest/doctest.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "common/support/die_walk.hpp"

namespace {

struct Seen {
  Dwarf_Off offset;
  unsigned tag;
  bool children;
  bool operator==(const Seen&) const = default;
};

// Preorder through libdw.
void libdw_walk(Dwarf_Die* parent, std::vector<Seen>& out, int depth) {
  Dwarf_Die child;
  if (depth > 256 || dwarf_child(parent, &child) != 0) return;
  do {
    out.push_back({dwarf_dieoffset(&child), static_cast<unsigned>(dwarf_tag(&child)), dwarf_haschildren(&child) == 1});
    libdw_walk(&child, out, depth + 1);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// Preorder through the walker, from the first child at p; false where it stopped short.
bool walker_walk(kob::dwarf::DieWalk& w, const std::uint8_t*& p, std::vector<Seen>& out, int depth) {
  kob::dwarf::DieWalk::Die d;
  while (w.next(p, d)) {
    out.push_back({d.offset, d.tag, d.children});
    if (d.children && (depth > 256 || !walker_walk(w, p, out, depth + 1))) return false;
  }
  return !w.failed();
}

std::vector<char> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("die walk: every unit of this program, the same DIEs in the same order as libdw's walk") {
  const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  Dwarf* dwarf = dwarf_begin(fd, DWARF_C_READ);
  REQUIRE(dwarf != nullptr);
  Dwarf_CU* cu = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  std::uint8_t unit_type = 0;
  Dwarf_Die unit, sub;
  std::size_t units = 0, dies = 0, with_code = 0;
  while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &unit, &sub) == 0) {
    cu = next;
    if (unit_type != DW_UT_compile) continue;
    CAPTURE(dwarf_dieoffset(&unit));
    kob::dwarf::DieWalk w;
    REQUIRE(w.open(&unit));
    std::vector<Seen> expected, got;
    libdw_walk(&unit, expected, 0);
    const std::uint8_t* p = w.children_of(dwarf_dieoffset(&unit));
    REQUIRE(p != nullptr);
    CHECK(walker_walk(w, p, got, 0));
    REQUIRE(got.size() == expected.size());
    CHECK(got == expected);
    // Subprograms with code: what the index asks dwarf_ranges about.
    for (const Seen& s : got)
      if (s.tag == DW_TAG_subprogram) {
        Dwarf_Die die;
        REQUIRE(dwarf_offdie(dwarf, s.offset, &die) != nullptr);
        Dwarf_Addr low = 0;
        with_code += dwarf_lowpc(&die, &low) == 0 ? 1 : 0;
      }
    ++units;
    dies += got.size();
  }
  // This file alone holds dozens of functions; the program links several units built with -g.
  CHECK(units >= 2);
  CHECK(dies > 1000);
  CHECK(with_code > 20);
  dwarf_end(dwarf);
  ::close(fd);
}

TEST_CASE("die walk: scrambled debug information ends the walk (under ASan: no read past the unit)") {
  elf_version(EV_CURRENT);
  const std::vector<char> original = read_file("/proc/self/exe");
  REQUIRE(original.size() > 4096);
  std::size_t walked = 0, stopped = 0;
  for (std::uint32_t seed = 1; seed <= 24; ++seed) {
    CAPTURE(seed);
    std::vector<char> bytes = original;
    // Scramble bytes after the ELF header, where the debug sections of a -g build take most room.
    std::mt19937 random(seed);
    for (int i = 0; i < 64; ++i) bytes[64 + random() % (bytes.size() - 64)] ^= static_cast<char>(1 + random() % 255);
    Elf* elf = elf_memory(bytes.data(), bytes.size());
    if (elf == nullptr) continue;
    Dwarf* dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nullptr);
    if (dwarf == nullptr) {
      elf_end(elf);
      continue;
    }
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Dwarf_Half version = 0;
    std::uint8_t unit_type = 0;
    Dwarf_Die unit, sub;
    for (int n = 0; n < 10000 && dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &unit, &sub) == 0; ++n) {
      cu = next;
      kob::dwarf::DieWalk w;
      if (unit.addr == nullptr || !w.open(&unit)) continue;
      const std::uint8_t* p = w.children_of(dwarf_dieoffset(&unit));
      if (p == nullptr) continue;
      std::vector<Seen> got;
      if (walker_walk(w, p, got, 0)) ++walked;
      else ++stopped;
    }
    dwarf_end(dwarf);
    elf_end(elf);
  }
  CHECK(walked + stopped > 24);
}
