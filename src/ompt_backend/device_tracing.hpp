// The OMPT device tracing interface (OpenMP 5.1, 4.6.2): where a device offers it, its records
// arrive in buffers we hand out, are translated to host time and recorded as OmpDeviceRecord.
#pragma once

#include <omp-tools.h>

namespace kob::omp::device_tracing {

// From the device_initialize callback. Looks up the device's tracing entry points and starts
// tracing when they are there. Returns true when the device is traced through buffers.
bool on_device_initialize(int device_num, const char* type, ompt_device_t* device, ompt_function_lookup_t lookup,
                          const char* documentation);
// From the device_finalize callback: flush and stop that device.
void on_device_finalize(int device_num);
// Flushes and stops every device still traced, so that no buffer is lost. Idempotent.
void finalize_all();

}  // namespace kob::omp::device_tracing
