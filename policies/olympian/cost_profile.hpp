// Olympian's per-model cost profile: the GPU duration of every node of a model served at a
// batch size, measured during its first K (warm-up) requests and frozen afterwards.
//
// The paper profiles each model offline; the code (USC-NSL/TF-TF-Downloads, direct_session.cc)
// collects TF's cost model online during warm-up runs of each session (one traced run, then
// scheduling from run 15). Here the K warm-up requests of a (model, batch) are all measured and
// a node's cost is the median of its samples (TF averages; the median also shrugs off a sample
// disturbed by a neighbour, should a platform ever time a node imprecisely).
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpumux/api/time.hpp"

namespace gpumux::policies::olympian {

/// TF-Serving profiles a servable (a model) at a batch size: that pair selects a profile.
struct ProfileKey {
  std::string model;
  std::uint32_t batch = 0;
  // clang-tidy 14 reads the synthesized `< 0` of a defaulted <=> as a null-pointer comparison.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  friend auto operator<=>(const ProfileKey&, const ProfileKey&) = default;
};

class CostProfile {
 public:
  explicit CostProfile(std::uint64_t warmup_requests) : warmup_requests_(warmup_requests) {}

  /// Whether scheduling may use the profile: all warm-up requests have completed.
  [[nodiscard]] bool ready() const noexcept { return completed_ >= warmup_requests_; }

  /// A measured duration of the node starting at layer `first_layer` (ignored once ready).
  void add_sample(std::uint32_t first_layer, DurationNs duration_ns) {
    if (!ready()) samples_[first_layer].push_back(duration_ns);
  }

  /// A warm-up request completed; the K-th one freezes the profile.
  void warmup_request_completed() {
    if (ready()) return;
    if (++completed_ == warmup_requests_) freeze();
  }

  /// The profiled cost of the node starting at `first_layer`; none if it was never measured.
  [[nodiscard]] std::optional<DurationNs> cost(std::uint32_t first_layer) const {
    if (!ready()) return std::nullopt;
    const auto it = cost_.find(first_layer);
    if (it == cost_.end()) return std::nullopt;
    return it->second;
  }

  /// Profiled cost summed over the measured nodes (a request's GPU duration when all were).
  [[nodiscard]] DurationNs total_ns() const noexcept {
    DurationNs t = 0;
    for (const auto& [node, c] : cost_) t += c;
    return t;
  }
  [[nodiscard]] std::size_t nodes() const noexcept { return cost_.size(); }

 private:
  void freeze() {
    for (auto& [node, v] : samples_) {
      std::sort(v.begin(), v.end());
      cost_[node] = v[(v.size() - 1) / 2];  // lower median: an integer, deterministic
    }
    samples_.clear();
  }

  std::uint64_t warmup_requests_;
  std::uint64_t completed_ = 0;
  std::map<std::uint32_t, std::vector<DurationNs>> samples_;  ///< first layer -> durations
  std::map<std::uint32_t, DurationNs> cost_;                  ///< first layer -> cost
};

}  // namespace gpumux::policies::olympian
