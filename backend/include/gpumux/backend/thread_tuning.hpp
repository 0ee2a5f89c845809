// Small per-thread tweaks for the real-time backends.
#pragma once

namespace gpumux {

/// Linux: sets the calling thread's timer slack to 1 ns, so that timed waits wake close to
/// their deadline (the default slack is 50 us). A no-op elsewhere. Affects the calling thread.
void reduce_timer_slack() noexcept;

}  // namespace gpumux
