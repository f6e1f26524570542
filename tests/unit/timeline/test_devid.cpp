// Kokkos device id decoding: 3.x (type only) and 4.x (type, device, instance) encodings.
#include <doctest/doctest.h>

#include <string>

#include "common/timeline/devid.hpp"

using kob::decode_devid;
using kob::device_label;

namespace {
void check(std::uint32_t devid, std::uint32_t type, std::uint32_t device, std::uint32_t instance, const char* name) {
  CAPTURE(devid);
  const auto d = decode_devid(devid);
  CHECK(d.type == type);
  CHECK(d.device == device);
  CHECK(d.instance == instance);
  CHECK(std::string(d.type_name) == name);
}
}  // namespace

TEST_CASE("devid: 3.x encodings, type in the top 8 bits") {
  check(0x00000000, 0, 0, 0, "Serial");
  check(0x01000000, 1, 0, 0, "OpenMP");
  check(0x02000000, 2, 0, 0, "Cuda");
  check(0x03000000, 3, 0, 0, "HIP");
  check(0x04000000, 4, 0, 0, "OpenMPTarget");
  check(0x05000000, 5, 0, 0, "HPX");
  check(0x06000000, 6, 0, 0, "Threads");
  check(0x07000000, 7, 0, 0, "SYCL");
  check(0x08000000, 8, 0, 0, "OpenACC");
  CHECK(device_label(0) == "Serial");
  CHECK(device_label(0x01000000) == "OpenMP");
  CHECK(device_label(0x04000000) == "OpenMPTarget");
}

TEST_CASE("devid: 4.x encodings with device number and instance") {
  check(0x01000001, 1, 0, 1, "OpenMP");
  CHECK(device_label(0x01000001) == "OpenMP");  // instance is not part of the label
  check(0x02020001, 2, 1, 1, "Cuda");
  CHECK(device_label(0x02020001) == "Cuda device 1");
  check(0x04FFFFFF, 4, 127, 0x1FFFF, "OpenMPTarget");  // all device and instance bits set
  CHECK(device_label(0x04FFFFFF) == "OpenMPTarget device 127");
  check(0x0201FFFF, 2, 0, 0x1FFFF, "Cuda");  // largest instance on device 0
}

TEST_CASE("devid: out-of-range types are Unknown") {
  check(0x09000000, 9, 0, 0, "Unknown");  // Kokkos' own Unknown
  check(0x0A000000, 10, 0, 0, "Unknown");
  check(0xFF000000, 255, 0, 0, "Unknown");
  check(0xFFFFFFFF, 255, 127, 0x1FFFF, "Unknown");
  CHECK(device_label(0x0A000000) == "Unknown");
  CHECK(device_label(0xFF040000) == "Unknown device 2");
}
