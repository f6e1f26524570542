// A trace file's bytes written on a thread of their own, a chunk at a time: the thread that
// encodes the trace hands over a full buffer and goes on filling the other one while write(2)
// copies the first into the page cache (a .pftrace is about 430 bytes per 2-thread kernel, and
// writing it was a fifth of the encoding thread's time).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

namespace kob {

class ChunkWriter {
 public:
  struct Chunk {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
    std::size_t capacity = 0;
  };

  // Starts the thread (signals blocked: they are the program's); without one, chunks are written
  // in the caller's thread.
  explicit ChunkWriter(std::FILE* f);
  ~ChunkWriter();  // finish()
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Takes c's bytes to be written; c comes back empty (size 0), holding the storage of the chunk
  // handed over before once that one is written (null storage the first time).
  void write(Chunk& c);
  // Waits until every chunk handed over is written; false when a write failed (a full disk),
  // errno then set to that write's.
  bool finish();

 private:
  void loop();
  void put(const Chunk& c);

  std::FILE* f_;
  std::mutex mu_;
  std::condition_variable cv_;
  Chunk pending_;       // handed over, not yet taken by the thread
  Chunk free_;          // written: its storage goes back to the next caller
  bool busy_ = false;   // the thread is writing a chunk
  bool stop_ = false;
  bool ok_ = true;
  int error_ = 0;  // errno of the first failed write
  std::thread thread_;
};

}  // namespace kob
