#include "kob/elf_deps.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace kob::cli {

namespace {

// The string entries (DT_NEEDED, DT_RUNPATH, DT_RPATH) of an ELF file's dynamic section.
std::vector<std::string> dynamic_strings(const std::string& path, long tag) {
  std::vector<std::string> out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  elf_version(EV_CURRENT);
  if (Elf* e = elf_begin(fd, ELF_C_READ, nullptr)) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(e, scn)) != nullptr) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_DYNAMIC) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      const std::size_t n = sh.sh_entsize != 0 ? sh.sh_size / sh.sh_entsize : 0;
      for (std::size_t i = 0; data != nullptr && i < n; ++i) {
        GElf_Dyn dyn;
        if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag != tag) continue;
        if (const char* s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)) out.emplace_back(s);
      }
    }
    elf_end(e);
  }
  close(fd);
  return out;
}

void split_into(const std::string& list, char sep, std::vector<std::string>& out) {
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t end = list.find(sep, at);
    const std::string part = list.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!part.empty()) out.push_back(part);
    if (end == std::string::npos) break;
    at = end + 1;
  }
}

// The folders of /etc/ld.so.conf (and the files it includes, one level of globs).
void ld_so_conf(const std::string& file, std::vector<std::string>& out, int depth = 0) {
  std::ifstream in(file);
  for (std::string line; depth < 3 && std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    if (line.rfind("include", 0) == 0) {
      std::string pattern = line.substr(7);
      pattern.erase(0, pattern.find_first_not_of(" \t"));
      glob_t g{};
      if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i) ld_so_conf(g.gl_pathv[i], out, depth + 1);
      globfree(&g);
    } else if (!line.empty() && line[0] == '/') {
      out.push_back(line);
    }
  }
}

}  // namespace

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::vector<std::string> dirs;
  split_into(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ':', dirs);
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

std::vector<std::string> needed(const std::string& path) { return dynamic_strings(path, DT_NEEDED); }

std::vector<std::string> library_dirs(const std::string& program) {
  const std::string origin = program.find('/') == std::string::npos ? "." : program.substr(0, program.rfind('/'));
  std::vector<std::string> dirs;
  for (long tag : {long(DT_RPATH), long(DT_RUNPATH)})
    for (const std::string& p : dynamic_strings(program, tag)) split_into(p, ':', dirs);
  for (std::string& d : dirs)
    for (const char* o : {"$ORIGIN", "${ORIGIN}"})
      if (std::size_t at = d.find(o); at != std::string::npos) d.replace(at, std::strlen(o), origin);
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) split_into(ld, ':', dirs);
  ld_so_conf("/etc/ld.so.conf", dirs);
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"})
    dirs.emplace_back(d);
  return dirs;
}

std::string resolve_library(const std::string& name, const std::vector<std::string>& dirs) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), R_OK) == 0 ? name : "";
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/" + name;
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return "";
}

bool file_contains(const std::string& path, std::string_view bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool found = false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      found = memmem(p, static_cast<std::size_t>(st.st_size), bytes.data(), bytes.size()) != nullptr;
      munmap(p, static_cast<std::size_t>(st.st_size));
    }
  }
  close(fd);
  return found;
}

}  // namespace kob::cli
