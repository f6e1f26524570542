// Files written whole or not at all, through a temporary renamed at the end.
#include <doctest/doctest.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/support/atomic_file.hpp"
#include "helpers.hpp"

namespace af = kob::atomic_file;

namespace {

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.emplace_back(e->d_name);
    closedir(d);
  }
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool put(std::FILE* f, const char* text) { return std::fputs(text, f) >= 0; }

}  // namespace

TEST_CASE("a complete write leaves the final file only") {
  const kob_test::TempDir tmp;
  const std::string& dir = tmp.path();
  REQUIRE(!dir.empty());
  std::string error;
  CHECK(af::write(dir + "/a.json", [](std::FILE* f) { return put(f, "{}\n"); }, error));
  CHECK(error.empty());
  CHECK(slurp(dir + "/a.json") == "{}\n");
  CHECK(entries(dir) == std::vector<std::string>{"a.json"});
  // A second write replaces the file as a whole.
  CHECK(af::write(dir + "/a.json", [](std::FILE* f) { return put(f, "[1]\n"); }, error));
  CHECK(slurp(dir + "/a.json") == "[1]\n");
  CHECK(entries(dir).size() == 1);
}

TEST_CASE("a failed write leaves no file, no temporary, and the old file as it was") {
  const kob_test::TempDir tmp;
  const std::string& dir = tmp.path();
  REQUIRE(!dir.empty());
  std::string error;
  CHECK_FALSE(af::write(dir + "/b.json", [](std::FILE* f) { return put(f, "{\"partial\":"), false; }, error));
  CHECK(error.find("cannot write " + dir + "/b.json") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
  CHECK(entries(dir).empty());

  CHECK(af::write(dir + "/b.json", [](std::FILE* f) { return put(f, "old"); }, error));
  CHECK_FALSE(af::write(dir + "/b.json", [](std::FILE* f) { return put(f, "new"), false; }, error));
  CHECK(slurp(dir + "/b.json") == "old");
  CHECK(entries(dir) == std::vector<std::string>{"b.json"});
}

TEST_CASE("a missing directory is one line naming the file and the cause") {
  const kob_test::TempDir tmp;
  const std::string& dir = tmp.path();
  REQUIRE(!dir.empty());
  std::string error;
  CHECK_FALSE(af::write(dir + "/no/such/c.json", [](std::FILE* f) { return put(f, "{}"); }, error));
  CHECK(error.find("No such file or directory") != std::string::npos);
}

TEST_CASE("make_directories creates missing parents and refuses a file in the way") {
  const kob_test::TempDir tmp;
  const std::string& dir = tmp.path();
  REQUIRE(!dir.empty());
  std::string error;
  CHECK(af::make_directories(dir + "/x/y/z/", error));
  struct stat st{};
  CHECK(stat((dir + "/x/y/z").c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(af::make_directories(dir + "/x/y/z/", error));  // already there: fine
  CHECK(af::write(dir + "/file", [](std::FILE* f) { return put(f, "x"); }, error));
  CHECK_FALSE(af::make_directories(dir + "/file/sub/", error));
  CHECK(error.find(dir + "/file/sub/") != std::string::npos);
}
