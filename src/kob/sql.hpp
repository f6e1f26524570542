// `kob sql`: SQL over a run's database (PREFIX.sqlite, --format=sqlite), made from the raw trace
// first when it is missing or older.
#pragma once

#include <string>

namespace kob::cli {

struct SqlRequest {
  std::string run;    // PREFIX.kob, PREFIX or a .sqlite file
  std::string query;  // "": open sqlite3 on the database
  bool csv = false, json = false, schema = false;
};

// Exit status: 0 the query ran; 1 the run could not be read, the database made or the query run
// (SQLite's message, one line); 2 a usage error.
int sql_main(const SqlRequest& request);

}  // namespace kob::cli
