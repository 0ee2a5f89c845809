// An online execution-time estimate (D38): the last N measurements of one quantity
// (the device time of a service's batches of one size; the solo-equivalent time of its
// requests), queried as an empirical distribution: percentiles, CDF, mean. The engine feeds
// one per (service, batch size) and one per service from completions; policies read them
// through Context (Clockwork's "p99 of the last 10", Orloj's per-application distributions).
//
// Units: ns. Thread rules: runtime thread only (queries sort lazily, so even a const query
// may touch the cache).
#pragma once

#include <cstdint>
#include <vector>

#include "gpumux/api/time.hpp"

namespace gpumux {

class ExecTimeWindow {
 public:
  /// Keeps the last `capacity` samples (>= 1).
  explicit ExecTimeWindow(std::size_t capacity = 1000);

  void add(DurationNs sample);

  /// Samples held (at most the capacity) and ever added.
  [[nodiscard]] std::size_t count() const noexcept { return ring_.size(); }
  [[nodiscard]] std::uint64_t total_added() const noexcept { return added_; }
  [[nodiscard]] bool empty() const noexcept { return ring_.empty(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  /// Nearest-rank percentile (q in [0, 100]) of the last `last` samples (0 = all held); 0 when
  /// empty. q = 99 over the last 10 is the 10th smallest of 10 (nearest rank: ceil(0.99 x 10)).
  [[nodiscard]] DurationNs percentile(double q, std::size_t last = 0) const;
  /// Fraction of the held samples <= x (the empirical CDF); 0 when empty.
  [[nodiscard]] double cdf(DurationNs x) const;
  /// Mean of the held samples; 0 when empty.
  [[nodiscard]] double mean() const noexcept;
  /// The held samples, oldest first.
  [[nodiscard]] std::vector<DurationNs> samples() const;

 private:
  const std::vector<DurationNs>& sorted() const;

  std::size_t capacity_;
  std::vector<DurationNs> ring_;
  std::size_t next_ = 0;  // where the next sample goes once the ring is full
  std::uint64_t added_ = 0;
  DurationNs sum_ = 0;  // exact (samples are < 1e13 ns, the window < 1e5 of them)
  mutable std::vector<DurationNs> sorted_;
  mutable bool sorted_valid_ = false;
};

}  // namespace gpumux
