// The Kokkos Tools C ABI (Kokkos 3.4 to 4.x), declared here so that the library depends on no
// Kokkos installation. Layouts match impl/Kokkos_Profiling_C_Interface.h.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

struct Kokkos_Profiling_KokkosPDeviceInfo {
  std::size_t deviceID;
};

struct Kokkos_Profiling_SpaceHandle {
  char name[64];
};

using Kokkos_Tools_toolInvokedFenceFunction = void (*)(const std::uint32_t);
using Kokkos_Tools_functionPointer = void (*)();

struct Kokkos_Tools_ToolProgrammingInterface {
  Kokkos_Tools_toolInvokedFenceFunction fence;
  Kokkos_Tools_functionPointer padding[31];
};

struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};
}
