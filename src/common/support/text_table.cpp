#include "common/support/text_table.hpp"

#include <algorithm>
#include <cstdlib>

#include "common/support/fixed_text.hpp"
#include "common/support/text_safe.hpp"

namespace kob::text_table {

namespace {

// A time cell: this byte (never in escaped text), an optional '-', the ns.
constexpr char kTimeTag = '\x01';

std::size_t g_width = kWidth;

struct Unit {
  const char* name;
  double ns;
  int decimals;
};

// The unit that writes the column's largest time in at most four digits before the point.
Unit unit_for(std::uint64_t largest) {
  if (largest < 10'000) return {"ns", 1, 0};
  if (largest < 10'000'000) return {"us", 1e3, 1};
  if (largest < 10'000'000'000ull) return {"ms", 1e6, 1};
  return {"s", 1e9, 2};
}

std::uint64_t ns_of(const std::string& cell, bool& negative) {
  negative = cell.size() > 1 && cell[1] == '-';
  return std::strtoull(cell.c_str() + (negative ? 2 : 1), nullptr, 10);
}

std::string in_unit(const std::string& cell, const Unit& u, bool sign) {
  bool negative = false;
  const std::uint64_t ns = ns_of(cell, negative);
  return text::fixed((negative ? -1.0 : 1.0) * double(ns) / u.ns, u.decimals, sign);
}

// Each column of time cells into its unit; the header names it.
void resolve_times(std::vector<std::vector<std::string>>& rows) {
  const std::size_t ncols = rows[0].size();
  for (std::size_t c = 0; c < ncols; ++c) {
    std::uint64_t largest = 0;
    bool any = false, sign = false;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      if (c >= rows[r].size() || !is_time_cell(rows[r][c])) continue;
      bool negative = false;
      largest = std::max(largest, ns_of(rows[r][c], negative));
      any = true;
      sign = sign || negative;
    }
    if (!any) continue;
    const Unit u = unit_for(largest);
    for (std::size_t r = 1; r < rows.size(); ++r)
      if (c < rows[r].size() && is_time_cell(rows[r][c])) rows[r][c] = in_unit(rows[r][c], u, sign);
    rows[0][c] += std::string(" (") + u.name + ")";
  }
}

}  // namespace

std::size_t width() { return g_width; }
void set_width(std::size_t columns) { g_width = columns; }
std::size_t name_columns() { return g_width == 0 ? SIZE_MAX / 2 : text::kNameColumns; }

std::string time_cell(std::uint64_t ns, bool negative) {
  return std::string(1, kTimeTag) + (negative && ns != 0 ? "-" : "") + std::to_string(ns);
}

bool is_time_cell(const std::string& cell) { return !cell.empty() && cell[0] == kTimeTag; }

namespace {

std::vector<std::size_t> widths(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], text::columns(r[i]));
  return w;
}

// Two columns of indent, two between columns: what the first column may take.
std::size_t room(const std::vector<std::size_t>& w, std::size_t limit) {
  if (limit == 0) return SIZE_MAX;
  std::size_t others = 2;
  for (std::size_t i = 1; i < w.size(); ++i) others += w[i] + 2;
  return std::max(kMinNameColumns, limit > others ? limit - others : 0);
}

}  // namespace

std::size_t first_column_room(const std::vector<std::vector<std::string>>& in, std::size_t limit) {
  if (in.empty()) return SIZE_MAX;
  std::vector<std::vector<std::string>> rows = in;
  resolve_times(rows);
  return room(widths(rows), limit);
}

std::string render(const std::vector<std::vector<std::string>>& in, std::size_t limit) {
  if (in.empty()) return "";
  std::vector<std::vector<std::string>> rows = in;
  resolve_times(rows);
  std::vector<std::size_t> w = widths(rows);
  if (w[0] > room(w, limit)) {
    const std::size_t first = room(w, limit);
    if (first < w[0]) {
      for (auto& r : rows)
        if (!r.empty() && text::columns(r[0]) > first) r[0] = text::shorten(r[0], first);
      w[0] = first;
    }
  }
  std::string out;
  for (const auto& r : rows) {
    out += "  ";
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) {
      const std::string pad(w[i] - std::min(w[i], text::columns(r[i])), ' ');
      out += i == 0 ? r[i] + pad : pad + r[i];
      out += i + 1 < r.size() ? "  " : "";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

}  // namespace kob::text_table
