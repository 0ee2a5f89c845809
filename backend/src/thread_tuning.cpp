#include "gpumux/backend/thread_tuning.hpp"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace gpumux {

void reduce_timer_slack() noexcept {
#if defined(__linux__)
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
}

}  // namespace gpumux
