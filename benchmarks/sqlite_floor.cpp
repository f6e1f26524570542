// What SQLite itself costs per row, without kob: N rows of C integer columns into one table
// through a prepared statement of R rows, one transaction per 65,536 rows, then I indexes made at
// the end (the shape of `--format=sqlite`). docs/sqlite.md quotes it as the floor of that format.
//   build-bench/benchmarks/sqlite_floor ROWS COLUMNS ROWS_PER_STATEMENT INDEXES [DB]
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

bool exec(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return true;
  std::fprintf(stderr, "sqlite_floor: %s: %s\n", sql.c_str(), message != nullptr ? message : "?");
  sqlite3_free(message);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: sqlite_floor ROWS COLUMNS ROWS_PER_STATEMENT INDEXES [DB]\n");
    return 2;
  }
  const long rows = std::atol(argv[1]);
  const int columns = std::max(3, std::atoi(argv[2]));
  const int per = std::max(1, std::atoi(argv[3]));
  const int indexes = std::min(std::atoi(argv[4]), 3);
  const std::string path = argc > 5 ? argv[5] : "sqlite_floor.db";
  ::unlink(path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return 1;
  std::string table = "CREATE TABLE t(c0 INTEGER", row = "(?";
  for (int i = 1; i < columns; ++i) {
    table += ", c" + std::to_string(i) + " INTEGER";
    row += ",?";
  }
  table += ")";
  row += ")";
  std::string insert = "INSERT INTO t VALUES" + row;
  for (int k = 1; k < per; ++k) insert += "," + row;
  sqlite3_stmt* st = nullptr;
  if (!exec(db, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE") ||
      !exec(db, table) || !exec(db, "BEGIN") || sqlite3_prepare_v2(db, insert.c_str(), -1, &st, nullptr) != SQLITE_OK)
    return 1;
  const double t0 = cpu_seconds();
  long start = 1000000;  // c1: a start time, rising as spans' do; c2: an id; the rest small values
  int bound = 0;
  for (long r = 0; r < rows; ++r) {
    start += 500 + (r * 7919) % 300;
    for (int i = 0; i < columns; ++i)
      sqlite3_bind_int64(st, ++bound, i == 1 ? start : i == 2 ? r + 1 : (i * r) % 1000);
    if (bound == per * columns) {
      sqlite3_step(st);
      sqlite3_reset(st);
      bound = 0;
    }
    if ((r + 1) % 65536 == 0) exec(db, "COMMIT; BEGIN");
  }
  exec(db, "COMMIT");
  const double t1 = cpu_seconds();
  const char* index[] = {"CREATE INDEX by_start ON t(c1)", "CREATE INDEX by_id ON t(c2)", "CREATE INDEX by_c3 ON t(c3)"};
  for (int i = 0; i < indexes; ++i) exec(db, index[i]);
  const double t2 = cpu_seconds();
  sqlite3_finalize(st);
  sqlite3_close(db);
  ::unlink(path.c_str());
  std::printf("%ld rows of %d columns, %d per statement: insert %.0f ns/row, %d indexes %.0f ns/row, %.2f M rows per CPU second\n",
              rows - rows % per, columns, per, (t1 - t0) / static_cast<double>(rows) * 1e9, indexes,
              (t2 - t1) / static_cast<double>(rows) * 1e9, static_cast<double>(rows) / (t2 - t0) * 1e-6);
  return 0;
}
