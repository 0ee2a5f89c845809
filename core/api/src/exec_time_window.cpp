// ExecTimeWindow (gpumux/api/exec_time_window.hpp): a ring of the last N samples with lazily
// sorted queries.
#include "gpumux/api/exec_time_window.hpp"

#include <algorithm>
#include <cmath>

namespace gpumux {

ExecTimeWindow::ExecTimeWindow(std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)) {}

void ExecTimeWindow::add(DurationNs sample) {
  ++added_;
  sum_ += sample;
  sorted_valid_ = false;
  if (ring_.size() < capacity_) {
    ring_.push_back(sample);
    return;
  }
  sum_ -= ring_[next_];
  ring_[next_] = sample;
  next_ = (next_ + 1) % capacity_;
}

std::vector<DurationNs> ExecTimeWindow::samples() const {
  std::vector<DurationNs> out;
  out.reserve(ring_.size());
  for (std::size_t i = 0; i < ring_.size(); ++i) out.push_back(ring_[(next_ + i) % ring_.size()]);
  return out;
}

const std::vector<DurationNs>& ExecTimeWindow::sorted() const {
  if (!sorted_valid_) {
    sorted_ = ring_;
    std::sort(sorted_.begin(), sorted_.end());
    sorted_valid_ = true;
  }
  return sorted_;
}

DurationNs ExecTimeWindow::percentile(double q, std::size_t last) const {
  if (ring_.empty()) return 0;
  const double p = std::clamp(q, 0.0, 100.0);
  auto rank_index = [p](std::size_t n) {
    // p x n first: exact for whole p and n, so a whole rank is never pushed one up (0.07 x 100
    // is 7.000000000000001 in floating point; 7 x 100 / 100 is 7).
    const double rank = std::ceil(p * static_cast<double>(n) / 100.0);
    return std::min(rank < 1 ? std::size_t{0} : static_cast<std::size_t>(rank) - 1, n - 1);
  };
  if (last == 0 || last >= ring_.size()) {
    const auto& s = sorted();
    return s[rank_index(s.size())];
  }
  std::vector<DurationNs> recent = samples();
  recent.erase(recent.begin(), recent.end() - static_cast<std::ptrdiff_t>(last));
  const std::size_t idx = rank_index(recent.size());
  std::nth_element(recent.begin(), recent.begin() + static_cast<std::ptrdiff_t>(idx), recent.end());
  return recent[idx];
}

double ExecTimeWindow::cdf(DurationNs x) const {
  if (ring_.empty()) return 0;
  const auto& s = sorted();
  const auto at_or_below = std::upper_bound(s.begin(), s.end(), x) - s.begin();
  return static_cast<double>(at_or_below) / static_cast<double>(s.size());
}

double ExecTimeWindow::mean() const noexcept {
  return ring_.empty() ? 0.0 : static_cast<double>(sum_) / static_cast<double>(ring_.size());
}

}  // namespace gpumux
