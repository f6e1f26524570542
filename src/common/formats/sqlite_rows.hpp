// Rows into one SQLite table, many to a statement: an INSERT of 64 rows costs SQLite about 60 %
// of 64 single-row INSERTs (the statement's start, reset and journal bookkeeping are paid once), so
// the rows of a table wait here, copied, until a statement's worth is in.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kob::sqlite {

// A column value: an integer, a real, a text or NULL. Texts are copied when the row is added.
struct Value {
  enum class Kind { Int, Real, Text, Null } kind;
  std::int64_t i = 0;
  double r = 0;
  std::string_view t;
  Value(std::int64_t v) : kind(Kind::Int), i(v) {}
  Value(std::uint64_t v) : kind(Kind::Int), i(static_cast<std::int64_t>(v)) {}
  Value(std::uint32_t v) : kind(Kind::Int), i(v) {}
  Value(int v) : kind(Kind::Int), i(v) {}
  Value(bool v) : kind(Kind::Int), i(v ? 1 : 0) {}
  Value(double v) : kind(Kind::Real), r(v) {}
  Value(std::string_view v) : kind(Kind::Text), t(v) {}
  Value(const char* v) : kind(Kind::Text), t(v != nullptr ? v : "") {}
  Value(const std::string& v) : kind(Kind::Text), t(v) {}
  static Value null() { return Value(Kind::Null); }

 private:
  explicit Value(Kind k) : kind(k) {}
};

class RowBatch {
 public:
  static constexpr int kRows = 64;

  RowBatch() = default;
  ~RowBatch();
  RowBatch(const RowBatch&) = delete;
  RowBatch& operator=(const RowBatch&) = delete;

  // insert: "INSERT INTO t VALUES" followed by one "(?,...)"; its ? are the table's columns. The
  // statements are made when first needed (a table that gets no row costs nothing); false
  // (SQLite's message in error) when the one-row statement cannot be made.
  bool prepare(sqlite3* db, const char* insert, std::string& error);
  // A row: `lead` (the rank column) then values, as many as the table has columns in all.
  // False with error set when SQLite refuses a statement.
  bool add(std::int64_t lead, bool with_lead, std::initializer_list<Value> values, std::string& error);
  // Writes the rows still waiting, one statement each.
  bool flush(std::string& error);
  void finalize();

 private:
  struct Slot {
    Value::Kind kind = Value::Kind::Null;
    std::int64_t i = 0;
    double r = 0;
    std::string text;
  };
  bool step(sqlite3_stmt* st, const Slot* row, int rows, std::string& error);
  bool make(sqlite3_stmt*& st, const std::string& sql, std::string& error);

  sqlite3* db_ = nullptr;
  std::string one_sql_;
  sqlite3_stmt* one_ = nullptr;
  sqlite3_stmt* many_ = nullptr;
  int columns_ = 0;
  int waiting_ = 0;
  std::vector<Slot> slots_;  // kRows rows of columns_
};

}  // namespace kob::sqlite
