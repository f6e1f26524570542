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

// --device-trace-region=NAME: the Kokkos region hooks call these through the session's region
// listener (only while the option is set).
// Tracing of every traced device is resumed while a region named NAME is open on some thread,
// paused otherwise.
void region_push(const char* name);
void region_pop();

// What the buffer pool holds, per traced device: a fixed number of fixed-size buffers allocated
// when tracing starts, reused as the runtime hands them back; more only when all are out.
inline constexpr unsigned long kBufferBytes = 512ul * 1024;
inline constexpr int kInitialBuffers = 4;
inline constexpr int kMaxBuffers = 64;
// Device numbers traced: 0 .. kMaxDevices - 1 (others use the callbacks only).
inline constexpr int kMaxDevices = 64;

}  // namespace kob::omp::device_tracing
