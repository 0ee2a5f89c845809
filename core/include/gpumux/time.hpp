// Time in gpumux: signed 64-bit integer nanoseconds since the experiment started, on every
// platform (virtual in "sim", wall-clock derived on the real backends). Integers keep the
// simulator bit-for-bit deterministic; names carry the unit (`_ns`, `_s`).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace gpumux {

using TimeNs = std::int64_t;      ///< a point in time, ns since experiment start
using DurationNs = std::int64_t;  ///< a span of time, ns

inline constexpr TimeNs kTimeNever = std::numeric_limits<TimeNs>::max();

constexpr DurationNs us_to_ns(std::int64_t us) noexcept { return us * 1000; }
constexpr DurationNs ms_to_ns(std::int64_t ms) noexcept { return ms * 1000 * 1000; }

/// Converts seconds (from a config or trace) to ns, rounding to the nearest ns.
inline DurationNs seconds_to_ns(double seconds) noexcept {
  return static_cast<DurationNs>(std::llround(seconds * 1e9));
}
constexpr double ns_to_seconds(DurationNs ns) noexcept { return static_cast<double>(ns) * 1e-9; }
constexpr double ns_to_ms(DurationNs ns) noexcept { return static_cast<double>(ns) * 1e-6; }

/// Rounds a non-negative duration given in floating-point ns up to the next whole ns, so that
/// a modelled cost is never rounded down to zero.
inline DurationNs ceil_ns(double ns) noexcept {
  if (!(ns > 0.0)) return 0;
  return static_cast<DurationNs>(std::ceil(ns));
}

}  // namespace gpumux
