// A Kokkos tool that crashes as it starts (a store through a null pointer in
// kokkosp_init_library), for the test that a chained tool's crash leaves the program and this
// library running (test_kokkos_chain.py). Its other hooks would count, were they ever called.
#include <cstdint>
#include <cstdio>

namespace {
int* volatile g_nowhere = nullptr;
int g_calls = 0;
}  // namespace

extern "C" {
void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) { *g_nowhere = 1; }
void kokkosp_begin_parallel_for(const char*, std::uint32_t, std::uint64_t*) { ++g_calls; }
void kokkosp_finalize_library() { std::fprintf(stderr, "crash_tool: finalize after %d kernels\n", g_calls); }
}
