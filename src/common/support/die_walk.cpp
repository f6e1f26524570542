#include "common/support/die_walk.hpp"

#include <dwarf.h>

namespace kob::dwarf {

namespace {

// Abbreviation codes are numbered from 1, densely in what compilers emit; a larger one is a file
// this reader leaves to libdw.
constexpr std::uint64_t kMaxCode = 1u << 16;

}  // namespace

bool DieWalk::open(Dwarf_Die* die) {
  Dwarf_Die cudie;
  std::uint8_t address_size = 0, offset_size = 0;
  if (dwarf_diecu(die, &cudie, &address_size, &offset_size) == nullptr) return false;
  Dwarf_Die same;
  Dwarf_Half version = 0;
  if (dwarf_cu_die(cudie.cu, &same, &version, nullptr, nullptr, nullptr, nullptr, nullptr) == nullptr) return false;
  if (version < 2 || version > 5 || (address_size != 4 && address_size != 8) || (offset_size != 4 && offset_size != 8))
    return false;
  version_ = version;
  address_size_ = address_size;
  offset_size_ = offset_size;
  // The unit's bounds: its header's offset (the unit DIE's, less its place in the unit) and the
  // next unit's.
  Dwarf* dbg = dwarf_cu_getdwarf(cudie.cu);
  const Dwarf_Off die_offset = dwarf_dieoffset(&cudie), in_unit = dwarf_cuoffset(&cudie);
  if (dbg == nullptr || cudie.addr == nullptr || in_unit > die_offset) return false;
  Dwarf_Off next = 0;
  std::size_t header = 0;
  if (dwarf_next_unit(dbg, die_offset - in_unit, &next, &header, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) != 0 ||
      next <= die_offset)
    return false;
  begin_ = static_cast<const std::uint8_t*>(cudie.addr);
  base_ = begin_ - die_offset;
  end_ = base_ + next;
  // The unit's abbreviations, in the order they are declared, until the table's end.
  abbrevs_.clear();
  forms_.clear();
  Dwarf_Off at = 0;
  for (std::size_t n = 0; n < kMaxCode; ++n) {
    std::size_t length = 0;
    Dwarf_Abbrev* a = dwarf_getabbrev(&cudie, at, &length);
    if (a == DWARF_END_ABBREV) return true;
    if (a == nullptr || length == 0) return false;
    at += length;
    const unsigned code = dwarf_getabbrevcode(a);
    std::size_t count = 0;
    if (code == 0 || code >= kMaxCode || dwarf_getattrcnt(a, &count) != 0) return false;
    if (code >= abbrevs_.size()) abbrevs_.resize(code + 1);
    Abbrev& e = abbrevs_[code];
    e = Abbrev{};
    e.known = true;
    e.tag = dwarf_getabbrevtag(a);
    e.children = dwarf_abbrevhaschildren(a) == 1;
    e.first = static_cast<std::uint32_t>(forms_.size());
    for (std::size_t i = 0; i < count; ++i) {
      unsigned name = 0, form = 0;
      Dwarf_Sword data = 0;
      Dwarf_Off offset = 0;
      if (dwarf_getabbrevattr_data(a, i, &name, &form, &data, &offset) != 0) return false;
      e.code = e.code || name == DW_AT_low_pc || name == DW_AT_ranges;
      e.linkage = e.linkage || name == DW_AT_linkage_name || name == DW_AT_MIPS_linkage_name;
      const int size = fixed_size(form);
      if (size == -2) return false;
      if (size >= 0) {
        e.fixed += static_cast<std::uint32_t>(size);
      } else {
        forms_.push_back({e.fixed, static_cast<std::uint16_t>(form)});
        e.fixed = 0;
      }
    }
    e.count = static_cast<std::uint32_t>(forms_.size()) - e.first;
  }
  return false;
}

// The bytes of a value of `form`, where they do not depend on the value: -1 where they do, -2 for
// a form this reader does not know.
int DieWalk::fixed_size(unsigned form) const {
  switch (form) {
    case DW_FORM_flag_present:
    case DW_FORM_implicit_const: return 0;
    case DW_FORM_data1:
    case DW_FORM_ref1:
    case DW_FORM_flag:
    case DW_FORM_strx1:
    case DW_FORM_addrx1: return 1;
    case DW_FORM_data2:
    case DW_FORM_ref2:
    case DW_FORM_strx2:
    case DW_FORM_addrx2: return 2;
    case DW_FORM_strx3:
    case DW_FORM_addrx3: return 3;
    case DW_FORM_data4:
    case DW_FORM_ref4:
    case DW_FORM_ref_sup4:
    case DW_FORM_strx4:
    case DW_FORM_addrx4: return 4;
    case DW_FORM_data8:
    case DW_FORM_ref8:
    case DW_FORM_ref_sig8:
    case DW_FORM_ref_sup8: return 8;
    case DW_FORM_data16: return 16;
    case DW_FORM_addr: return address_size_;
    case DW_FORM_ref_addr: return version_ == 2 ? address_size_ : offset_size_;
    case DW_FORM_strp:
    case DW_FORM_line_strp:
    case DW_FORM_sec_offset:
    case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt:
    case DW_FORM_GNU_strp_alt: return offset_size_;
    case DW_FORM_block1:
    case DW_FORM_block2:
    case DW_FORM_block4:
    case DW_FORM_block:
    case DW_FORM_exprloc:
    case DW_FORM_string:
    case DW_FORM_sdata:
    case DW_FORM_udata:
    case DW_FORM_ref_udata:
    case DW_FORM_strx:
    case DW_FORM_addrx:
    case DW_FORM_loclistx:
    case DW_FORM_rnglistx:
    case DW_FORM_GNU_addr_index:
    case DW_FORM_GNU_str_index:
    case DW_FORM_indirect: return -1;
    default: return -2;
  }
}

bool DieWalk::read_uleb(const std::uint8_t*& p, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; p < end_; shift += 7) {
    const std::uint8_t b = *p++;
    if (shift < 64) v |= std::uint64_t(b & 0x7f) << shift;
    if (b < 0x80) return true;
  }
  return false;
}

