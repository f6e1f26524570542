// The module map (src/common/record/module_map.hpp): its KV value's text and the parse of a
// damaged one, the lookup of an address, and in this process the executable and a library loaded
// and unloaded mid-run, in the map and in the raw trace (the parent's and a fork child's).
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/record/module_map.hpp"
#include "common/record/raw_trace.hpp"
#include "common/record/recorder.hpp"
#include "common/timeline/raw_reader.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;
namespace modules = kob::modules;
using modules::Module;
using kob_test::wait_child;

namespace {

Module module(std::string path, std::uint64_t bias, std::string build_id,
              std::vector<std::pair<std::uint64_t, std::uint64_t>> code) {
  Module m;
  m.path = std::move(path);
  m.bias = bias;
  m.build_id = std::move(build_id);
  m.code = std::move(code);
  return m;
}

bool same(const Module& a, const Module& b) {
  return a.path == b.path && a.bias == b.bias && a.build_id == b.build_id && a.code == b.code;
}

std::string tmp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kob-module-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

struct RemoveDir {
  ~RemoveDir() {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("kob-module-test-" + std::to_string(getpid())), ec);
  }
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// A system library this process has not loaded, dlopen'ed, and a function of it.
struct Loaded {
  void* handle = nullptr;
  std::string name;
  std::uint64_t function = 0;
};

Loaded load_fresh_library(const std::string& other_than = "") {
  // Libraries nothing of ours links (the first ones especially), each with a function it defines.
  static const std::pair<const char*, const char*> kCandidates[] = {
      {"libcrypt.so.1", "crypt"},       {"libexpat.so.1", "XML_ParserCreate"}, {"libgmp.so.10", "__gmpz_init"},
      {"libffi.so.8", "ffi_call"},      {"libbz2.so.1", "BZ2_bzlibVersion"},   {"libzstd.so.1", "ZSTD_versionNumber"},
      {"libz.so.1", "zlibVersion"},
  };
  for (const auto& [name, symbol] : kCandidates) {
    if (name == other_than || dlopen(name, RTLD_NOW | RTLD_NOLOAD) != nullptr) continue;
    void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) continue;
    if (void* fn = dlsym(h, symbol)) return {h, name, reinterpret_cast<std::uint64_t>(fn)};
    dlclose(h);
  }
  return {};
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The `module` KV entries of a raw trace, in file order, parsed; keys checked to be 1, 2, ...
std::vector<Module> modules_in_file(const std::string& path) {
  kob::raw::Reader reader;
  std::string error;
  REQUIRE_MESSAGE(reader.open(path, error), error);
  std::vector<Module> out;
  for (const kob::raw::Kv& kv : reader.kv()) {
    if (kv.section != modules::kSection) continue;
    CHECK(kv.key == std::to_string(out.size() + 1));
    const std::optional<Module> m = modules::parse(kv.value);
    REQUIRE(m.has_value());
    out.push_back(*m);
  }
  return out;
}

}  // namespace

TEST_CASE("module map: format and parse round-trip, the path keeping its spaces") {
  const Module m = module("/opt/my libs/libx.so", 0x7f12a0000000, "0123456789abcdef0123456789abcdef01234567",
                          {{0x7f12a0001000, 0x7f12a0005abc}, {0x7f12a0100000, 0x7f12a0100010}});
  CHECK(modules::format(m) ==
        "7f12a0000000 0123456789abcdef0123456789abcdef01234567 7f12a0001000-7f12a0005abc,7f12a0100000-7f12a0100010 "
        "/opt/my libs/libx.so");
  const auto back = modules::parse(modules::format(m));
  REQUIRE(back.has_value());
  CHECK(same(*back, m));

  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (const Module& other : {module("/a", 0, "", {{0, 1}}), module(" lead and trail ", kMax, "ab", {{kMax - 1, kMax}}),
                              module("/no/code", 5, "", {})}) {
    CAPTURE(modules::format(other));
    const auto parsed = modules::parse(modules::format(other));
    REQUIRE(parsed.has_value());
    CHECK(same(*parsed, other));
  }
  CHECK(modules::format(module("/a", 0, "", {{0, 1}})) == "0 - 0-1 /a");
  CHECK(modules::format(module("/no/code", 5, "", {})) == "5 - - /no/code");
  // Written lowercase; read either way.
  const auto upper = modules::parse("AB CDEF 1-2 /x");
  REQUIRE(upper.has_value());
  CHECK(upper->bias == 0xab);
  CHECK(upper->build_id == "cdef");
}

