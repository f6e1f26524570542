// What the parts of the OpenMP tool chain share (ompt_chain.cpp starts the child and registers,
// chain_callbacks.cpp holds the callbacks that reach both tools, chain_inquiry.cpp what the child
// asks of the runtime): each tool's callback per event, and the wrappers.
#pragma once

#include <omp-tools.h>

#include <atomic>

namespace kob::omp::chain {

constexpr int kEvents = 64;  // above every ompt_callbacks_t value (OpenMP 5.2: 37)

// Each tool's callback by event, null where it has none. Set at start-up (the child may set its
// own later); read on every callback.
extern std::atomic<ompt_callback_t> g_ours[kEvents];
extern std::atomic<ompt_callback_t> g_theirs[kEvents];

template <class Fn>
inline Fn ours(ompt_callbacks_t e) {
  return reinterpret_cast<Fn>(g_ours[e].load(std::memory_order_relaxed));
}
template <class Fn>
inline Fn theirs(ompt_callbacks_t e) {
  return reinterpret_cast<Fn>(g_theirs[e].load(std::memory_order_relaxed));
}

// The callback registered with the runtime for an event while a child runs: it calls both tools,
// each with its own ompt_data_t words. Null for an event it does not know.
ompt_callback_t wrapper(int event);
// Events whose wrapper is registered while a child runs even when neither tool wants them: the
// ends that give the pairs back, and the begins that make them.
bool keeps_words(int event);

// The device's own lookup, given to the child when this library does not trace devices, else one
// that keeps device tracing ours (chain_inquiry.cpp).
ompt_function_lookup_t device_lookup_for_child(ompt_function_lookup_t runtime_lookup);
// The child's tool lookup (chain_inquiry.cpp): set_callback, get_callback and the inquiries that
// return data words go through this library; the rest are the runtime's.
ompt_interface_fn_t child_lookup(const char* name);
void set_runtime_lookup(ompt_function_lookup_t lookup);
// Registers what the tables say for an event with the runtime; its answer (ompt_chain.cpp).
int install(int event);
// The child's path, for messages.
const char* child_path();

}  // namespace kob::omp::chain
