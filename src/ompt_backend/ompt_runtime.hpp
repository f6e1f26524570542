// The runtime entry points looked up at initialisation. Null when the runtime lacks one.
#pragma once

#include <omp-tools.h>

namespace kob::omp {

struct RuntimeEntryPoints {
  ompt_set_callback_t set_callback = nullptr;
  ompt_get_thread_data_t get_thread_data = nullptr;
  ompt_get_parallel_info_t get_parallel_info = nullptr;
  ompt_get_task_info_t get_task_info = nullptr;
  ompt_get_unique_id_t get_unique_id = nullptr;
  ompt_get_num_procs_t get_num_procs = nullptr;
  ompt_get_num_places_t get_num_places = nullptr;
  ompt_get_place_proc_ids_t get_place_proc_ids = nullptr;
  ompt_get_place_num_t get_place_num = nullptr;
  ompt_get_proc_id_t get_proc_id = nullptr;
  ompt_get_state_t get_state = nullptr;
  ompt_enumerate_states_t enumerate_states = nullptr;
  ompt_enumerate_mutex_impls_t enumerate_mutex_impls = nullptr;
  ompt_get_target_info_t get_target_info = nullptr;
  ompt_get_num_devices_t get_num_devices = nullptr;
  ompt_finalize_tool_t finalize_tool = nullptr;
};

extern RuntimeEntryPoints g_rt;

// The host's device number as the runtime gave it to initialize (-1 until then). libomp 19
// passes omp_get_initial_device() before libomptarget has counted its devices: 0, the number
// of a real device, while data ops name the host 4 (the device count). The timeline decides
// which numbers are the host (timeline.hpp, host_device).
extern int g_initial_device_num;

}  // namespace kob::omp