TEST_CASE("module map: a damaged value is rejected, never misread") {
  for (const char* bad : {"", " ", "1", "1 - 1-2", "1 - 1-2 ", "1  - 1-2 /p", " 1 - 1-2 /p", "zz - 1-2 /p",
                          "1 abc 1-2 /p", "1 xyzw 1-2 /p", "1 - 2-1 /p", "1 - 12 /p", "1 - 1- /p", "1 - -2 /p",
                          "1 - 1-2, /p", "1 - 1-2,,3-4 /p", "1 - ,1-2 /p", "1 - 1-2-3 /p", "0x1 - 1-2 /p",
                          "10000000000000000 - 1-2 /p", "1 - 1-ffffffffffffffffff /p", "1 - 1-2\t/p", "-1 - 1-2 /p",
                          "1 -- 1-2 /p"}) {
    CAPTURE(bad);
    CHECK_FALSE(modules::parse(bad).has_value());
  }
  // Random damage to a good value: never a crash, and whatever still parses reads back the same.
  const std::string good = modules::format(module("/usr/lib/libq.so", 0x7f0000000000, "beef",
                                                  {{0x7f0000001000, 0x7f0000002000}, {0x7f0000003000, 0x7f0000004000}}));
  std::mt19937 rng(19);
  const std::string alphabet = "0123456789abcdefABCDEF-, /x\t\n\0\xff";
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 4); break;
        default: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    if (const auto m = modules::parse(s)) {
      ++parsed;
      const auto again = modules::parse(modules::format(*m));
      REQUIRE(again.has_value());
      CHECK(same(*again, *m));
      for (const auto& [start, end] : m->code) CHECK(start <= end);
    }
  }
  CHECK(parsed > 0);  // some edits (in the path, a digit for a digit) leave a valid value
}

TEST_CASE("module map: find takes the module whose code holds the address, the later one where two did") {
  const std::vector<Module> list = {
      module("/old.so", 0x1000, "", {{0x1000, 0x3000}}),
      module("/exe", 0x10000, "", {{0x11000, 0x12000}, {0x14000, 0x15000}}),
      module("/new.so", 0x1000, "", {{0x2000, 0x4000}}),  // loaded where /old.so was, after it went
  };
  CHECK(modules::find(list, 0x1000)->path == "/old.so");
  CHECK(modules::find(list, 0x1fff)->path == "/old.so");
  CHECK(modules::find(list, 0x2000)->path == "/new.so");
  CHECK(modules::find(list, 0x2fff)->path == "/new.so");
  CHECK(modules::find(list, 0x3fff)->path == "/new.so");
  CHECK(modules::find(list, 0x4000) == nullptr);  // the end is not in it
  CHECK(modules::find(list, 0x14800)->path == "/exe");
  CHECK(modules::find(list, 0x13000) == nullptr);  // between two segments
  CHECK(modules::find(list, 0) == nullptr);
  CHECK(modules::find({}, 0x2000) == nullptr);
}

