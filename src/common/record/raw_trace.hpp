// The raw trace PREFIX.kob of this process (docs/raw-format.md): the file, its header, the space
// for ring slots and compact chunks, and the META entries. Thread-safe; all of it is slow path.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/record/raw_format.hpp"

namespace kob {
class ThreadBuffer;
}

namespace kob::raw {

// Creates PREFIX.kob (the path given), writes the file header (with the process's MPI rank, -1
// none) and starts the writer thread. Called once by the session's start after the clock is
// initialised. Returns false (after one line on stderr, or with the reason in *why when given)
// when the file cannot be made; recording then still works into anonymous slots but nothing
// reaches the disk, until an open that succeeds.
bool open(const std::string& path, std::int64_t rank = -1, std::string* why = nullptr);
// The path the raw trace has now ("" if none). rename_to(new_path): the output prefix changed (command
// line --output arrives after start); the open file is renamed, mappings stay valid.
std::string path();
bool rename_to(const std::string& new_path);
// A META KV entry (section, key, value), written at once (slow path; thread-safe).
void add_kv(std::string_view section, std::string_view key, std::string_view value);
// Ends recording cleanly: no more events are recorded (recorder::close()), the writer copies every
// slot's committed records (partial slots too), writes the thread entries, a CALIB and END, and stops.
// Returns true when the file is complete. Idempotent.
bool finish();
// --kokkos-tools-help: there is no run to keep; stops the writer and removes the file.
void discard();
// --max-trace-size in bytes (0: unlimited): chunks that would take the file past it are dropped.
void set_max_size(std::uint64_t bytes);
// Tests only: stops the writer, closes the file (left on disk) and forgets every state.
void reset_for_test();

// fork(): before_fork takes the module map's lock and the file lock (after the intern table's:
// that order nests), the parent releases them; the child releases them, closes the parent's
// descriptor without writing, and creates its own file at `child_path` only when a slot of its
// first fills or at finish().
void before_fork();
void after_fork_parent();
void after_fork_child(const std::string& child_path);

// Counters for the summary and tests.
struct Stats {
  std::uint64_t chunks_written = 0;
  std::uint64_t chunks_dropped = 0;   // not written: write error or --max-trace-size
  std::uint64_t records_written = 0;
  std::uint64_t records_dropped = 0;  // in the chunks above
  std::uint64_t chunks_discarded = 0; // full slots handed back with no file to write to
  std::uint64_t bytes = 0;            // the file's size (its end offset)
};
Stats stats();

// ---- the recorder's and the writer's side ----
// Maps `count` fresh ring slots of thread `thread` in the file, zeroed and pre-faulted. False when
// there is no file (or no room): the caller then uses anonymous memory.
bool map_slots(std::uint32_t thread, std::uint32_t count, Slot** out);
// A THREAD entry for b's identity now.
void note_thread(const ThreadBuffer& b);
// The producer's side of a slot-full event: wakes the writer, or, in a process without one (a fork
// child), copies b's full slots itself.
void slot_full(ThreadBuffer& b);
// A run of events of thread `thread` that were not recorded or not written.
void note_lost(std::uint32_t thread, std::uint32_t reason, std::uint64_t first_tick, std::uint64_t last_tick,
               std::uint64_t events);
// Appends one COMPACT block for records [recs, recs + n) of chunk `seq` of `thread`. False (the
// caller counts the records as dropped; a LOST entry follows) when it cannot be written; true
// also when there is no file at all (nothing can be missing from a trace that does not exist).
bool write_chunk(std::uint32_t thread, std::uint64_t seq, const Record* recs, std::uint32_t n);
// The program's events among a chunk's n records: all but the tool's own flush record, which only
// ever opens a slot. A chunk that is not written loses these (its LOST entry and the drop count).
inline std::uint32_t program_events(const Record* recs, std::uint32_t n) {
  return n != 0 && recs[0].type == Ev::ToolFlush ? n - 1 : n;
}
// Writes a CALIB entry: periodic (the writer, every second; none once --max-trace-size was
// reached, so the file stops growing) or final (finish).
void write_calib(bool periodic);
// Writes pending LOST spans (the writer, every second).
void flush_lost();

}  // namespace kob::raw
