// Protobuf wire encoding into one growing byte buffer, for the .pftrace writer: the few field
// types it uses and nested messages. A nested message gets a one-byte length and is widened (its
// bytes moved) only when it turns out to be 128 bytes or longer, which the trace's small packets
// never are; lengths are always written in their shortest form, as protobuf encoders do, so the
// bytes are those of any other encoder writing the same fields in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace kob::proto {

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

class Writer {
 public:
  explicit Writer(std::size_t capacity) : buf_(new char[capacity]), cap_(capacity) {}

  const char* data() const { return buf_.get(); }
  std::size_t size() const { return len_; }
  void clear() { len_ = 0; }

  void add_varint(std::uint32_t field, std::uint64_t v) {
    need(20);
    put_varint((std::uint64_t{field} << 3) | kVarint);
    put_varint(v);
  }
  // int32 and int64 fields: a negative value is its 64-bit two's complement (ten bytes).
  void add_int(std::uint32_t field, std::int64_t v) { add_varint(field, static_cast<std::uint64_t>(v)); }
  void add_bool(std::uint32_t field, bool v) { add_varint(field, v ? 1 : 0); }
  void add_fixed64(std::uint32_t field, std::uint64_t v) {
    need(18);
    put_varint((std::uint64_t{field} << 3) | kFixed64);
    std::memcpy(buf_.get() + len_, &v, 8);  // little-endian: the wire order on the machines we build for
    len_ += 8;
  }
  void add_string(std::uint32_t field, std::string_view s) {
    need(20 + s.size());
    put_varint((std::uint64_t{field} << 3) | kLengthDelimited);
    put_varint(s.size());
    if (!s.empty()) std::memcpy(buf_.get() + len_, s.data(), s.size());  // an empty view may have no data pointer
    len_ += s.size();
  }

  // A nested message: open it, write its fields, close it with what open returned. An empty one
  // is left out, tag included (as protozero does).
  struct Open {
    std::size_t tag_at, at;  // where its tag and its length byte are
  };
  Open open(std::uint32_t field) {
    need(11);
    const std::size_t tag_at = len_;
    put_varint((std::uint64_t{field} << 3) | kLengthDelimited);
    buf_[len_] = 0;
    return {tag_at, len_++};
  }
  void close(Open o) {
    const std::size_t n = len_ - o.at - 1;
    if (n - 1 < 0x7f) {  // 1..127 bytes: the length byte is all there is to write
      buf_[o.at] = static_cast<char>(n);
      return;
    }
    close_rare(o, n);
  }

 private:
  // An empty message (left out) or one of 128 bytes or more (its bytes moved to make room).
  __attribute__((noinline)) void close_rare(Open o, std::size_t n) {
    const std::size_t at = o.at;
    if (n == 0) {
      len_ = o.tag_at;
      return;
    }
    std::size_t width = 1;
    for (std::uint64_t v = n; v >= 0x80; v >>= 7) ++width;
    need(width - 1);
    char* p = buf_.get();
    std::memmove(p + at + width, p + at + 1, n);
    len_ += width - 1;
    std::size_t w = at;
    for (std::uint64_t v = n; ; v >>= 7) {
      if (v < 0x80) {
        p[w] = static_cast<char>(v);
        break;
      }
      p[w++] = static_cast<char>((v & 0x7f) | 0x80);
    }
  }

  void need(std::size_t n) {
    if (cap_ - len_ >= n) return;
    grow(n);
  }
  __attribute__((noinline)) void grow(std::size_t n) {
    std::size_t cap = cap_ * 2;
    while (cap - len_ < n) cap *= 2;
    std::unique_ptr<char[]> b(new char[cap]);
    std::memcpy(b.get(), buf_.get(), len_);
    buf_ = std::move(b);
    cap_ = cap;
  }
  void put_varint(std::uint64_t v) {
    char* p = buf_.get() + len_;
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    len_ = static_cast<std::size_t>(p - buf_.get());
  }

  std::unique_ptr<char[]> buf_;
  std::size_t cap_;
  std::size_t len_ = 0;
};

// A nested message closed at the end of its scope.
class Nested {
 public:
  Nested(Writer& w, std::uint32_t field) : w_(w), at_(w.open(field)) {}
  ~Nested() { w_.close(at_); }
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;

 private:
  Writer& w_;
  Writer::Open at_;
};

}  // namespace kob::proto
