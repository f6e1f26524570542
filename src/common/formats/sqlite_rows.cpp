#include "common/formats/sqlite_rows.hpp"

#include <algorithm>

namespace kob::sqlite {

RowBatch::~RowBatch() { finalize(); }

void RowBatch::finalize() {
  sqlite3_finalize(one_);
  sqlite3_finalize(many_);
  one_ = many_ = nullptr;
  waiting_ = 0;
}

bool RowBatch::prepare(sqlite3* db, const char* insert, std::string& error) {
  db_ = db;
  one_sql_ = insert;
  const std::string row = one_sql_.substr(one_sql_.find('('));
  columns_ = static_cast<int>(std::count(row.begin(), row.end(), '?'));
  slots_.assign(static_cast<std::size_t>(kRows * columns_), Slot());
  // The one-row statement now, so that a schema error shows at once; 64 rows' when 64 are in.
  return make(one_, one_sql_, error);
}

bool RowBatch::make(sqlite3_stmt*& st, const std::string& sql, std::string& error) {
  if (st != nullptr) return true;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) return true;
  error = sqlite3_errmsg(db_);
  return false;
}

bool RowBatch::add(std::int64_t lead, bool with_lead, std::initializer_list<Value> values, std::string& error) {
  if (one_ == nullptr) return false;
  Slot* s = &slots_[static_cast<std::size_t>(waiting_ * columns_)];
  Slot* const end = s + columns_;
  if (with_lead) {
    s->kind = Value::Kind::Int;
    s->i = lead;
    ++s;
  }
  for (const Value& v : values) {
    if (s == end) break;  // more values than columns: a schema bug, caught by the tests' row checks
    s->kind = v.kind;
    s->i = v.i;
    s->r = v.r;
    if (v.kind == Value::Kind::Text) s->text.assign(v.t);
    ++s;
  }
  for (; s != end; ++s) s->kind = Value::Kind::Null;
  if (++waiting_ < kRows) return true;
  waiting_ = 0;
  if (many_ == nullptr) {
    const std::string row = one_sql_.substr(one_sql_.find('('));
    std::string many = one_sql_;
    for (int k = 1; k < kRows; ++k) many += "," + row;
    if (!make(many_, many, error)) return false;
  }
  return step(many_, slots_.data(), kRows, error);
}

bool RowBatch::flush(std::string& error) {
  const int rows = waiting_;
  waiting_ = 0;
  bool ok = true;
  for (int k = 0; ok && k < rows; ++k) ok = step(one_, &slots_[static_cast<std::size_t>(k * columns_)], 1, error);
  return ok;
}

bool RowBatch::step(sqlite3_stmt* st, const Slot* row, int rows, std::string& error) {
  const int n = rows * columns_;
  for (int i = 0; i < n; ++i) {
    const Slot& v = row[i];
    switch (v.kind) {
      case Value::Kind::Int: sqlite3_bind_int64(st, i + 1, v.i); break;
      case Value::Kind::Real: sqlite3_bind_double(st, i + 1, v.r); break;
      case Value::Kind::Text: sqlite3_bind_text(st, i + 1, v.text.data(), static_cast<int>(v.text.size()), SQLITE_STATIC); break;
      case Value::Kind::Null: sqlite3_bind_null(st, i + 1); break;
    }
  }
  const bool ok = sqlite3_step(st) == SQLITE_DONE;
  if (!ok) error = sqlite3_errmsg(db_);
  sqlite3_reset(st);
  return ok;
}

}  // namespace kob::sqlite
