// The text tables of the summaries and of kob diff: the first column left-aligned, the others
// right; every time of a column in one unit, named in its header ("total (ms)"); a table at most
// width() columns wide, the first column's names cut in the middle to fit (--wide: no limit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kob::text_table {

// The default width: a terminal of 120 columns holds a row on one line.
constexpr std::size_t kWidth = 120;
// The narrowest the first column is cut to, however many columns the others take.
constexpr std::size_t kMinNameColumns = 20;

// The process's table width (kWidth unless set; 0: no limit, names whole).
std::size_t width();
void set_width(std::size_t columns);
// The widest a program's name is shown (text::kNameColumns, or no limit under --wide).
std::size_t name_columns();

// A duration as a table cell: render() writes it in its column's unit. negative: a change.
std::string time_cell(std::uint64_t ns, bool negative = false);
bool is_time_cell(const std::string& cell);

// The columns the first column may take in render(rows, width) (SIZE_MAX: no limit): for callers
// that cut their names their own way first (a construct's location keeps its file and line).
std::size_t first_column_room(const std::vector<std::vector<std::string>>& rows, std::size_t width);

// rows[0] is the header. Cells are escaped text (text::escape) or time cells.
std::string render(const std::vector<std::vector<std::string>>& rows, std::size_t width);
inline std::string render(const std::vector<std::vector<std::string>>& rows) { return render(rows, width()); }

}  // namespace kob::text_table
