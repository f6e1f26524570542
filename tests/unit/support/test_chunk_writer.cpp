// The trace files' background writer: every chunk, in order; the storage comes back; a failed
// write is reported by finish().
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/support/chunk_writer.hpp"
#include "helpers.hpp"

using kob::ChunkWriter;

namespace {
ChunkWriter::Chunk chunk_of(const std::string& text, std::size_t capacity) {
  ChunkWriter::Chunk c{std::unique_ptr<char[]>(new char[capacity]), text.size(), capacity};
  std::memcpy(c.data.get(), text.data(), text.size());
  return c;
}
}  // namespace

TEST_CASE("chunk writer: chunks land in order, each handed-over storage comes back once written") {
  const std::string path = kob_test::temp_path("chunks.bin");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::string want;
  {
    ChunkWriter w(f);
    const char* first = nullptr;
    for (int i = 0; i < 200; ++i) {
      const std::string text = "chunk " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7) * 100, 'x') + "\n";
      want += text;
      ChunkWriter::Chunk c = chunk_of(text, 4096);
      const char* mine = c.data.get();
      if (i == 0) first = mine;
      w.write(c);
      CHECK(c.size == 0);
      if (i == 0) CHECK(c.data == nullptr);  // nothing written before the first
      else CHECK(c.data != nullptr);
      CHECK(c.data.get() != mine);  // never the chunk just handed over
    }
    CHECK(first != nullptr);
    CHECK(w.finish());
  }
  std::fclose(f);
  std::ifstream in(path, std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  CHECK(got == want);
}

TEST_CASE("chunk writer: a full disk is reported by finish with its errno, and the writer still ends") {
  std::FILE* f = std::fopen("/dev/full", "wb");
  if (f == nullptr) return;
  std::setvbuf(f, nullptr, _IONBF, 0);  // each fwrite reaches write(2) and its ENOSPC
  {
    ChunkWriter w(f);
    ChunkWriter::Chunk c = chunk_of(std::string(1000, 'y'), 1000);
    w.write(c);
    errno = 0;
    CHECK_FALSE(w.finish());
    CHECK(errno == ENOSPC);  // the cause, in the caller's thread (the write failed on the writer's)
  }
  std::fclose(f);
}