TEST_CASE("module map: this process's executable and a library loaded and unloaded mid-run, in the map and the raw trace") {
  RemoveDir remove_dir;
  kob_test::RawReset reset;
  const std::string path = tmp_path("modules.kob");
  REQUIRE(kob::raw::open(path));
  modules::poll();  // raw::open polled already: nothing new
  CHECK(modules::watching());

  std::vector<Module> now = modules::seen();
  REQUIRE_FALSE(now.empty());
  // The executable, with this test's own code in it, and a build id when it was linked with one.
  const Module* exe = modules::find(now, reinterpret_cast<std::uint64_t>(&load_fresh_library));
  REQUIRE(exe != nullptr);
  CHECK(exe->path == self_exe());
  CHECK(&now.front() == exe);  // the first object the loader lists
  // The C library: a file path, its build id read from memory (Debian's libc has one).
  const Module* libc = modules::find(now, reinterpret_cast<std::uint64_t>(dlsym(RTLD_DEFAULT, "getpid")));
  REQUIRE(libc != nullptr);
  CHECK(libc->path.find("libc.so") != std::string::npos);
  CHECK(libc->build_id.size() >= 16);
  CHECK(libc->build_id.find_first_not_of("0123456789abcdef") == std::string::npos);
  for (const Module& m : now) {
    CAPTURE(m.path);
    CHECK(m.path.find('/') == 0);  // no vDSO
    CHECK_FALSE(m.code.empty());
  }
  const std::size_t at_start = now.size();

  // Loaded after the start: in the map after a poll, and after its dlclose still.
  Loaded lib = load_fresh_library();
  REQUIRE_MESSAGE(lib.handle != nullptr, "no candidate library to dlopen");
  CAPTURE(lib.name);
  modules::poll();
  now = modules::seen();
  const Module* found = modules::find(now, lib.function);
  REQUIRE(found != nullptr);
  CHECK(ends_with(found->path, "/" + lib.name));
  CHECK(found->bias != 0);
  const std::string lib_path = found->path;
  REQUIRE(dlclose(lib.handle) == 0);
  modules::poll();
  now = modules::seen();
  found = modules::find(now, lib.function);
  REQUIRE(found != nullptr);
  CHECK(found->path == lib_path);

  // The writer thread's passes find a library without being asked.
  Loaded second = load_fresh_library(lib.name);
  if (second.handle != nullptr) {
    CAPTURE(second.name);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (modules::find(modules::seen(), second.function) == nullptr && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(modules::find(modules::seen(), second.function) != nullptr);
    dlclose(second.handle);
  }
  // A poll with nothing changed adds nothing.
  const std::size_t before = modules::seen().size();
  modules::poll();
  CHECK(modules::seen().size() == before);
  CHECK(before >= at_start + 1);

  // The file holds each one once, numbered in the order seen, as seen() has them.
  CHECK(kob::raw::finish());
  const std::vector<Module> all = modules::seen();
  const std::vector<Module> in_file = modules_in_file(path);
  REQUIRE(in_file.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(same(in_file[i], all[i]));
}

TEST_CASE("module map: a fork child's raw trace repeats its parent's modules, then its own") {
  RemoveDir remove_dir;
  kob_test::RawReset reset;
  const std::string parent_path = tmp_path("parent.kob"), child_path = tmp_path("child.kob");
  REQUIRE(kob::raw::open(parent_path));
  modules::poll();
  const std::vector<Module> parents = modules::seen();
  REQUIRE_FALSE(parents.empty());

  kob::recorder::before_fork();
  kob::raw::before_fork();  // the module map's lock too
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    kob::raw::after_fork_child(child_path);
    kob::recorder::after_fork_child();
    const Loaded lib = load_fresh_library();
    // No writer thread here: finish() polls; its file gets the parent's entries and this one.
    kob::raw::finish();
    const std::vector<Module> mine = modules::seen();
    const bool has_lib = lib.handle != nullptr && modules::find(mine, lib.function) != nullptr;
    _exit(has_lib && mine.size() == parents.size() + 1 ? 0 : 3);
  }
  kob::raw::after_fork_parent();
  kob::recorder::after_fork_parent();
  const int status = wait_child(child);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const std::vector<Module> in_child = modules_in_file(child_path);
  REQUIRE(in_child.size() == parents.size() + 1);
  for (std::size_t i = 0; i < parents.size(); ++i) CHECK(same(in_child[i], parents[i]));
  // The parent never saw the child's library.
  CHECK(modules::seen().size() == parents.size());
  CHECK(kob::raw::finish());
}
