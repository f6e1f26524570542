#include "common/record/module_map.hpp"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <tuple>

#include "common/record/raw_trace.hpp"

namespace kob::modules {

namespace {

// ---- the KV value's text ----

void append_hex(std::string& out, std::uint64_t v) {
  char buf[17];
  int n = 0;
  do {
    buf[n++] = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v != 0);
  while (n > 0) out += buf[--n];
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The whole of `text` as a hex number of at most 64 bits.
bool parse_hex(std::string_view text, std::uint64_t& out) {
  if (text.empty() || text.size() > 16) return false;
  out = 0;
  for (const char c : text) {
    const int d = hex_digit(c);
    if (d < 0) return false;
    out = (out << 4) | static_cast<std::uint64_t>(d);
  }
  return true;
}

// Cuts the next space-separated field off the front of `rest`.
bool next_field(std::string_view& rest, std::string_view& field) {
  const std::size_t space = rest.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  field = rest.substr(0, space);
  rest.remove_prefix(space + 1);
  return true;
}

// ---- reading the loaded objects ----

// One object as dl_iterate_phdr showed it, copied while the loader's lock is held (its memory may
// be unmapped once the walk returns).
struct Found {
  bool main_program = false;
  std::string name;
  std::uint64_t bias = 0;
  std::string build_id;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> code;
};

struct Walk {
  bool know_last = false;
  unsigned long long last_adds = 0, last_subs = 0;
  // Out:
  bool first = true;
  bool changed = false;
  bool failed = false;
  unsigned long long adds = 0, subs = 0;
  std::vector<Found> objects;
};

// Whether [vaddr, vaddr + size) lies in the file-backed part of a PT_LOAD segment: a note read
// there is mapped and holds the file's bytes.
bool in_loaded_file_part(const dl_phdr_info& info, ElfW(Addr) vaddr, std::uint64_t size) {
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && ph.p_vaddr <= vaddr && size <= ph.p_filesz && vaddr - ph.p_vaddr <= ph.p_filesz - size)
      return true;
  }
  return false;
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) & ~(a - 1); }

// The NT_GNU_BUILD_ID note's descriptor as lowercase hex, read from the object's mapped notes.
std::string build_id_of(const dl_phdr_info& info) {
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE || !in_loaded_file_part(info, ph.p_vaddr, ph.p_filesz)) continue;
    const char* p = reinterpret_cast<const char*>(info.dlpi_addr + ph.p_vaddr);
    std::uint64_t left = ph.p_filesz;
    const std::uint64_t align = ph.p_align == 8 ? 8 : 4;  // notes are padded to their segment's alignment
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) h;
      std::memcpy(&h, p, sizeof h);
      const std::uint64_t name_bytes = align_up(h.n_namesz, align);
      const std::uint64_t body = left - sizeof h;
      if (name_bytes > body || h.n_descsz > body - name_bytes) break;
      const char* name = p + sizeof h;
      const unsigned char* desc = reinterpret_cast<const unsigned char*>(name + name_bytes);
      if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 && h.n_descsz > 0) {
        std::string hex;
        for (std::uint32_t k = 0; k < h.n_descsz; ++k) {
          hex += "0123456789abcdef"[desc[k] >> 4];
          hex += "0123456789abcdef"[desc[k] & 0xf];
        }
        return hex;
      }
      const std::uint64_t entry = sizeof h + name_bytes + align_up(h.n_descsz, align);
      if (entry >= left) break;
      p += entry;
      left -= entry;
    }
  }
  return "";
}

// dl_iterate_phdr's callback. Runs under the loader's lock: copies what it needs and nothing
// else (no file access, no lock of ours). The counters are the same in every entry; the first
// entry's tell whether anything was loaded or unloaded since the last walk.
int on_object(dl_phdr_info* info, std::size_t size, void* data) {
  Walk& w = *static_cast<Walk*>(data);
  const bool main_program = w.first;
  if (w.first) {
    w.first = false;
    const bool has_counters = size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs;
    if (has_counters) {
      w.adds = info->dlpi_adds;
      w.subs = info->dlpi_subs;
      if (w.know_last && w.adds == w.last_adds && w.subs == w.last_subs) return 1;
    }
    w.changed = true;
  }
  try {
    Found f;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0 && ph.p_memsz != 0)
        f.code.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    if (f.code.empty()) return 0;
    f.main_program = main_program;
    f.name = info->dlpi_name != nullptr ? info->dlpi_name : "";
    f.bias = info->dlpi_addr;
    f.build_id = build_id_of(*info);
    w.objects.push_back(std::move(f));
  } catch (...) {
    w.failed = true;  // out of memory: the next poll walks again
    return 1;
  }
  return 0;
}

std::string executable_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<std::size_t>(n));
  // Removed or replaced since it started: its file, if rebuilt, is back at the plain path (the
  // build id then tells whether it is the same).
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0 &&
      access(path.c_str(), F_OK) != 0)
    path.resize(path.size() - kDeleted.size());
  return path;
}

