// Paces emulated copies to a link's bandwidth. A copy reserves link time chunk by chunk; a
// reservation starts when both the copy is ready for it and the link is free, so concurrent
// copies in one direction interleave their chunks and share the bandwidth roughly equally
// (the simulator shares it max-min fairly), while a lone copy is never slowed by its own
// wake-up lateness: its next chunk is reserved from the end of the previous one, not from now.
//
// Thread rules: reserve() from any thread (mutex). Times are steady_clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <mutex>

namespace gpumux {

class LinkPacer {
 public:
  using Clock = std::chrono::steady_clock;

  /// Reserves `duration` of link time starting no earlier than `earliest`; returns its end.
  Clock::time_point reserve(Clock::time_point earliest, Clock::duration duration) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point start = std::max(earliest, free_at_);
    free_at_ = start + duration;
    return free_at_;
  }

 private:
  std::mutex mutex_;
  Clock::time_point free_at_{};
};

}  // namespace gpumux
