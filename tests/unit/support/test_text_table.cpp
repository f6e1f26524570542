// The text tables: one unit per time column, a width limit met by cutting the first column.
#include <doctest/doctest.h>

#include <sstream>

#include "common/support/text_table.hpp"

namespace tt = kob::text_table;

TEST_CASE("text table: every time of a column in one unit, named in the header") {
  const std::string out = tt::render({{"name", "total", "mean", "calls"},
                                      {"a", tt::time_cell(26'400), tt::time_cell(8786), "3"},
                                      {"b", tt::time_cell(8786), "-", "1"}},
                                     0);
  CHECK(out ==
        "  name  total (us)  mean (ns)  calls\n"
        "  a           26.4       8786      3\n"
        "  b            8.8          -      1\n");
  // Signed changes keep their sign.
  const std::string signed_out = tt::render({{"x", "change"}, {"a", tt::time_cell(12'000'000, true)}, {"b", tt::time_cell(5)}}, 0);
  CHECK(signed_out.find("change (ms)") != std::string::npos);
  CHECK(signed_out.find("-12.0") != std::string::npos);
  CHECK(signed_out.find("+0.0") != std::string::npos);
  CHECK(tt::is_time_cell(tt::time_cell(1)));
  CHECK_FALSE(tt::is_time_cell("1 ns"));
}

TEST_CASE("text table: the width limit cuts the first column in the middle, never below its minimum") {
  const std::string name(100, 'n');
  const std::vector<std::vector<std::string>> rows{{"name", "calls"}, {name + "END", "1"}};
  const std::string out = tt::render(rows, 60);
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) CHECK(l.size() <= 60);
  CHECK(out.find("...") != std::string::npos);
  CHECK(out.find("END") != std::string::npos);  // the end of a name is kept
  CHECK(tt::first_column_room(rows, 60) == 60 - 2 - 2 - 5);
  CHECK(tt::first_column_room(rows, 0) == SIZE_MAX);
  CHECK(tt::first_column_room(rows, 10) == tt::kMinNameColumns);
  CHECK(tt::render(rows, 0).find(name + "END") != std::string::npos);
}
