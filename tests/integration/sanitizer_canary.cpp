// Sanitizer build only: a program with the bugs the sanitizer run must catch, one per argument
// ("heap-overflow", "signed-overflow", "leak"; in the ThreadSanitizer build "data-race"), so that test_sanitizer_canary.py can check that a
// finding stops the program with the sanitizer's exit code and that the harness flags it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (std::strcmp(what, "heap-overflow") == 0) {
    char* p = static_cast<char*>(std::malloc(16));
    std::memset(p, 'x', 16);
    volatile char c = p[16];  // one past the block
    std::free(p);
    return c == 'x' ? 3 : 0;
  }
  if (std::strcmp(what, "signed-overflow") == 0) {
    volatile int big = 2147483647;
    const int r = big + argc;  // argc >= 2
    return r == 0 ? 3 : 0;
  }
  if (std::strcmp(what, "leak") == 0) {
    void* volatile p = std::malloc(1000);
    p = nullptr;
    (void)p;
    return 0;
  }
  if (std::strcmp(what, "data-race") == 0) {
    static int shared = 0;  // two threads, no synchronisation between their writes
    std::thread a([] { for (int i = 0; i < 1000; ++i) shared = shared + 1; });
    std::thread b([] { for (int i = 0; i < 1000; ++i) shared = shared + 1; });
    a.join();
    b.join();
    return shared < 0 ? 3 : 0;
  }
  std::puts("clean");
  return 0;
}