// Past a value of a variable-size form at p.
bool DieWalk::skip_form(const std::uint8_t*& p, unsigned form) {
  std::uint64_t length = 0;
  switch (form) {
    case DW_FORM_block1:
      if (p >= end_) return false;
      length = *p++;
      break;
    case DW_FORM_block2:
      if (end_ - p < 2) return false;
      length = p[0] | std::uint64_t(p[1]) << 8;  // DWARF here is the machine's: little-endian x86-64
      p += 2;
      break;
    case DW_FORM_block4:
      if (end_ - p < 4) return false;
      length = p[0] | std::uint64_t(p[1]) << 8 | std::uint64_t(p[2]) << 16 | std::uint64_t(p[3]) << 24;
      p += 4;
      break;
    case DW_FORM_block:
    case DW_FORM_exprloc:
      if (!read_uleb(p, length)) return false;
      break;
    case DW_FORM_string:
      while (p < end_ && *p != 0) ++p;
      if (p >= end_) return false;
      ++p;
      return true;
    case DW_FORM_indirect: {
      std::uint64_t actual = 0;
      if (!read_uleb(p, actual) || actual == DW_FORM_indirect || actual > 0xffff) return false;
      const int size = fixed_size(static_cast<unsigned>(actual));
      if (size == -2) return false;
      if (size == -1) return skip_form(p, static_cast<unsigned>(actual));
      length = static_cast<std::uint64_t>(size);
      break;
    }
    default:  // the LEB128 numbers
      return read_uleb(p, length);
  }
  if (length > static_cast<std::uint64_t>(end_ - p)) return false;
  p += length;
  return true;
}

bool DieWalk::next(const std::uint8_t*& p, Die& d) {
  if (failed_) return false;
  const std::uint8_t* at = p;
  std::uint64_t code = 0;
  if (p < begin_ || !read_uleb(p, code)) {
    failed_ = true;
    return false;
  }
  if (code == 0) return false;
  if (code >= abbrevs_.size() || !abbrevs_[code].known) {
    failed_ = true;
    return false;
  }
  const Abbrev& a = abbrevs_[code];
  for (std::uint32_t i = 0; i < a.count; ++i) {
    const VariableForm& v = forms_[a.first + i];
    if (v.before > static_cast<std::uint64_t>(end_ - p)) {
      failed_ = true;
      return false;
    }
    p += v.before;
    if (!skip_form(p, v.form)) {
      failed_ = true;
      return false;
    }
  }
  if (a.fixed > static_cast<std::uint64_t>(end_ - p)) {
    failed_ = true;
    return false;
  }
  p += a.fixed;
  d.offset = static_cast<Dwarf_Off>(at - base_);
  d.tag = a.tag;
  d.children = a.children;
  d.code = a.code;
  d.linkage = a.linkage;
  return true;
}

void DieWalk::skip_children(const std::uint8_t*& p) {
  Die d;
  for (std::size_t depth = 1; depth != 0;) {
    if (next(p, d)) {
      depth += d.children ? 1 : 0;
    } else {
      if (failed_) return;
      --depth;
    }
  }
}

const std::uint8_t* DieWalk::children_of(Dwarf_Off offset) {
  if (failed_ || offset >= static_cast<Dwarf_Off>(end_ - base_)) {
    failed_ = true;
    return nullptr;
  }
  const std::uint8_t* p = base_ + offset;
  Die d;
  if (!next(p, d)) {
    failed_ = true;  // a null entry where a DIE was named
    return nullptr;
  }
  return d.children ? p : nullptr;
}

}  // namespace kob::dwarf
