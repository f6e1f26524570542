#include "common/timeline/devid.hpp"

namespace kob {

DecodedDevice decode_devid(std::uint32_t devid) {
  // Order of Kokkos::Tools::Experimental::DeviceType.
  static constexpr const char* kTypes[] = {"Serial", "OpenMP", "Cuda", "HIP", "OpenMPTarget",
                                           "HPX",    "Threads", "SYCL", "OpenACC", "Unknown"};
  DecodedDevice d;
  d.type = devid >> 24;
  d.device = (devid >> 17) & 0x7fu;
  d.instance = devid & 0x1ffffu;
  d.type_name = d.type < sizeof(kTypes) / sizeof(kTypes[0]) ? kTypes[d.type] : "Unknown";
  return d;
}

std::string device_label(std::uint32_t devid) {
  const DecodedDevice d = decode_devid(devid);
  std::string s = d.type_name;
  if (d.device != 0) s += " device " + std::to_string(d.device);
  return s;
}

}  // namespace kob
