// What resizing a running data-parallel training job costs: Fluid's released code resizes a
// trial by stopping it and restarting it on the new GPUs from its last checkpoint
// (SymbioticLab/Fluid fluid/fluid_executor.py `_ensure_W`; fluid/trainer.py shuts the workers
// down, restarts them and reloads the state_dict). The paper's resize cost epsilon (Fluid,
// MLSys'21, Algorithm 2) has no value; the parts below are our model, each paid once per
// resize:
//   stop     the old workers are killed; their device memory is free once the processes are
//            reaped (profile process_reap_ns). Assumption: the restart waits for it (the new
//            workers may land on the same GPUs).
//   restart  a cold worker process: the profile's process_start_ns (interpreter, framework
//            import, library init) + context_create_ns + model_build_ns(model) (construction
//            and reading the weights from host storage). The w new workers start in parallel,
//            so this is paid once, not w times.
//   reload   the checkpoint (weights + optimizer state) copied to each GPU over its own host
//            link as any pinned copy alone (host_link.hpp: h2d_latency_ns + ceil(bytes /
//            h2d_gbps)); in parallel on every GPU (assumption: one host link per GPU, a
//            shared root complex not modelled).
//   rollback the iterations since the last checkpointed epoch are lost: progress goes back to
//            the epoch boundary and they are run again at the new width. lost_work_ns is what
//            they had cost at the old width (reported; the rerun is not a separate delay).
//
// Units: ns, bytes. Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <span>

#include "gpumux/api/time.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

/// A job's progress when it is resized.
struct ResizeProgress {
  std::uint64_t iterations_done = 0;       ///< completed iterations since the job started
  std::uint64_t iterations_per_epoch = 1;  ///< checkpoint interval (> 0): one epoch
  DurationNs iteration_ns = 0;             ///< one iteration at the old width
};

struct ResizeCost {
  DurationNs stop_ns = 0;
  DurationNs restart_ns = 0;
  DurationNs reload_ns = 0;
  std::uint64_t rollback_iterations = 0;  ///< iterations_done % iterations_per_epoch
  DurationNs lost_work_ns = 0;            ///< rollback_iterations x the old iteration_ns

  /// stop + restart + reload: the time the job makes no progress.
  [[nodiscard]] DurationNs downtime_ns() const noexcept {
    return saturating_add(saturating_add(stop_ns, restart_ns), reload_ns);
  }
  /// downtime + lost work: the whole price of the resize.
  [[nodiscard]] DurationNs total_ns() const noexcept {
    return saturating_add(downtime_ns(), lost_work_ns);
  }
};

/// Bytes of a training checkpoint: weights plus the optimizer's state slots (momentum 1, Adam
/// 2), each weight_bytes long as in the training memory layout (op.hpp); halved in fp16 / bf16
/// like the cost model's weight bytes.
[[nodiscard]] std::uint64_t checkpoint_bytes(const Model& model, Optimizer optimizer,
                                             Precision precision) noexcept;

/// The parts of one resize of a job training `model` on GPUs of `profile`.
[[nodiscard]] ResizeCost resize_cost(const DeviceProfile& profile, const Model& model,
                                     Optimizer optimizer, Precision precision,
                                     const ResizeProgress& progress) noexcept;

/// A resize planned at `at_ns` (time since the job started): from then on an iteration takes
/// `iteration_ns` (the new width's).
struct PlannedResize {
  DurationNs at_ns = 0;
  DurationNs iteration_ns = 0;
};

/// When a job of `iterations` iterations (`iterations_per_epoch` per checkpoint), starting at
/// `first_iteration_ns` per iteration, finishes under `resizes` (by at_ns, non-decreasing),
/// each paying `downtime_ns` once and rolling back to its last epoch boundary. A resize
/// requested during an earlier one's downtime takes effect when that downtime ends; one at or
/// after the finish is not applied. The planning view of a resize (Fluid's h_{i,w} with the
/// overhead epsilon), and a check that the engine charges each resize once. Throws
/// std::invalid_argument for iterations_per_epoch == 0, a non-positive iteration time or
/// resizes out of order.
[[nodiscard]] DurationNs finish_with_resizes_ns(std::uint64_t iterations,
                                                std::uint64_t iterations_per_epoch,
                                                DurationNs first_iteration_ns,
                                                std::span<const PlannedResize> resizes,
                                                DurationNs downtime_ns);

}  // namespace gpumux
