// Time arithmetic shared by SimDevice's files (sim_device.cpp, sim_device_rates.cpp). Private
// to sim/src. Pure functions; times in ns.
#pragma once

#include <cmath>

#include "gpumux/api/time.hpp"

namespace gpumux::sim_device_detail {

/// ceil_ns (time.hpp), exactly, without std::ceil's libm call (baseline x86-64 has no
/// rounding instruction, and this runs per op and pass): truncation is exact below 2^63, plus
/// one when a fraction was cut off.
inline DurationNs ceil_ns_fast(double ns) noexcept {
  if (!(ns > 0.0)) return 0;
  if (!(ns < static_cast<double>(kMaxDurationNs))) return kMaxDurationNs;
  const auto whole = static_cast<DurationNs>(ns);
  return static_cast<double>(whole) < ns ? whole + 1 : whole;
}

// ns until `work` is done at `rate`, rounded up to a whole ns. The tolerance keeps floating
// point noise from pushing an exact quotient (8 MiB at 12 B/ns, 10 ms at rate 0.4) one ns late.
inline DurationNs time_to_finish(double work, double rate) noexcept {
  const double ns = rate == 1.0 ? work : work / rate;  // x / 1 == x exactly; saves a division
  if (!(ns < 4e18)) return kTimeNever;
  return ceil_ns_fast(ns - (ns * 1e-14 + 1e-9));
}

inline TimeNs add_saturated(TimeNs t, DurationNs d) noexcept {
  return d >= kTimeNever - t ? kTimeNever : t + d;
}

inline bool positive_finite(double v) noexcept {
  return v > 0.0 && std::isfinite(v);
}

}  // namespace gpumux::sim_device_detail
