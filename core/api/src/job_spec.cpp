// The closed-loop client's send times (job_spec.hpp).
#include "gpumux/api/job_spec.hpp"

#include <algorithm>

namespace gpumux {

TimeNs ClosedLoop::next_send_time(TimeNs t) const noexcept {
  TimeNs x = std::max(t, start_ns);
  if (x >= end_ns) return kTimeNever;
  if (on_ns > 0) {
    const DurationNs period = on_ns + off_ns;
    const DurationNs phase = (x - start_ns) % period;
    if (phase >= on_ns) {
      // In an "off" phase: wait for the next "on" phase to begin.
      const DurationNs wait = period - phase;
      if (x > kTimeNever - wait) return kTimeNever;
      x += wait;
    }
  }
  return x < end_ns ? x : kTimeNever;
}

}  // namespace gpumux
