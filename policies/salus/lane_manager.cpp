#include "salus/lane_manager.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpumux::policies::salus {

std::uint64_t LaneManager::Lane::max_peak_bytes() const noexcept {
  std::uint64_t m = 0;
  for (const Resident& r : residents) m = std::max(m, r.peak_bytes);
  return m;
}

LaneManager::LaneManager(std::uint64_t capacity_bytes, LaneMode mode, bool share_lanes)
    : capacity_bytes_(capacity_bytes),
      free_bytes_(capacity_bytes),
      mode_(mode),
      share_lanes_(share_lanes) {
  if (mode == LaneMode::Single && !share_lanes) {
    throw std::invalid_argument("a single whole-GPU lane is always shared");
  }
}

std::uint64_t LaneManager::inflated_persistent(std::uint64_t persistent_bytes) noexcept {
  return (persistent_bytes * 11 + 9) / 10;
}

std::uint64_t LaneManager::lane_demand(std::uint64_t persistent_bytes,
                                       std::uint64_t ephemeral_bytes) const noexcept {
  const std::uint64_t base = inflated_persistent(persistent_bytes) + ephemeral_bytes;
  return std::min(capacity_bytes_, (base * 105 + 99) / 100);
}

std::optional<LaneId> LaneManager::admit(JobId job, std::uint64_t persistent_bytes,
                                         std::uint64_t ephemeral_bytes) {
  if (lane_of(job) != nullptr) throw std::logic_error("job is already in a lane");
  const std::uint64_t m = lane_demand(persistent_bytes, ephemeral_bytes);
  // P' never exceeds M: a capped M means the job takes the whole GPU.
  const std::uint64_t p = std::min(inflated_persistent(persistent_bytes), m);
  const std::uint64_t peak = m - p;

  // 1. A new lane: of exactly M, or of the whole GPU in Single mode.
  const std::uint64_t new_size = mode_ == LaneMode::Single ? capacity_bytes_ : m;
  if (free_bytes_ >= new_size) {
    Lane lane;
    lane.id = next_id_++;
    lane.size_bytes = new_size;
    lane.available_bytes = new_size - p;
    lane.residents.push_back({job, p, peak});
    free_bytes_ -= new_size;
    lanes_.push_back(std::move(lane));
    return lanes_.back().id;
  }
  if (!share_lanes_) return std::nullopt;

  // 2. An existing lane, by increasing available memory; ties by creation order.
  std::vector<std::size_t> order(lanes_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
    return lanes_[a].available_bytes < lanes_[b].available_bytes;
  });
  for (std::size_t i : order) {
    Lane& lane = lanes_[i];
    if (p + std::max(peak, lane.max_peak_bytes()) <= lane.available_bytes) {
      lane.available_bytes -= p;
      lane.residents.push_back({job, p, peak});
      return lane.id;
    }
  }
  return std::nullopt;  // 3. pending
}

bool LaneManager::release(JobId job) {
  for (auto it = lanes_.begin(); it != lanes_.end(); ++it) {
    auto& rs = it->residents;
    const auto r =
        std::find_if(rs.begin(), rs.end(), [job](const Resident& x) { return x.job == job; });
    if (r == rs.end()) continue;
    it->available_bytes += r->persistent_bytes;
    rs.erase(r);
    if (!rs.empty()) return false;
    free_bytes_ += it->size_bytes;
    lanes_.erase(it);
    return true;
  }
  return false;
}

const LaneManager::Lane* LaneManager::lane_of(JobId job) const noexcept {
  for (const Lane& lane : lanes_) {
    for (const Resident& r : lane.residents) {
      if (r.job == job) return &lane;
    }
  }
  return nullptr;
}

const LaneManager::Lane* LaneManager::find(LaneId id) const noexcept {
  for (const Lane& lane : lanes_) {
    if (lane.id == id) return &lane;
  }
  return nullptr;
}

}  // namespace gpumux::policies::salus
