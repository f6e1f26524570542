#include "common/support/deferred_signal.hpp"

namespace kob::deferred_signal {

constinit thread_local int t_depth __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local int t_pending __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace kob::deferred_signal
