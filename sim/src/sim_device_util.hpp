// Time arithmetic shared by SimDevice's files (sim_device.cpp, sim_device_rates.cpp). Private
// to sim/src. Pure functions; times in ns.
#pragma once

#include <cmath>

#include "gpumux/time.hpp"

namespace gpumux::sim_device_detail {

// ns until `work` is done at `rate`, rounded up to a whole ns. The tolerance keeps floating
// point noise from pushing an exact quotient (8 MiB at 12 B/ns, 10 ms at rate 0.4) one ns late.
inline DurationNs time_to_finish(double work, double rate) noexcept {
  const double ns = work / rate;
  if (!(ns < 4e18)) return kTimeNever;
  return ceil_ns(ns - (ns * 1e-14 + 1e-9));
}

inline TimeNs add_saturated(TimeNs t, DurationNs d) noexcept {
  return d >= kTimeNever - t ? kTimeNever : t + d;
}

inline bool positive_finite(double v) noexcept {
  return v > 0.0 && std::isfinite(v);
}

}  // namespace gpumux::sim_device_detail
