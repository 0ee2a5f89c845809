// Fluid sharing of one resource (compute capacity, one direction of a host link) among the
// activities using it, SimGrid-style. Pure, deterministic, allocation-free functions; the
// number of concurrent activities on one device is small, so O(n^2) is fine.
#pragma once

#include <cstddef>
#include <span>

namespace gpumux {

namespace detail {

// Residual capacity below this fraction of the total counts as exhausted, so that e.g.
// demands 0.7 + 0.3 leave exactly nothing for a lower priority level.
inline constexpr double kShareEpsilon = 1e-12;

// Water-fills `capacity` among the entries i with in_set(i); writes shares[i] for them only.
// Returns the capacity left.
template <class InSet>
double fill_subset(double capacity, std::span<const double> caps, std::span<double> shares,
                   InSet in_set) noexcept {
  const std::size_t n = caps.size();
  std::size_t open = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (in_set(i)) {
      shares[i] = -1.0;  // not yet fixed
      ++open;
    }
  }
  double left = capacity > 0.0 ? capacity : 0.0;
  while (open > 0) {
    const double level = left / static_cast<double>(open);
    bool fixed_any = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!in_set(i) || shares[i] >= 0.0) continue;
      const double cap = caps[i] > 0.0 ? caps[i] : 0.0;
      if (cap <= level) {  // fixing it only raises the level of the others
        shares[i] = cap;
        left -= cap;
        --open;
        fixed_any = true;
      }
    }
    if (left < 0.0) left = 0.0;
    if (!fixed_any) {
      for (std::size_t i = 0; i < n; ++i) {
        if (in_set(i) && shares[i] < 0.0) shares[i] = level;
      }
      left = 0.0;
      open = 0;
    }
  }
  if (left <= kShareEpsilon * capacity) left = 0.0;
  return left;
}

}  // namespace detail

/// Max-min fair division ("water-filling") of `capacity` among consumers with individual caps:
/// each gets min(cap, L), with L the largest level such that the shares sum to <= capacity.
/// shares.size() must equal caps.size(). Returns the capacity left unused.
inline double water_fill(double capacity, std::span<const double> caps,
                         std::span<double> shares) noexcept {
  return detail::fill_subset(capacity, caps, shares, [](std::size_t) { return true; });
}

/// Strict priority between levels, water-filling within a level: levels are served from the
/// largest priority value (most urgent) down, each water-filling what the previous ones left.
/// All three spans have the same size. Returns the capacity left unused.
inline double fill_by_priority(double capacity, std::span<const int> priorities,
                               std::span<const double> caps, std::span<double> shares) noexcept {
  const std::size_t n = caps.size();
  double left = capacity;
  bool have_prev = false;
  int prev = 0;
  for (;;) {
    bool found = false;
    int level = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (have_prev && priorities[i] >= prev) continue;
      if (!found || priorities[i] > level) {
        level = priorities[i];
        found = true;
      }
    }
    if (!found) return left;
    left = detail::fill_subset(left, caps, shares,
                               [&](std::size_t i) { return priorities[i] == level; });
    prev = level;
    have_prev = true;
  }
}

}  // namespace gpumux
