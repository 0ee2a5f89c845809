// Salus' GPU lanes: contiguous memory budgets on one GPU, each with its own stream. A job is
// admitted into a lane only when the lane can hold its persistent memory plus the lane's
// shared ephemeral region (sized for the largest peak among its residents), so jobs that
// run one iteration at a time per lane can never run out of memory.
//
// Bookkeeping only (no Context): the rule of Salus'
// `src/oplibraries/tensorflow/device/gpu/lane/lanemgr.cpp` (SymbioticLab/Salus):
//   P' = 1.1 P,  M = 1.05 (P' + T) capped at the capacity, peak = M - P'
//   1. unassigned memory >= M            -> new lane of exactly M (lane.available = M - P')
//   2. else, lanes by increasing available memory (ties: creation order): the first with
//      P' + max(peak, max peak in lane) <= lane.available takes the job (available -= P')
//   3. else the job stays pending (the caller retries when memory is returned)
// A lane is destroyed when its last job leaves and its memory returns to the free pool.
// Integer arithmetic throughout (ceil of the 10 % and 5 % inflations), so it is exact and
// deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpumux/api/ids.hpp"

namespace gpumux::policies::salus {

/// How lanes are cut out of the GPU.
enum class LaneMode : std::uint8_t {
  PerJob,  ///< Salus' default: a new lane of exactly M per job when memory allows
  Single   ///< SALUS_DISABLE_LANEMGR=1: one lane of the whole GPU that every job shares
};

using LaneId = std::uint32_t;

class LaneManager {
 public:
  struct Resident {
    JobId job{};
    std::uint64_t persistent_bytes = 0;  ///< P' (inflated)
    std::uint64_t peak_bytes = 0;        ///< M - P': its claim on the lane's ephemeral region
  };
  struct Lane {
    LaneId id = 0;
    std::uint64_t size_bytes = 0;
    std::uint64_t available_bytes = 0;  ///< size minus the residents' P'
    std::vector<Resident> residents;    ///< admission order
    [[nodiscard]] std::uint64_t max_peak_bytes() const noexcept;
  };

  /// `share_lanes` = false is SALUS_DISABLE_SHARED_LANE=1 (step 2 never places a job); it
  /// must be true in Single mode. Throws std::invalid_argument otherwise.
  LaneManager(std::uint64_t capacity_bytes, LaneMode mode, bool share_lanes = true);

  /// P' = ceil(1.1 P).
  [[nodiscard]] static std::uint64_t inflated_persistent(std::uint64_t persistent_bytes) noexcept;
  /// M = min(capacity, ceil(1.05 (P' + T))).
  [[nodiscard]] std::uint64_t lane_demand(std::uint64_t persistent_bytes,
                                          std::uint64_t ephemeral_bytes) const noexcept;

  /// Places a job (steps 1-2 above); nullopt = pending (step 3). The job must not be placed.
  std::optional<LaneId> admit(JobId job, std::uint64_t persistent_bytes,
                              std::uint64_t ephemeral_bytes);
  /// Removes a placed job; returns true when its lane was destroyed. Unknown job: false.
  bool release(JobId job);

  [[nodiscard]] const Lane* lane_of(JobId job) const noexcept;
  [[nodiscard]] const Lane* find(LaneId lane) const noexcept;
  /// Live lanes in creation order.
  [[nodiscard]] const std::vector<Lane>& lanes() const noexcept { return lanes_; }
  /// Memory not assigned to any lane.
  [[nodiscard]] std::uint64_t free_bytes() const noexcept { return free_bytes_; }
  [[nodiscard]] std::uint64_t capacity_bytes() const noexcept { return capacity_bytes_; }
  [[nodiscard]] LaneMode mode() const noexcept { return mode_; }

 private:
  std::uint64_t capacity_bytes_;
  std::uint64_t free_bytes_;
  LaneMode mode_;
  bool share_lanes_;
  LaneId next_id_ = 0;
  std::vector<Lane> lanes_;
};

}  // namespace gpumux::policies::salus
