// Protobuf wire encoding for the .pftrace writer, through protozero (Debian libprotozero-dev, a
// maintained encoder): one growing byte buffer, the few field types the trace uses, and nested
// messages as scopes (Nested). The writer only names fields; protozero encodes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include <protozero/basic_pbf_writer.hpp>
#include <protozero/buffer_tmpl.hpp>

namespace kob::proto {

// The byte buffer protozero writes into: protozero adds a varint a byte at a time, and
// std::string's push_back (a capacity check and a terminator per byte) took a third of the time
// of a .pftrace; this one is a store and an increment while there is room.
class Bytes {
 public:
  explicit Bytes(std::size_t capacity) : p_(new char[capacity]), cap_(capacity) {}
  const char* data() const { return p_.get(); }
  char* data() { return p_.get(); }
  std::size_t size() const { return n_; }
  void clear() { n_ = 0; }
  void push_back(char c) {
    if (n_ == cap_) grow(1);
    p_[n_++] = c;
  }
  void append(const char* d, std::size_t count) {
    if (cap_ - n_ < count) grow(count);
    if (count) std::memcpy(p_.get() + n_, d, count);
    n_ += count;
  }
  void append_zeros(std::size_t count) {
    if (cap_ - n_ < count) grow(count);
    std::memset(p_.get() + n_, 0, count);
    n_ += count;
  }
  void resize(std::size_t n) { n_ = n; }  // smaller only (protozero's contract)
  void reserve_additional(std::size_t count) {
    if (cap_ - n_ < count) grow(count);
  }
  void erase(std::size_t from, std::size_t to) {
    std::memmove(p_.get() + from, p_.get() + to, n_ - to);
    n_ -= to - from;
  }

 private:
  void grow(std::size_t need) {
    std::size_t cap = cap_ * 2;
    while (cap - n_ < need) cap *= 2;
    std::unique_ptr<char[]> p(new char[cap]);
    std::memcpy(p.get(), p_.get(), n_);
    p_ = std::move(p);
    cap_ = cap;
  }
  std::unique_ptr<char[]> p_;
  std::size_t n_ = 0, cap_;
};

}  // namespace kob::proto

template <>
struct protozero::buffer_customization<kob::proto::Bytes> {
  static std::size_t size(const kob::proto::Bytes* b) noexcept { return b->size(); }
  static void append(kob::proto::Bytes* b, const char* data, std::size_t count) { b->append(data, count); }
  static void append_zeros(kob::proto::Bytes* b, std::size_t count) { b->append_zeros(count); }
  static void resize(kob::proto::Bytes* b, std::size_t size) { b->resize(size); }
  static void reserve_additional(kob::proto::Bytes* b, std::size_t size) { b->reserve_additional(size); }
  static void erase_range(kob::proto::Bytes* b, std::size_t from, std::size_t to) { b->erase(from, to); }
  static char* at_pos(kob::proto::Bytes* b, std::size_t pos) { return b->data() + pos; }
  static void push_back(kob::proto::Bytes* b, char ch) { b->push_back(ch); }
};

namespace kob::proto {

using PbfWriter = protozero::basic_pbf_writer<Bytes>;

// A small message of a few varint fields (a numeric debug annotation, a slice's end), encoded on
// the stack by protozero's varint encoder and then added whole (Writer::add_message): no nested
// writer to open and close, nothing moved after. Room for 80 bytes: a field of a number below
// 2^11 takes at most 12 (2-byte tag, 10-byte value); the largest use, a slice's end with an
// absolute time, takes at most 26.
class SmallMessage {
 public:
  void add_varint(std::uint32_t field, std::uint64_t v) {
    n_ += static_cast<std::size_t>(protozero::add_varint_to_buffer(buf_ + n_, std::uint64_t(field) << 3));
    n_ += static_cast<std::size_t>(protozero::add_varint_to_buffer(buf_ + n_, v));
  }
  void add_message(std::uint32_t field, const SmallMessage& m) {
    n_ += static_cast<std::size_t>(protozero::add_varint_to_buffer(buf_ + n_, (std::uint64_t(field) << 3) | 2));
    n_ += static_cast<std::size_t>(protozero::add_varint_to_buffer(buf_ + n_, m.n_));
    std::memcpy(buf_ + n_, m.buf_, m.n_);
    n_ += m.n_;
  }
  const char* data() const { return buf_; }
  std::size_t size() const { return n_; }

 private:
  char buf_[80];
  std::size_t n_ = 0;
};

class Nested;

class Writer {
 public:
  explicit Writer(std::size_t capacity) : buf_(capacity) {
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
  void add_message(std::uint32_t field, const SmallMessage& m) { top().add_message(field, m.data(), m.size()); }
  void add_string(std::uint32_t field, std::string_view s) {
    top().add_string(field, s.empty() ? "" : s.data(), s.size());  // an empty view may have no data pointer
  }

 private:
  friend class Nested;
  PbfWriter& top() { return *stack_.back(); }
  Bytes buf_;
  PbfWriter root_{buf_};
  std::vector<PbfWriter*> stack_;  // the innermost message being written last
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
  PbfWriter msg_;
};

}  // namespace kob::proto
