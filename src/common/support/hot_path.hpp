// Annotations for the code that runs on the program's threads for every event (hooks, callbacks,
// the recorder's append).
#pragma once

#define KOB_LIKELY(x) __builtin_expect(!!(x), 1)
#define KOB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KOB_HOT_INLINE inline __attribute__((always_inline))

// A slow path that a hot function calls (a new thread, a full slot, no TSC): it saves every
// register it uses itself (clang's preserve_most), so that the hot function, which calls it only
// rarely, does not save and restore its own registers around every event for its sake (6 pushes,
// 6 pops and a stack adjustment per callback otherwise). Never inlined.
#if defined(__clang__) && defined(__x86_64__)
#define KOB_SLOW_PATH __attribute__((noinline, preserve_most))
#else
#define KOB_SLOW_PATH __attribute__((noinline))
#endif
