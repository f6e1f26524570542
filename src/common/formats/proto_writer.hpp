// Protobuf wire encoding for the .pftrace writer, through protozero (Debian libprotozero-dev, a
// maintained encoder): one growing byte buffer, the few field types the trace uses, and nested
// messages as scopes (Nested). The writer only names fields; protozero encodes them.
#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include <protozero/basic_pbf_writer.hpp>
#include <protozero/buffer_tmpl.hpp>

#include "common/support/chunk_writer.hpp"

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
  void resize(std::size_t n) { n_ = n; }  // smaller only (protozero's contract); or within room made by reserve_additional
  void reserve_additional(std::size_t count) {
    if (cap_ - n_ < count) grow(count);
  }
  // Trades storage with a buffer written elsewhere (ChunkWriter): between whole messages only.
  void swap_storage(std::unique_ptr<char[]>& p, std::size_t& n, std::size_t& cap) {
    std::swap(p_, p);
    std::swap(n_, n);
    std::swap(cap_, cap);
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

// Fields written straight at a pointer into room the caller made (Writer::tail) for all of them:
// No room checked per field, nothing copied after.
// A nested message's length is written after its fields, in the one byte left for it (moved up
// in the rare case of a longer one): no size computed beforehand.
class RawMessage {
 public:
  explicit RawMessage(char* p) : p_(p) {}
  [[gnu::always_inline]] void add_varint(std::uint32_t field, std::uint64_t v) {
    p_ = varint(varint(p_, std::uint64_t(field) << 3), v);
  }
  [[gnu::always_inline]] void add_fixed64(std::uint32_t field, std::uint64_t v) {
    char* p = varint(p_, (std::uint64_t(field) << 3) | 1);
    std::memcpy(p, &v, 8);  // little-endian (x86-64, aarch64)
    p_ = p + 8;
  }
  [[gnu::always_inline]] void add_varints_message(std::uint32_t field, std::uint32_t f1, std::uint64_t v1, std::uint32_t f2 = 0,
                                                  std::uint64_t v2 = 0) {
    char* p = varint(p_, (std::uint64_t(field) << 3) | 2);
    char* const len = p;
    p = varint(varint(p + 1, std::uint64_t(f1) << 3), v1);
    if (f2 != 0) p = varint(varint(p, std::uint64_t(f2) << 3), v2);
    p_ = close(len, p);
  }
  [[gnu::always_inline]] void add_varint_string_message(std::uint32_t field, std::uint32_t f1, std::uint64_t v1, std::uint32_t f2,
                                                        std::string_view s) {
    char* p = varint(p_, (std::uint64_t(field) << 3) | 2);
    char* const len = p;
    p = varint(varint(p + 1, std::uint64_t(f1) << 3), v1);
    p = varint(varint(p, (std::uint64_t(f2) << 3) | 2), s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p_ = close(len, p + s.size());
  }
  char* pos() const { return p_; }
  void skip(std::size_t n) { p_ += n; }
  // The most bytes each call can write (a string's own bytes aside).
  static constexpr std::size_t kMaxVarintField = 20, kMaxVarintsMessage = 60, kMaxFixed64 = 18;
  static constexpr std::size_t kMaxStringMessage = 50;
  static std::size_t varint_size(std::uint64_t v) { return (static_cast<std::size_t>(std::bit_width(v | 1)) + 6) / 7; }
  [[gnu::always_inline]] static char* varint(char* p, std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    return p;
  }
  // The length of the message whose bytes run from len + 1 to end, into the byte at len; returns
  // the message's end (later by the length's extra bytes when it needs more than one).
  [[gnu::always_inline]] static char* close(char* len, char* end) {
    const std::size_t n = static_cast<std::size_t>(end - len - 1);
    if (n < 0x80) [[likely]] {
      *len = static_cast<char>(n);
      return end;
    }
    const std::size_t extra = varint_size(n) - 1;
    std::memmove(len + 1 + extra, len + 1, n);
    varint(len, n);
    return end + extra;
  }

 private:
  char* p_;
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
  // Hands the bytes written so far to w and goes on in the storage it gives back (or a new one).
  void hand_over(ChunkWriter& w) {
    assert(stack_.size() == 1);
    ChunkWriter::Chunk c;
    buf_.swap_storage(c.data, c.size, c.capacity);
    const std::size_t cap = c.capacity;
    w.write(c);
    if (c.data == nullptr || c.capacity < cap) c = {std::unique_ptr<char[]>(new char[cap]), 0, cap};
    buf_.swap_storage(c.data, c.size, c.capacity);
  }

  void add_varint(std::uint32_t field, std::uint64_t v) { top().add_uint64(field, v); }
  // int32 and int64 fields: a negative value is its 64-bit two's complement (ten bytes).
  void add_int(std::uint32_t field, std::int64_t v) { top().add_int64(field, v); }
  void add_bool(std::uint32_t field, bool v) { top().add_bool(field, v); }
  void add_fixed64(std::uint32_t field, std::uint64_t v) { top().add_fixed64(field, v); }
  // Room for `bytes` more at the end, for top-level fields written in place (RawMessage); then
  // commit(end) keeps what was written up to end.
  char* tail(std::size_t bytes) {
    assert(stack_.size() == 1);
    buf_.reserve_additional(bytes);
    return buf_.data() + buf_.size();
  }
  void commit(const char* end) { buf_.resize(static_cast<std::size_t>(end - buf_.data())); }
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
