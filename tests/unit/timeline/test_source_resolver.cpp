// A code address to the contract's `source` text and the short label of slice names, through a
// module map: this test program's own code (built with -g in every buildtype, tests/unit/meson.build),
// a module rebuilt since the run, an address in no module, the raw trace's `module` entries, and
// the per-consumer cache.
#include <doctest/doctest.h>

#include <link.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/record/module_map.hpp"
#include "common/timeline/source_resolver.hpp"

namespace kob_resolver_test {

[[gnu::noinline]] void* return_address() {
  asm volatile("");
  return __builtin_return_address(0);
}

struct Site {
  void* ra;  // what OMPT would hand as codeptr_ra for a runtime call on `line`
  int line;
};

// clang-format off
[[gnu::noinline]] Site directive() {
  Site s{return_address(), __LINE__};
  return s;
}

static inline __attribute__((always_inline)) Site inlined_directive() {
  return Site{return_address(), __LINE__};
}

[[gnu::noinline]] Site caller(int* line) {
  Site s = inlined_directive(); *line = __LINE__;
  return s;
}
// clang-format on

}  // namespace kob_resolver_test

namespace {

using kob::SourceLocation;
using kob::SourceResolver;
using kob::modules::Module;

// This program as the module map has it (the code segments from the loaded program headers).
Module this_program(const void* inside) {
  struct Found {
    std::uintptr_t address;
    Module m;
  } found{reinterpret_cast<std::uintptr_t>(inside), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* f = static_cast<Found*>(data);
        Module m;
        m.bias = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
            m.code.push_back({info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
        }
        if (!m.contains(f->address)) return 0;
        m.path = "/proc/self/exe";
        f->m = m;
        return 1;
      },
      &found);
  return found.m;
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TEST_CASE("source resolver: function, file and line; an inlined directive with its caller") {
  const kob_resolver_test::Site plain = kob_resolver_test::directive();
  int call_line = 0;
  const kob_resolver_test::Site inl = kob_resolver_test::caller(&call_line);
  const Module m = this_program(plain.ra);
  REQUIRE(!m.code.empty());
  SourceResolver resolver({m});
  const std::uint64_t at = reinterpret_cast<std::uintptr_t>(plain.ra);
  const SourceLocation& l = resolver.at(at);
  CHECK(l.function == "kob_resolver_test::directive()");
  CHECK(l.line == static_cast<std::uint32_t>(plain.line));
  CHECK(l.caller.empty());
  CHECK(l.offset == at - 1 - m.bias);
  CHECK(l.source == "kob_resolver_test::directive() (" + l.file + ":" + std::to_string(plain.line) + ")");
  CHECK(l.label == "kob_resolver_test::directive test_source_resolver.cpp:" + std::to_string(plain.line));
  CHECK(l.file.size() > 24);
  CHECK(l.file.substr(l.file.size() - 24) == "test_source_resolver.cpp");
  CHECK(&resolver.at(at) == &l);  // once per distinct address

  const SourceLocation& i = resolver.at(reinterpret_cast<std::uintptr_t>(inl.ra));
  CHECK(i.function == "kob_resolver_test::inlined_directive()");
  CHECK(i.line == static_cast<std::uint32_t>(inl.line));
  CHECK(i.caller == "kob_resolver_test::caller(int*)");
  CHECK(i.source == "kob_resolver_test::inlined_directive() (" + i.file + ":" + std::to_string(inl.line) +
                        ") in kob_resolver_test::caller(int*)");
  CHECK(i.label == "kob_resolver_test::inlined_directive test_source_resolver.cpp:" + std::to_string(inl.line));
  CHECK(!i.same_place(l));
  CHECK(resolver.distinct() == 2);
}

TEST_CASE("source resolver: a rebuilt module is not guessed at; an address in no module stays a number") {
  const kob_resolver_test::Site plain = kob_resolver_test::directive();
  Module m = this_program(plain.ra);
  m.build_id = "00112233445566778899aabbccddeeff00112233";  // not this program's
  SourceResolver resolver({m});
  const std::uint64_t at = reinterpret_cast<std::uintptr_t>(plain.ra);
  const SourceLocation& l = resolver.at(at);
  CHECK(l.line == 0);
  CHECK(l.function.empty());
  CHECK(l.source == "exe+" + hex(at - 1 - m.bias));
  CHECK(l.label == l.source);

  const std::uint64_t nowhere = 0x10;  // below any module
  const SourceLocation& n = resolver.at(nowhere);
  CHECK(n.source == "0x10");
  CHECK(n.module.empty());
  CHECK(n.offset == nowhere - 1);
  CHECK(!n.same_place(resolver.at(0x20)));  // bare addresses are told apart
  CHECK(!resolver.at(0).known());
}

TEST_CASE("source resolver: the module map from the raw trace's entries, later entries of a key winning") {
  Module a, b;
  a.path = "/lib/a.so";
  a.bias = 0x1000;
  a.code = {{0x2000, 0x3000}};
  b = a;
  b.path = "/lib/b.so";
  const std::vector<kob::raw::Kv> facts = {{"module", "2", kob::modules::format(b)},
                                           {"kob", "exe", "x"},
                                           {"module", "1", kob::modules::format(a)},
                                           {"module", "1", "garbage"},  // a damaged entry: ignored
                                           {"module", "x", kob::modules::format(a)}};
  const std::vector<Module> got = SourceResolver::modules_from(facts);
  REQUIRE(got.size() == 2);
  CHECK(got[0].path == "/lib/a.so");  // by number: the order they were seen in
  CHECK(got[1].path == "/lib/b.so");
}

TEST_CASE("source cache: one consumer's table gives the resolver's locations, also after it grows") {
  SourceResolver resolver({});
  kob::SourceCache cache(&resolver);
  kob::SourceCache none;
  CHECK(!none.enabled());
  CHECK(!none.at(0x1234).known());
  std::vector<const SourceLocation*> first;
  for (std::uint64_t a = 1; a <= 5000; ++a) first.push_back(&cache.at(a * 64));
  for (std::uint64_t a = 1; a <= 5000; ++a) {
    CHECK(&cache.at(a * 64) == first[a - 1]);
    CHECK(&resolver.at(a * 64) == first[a - 1]);
  }
  CHECK(first[99]->source == hex(100 * 64));
  cache.slot(64).mine = 7;
  CHECK(cache.slot(64).mine == 7);
  CHECK(resolver.distinct() == 5000);
}
