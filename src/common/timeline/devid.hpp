// Kokkos device ids. Kokkos 3.4/3.5 put the device type in the top 8 bits and nothing else;
// 3.6+ split the word into 8 bits type, 7 bits device number and 17 bits instance. Both read
// the same way: the old encoding is the new one with device 0 and instance 0.
#pragma once

#include <cstdint>
#include <string>

namespace kob {

struct DecodedDevice {
  std::uint32_t type;      // Kokkos::Tools::Experimental::DeviceType
  std::uint32_t device;    // device number (0 for host backends)
  std::uint32_t instance;  // execution space instance
  const char* type_name;   // "Serial", "OpenMP", ...
};

DecodedDevice decode_devid(std::uint32_t devid);

// "OpenMP", or "Cuda device 1" when the device number is not 0.
std::string device_label(std::uint32_t devid);

}  // namespace kob