// The file an object was loaded from, "" for an object without one. The loader names files by the
// path it opened, with a '/' in it; the vDSO has a bare name ("linux-vdso.so.1"). A file deleted
// since it was loaded is kept: its address ranges still name the module.
std::string file_path(const Found& f) {
  if (f.main_program) return executable_path();
  if (f.name.empty() || f.name.find('/') == std::string::npos || f.name.rfind("linux-vdso", 0) == 0 ||
      f.name.rfind("linux-gate", 0) == 0)
    return "";
  if (f.name[0] == '/') return f.name;
  // A relative path (dlopen("./libx.so")): against the working directory, while it is still the one
  // the loader saw, as near as we can tell.
  char real[PATH_MAX];
  return realpath(f.name.c_str(), real) != nullptr ? std::string(real) : f.name;
}

struct State {
  std::mutex mu;  // everything below; taken before the raw file's lock (poll writes KV entries)
  bool know_last = false;
  unsigned long long last_adds = 0, last_subs = 0;
  std::vector<Module> seen;
  // (path, bias, build id) of every module in `seen`: an object loaded again at the same place
  // is the same module.
  std::set<std::tuple<std::string, std::uint64_t, std::string>> known;
  std::atomic<bool> polled{false};
};

State& state() {
  static State* s = new State();  // never destroyed: the writer thread and exit handlers use it
  return *s;
}

}  // namespace

std::string format(const Module& m) {
  std::string out;
  append_hex(out, m.bias);
  out += ' ';
  out += m.build_id.empty() ? "-" : m.build_id;
  out += ' ';
  if (m.code.empty()) out += '-';
  for (std::size_t i = 0; i < m.code.size(); ++i) {
    if (i != 0) out += ',';
    append_hex(out, m.code[i].first);
    out += '-';
    append_hex(out, m.code[i].second);
  }
  out += ' ';
  out += m.path;
  return out;
}

std::optional<Module> parse(std::string_view value) {
  Module m;
  std::string_view rest = value, bias, build_id, code;
  if (!next_field(rest, bias) || !next_field(rest, build_id) || !next_field(rest, code) || rest.empty())
    return std::nullopt;
  if (!parse_hex(bias, m.bias)) return std::nullopt;
  if (build_id != "-") {
    if (build_id.size() % 2 != 0) return std::nullopt;
    for (const char c : build_id) {
      if (hex_digit(c) < 0) return std::nullopt;
      m.build_id += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    }
  }
  if (code != "-") {
    while (!code.empty()) {
      const std::size_t comma = code.find(',');
      const std::string_view range = code.substr(0, comma);
      code = comma == std::string_view::npos ? std::string_view{} : code.substr(comma + 1);
      if (comma != std::string_view::npos && code.empty()) return std::nullopt;  // a trailing comma
      const std::size_t dash = range.find('-');
      std::uint64_t start = 0, end = 0;
      if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), start) ||
          !parse_hex(range.substr(dash + 1), end) || end < start)
        return std::nullopt;
      m.code.emplace_back(start, end);
    }
  }
  m.path = std::string(rest);
  return m;
}

const Module* find(const std::vector<Module>& modules, std::uint64_t address) {
  for (auto it = modules.rbegin(); it != modules.rend(); ++it)
    if (it->contains(address)) return &*it;
  return nullptr;
}

void poll() {
  State& s = state();
  try {
    std::lock_guard<std::mutex> lock(s.mu);
    Walk w;
    w.know_last = s.know_last;
    w.last_adds = s.last_adds;
    w.last_subs = s.last_subs;
    dl_iterate_phdr(on_object, &w);
    s.polled.store(true, std::memory_order_release);
    if (!w.changed || w.failed) return;
    // Outside the loader's lock from here: the KV entries take the raw file's lock and may write.
    for (Found& f : w.objects) {
      Module m;
      m.path = file_path(f);
      if (m.path.empty()) continue;
      m.bias = f.bias;
      m.build_id = std::move(f.build_id);
      m.code = std::move(f.code);
      if (!s.known.emplace(m.path, m.bias, m.build_id).second) continue;
      s.seen.push_back(std::move(m));
      raw::add_kv(kSection, std::to_string(s.seen.size()), format(s.seen.back()));
    }
    s.know_last = true;
    s.last_adds = w.adds;
    s.last_subs = w.subs;
  } catch (...) {
    // Out of memory: the map stays as it was; the next poll looks again.
  }
}

bool watching() { return state().polled.load(std::memory_order_acquire); }

std::vector<Module> seen() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.seen;
}

void before_fork() { state().mu.lock(); }
void after_fork_parent() { state().mu.unlock(); }

void after_fork_child() {
  State& s = state();
  s.know_last = false;
  s.mu.unlock();
}

void reset_for_test() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.know_last = false;
  s.last_adds = s.last_subs = 0;
  s.seen.clear();
  s.known.clear();
  s.polled.store(false);
}

}  // namespace kob::modules
