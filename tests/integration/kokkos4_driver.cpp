// Calls the library's Kokkos hooks in the order Kokkos 4.x (interface version 20240906) does, as
// no Kokkos 4.x is installed here: init_library, request_tool_settings (requires_global_fencing
// preset to true, as 4.x does), provide_tool_programming_interface (a fence function that
// counts), then either print_help + finalize + exit(0) (--kokkos-tools-help) or parse_args and
// the kernels. Like Kokkos, it fences before every kernel hook when the tool keeps global
// fencing on. It prints how many fences ran before each kernel end was recorded.
//
// Usage: kokkos4_driver LIB [driver options] [-- tool args for parse_args]
//   --kokkos-tools-help   print the tool's help the way Kokkos 4.x does, then finalize and exit
//   --kernels=N           N kernels "flood_kernel" on the main thread (default 5)
//   --worker-kernels=M    first, M kernels "worker_kernel" on a second thread (default 0)
//   --unique-names        each flood kernel has a name of its own ("flood_kernel N": every launch
//                         interns a new name), and "ready" is printed once the first has ended (a
//                         signal sent after it finds at least one kernel recorded, however slow
//                         the machine)
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct DeviceInfo {
  std::size_t device_id;
};
struct ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};
struct ToolInterface {
  void (*fence)(std::uint32_t);
  void (*padding[31])();
};

int g_tool_fences = 0;
void tool_fence(std::uint32_t) { ++g_tool_fences; }

template <class F>
F sym(void* h, const char* name) {
  return reinterpret_cast<F>(dlsym(h, name));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) return 2;
  bool help = false, unique_names = false;
  int kernels = 5, worker_kernels = 0;
  std::vector<char*> tool_args{argv[1]};  // Kokkos 4.x passes the library name first
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      for (++i; i < argc; ++i) tool_args.push_back(argv[i]);
    } else if (std::strcmp(argv[i], "--kokkos-tools-help") == 0) {
      help = true;
    } else if (std::strncmp(argv[i], "--kernels=", 10) == 0) {
      kernels = std::atoi(argv[i] + 10);
    } else if (std::strcmp(argv[i], "--unique-names") == 0) {
      unique_names = true;
    } else if (std::strncmp(argv[i], "--worker-kernels=", 17) == 0) {
      worker_kernels = std::atoi(argv[i] + 17);
    }
  }

  auto init = sym<void (*)(int, std::uint64_t, std::uint32_t, DeviceInfo*)>(h, "kokkosp_init_library");
  auto fin = sym<void (*)()>(h, "kokkosp_finalize_library");
  auto parse = sym<void (*)(int, char**)>(h, "kokkosp_parse_args");
  auto print_help = sym<void (*)(char*)>(h, "kokkosp_print_help");
  auto settings = sym<void (*)(std::uint32_t, ToolSettings*)>(h, "kokkosp_request_tool_settings");
  auto provide = sym<void (*)(std::uint32_t, ToolInterface)>(h, "kokkosp_provide_tool_programming_interface");
  auto begin_for = sym<void (*)(const char*, std::uint32_t, std::uint64_t*)>(h, "kokkosp_begin_parallel_for");
  auto end_for = sym<void (*)(std::uint64_t)>(h, "kokkosp_end_parallel_for");

  DeviceInfo dev{0x01000001};
  init(0, 20240906, 1, &dev);
  ToolSettings s{};
  s.requires_global_fencing = true;
  settings(1, &s);
  ToolInterface iface{};
  iface.fence = tool_fence;
  provide(1, iface);
  if (help) {
    print_help(argv[0]);
    fin();
    std::exit(EXIT_SUCCESS);
  }
  parse(static_cast<int>(tool_args.size()), tool_args.data());

  int global_fences = 0, fences_at_end = 0;
  auto kernel = [&](const char* name) {
    if (s.requires_global_fencing) ++global_fences;
    std::uint64_t id = 0;
    begin_for(name, 0x01000001, &id);
    const int before = global_fences + g_tool_fences;
    if (s.requires_global_fencing) ++global_fences;
    end_for(id);
    fences_at_end += global_fences + g_tool_fences - before;
  };
  if (worker_kernels > 0) {
    std::thread worker([&] {
      for (int i = 0; i < worker_kernels; ++i) kernel("worker_kernel");
    });
    worker.join();
  }
  char name[64];
  for (int i = 0; i < kernels; ++i) {
    if (unique_names) std::snprintf(name, sizeof name, "flood_kernel %d", i);
    kernel(unique_names ? name : "flood_kernel");
    if (unique_names && i == 0) {
      std::printf("ready\n");
      std::fflush(stdout);
    }
  }
  fin();
  std::printf("kernels %d fences_at_kernel_end %d global_fencing %d\n", kernels + worker_kernels, fences_at_end,
              s.requires_global_fencing ? 1 : 0);
  return 0;
}
