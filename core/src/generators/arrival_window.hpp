// Parameters shared by the open-loop arrival generators: when arrivals start (start_s,
// default: the service's arrival) and when they stop (after duration_s, after count
// arrivals, or whichever comes first).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "gpumux/json_reader.hpp"
#include "gpumux/time.hpp"

namespace gpumux::generators {

inline constexpr std::size_t kMaxArrivals = 10'000'000;

/// A non-negative (or, with `positive`, strictly positive) number of at most 1e9 (seconds or
/// the key's unit); errors name the key.
inline double bounded(JsonReader& r, const std::string& key, bool positive) {
  const double v = r.required_number(key);
  if (positive ? !(v > 0) : !(v >= 0)) r.fail(key, positive ? "must be > 0" : "must be >= 0");
  if (v > 1e9) r.fail(key, "out of range (more than 1e9)");
  return v;
}

struct ArrivalWindow {
  std::optional<TimeNs> start_ns;
  std::optional<DurationNs> duration_ns;
  std::optional<std::uint64_t> count;

  /// Reads start_s, duration_s and count; at least one of duration_s and count is required.
  static ArrivalWindow read(JsonReader& r) {
    ArrivalWindow w;
    if (r.has("start_s")) w.start_ns = seconds_to_ns(bounded(r, "start_s", false));
    if (r.has("duration_s")) w.duration_ns = seconds_to_ns(bounded(r, "duration_s", true));
    if (r.has("count")) {
      const std::int64_t c = r.required_int("count");
      if (c < 1 || static_cast<std::uint64_t>(c) > kMaxArrivals) {
        r.fail("count", "must be in [1, " + std::to_string(kMaxArrivals) + "]");
      }
      w.count = static_cast<std::uint64_t>(c);
    }
    if (!w.duration_ns && !w.count) r.fail("", "needs duration_s or count (or both)");
    return w;
  }
};

}  // namespace gpumux::generators
