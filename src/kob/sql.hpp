// `kob sql`: SQL over a run's database (PREFIX.sqlite, --format=sqlite), made from the raw trace
// first when it is missing or older.
#pragma once

#include <string>

namespace kob::cli {

struct SqlRequest {
  std::string run;    // PREFIX.kob, PREFIX or a .sqlite file
  std::string query;  // "": open sqlite3 on the database
  std::string report;  // a canned report instead of a query: kernels, barriers, locks, memory
  bool csv = false, json = false, schema = false;
};

// The canned reports: their names and their SQL (docs/sqlite.md lists them). Null for no such report.
const char* report_query(const std::string& name);

// Exit status: 0 the query ran; 1 the run could not be read, the database made or the query run
// (SQLite's message, one line); 2 a usage error.
int sql_main(const SqlRequest& request);

}  // namespace kob::cli
