// Time in gpumux: signed 64-bit integer nanoseconds since the experiment started, on every
// platform (virtual in "sim", wall-clock derived on the real backends). Integers keep the
// simulator bit-for-bit deterministic; names carry the unit (`_ns`, `_s`).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "gpumux/api/enum_names.hpp"

namespace gpumux {

using TimeNs = std::int64_t;      ///< a point in time, ns since experiment start
using DurationNs = std::int64_t;  ///< a span of time, ns

inline constexpr TimeNs kTimeNever = std::numeric_limits<TimeNs>::max();

/// The longest duration a cost computation returns: 2^62 ns (about 146 years). Modelled costs
/// are clamped here rather than overflowing, and the sum of two clamped durations still fits
/// in an int64; the simulator saturates `now + duration` at kTimeNever.
inline constexpr DurationNs kMaxDurationNs = DurationNs{1} << 62;

/// a + b for durations in [0, kMaxDurationNs], clamped to kMaxDurationNs (never overflows).
constexpr DurationNs saturating_add(DurationNs a, DurationNs b) noexcept {
  return a >= kMaxDurationNs - b ? kMaxDurationNs : a + b;
}

/// count * d for count >= 0 and d in [0, kMaxDurationNs], clamped to kMaxDurationNs.
constexpr DurationNs saturating_mul(std::int64_t count, DurationNs d) noexcept {
  if (count <= 0 || d <= 0) return 0;
  return d > kMaxDurationNs / count ? kMaxDurationNs : count * d;
}

constexpr DurationNs us_to_ns(std::int64_t us) noexcept {
  return us * 1000;
}
constexpr DurationNs ms_to_ns(std::int64_t ms) noexcept {
  return ms * 1000 * 1000;
}

/// Converts seconds (from a config or trace) to ns, rounding to the nearest ns.
inline DurationNs seconds_to_ns(double seconds) noexcept {
  return static_cast<DurationNs>(std::llround(seconds * 1e9));
}
constexpr double ns_to_seconds(DurationNs ns) noexcept {
  return static_cast<double>(ns) * 1e-9;
}
constexpr double ns_to_ms(DurationNs ns) noexcept {
  return static_cast<double>(ns) * 1e-6;
}

/// Rounds a non-negative duration given in floating-point ns up to the next whole ns, so that
/// a modelled cost is never rounded down to zero. NaN and negatives give 0; anything at or
/// above kMaxDurationNs (infinity included) gives kMaxDurationNs instead of overflowing.
inline DurationNs ceil_ns(double ns) noexcept {
  if (!(ns > 0.0)) return 0;
  if (!(ns < static_cast<double>(kMaxDurationNs))) return kMaxDurationNs;
  return static_cast<DurationNs>(std::ceil(ns));
}

/// The unit a duration is written in, in a config or trace (the key's suffix: _s, _ms, _us).
enum class TimeUnit : std::uint8_t { Seconds, Milliseconds, Microseconds };
inline constexpr EnumNames<TimeUnit, 3> kTimeUnitNames{
    {{TimeUnit::Seconds, "s"}, {TimeUnit::Milliseconds, "ms"}, {TimeUnit::Microseconds, "us"}}};

/// The one rounding rule from a written duration to ns: round to nearest, halves away from
/// zero (std::llround(value * ns per unit)). 1.5 ns -> 2 ns, 0.0004 us -> 0 ns. The caller
/// bounds `value` (JsonReader allows at most kMaxDurationUnits units, far inside int64 ns).
[[nodiscard]] DurationNs duration_to_ns(double value, TimeUnit unit) noexcept;

}  // namespace gpumux
