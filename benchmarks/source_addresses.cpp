// Writes a raw trace for the cost of resolving code addresses at conversion (issue 19, item 6):
// N OpenMP parallel regions outside any Kokkos kernel, on 2 threads (begin, 2 implicit tasks,
// end), whose code addresses take D distinct values spread over the code of a real module file
// (MODULE, an ELF file with DWARF, e.g. the tool library itself), placed at a made-up load bias.
//   source_addresses PATH N D MODULE [--no-modules]
// --no-modules leaves the module map out: the same events, every address shown as a bare number,
// which is the conversion without symbolization to compare with.
#include <elf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "raw_test_writer.hpp"
#include "common/record/module_map.hpp"

using kob::Ev;
using kob::Record;
using kob_test::rec;

namespace {

constexpr std::uint64_t kBias = 0x7f1200000000;

// The file's first executable PT_LOAD as [vaddr, vaddr + filesz).
bool code_range(const std::string& path, std::uint64_t& start, std::uint64_t& end) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (f.size() < sizeof(Elf64_Ehdr)) return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, f.data(), sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    const std::size_t at = eh.e_phoff + std::size_t(i) * eh.e_phentsize;
    if (at + sizeof ph > f.size()) return false;
    std::memcpy(&ph, f.data() + at, sizeof ph);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
      start = ph.p_vaddr;
      end = ph.p_vaddr + ph.p_filesz;
      return true;
    }
  }
  return false;
}

void chunks(kob_test::RawTraceWriter& w, std::uint32_t thread, const std::vector<Record>& recs) {
  std::uint64_t seq = 0;
  for (std::size_t at = 0; at < recs.size(); at += 500)
    w.compact(thread, ++seq, std::vector<Record>(recs.begin() + long(at), recs.begin() + long(std::min(recs.size(), at + 500))));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: source_addresses PATH N D MODULE [--no-modules]\n");
    return 2;
  }
  const std::string path = argv[1], module = argv[4];
  const std::uint64_t n = std::strtoull(argv[2], nullptr, 10), d = std::strtoull(argv[3], nullptr, 10);
  const bool with_modules = !(argc > 5 && std::strcmp(argv[5], "--no-modules") == 0);
  std::uint64_t cs = 0, ce = 0;
  if (!code_range(module, cs, ce) || d == 0) {
    std::fprintf(stderr, "source_addresses: no code in %s\n", module.c_str());
    return 1;
  }
  kob_test::RawStart start;
  start.pid = 4242;
  start.clock = 0;  // ticks are ns
  start.tick = 1000;
  start.ns = 1000;
  kob_test::RawTraceWriter w(start);
  w.kv("kob", "exe", "source_addresses");
  w.kv("kob", "args", "--format=perfetto,chrome,summary,json");
  if (with_modules) {
    kob::modules::Module m;
    m.path = module;
    m.bias = kBias;
    m.code.push_back({kBias + cs, kBias + ce});
    w.kv(kob::modules::kSection, "1", kob::modules::format(m));
  }
  w.thread(0, 7000, 1);
  w.thread(1, 7001, 2);
  std::vector<Record> t0, t1;
  t0.push_back(rec(1000, Ev::OmpThreadBegin, 0, {}, 1));
  t1.push_back(rec(1001, Ev::OmpThreadBegin, 0, {}, 2));
  const std::uint64_t step = (ce - cs) / d ? (ce - cs) / d : 1;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t b = 2000 + i * 1000, id = i + 1;
    const std::uint64_t codeptr = kBias + cs + 1 + (i % d) * step;
    t0.push_back(rec(b, Ev::OmpParallelBegin, 2, {id, 0, 0, codeptr}));
    t0.push_back(rec(b + 100, Ev::OmpImplicitTaskBegin, 0, {id, 0, 2}, 2));
    t1.push_back(rec(b + 110, Ev::OmpImplicitTaskBegin, 1, {id, 0, 2}, 2));
    t1.push_back(rec(b + 800, Ev::OmpImplicitTaskEnd, 1, {id, 0}, 2));
    t0.push_back(rec(b + 810, Ev::OmpImplicitTaskEnd, 0, {id, 0}, 2));
    t0.push_back(rec(b + 900, Ev::OmpParallelEnd, 0, {id, 0, 0}));
  }
  chunks(w, 0, t0);
  chunks(w, 1, t1);
  const std::uint64_t end = 3000 + n * 1000;
  w.calib(end, end);
  w.end(end);
  return w.write(path) ? 0 : 1;
}
