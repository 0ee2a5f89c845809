#include "gpumux/backend/cuda/round_trip_stats.hpp"

#include <algorithm>
#include <cstdio>

namespace gpumux {

namespace {

double median_us(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid / 1e3;
}

}  // namespace

void RoundTripStats::op_done(std::uint32_t stream, TimeNs handed, TimeNs launched, TimeNs gpu_start,
                             TimeNs gpu_end, TimeNs callback, TimeNs seen) {
  if (stream >= previous_.size()) previous_.resize(stream + 1);
  Previous& p = previous_[stream];
  // Only a hand-off that waited for the predecessor's completion is a round trip.
  if (p.valid && handed >= p.seen) {
    total_.push_back(static_cast<double>(gpu_start - p.gpu_end));
    callback_.push_back(static_cast<double>(p.callback - p.gpu_end));
    post_.push_back(static_cast<double>(p.seen - p.callback));
    hand_.push_back(static_cast<double>(handed - p.seen));
    launch_.push_back(static_cast<double>(launched - handed));
    gpu_.push_back(static_cast<double>(gpu_start - launched));
  }
  p = Previous{true, gpu_end, callback, seen};
}

std::string RoundTripStats::report() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "round trips n=%zu: median total %.1f us = callback %.1f + post %.1f + hand %.1f "
                "+ launch %.1f + gpu %.1f (medians of each segment)",
                total_.size(), median_us(total_), median_us(callback_), median_us(post_),
                median_us(hand_), median_us(launch_), median_us(gpu_));
  return buf;
}

}  // namespace gpumux
