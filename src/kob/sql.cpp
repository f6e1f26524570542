#include "kob/sql.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/analysis/summary.hpp"
#include "common/formats/sqlite_writer.hpp"
#include "common/session/config.hpp"
#include "common/support/json_doc.hpp"
#include "kob/convert.hpp"
#include "kob/run_source.hpp"

namespace kob::cli {

namespace {

void say(const std::string& line) { std::fprintf(stderr, "kob: %s\n", line.c_str()); }

// The database of RUN: a .sqlite file as it is; else PREFIX.sqlite beside the raw trace, made (or
// made again) when it is missing or older than PREFIX.kob. "" when there is none (said).
std::string database_of(const std::string& run) {
  if (run.ends_with(".sqlite")) {
    if (::access(run.c_str(), R_OK) == 0) return run;
    say("cannot open " + run + ": no such database");
    return {};
  }
  const std::string prefix = run_prefix(run);
  const std::string db = prefix + ".sqlite", raw = prefix + ".kob";
  struct stat db_st{}, raw_st{};
  const bool have_db = ::stat(db.c_str(), &db_st) == 0, have_raw = ::stat(raw.c_str(), &raw_st) == 0;
  if (have_db && (!have_raw || db_st.st_mtim.tv_sec > raw_st.st_mtim.tv_sec ||
                  (db_st.st_mtim.tv_sec == raw_st.st_mtim.tv_sec && db_st.st_mtim.tv_nsec >= raw_st.st_mtim.tv_nsec)))
    return db;
  ConvertRequest conv;
  conv.runs = {raw};
  conv.formats_given = true;
  conv.formats = kFormatSqlite;
  conv.output = prefix;
  conv.quiet = true;
  if (convert_runs(conv) != 0 || ::access(db.c_str(), R_OK) != 0) return {};
  return db;
}

std::string text_of(sqlite3_stmt* st, int col) {
  if (sqlite3_column_type(st, col) == SQLITE_NULL) return "NULL";
  const unsigned char* t = sqlite3_column_text(st, col);
  return t != nullptr ? reinterpret_cast<const char*>(t) : "";
}

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

json::Doc json_of(sqlite3_stmt* st, int col) {
  switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(st, col);
    case SQLITE_FLOAT: return sqlite3_column_double(st, col);
    case SQLITE_NULL: return nullptr;
    default: return text_of(st, col);
  }
}

// Runs the query and prints its rows: an aligned table (a header row first), CSV or JSON (a list
// of objects). False with SQLite's message said.
bool print_query(sqlite3* db, const std::string& query, const SqlRequest& r) {
  sqlite3_stmt* st = nullptr;
  const char* rest = nullptr;
  if (sqlite3_prepare_v2(db, query.c_str(), -1, &st, &rest) != SQLITE_OK || st == nullptr) {
    say(std::string("sql: ") + (st == nullptr && sqlite3_errcode(db) == SQLITE_OK ? "no statement in the query" : sqlite3_errmsg(db)));
    sqlite3_finalize(st);
    return false;
  }
  const int n = sqlite3_column_count(st);
  std::vector<std::vector<std::string>> table(1);
  json::Doc rows = json::Doc::array();
  for (int c = 0; c < n; ++c) table[0].push_back(sqlite3_column_name(st, c));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (r.json) {
      json::Doc row = json::Doc::object();
      for (int c = 0; c < n; ++c) row[table[0][static_cast<std::size_t>(c)]] = json_of(st, c);
      rows.push_back(std::move(row));
      continue;
    }
    table.emplace_back();
    for (int c = 0; c < n; ++c) table.back().push_back(text_of(st, c));
  }
  const bool ok = rc == SQLITE_DONE;
  if (!ok) say(std::string("sql: ") + sqlite3_errmsg(db));
  sqlite3_finalize(st);
  if (!ok) return false;
  std::string out;
  if (r.json) {
    out = json::dump(rows) + "\n";
  } else if (r.csv) {
    for (const auto& row : table) {
      for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_field(row[c]);
      out += "\n";
    }
  } else {
    out = summary_format::table(table);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return true;
}

struct Report {
  const char* name;
  const char* query;
};
// Each a documented query (docs/sqlite.md): what `kob sql --report NAME RUN` runs.
constexpr Report kReports[] = {
    {"kernels",
     "SELECT name, kind, space, count(*) AS calls, sum(dur_ns) AS total_ns, sum(dur_ns) / count(*) AS mean_ns, min(dur_ns) AS min_ns, "
     "max(dur_ns) AS max_ns FROM kernels GROUP BY name, kind, space ORDER BY total_ns DESC"},
    {"barriers",
     "SELECT coalesce(k.name, '(outside Kokkos kernels)') AS kernel, count(*) AS barriers, sum(s.dur_ns) AS total_ns, "
     "sum(s.wait_ns) AS wait_ns FROM omp_sync s LEFT JOIN kernels k ON k.id = s.kernel_id "
     "WHERE s.kind LIKE 'barrier%' GROUP BY 1 ORDER BY wait_ns DESC"},
    {"locks",
     "SELECT coalesce(src.label, '(no address)') AS location, m.kind, sum(m.phase = 'wait') AS waits, "
     "sum(CASE WHEN m.phase = 'wait' THEN m.dur_ns ELSE 0 END) AS wait_ns, sum(m.phase = 'hold') AS holds, "
     "sum(CASE WHEN m.phase = 'hold' THEN m.dur_ns ELSE 0 END) AS hold_ns FROM omp_mutex m "
     "LEFT JOIN sources src ON src.address = m.source GROUP BY 1, 2 ORDER BY wait_ns DESC"},
    {"memory",
     "SELECT space, sum(event = 'alloc') AS allocations, sum(event = 'dealloc') AS deallocations, "
     "sum(CASE WHEN event = 'alloc' THEN bytes ELSE 0 END) AS bytes_allocated, max(space_bytes) AS high_water_bytes "
     "FROM memory GROUP BY space ORDER BY bytes_allocated DESC"},
};

}  // namespace

const char* report_query(const std::string& name) {
  for (const Report& r : kReports)
    if (name == r.name) return r.query;
  return nullptr;
}

int sql_main(const SqlRequest& r) {
  if (r.schema) {
    std::fputs(sqlite::schema().c_str(), stdout);
    return 0;
  }
  if (r.run.empty() && !r.report.empty() && report_query(r.report) != nullptr) {
    std::printf("%s;\n", report_query(r.report));  // a report with no RUN: its query
    return 0;
  }
  if (r.run.empty()) {
    say("sql needs a RUN (PREFIX.kob, PREFIX or a .sqlite file) (kob sql --help)");
    return 2;
  }
  std::string query = r.query;
  if (!r.report.empty()) {
    const char* q = report_query(r.report);
    if (q == nullptr || !r.query.empty()) {
      say(q == nullptr ? "sql: --report takes kernels, barriers, locks or memory, not '" + r.report + "' (kob sql --help)"
                       : "sql: --report runs its own query: give RUN only (kob sql --help)");
      return 2;
    }
    query = q;
  }
  const std::string db_path = database_of(r.run);
  if (db_path.empty()) return 1;
  if (query.empty()) {
    std::fflush(stdout);
    ::execlp("sqlite3", "sqlite3", db_path.c_str(), static_cast<char*>(nullptr));
    say("sql: no query given and sqlite3 is not installed (apt-get install sqlite3); the database is " + db_path);
    return 1;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    say("sql: cannot open " + db_path + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return 1;
  }
  const bool ok = print_query(db, query, r);
  sqlite3_close(db);
  return ok ? 0 : 1;
}

}  // namespace kob::cli
