// The parts of a data-parallel job's resize and a job's finish time under planned resizes; the
// model and its assumptions are in resize_cost.hpp.
#include "gpumux/model/resize_cost.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/host_link.hpp"
#include "gpumux/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpumux {

std::uint64_t checkpoint_bytes(const Model& model, Optimizer optimizer,
                               Precision precision) noexcept {
  const bool half = precision == Precision::Fp16 || precision == Precision::Bf16;
  const std::uint64_t weights = half ? model.weight_bytes() / 2 : model.weight_bytes();
  return weights * (1 + std::uint64_t{optimizer_slots(optimizer)});
}

ResizeCost resize_cost(const DeviceProfile& profile, const Model& model, Optimizer optimizer,
                       Precision precision, const ResizeProgress& progress) noexcept {
  ResizeCost cost;
  cost.stop_ns = profile.process_reap_ns;
  cost.restart_ns =
      saturating_add(saturating_add(profile.process_start_ns, profile.context_create_ns),
                     profile.model_build_ns(model));
  // The checkpoint reload is a pinned host-to-device copy, timed as every copy alone is.
  cost.reload_ns = solo_copy_ns(profile, OpKind::CopyH2D,
                                checkpoint_bytes(model, optimizer, precision), /*pageable=*/false);
  const std::uint64_t per_epoch = std::max<std::uint64_t>(progress.iterations_per_epoch, 1);
  cost.rollback_iterations = progress.iterations_done % per_epoch;
  cost.lost_work_ns =
      saturating_mul(static_cast<std::int64_t>(cost.rollback_iterations), progress.iteration_ns);
  return cost;
}

DurationNs finish_with_resizes_ns(std::uint64_t iterations, std::uint64_t iterations_per_epoch,
                                  DurationNs first_iteration_ns,
                                  std::span<const PlannedResize> resizes, DurationNs downtime_ns) {
  if (iterations_per_epoch == 0) throw std::invalid_argument("iterations_per_epoch must be > 0");
  if (downtime_ns < 0) throw std::invalid_argument("downtime_ns must be >= 0");
  DurationNs segment_start = 0;  // when the current width starts computing
  DurationNs iteration_ns = first_iteration_ns;
  std::uint64_t done = 0;  // iterations kept at segment_start
  DurationNs previous_at = 0;
  for (const PlannedResize& r : resizes) {
    if (iteration_ns <= 0 || r.iteration_ns <= 0) {
      throw std::invalid_argument("iteration times must be > 0");
    }
    if (r.at_ns < previous_at) throw std::invalid_argument("resizes must be in time order");
    previous_at = r.at_ns;
    const auto remaining = static_cast<std::int64_t>(iterations - done);
    const DurationNs finish =
        saturating_add(segment_start, saturating_mul(remaining, iteration_ns));
    const DurationNs at = std::max(r.at_ns, segment_start);
    if (finish <= at) return finish;
    // Completed iterations up to the resize, then back to the last epoch boundary.
    done += static_cast<std::uint64_t>((at - segment_start) / iteration_ns);
    done -= done % iterations_per_epoch;
    segment_start = saturating_add(at, downtime_ns);
    iteration_ns = r.iteration_ns;
  }
  if (iteration_ns <= 0) throw std::invalid_argument("iteration times must be > 0");
  const auto remaining = static_cast<std::int64_t>(iterations - done);
  return saturating_add(segment_start, saturating_mul(remaining, iteration_ns));
}

}  // namespace gpumux
