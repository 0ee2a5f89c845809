// SimDevice's rate solver: at what rate each running head progresses (the "Compute sharing" and
// copy rules of sim_device.hpp). step_streams lists the running heads per resource; the compute
// engine and each link direction share among their own lists only.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpumux/sim/fluid_share.hpp"
#include "gpumux/sim/kernel_share.hpp"
#include "gpumux/sim/sim_device.hpp"
#include "sim_device_util.hpp"

namespace gpumux {

using sim_device_detail::add_saturated;
using sim_device_detail::time_to_finish;

void SimDevice::recompute_rates(TimeNs now) {
  solve_rates(now);
  TimeNs next = kTimeNever;
  for (const Running& r : running_compute_) next = std::min(next, queues_.op(r.op).finish_ns);
  for (const Running& r : running_h2d_) next = std::min(next, queues_.op(r.op).finish_ns);
  for (const Running& r : running_d2h_) next = std::min(next, queues_.op(r.op).finish_ns);
  next_finish_ns_ = next;
}

void SimDevice::solve_rates(TimeNs now) {
  rates_idempotent_ = true;
  // Compute engine: priority water-filling among the ops of the TSG holding the GPU; the
  // others stand still. One holder (the common case) needs no scratch lists.
  std::size_t holders = 0;
  std::uint32_t lone = 0;
  for (const Running& run : running_compute_) {
    const bool holds_gpu =
        !is_gpu() ||
        (!switching_ && loaded_ == static_cast<std::int64_t>(queues_.stream(run.stream).tsg));
    if (holds_gpu) {
      ++holders;
      lone = run.op;
    } else {
      OpState& op = queues_.op(run.op);
      op.rate = 0.0;
      op.finish_ns = kTimeNever;
    }
  }
  if (holders <= 1) {
    // Nobody, or one op alone: what the general path computes for it, without its passes.
    // fill_by_priority gives a lone op min(cap, 1) (one level, one entry: level = 1 / 1), its
    // speed is 1 (no co-runner to wait for) and the efficiency 1 (fewer than two shares), so
    // rate = 1 x share / cap.
    if (holders == 1) {
      OpState& op = queues_.op(lone);
      const double cap = op.cap;
      const double claim = cap > 0.0 ? cap : 0.0;
      const double share = claim <= 1.0 ? claim : 1.0;
      // share == cap (cap <= 1) divides to exactly 1: skip the division (the common case).
      op.rate = cap > 0.0 ? (share == cap ? 1.0 : 1.0 * share / cap) : 0.0;
      op.finish_ns =
          op.rate > 0.0 ? add_saturated(now, time_to_finish(op.remaining, op.rate)) : kTimeNever;
    }
    share_links(now);
    return;
  }
  scratch_ops_.clear();
  scratch_prio_.clear();
  scratch_caps_.clear();
  for (const Running& run : running_compute_) {
    const StreamState& s = queues_.stream(run.stream);
    if (is_gpu() && (switching_ || loaded_ != static_cast<std::int64_t>(s.tsg))) continue;
    scratch_ops_.push_back(run.op);
    scratch_prio_.push_back(s.priority);
    scratch_caps_.push_back(queues_.op(run.op).cap);
  }
  const std::size_t n = scratch_ops_.size();
  scratch_shares_.resize(n);
  scratch_speeds_.assign(n, 1.0);
  if (is_gpu() && n >= 2) {
    // Kernel level: each op's kernels wait for the others' GPU-filling kernels to retire
    // (kernel_share.hpp); an op then occupies demand x (device busy fraction) x speed.
    scratch_loads_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const OpSpec& spec = queues_.op(scratch_ops_[i]).spec;
      const auto solo = static_cast<double>(spec.solo_ns);
      const double gpu = spec.gpu_ns > 0 ? static_cast<double>(spec.gpu_ns) : solo;
      scratch_loads_.push_back(KernelLoad{solo, gpu, static_cast<double>(spec.kernels),
                                          spec.kernel_wait_ns, spec.kernel_wait_priority_ns,
                                          scratch_prio_[i]});
    }
    kernel_wait_speeds(scratch_loads_, scratch_speeds_, &kernel_wait_total_);
    rates_idempotent_ = false;  // the warm start moved
    for (std::size_t i = 0; i < n; ++i) {
      const KernelLoad& k = scratch_loads_[i];
      if (k.solo_ns > 0 && k.gpu_ns < k.solo_ns) scratch_caps_[i] *= k.gpu_ns / k.solo_ns;
      scratch_caps_[i] *= scratch_speeds_[i];
    }
  }
  fill_by_priority(1.0, scratch_prio_, scratch_caps_, scratch_shares_);
  std::size_t active = 0;
  for (const double share : scratch_shares_) active += share > 0.0 ? 1 : 0;
  double efficiency = 1.0;
  if (active >= 2) {
    efficiency =
        is_gpu() && loaded_ == mps_tsg_ ? profile_.mps_efficiency : profile_.concurrent_efficiency;
  }
  for (std::size_t i = 0; i < n; ++i) {
    OpState& op = queues_.op(scratch_ops_[i]);
    // share / cap is the fraction of its (speed-limited) claim the op got.
    op.rate =
        scratch_caps_[i] > 0.0 ? scratch_speeds_[i] * scratch_shares_[i] / scratch_caps_[i] : 0.0;
    if (efficiency != 1.0) op.rate *= efficiency;
    op.finish_ns =
        op.rate > 0.0 ? add_saturated(now, time_to_finish(op.remaining, op.rate)) : kTimeNever;
  }
  share_links(now);
}

void SimDevice::share_links(TimeNs now) {
  if (!is_gpu()) return;
  if (!running_h2d_.empty()) share_link(running_h2d_, h2d_link_gbps_, now);
  if (!running_d2h_.empty()) share_link(running_d2h_, d2h_link_gbps_, now);
}

void SimDevice::share_link(const std::vector<Running>& ops, double bandwidth, TimeNs now) {
  if (ops.empty()) return;
  if (ops.size() == 1) {
    // One copy alone: what water_fill gives a single entry (min(cap, bandwidth), cap clamped
    // at 0), without the scratch lists.
    OpState& op = queues_.op(ops[0].op);
    const double cap = op.cap > 0.0 ? op.cap : 0.0;
    const double level = bandwidth > 0.0 ? bandwidth : 0.0;
    op.rate = cap <= level ? cap : level;
    op.finish_ns =
        op.rate > 0.0 ? add_saturated(now, time_to_finish(op.remaining, op.rate)) : kTimeNever;
    return;
  }
  scratch_ops_.clear();
  scratch_caps_.clear();
  for (const Running& run : ops) {
    scratch_ops_.push_back(run.op);
    scratch_caps_.push_back(queues_.op(run.op).cap);
  }
  if (scratch_ops_.empty()) return;
  scratch_shares_.resize(scratch_ops_.size());
  water_fill(bandwidth, scratch_caps_, scratch_shares_);
  for (std::size_t i = 0; i < scratch_ops_.size(); ++i) {
    OpState& op = queues_.op(scratch_ops_[i]);
    op.rate = scratch_shares_[i];
    op.finish_ns =
        op.rate > 0.0 ? add_saturated(now, time_to_finish(op.remaining, op.rate)) : kTimeNever;
  }
}

}  // namespace gpumux
