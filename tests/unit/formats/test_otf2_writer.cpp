// The OTF2 sink, read back by OTF2's own reader (otf2-print, Debian's otf2-tools).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "common/formats/otf2_writer.hpp"
#include "helpers.hpp"

namespace {

std::string otf2_print(const std::string& anchor) {
  std::string out;
  if (std::FILE* p = ::popen(("otf2-print '" + anchor + "' 2>/dev/null").c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("otf2 writer: regions and values known by address are the texts given, also when the next process's differ at the same address") {
  if (!kob::otf2::available() || std::system("command -v otf2-print >/dev/null 2>&1") != 0) {
    MESSAGE("no OTF2 library or no otf2-print: skipped");
    return;
  }
  const std::string dir = kob_test::temp_path("fixed.otf2");
  kob::otf2::ArchiveSink sink;
  // One buffer for both processes' texts, of the same length: a merge's later rank may hold its
  // names where the earlier one's were.
  std::string name(64, '\0'), value(64, '\0');
  for (int process = 0; process < 2; ++process) {
    name.assign(process == 0 ? "kernel of process 1" : "kernel of process 2");
    value.assign(process == 0 ? "where value 1" : "where value 2");
    sink.next_process("host", process);
    kob_test::feed_fixed_texts(sink, process, name, value);
    CHECK(sink.finish(""));
  }
  std::string error;
  REQUIRE_MESSAGE(sink.write(dir, error), error);
  const std::string text = otf2_print(dir + "/traces.otf2");
  std::filesystem::remove_all(dir);
  // Each process's events name its own region and carry its own value.
  CHECK(count(text, "ENTER ") == 6);
  CHECK(count(text, "\"kernel of process 1\" <") == 6);  // 3 Enter + 3 Leave
  CHECK(count(text, "\"kernel of process 2\" <") == 6);
  CHECK(count(text, "\"where value 1\" <") == 3);
  CHECK(count(text, "\"where value 2\" <") == 3);
}
