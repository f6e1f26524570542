// The .pftrace writer's protobuf layer hands every field to protozero: its bytes are protozero's own
// (shortest lengths for nested messages of 0, 127, 128, 16383, 16384 bytes, negative ints as ten
// bytes, fixed64, empty strings, empty nested messages left out).
#include <doctest/doctest.h>

#include <string>

#include <protozero/pbf_writer.hpp>

#include "common/formats/proto_writer.hpp"

namespace {

std::string bytes(const kob::proto::Writer& w) { return std::string(w.data(), w.size()); }

}  // namespace

TEST_CASE("proto writer: scalar fields as protozero writes them") {
  kob::proto::Writer w(16);  // small: the buffer grows as needed
  std::string ref;
  protozero::pbf_writer pw(ref);
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 300ull, 16383ull, 16384ull, ~0ull}) {
    w.add_varint(3, v);
    pw.add_uint64(3, v);
  }
  for (std::int64_t v : {0ll, -1ll, -128ll, 1ll << 40, -(1ll << 62)}) {
    w.add_int(4, v);
    pw.add_int64(4, v);
  }
  w.add_int(1, std::int32_t{-5});
  pw.add_int32(1, -5);
  w.add_bool(2, true);
  pw.add_bool(2, true);
  w.add_bool(2, false);
  pw.add_bool(2, false);
  w.add_fixed64(47, 0x0102030405060708ull);
  pw.add_fixed64(47, 0x0102030405060708ull);
  w.add_string(6, "name");
  pw.add_string(6, "name");
  w.add_string(8, {});
  pw.add_message(8, std::string());
  w.add_varint(60, 1);  // a field number above 15: a two-byte tag
  pw.add_uint32(60, 1);
  CHECK(bytes(w) == ref);
}

TEST_CASE("proto writer: nested messages get the shortest length, empty ones are left out") {
  for (std::size_t inner : {0u, 1u, 120u, 125u, 126u, 127u, 128u, 1000u, 16380u, 16381u, 16382u, 16383u, 16384u, 70000u}) {
    CAPTURE(inner);
    kob::proto::Writer w(64);
    std::string ref;
    {
      protozero::pbf_writer top(ref);
      protozero::pbf_writer pk(top, 1);
      pk.add_uint32(10, 7);
      {
        protozero::pbf_writer te(pk, 11);
        if (inner) te.add_string(2, std::string(inner, 'x'));
        protozero::pbf_writer empty(te, 4);  // no field: dropped with its tag
      }
      pk.add_uint32(13, 2);
    }
    {
      kob::proto::Nested pk(w, 1);
      w.add_varint(10, 7);
      {
        kob::proto::Nested te(w, 11);
        if (inner) w.add_string(2, std::string(inner, 'x'));
        kob::proto::Nested empty(w, 4);
      }
      w.add_varint(13, 2);
    }
    CHECK(bytes(w) == ref);
  }
}

TEST_CASE("proto writer: messages written in place are the bytes protozero's nested writer makes") {
  const std::uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, 1ull << 35, ~0ull};
  const std::string texts[] = {"", "x", std::string(127, 'a'), std::string(200, 'b')};
  for (std::uint64_t v1 : values) {
    for (std::uint64_t v2 : values) {
      CAPTURE(v1);
      CAPTURE(v2);
      char buf[256];
      kob::proto::RawMessage m(buf);
      m.add_varint(9, 2);
      m.add_varints_message(4, 1, v1, 3, v2);  // two fields
      m.add_varints_message(4, 1, v1);         // one field
      m.add_varints_message(4, 1, v1, 17, v2);  // a two-byte tag inside
      m.add_fixed64(47, v2);
      std::string ref;
      protozero::pbf_writer pw(ref);
      pw.add_uint64(9, 2);
      {
        protozero::pbf_writer a(pw, 4);
        a.add_uint64(1, v1);
        a.add_uint64(3, v2);
      }
      {
        protozero::pbf_writer a(pw, 4);
        a.add_uint64(1, v1);
      }
      {
        protozero::pbf_writer a(pw, 4);
        a.add_uint64(1, v1);
        a.add_uint64(17, v2);
      }
      pw.add_fixed64(47, v2);
      CHECK(std::string(buf, static_cast<std::size_t>(m.pos() - buf)) == ref);
    }
  }
  for (const std::string& t : texts) {
    for (std::uint64_t v : values) {
      char buf[512];
      kob::proto::RawMessage m(buf);
      m.add_varint_string_message(4, 1, v, 6, t);  // 200 bytes: its length moved up a byte
      m.add_varint(23, v);
      std::string ref;
      protozero::pbf_writer pw(ref);
      {
        protozero::pbf_writer a(pw, 4);
        a.add_uint64(1, v);
        a.add_string(6, t);
      }
      pw.add_uint64(23, v);
      CHECK(std::string(buf, static_cast<std::size_t>(m.pos() - buf)) == ref);
    }
  }
}
