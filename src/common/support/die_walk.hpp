// A compilation unit's DIEs read from their own bytes, with a flat table of the unit's
// abbreviations: a DIE's tag, whether it has children, and where its attributes end cost a table
// lookup and the lengths of its variable-sized values. Through libdw each DIE costs a hash lookup
// of its abbreviation and a scan of its attributes, and dwarf_siblingof parses the whole subtree
// it skips (clang emits no DW_AT_sibling): indexing a unit of 3,700 DIEs took 4 M instructions.
// Only the walk is ours; what a DIE holds is still read through libdw (dwarf_offdie).
#pragma once

#include <elfutils/libdw.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kob::dwarf {

class DieWalk {
 public:
  struct Die {
    Dwarf_Off offset = 0;  // in the unit's section, as dwarf_dieoffset gives it
    unsigned tag = 0;
    bool children = false;
    bool code = false;     // has DW_AT_low_pc or DW_AT_ranges: may cover code (dwarf_ranges)
    bool linkage = false;  // has DW_AT_linkage_name or DW_AT_MIPS_linkage_name
  };

  // The unit of `die` (any DIE of it). False when its bytes or abbreviations are not what this
  // reader knows (a form it does not, an abbreviation code too large): walk it with libdw.
  bool open(Dwarf_Die* die);

  // Where the children of the DIE at `offset` begin (its attributes skipped); nullptr: none, or
  // unreadable (failed()).
  const std::uint8_t* children_of(Dwarf_Off offset);
  // The DIE at p, p moved past its attributes (to its first child, or its next sibling). False at
  // the end of a list of siblings (p moved past the null entry) or when unreadable (failed()).
  bool next(const std::uint8_t*& p, Die& d);
  // From the first child of a DIE, past the end of its children (their subtrees included).
  void skip_children(const std::uint8_t*& p);
  // The DIE at offset, as libdw's Dwarf_Die::addr holds it (a key into maps of DIEs).
  const void* addr(Dwarf_Off offset) const { return base_ + offset; }
  bool failed() const { return failed_; }

 private:
  struct Abbrev {
    unsigned tag = 0;
    bool known = false, children = false, code = false, linkage = false;
    std::uint32_t fixed = 0;             // the bytes of its fixed-size values after the last variable-size one
    std::uint32_t first = 0, count = 0;  // its variable-size values in forms_
  };
  // A variable-size value of an abbreviation: its form, and the bytes of the fixed-size values
  // between it and the one before (a value is found where the ones before it end).
  struct VariableForm {
    std::uint32_t before = 0;
    std::uint16_t form = 0;
  };
  bool skip_form(const std::uint8_t*& p, unsigned form);
  bool read_uleb(const std::uint8_t*& p, std::uint64_t& v);
  int fixed_size(unsigned form) const;  // -1: variable, -2: unknown

  const std::uint8_t* base_ = nullptr;  // the section's byte at offset 0
  const std::uint8_t* begin_ = nullptr;  // the unit's first DIE
  const std::uint8_t* end_ = nullptr;    // past the unit
  std::uint8_t address_size_ = 8, offset_size_ = 4;
  unsigned version_ = 4;
  std::vector<Abbrev> abbrevs_;  // by code
  std::vector<VariableForm> forms_;
  bool failed_ = false;
};

}  // namespace kob::dwarf
