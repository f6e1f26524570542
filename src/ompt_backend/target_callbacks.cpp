// Target offload callbacks (placeholder until implemented).
#include "ompt_backend/callback_table.hpp"

namespace kob::omp {

std::span<const CallbackEntry> target_callbacks() { return {}; }

}  // namespace kob::omp
