#include "common/record/record_codec.hpp"

#include <cstring>

#include "common/support/hot_path.hpp"

namespace kob::codec {

namespace {
// Most values are deltas that fit one or two bytes.
KOB_HOT_INLINE std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  if (KOB_LIKELY(v < 0x80)) {
    *p = static_cast<std::uint8_t>(v);
    return p + 1;
  }
  if (v < 0x4000) {
    p[0] = static_cast<std::uint8_t>(v | 0x80);
    p[1] = static_cast<std::uint8_t>(v >> 7);
    return p + 2;
  }
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
    *p++ = type;
    p = put_varint(p, zigzag(r.tick - tick));
    tick = r.tick;
    const std::uint64_t v[8] = {r.sub, r.a, r.u[0], r.u[1], r.u[2], r.u[3], r.u[4], r.u[5]};
    std::uint64_t* l = last.v[type];
    last.enter(type);
    // The changed fields go out as they are compared (one branch per field, which the branch
    // predictor learns per record type), the mask byte before them filled in after.
    std::uint8_t* mask = p++;
    unsigned m = 0;
    for (unsigned i = 0; i < 8; ++i) {
      if (v[i] != l[i]) {
        m |= 1u << i;
        p = put_varint(p, zigzag(v[i] - l[i]));
        l[i] = v[i];
      }
    }
    *mask = static_cast<std::uint8_t>(m);
    last.leave(type);
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace kob::codec
