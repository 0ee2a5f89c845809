// Salus' candidate sessions: per lane, the jobs that may have an iteration to start, so that
// picking the next iteration walks those instead of every resident (with `lanes: "single"` one
// lane holds every service). Invariant kept by the owner: every runnable session is listed.
// The owner adds a job whenever it may become runnable (admission, its state loaded, an
// iteration end, a failed op); a walk drops the jobs it finds not runnable. A request is
// pending from its arrival, but its hook comes later (arrivals at one instant are hooked one
// after the other), so add_arrived() lists the jobs of every request arrived since its last
// call, read from the Context.
//
// Thread rules: one owner (the policy's hooks). Ids as in lane_manager.hpp; O(1) per add,
// O(listed) per walk.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/policy.hpp"
#include "salus/lane_manager.hpp"

namespace gpumux::policies::salus {

class Candidates {
 public:
  /// Lists `job` in `lane` unless it is listed.
  void add(LaneId lane, JobId job) {
    const std::size_t j = index_of(job);
    if (j >= listed_.size()) listed_.resize(j + 1, 0);
    if (listed_[j] != 0) return;
    listed_[j] = 1;
    lists_[lane].push_back(job);
  }
  /// Walks `lane`'s list in order; keeps the jobs for which keep(job) is true, drops the rest.
  template <class Keep>
  void retain(LaneId lane, Keep keep) {
    const auto it = lists_.find(lane);
    if (it == lists_.end()) return;
    std::vector<JobId>& list = it->second;
    std::size_t kept = 0;
    for (const JobId job : list) {
      if (keep(job)) {
        list[kept++] = job;
      } else {
        listed_[index_of(job)] = 0;
      }
    }
    list.resize(kept);
  }
  /// Forgets a lane that is gone (and unlists its jobs).
  void drop_lane(LaneId lane) {
    retain(lane, [](JobId) { return false; });
    lists_.erase(lane);
  }
  /// add(*lane_of(job), job) for the job of every request arrived since the last call
  /// (lane_of: std::optional<LaneId>(JobId), empty for a job without a session).
  template <class LaneOf>
  void add_arrived(const Context& ctx, LaneOf lane_of) {
    for (const std::size_t n = ctx.serving().request_count(); requests_seen_ < n;
         ++requests_seen_) {
      const JobId job = ctx.serving().request_job(RequestId{requests_seen_});
      if (const std::optional<LaneId> lane = lane_of(job)) add(*lane, job);
    }
  }

 private:
  std::map<LaneId, std::vector<JobId>> lists_;
  std::vector<std::uint8_t> listed_;  ///< by job index
  std::uint64_t requests_seen_ = 0;
};

}  // namespace gpumux::policies::salus
