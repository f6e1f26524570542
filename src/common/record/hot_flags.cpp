#include "common/record/hot_flags.hpp"

namespace kob {

constinit HotFlags g_hot;

}  // namespace kob
