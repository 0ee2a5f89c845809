// The rounding rule from a written duration to ns (time.hpp).
#include "gpumux/api/time.hpp"

#include <cmath>

namespace gpumux {

DurationNs duration_to_ns(double value, TimeUnit unit) noexcept {
  double per_unit = 1e9;
  if (unit == TimeUnit::Milliseconds) per_unit = 1e6;
  if (unit == TimeUnit::Microseconds) per_unit = 1e3;
  return static_cast<DurationNs>(std::llround(value * per_unit));
}

}  // namespace gpumux
