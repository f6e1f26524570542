// A stand-in OpenMP runtime that offers only the OpenMP 5.0 target callbacks: ompt_set_callback
// answers "never" for target_emi, target_data_op_emi and target_submit_emi (and device_unload),
// "always" for the rest. Loads the library, starts it as an OMPT tool, then reports one device
// and one target region with a data op and a submit through the 5.0 callbacks, as libomptarget
// 5.0-style runtimes do: the runtime's target and host op ids, data ops and submits as points.
// The host's number is 1 (the initializer is told 1; device 0 is the only device initialised).
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include <omp-tools.h>

namespace {

ompt_callback_t g_cb[64];

ompt_set_result_t set_callback(ompt_callbacks_t event, ompt_callback_t cb) {
  if (event == ompt_callback_target_emi || event == ompt_callback_target_data_op_emi ||
      event == ompt_callback_target_submit_emi || event == ompt_callback_device_unload)
    return ompt_set_never;
  if (static_cast<int>(event) <= 0 || static_cast<int>(event) >= 64) return ompt_set_error;
  g_cb[event] = cb;
  return ompt_set_always;
}

ompt_interface_fn_t lookup(const char* name) {
  if (std::strcmp(name, "ompt_set_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&set_callback);
  return nullptr;  // no other entry point, no device tracing
}

template <class F>
F cb(ompt_callbacks_t event) {
  return reinterpret_cast<F>(g_cb[event]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) return 2;
  auto start = reinterpret_cast<ompt_start_tool_result_t* (*)(unsigned, const char*)>(dlsym(h, "ompt_start_tool"));
  if (!start) return 2;
  ompt_start_tool_result_t* tool = start(201811, "fake 5.0 target runtime");
  if (!tool || !tool->initialize(&lookup, 1, &tool->tool_data)) return 3;

  if (auto f = cb<ompt_callback_device_initialize_t>(ompt_callback_device_initialize))
    f(0, "fake-dev", nullptr, &lookup, "no documentation");
  static char host_buf[256], dev_buf[256];
  ompt_data_t task{};
  auto target = cb<ompt_callback_target_t>(ompt_callback_target);
  auto data_op = cb<ompt_callback_target_data_op_t>(ompt_callback_target_data_op);
  auto submit = cb<ompt_callback_target_submit_t>(ompt_callback_target_submit);
  if (!target || !data_op || !submit) {
    std::printf("5.0 target callbacks not registered\n");
    return 4;
  }
  target(ompt_target, ompt_scope_begin, 0, &task, 1000, nullptr);
  data_op(1000, 2000, ompt_target_data_alloc, host_buf, 1, dev_buf, 0, 256, nullptr);
  data_op(1000, 2001, ompt_target_data_transfer_to_device, host_buf, 1, dev_buf, 0, 256, nullptr);
  submit(1000, 2002, 3);
  data_op(1000, 2003, ompt_target_data_transfer_from_device, dev_buf, 0, host_buf, 1, 256, nullptr);
  data_op(1000, 2004, ompt_target_data_delete, dev_buf, 0, nullptr, -1, 0, nullptr);
  target(ompt_target, ompt_scope_end, 0, &task, 1000, nullptr);
  if (auto f = cb<ompt_callback_device_finalize_t>(ompt_callback_device_finalize)) f(0);
  tool->finalize(&tool->tool_data);
  std::printf("done\n");
  return 0;
}
