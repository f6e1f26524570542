#include "common/support/chunk_writer.hpp"

#include <cerrno>
#include <utility>

#include "common/support/blocked_signals.hpp"

namespace kob {

ChunkWriter::ChunkWriter(std::FILE* f) : f_(f) {
  try {
    const BlockAllSignals blocked;
    thread_ = std::thread([this] { loop(); });
  } catch (...) {
    // No thread: write() writes in place.
  }
}

ChunkWriter::~ChunkWriter() {
  finish();
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ChunkWriter::put(const Chunk& c) {
  if (c.size != 0 && std::fwrite(c.data.get(), 1, c.size, f_) != c.size && ok_) {
    ok_ = false;
    error_ = errno != 0 ? errno : EIO;
  }
}

void ChunkWriter::write(Chunk& c) {
  if (!thread_.joinable()) {
    put(c);
    c.size = 0;
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return pending_.size == 0 && !busy_; });
  std::swap(pending_, c);
  std::swap(c, free_);
  c.size = 0;
  lock.unlock();
  cv_.notify_all();
}

bool ChunkWriter::finish() {
  if (thread_.joinable()) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return pending_.size == 0 && !busy_; });
  }
  // The cause, where the caller looks for it (atomic_file's message names errno): the write
  // failed on the writer's thread.
  if (!ok_) errno = error_;
  return ok_;
}

void ChunkWriter::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return pending_.size != 0 || stop_; });
    if (pending_.size == 0) return;
    Chunk c = std::move(pending_);
    pending_ = Chunk{};
    busy_ = true;
    lock.unlock();
    put(c);
    c.size = 0;
    lock.lock();
    free_ = std::move(c);
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace kob
