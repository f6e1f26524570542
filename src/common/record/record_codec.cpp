#include "common/record/record_codec.hpp"

namespace kob::codec {

namespace {
inline std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}
}  // namespace

std::size_t encode(const Record* recs, std::size_t n, std::uint64_t base_tick, std::uint8_t* out) {
  // On the stack, not thread_local: the library has an initial-exec TLS variable, so all of its TLS
  // must fit the few KiB of static TLS a dlopen may get ("cannot allocate memory in static TLS").
  LastFields last{};
  std::uint8_t* p = out;
  std::uint64_t tick = base_tick;
  for (std::size_t k = 0; k < n; ++k) {
    const Record& r = recs[k];
    const auto type = static_cast<std::uint8_t>(r.type);  // record.hpp keeps every Ev below kTypes
    last.enter(type);
    const std::uint64_t v[8] = {r.sub, r.a, r.u[0], r.u[1], r.u[2], r.u[3], r.u[4], r.u[5]};
    std::uint64_t* l = last.v[type];
    unsigned m = 0;
    for (unsigned i = 0; i < 8; ++i) m |= static_cast<unsigned>(v[i] != l[i]) << i;
    if (m == last.mask[type]) {
      *p++ = static_cast<std::uint8_t>(type | kSameMask);
      p = put_varint(p, zigzag(r.tick - tick));
    } else {
      *p++ = type;
      p = put_varint(p, zigzag(r.tick - tick));
      *p++ = static_cast<std::uint8_t>(m);
      last.mask[type] = static_cast<std::uint8_t>(m);
    }
    tick = r.tick;
    for (unsigned bits = m; bits != 0; bits &= bits - 1) {
      const unsigned i = static_cast<unsigned>(__builtin_ctz(bits));
      p = put_varint(p, zigzag(v[i] - l[i]));
      l[i] = v[i];
    }
    last.leave(type);
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace kob::codec
