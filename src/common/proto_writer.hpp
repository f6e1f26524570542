// Protobuf wire encoding for the .pftrace writer, through protozero (Debian libprotozero-dev, a
// maintained encoder): one growing byte buffer, the few field types the trace uses, and nested
// messages as scopes (Nested). The writer only names fields; protozero encodes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <protozero/pbf_writer.hpp>

namespace kob::proto {

class Nested;

class Writer {
 public:
  explicit Writer(std::size_t capacity) {
    buf_.reserve(capacity);
    stack_.reserve(16);
    stack_.push_back(&root_);
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  const char* data() const { return buf_.data(); }
  std::size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }  // between top-level messages only

  void add_varint(std::uint32_t field, std::uint64_t v) { top().add_uint64(field, v); }
  // int32 and int64 fields: a negative value is its 64-bit two's complement (ten bytes).
  void add_int(std::uint32_t field, std::int64_t v) { top().add_int64(field, v); }
  void add_bool(std::uint32_t field, bool v) { top().add_bool(field, v); }
  void add_fixed64(std::uint32_t field, std::uint64_t v) { top().add_fixed64(field, v); }
  void add_string(std::uint32_t field, std::string_view s) {
    top().add_string(field, s.empty() ? "" : s.data(), s.size());  // an empty view may have no data pointer
  }

 private:
  friend class Nested;
  protozero::pbf_writer& top() { return *stack_.back(); }
  std::string buf_;
  protozero::pbf_writer root_{buf_};
  std::vector<protozero::pbf_writer*> stack_;  // the innermost message being written last
};

// A nested message, written until the end of its scope (protozero leaves an empty one out).
class Nested {
 public:
  Nested(Writer& w, std::uint32_t field) : w_(w), msg_(w.top(), field) { w_.stack_.push_back(&msg_); }
  ~Nested() { w_.stack_.pop_back(); }  // then msg_ closes itself
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;

 private:
  Writer& w_;
  protozero::pbf_writer msg_;
};

}  // namespace kob::proto
