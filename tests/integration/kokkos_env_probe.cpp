// A Kokkos program (Kokkos 3.4.1, linked statically) that prints which Kokkos tool variables it
// was started with, then runs one kernel "probe_kernel".
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  // The names built at run time: kob run tells a Kokkos by the variable names its binary holds,
  // and this program's own must not count.
  const std::string tools = std::string("KOKKOS_TOOLS") + "_LIBS", profile = std::string("KOKKOS_PROFILE") + "_LIBRARY";
  std::printf("%s %s, %s %s\n", tools.c_str(), std::getenv(tools.c_str()) ? "set" : "unset", profile.c_str(),
              std::getenv(profile.c_str()) ? "set" : "unset");
  Kokkos::initialize(argc, argv);
  {
    Kokkos::View<int*> v("v", 16);
    Kokkos::parallel_for("probe_kernel", 16, KOKKOS_LAMBDA(int i) { v(i) = i; });
  }
  Kokkos::finalize();
  return 0;
}
