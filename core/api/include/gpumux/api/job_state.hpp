// The engine's record of a job: its spec, phase, progress and where its weights live.
// Owned by the Engine, updated only on the runtime thread between hooks. Policies do not see
// it: they read a JobView (job_view.hpp, D18), which points here for the whole run.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "gpumux/api/allocation.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/job_spec.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/api/work.hpp"

namespace gpumux {

class Model;  // gpumux/model/model.hpp

enum class JobPhase : std::uint8_t {
  NotArrived,  ///< known from the trace, not yet arrived
  Waiting,     ///< arrived; nothing of it has run yet
  Running,     ///< some op of it has been submitted
  Finished,
  Rejected
};
[[nodiscard]] std::string_view to_string(JobPhase p) noexcept;

/// Where a job's dispatch cursor stands: unit (iteration or request ordinal), pass, and how
/// many layers of the pass are done. Ordered, so the Engine can rewind to the earliest
/// dropped op. (NOLINT on <=>: clang-tidy 14 reads its synthesized `< 0` as a null pointer.)
struct Cursor {
  std::uint64_t unit = 0;
  Pass pass = Pass::Forward;
  std::uint32_t layers_done = 0;
  friend auto operator<=>(const Cursor&, const Cursor&) = default;  // NOLINT(modernize-use-nullptr)
};

/// Residency of one layer's weights (and, for training, its gradients and optimizer state)
/// on one device.
enum class Residency : std::uint8_t { Absent, Loading, Resident };

struct DeviceResidency {
  /// Changes one layer's state, keeping the counts below (use this, not layers[i] = ...).
  void set(std::uint32_t layer, Residency r) noexcept {
    count(layers[layer], -1);
    layers[layer] = r;
    count(r, +1);
  }
  /// Resets every layer to `r`.
  void reset(std::size_t layer_count, Residency r) {
    layers.assign(layer_count, r);
    absent = r == Residency::Absent ? layer_count : 0;
    loading = r == Residency::Loading ? layer_count : 0;
  }
  std::size_t absent = 0;   ///< layers in state Absent (O(1) whole-model checks)
  std::size_t loading = 0;  ///< layers in state Loading

  /// By layer index; read-only for users (change with set/reset).
  std::vector<Residency> layers;
  std::vector<OpId> loading_op;         ///< valid where layers[i] == Loading
  std::vector<std::uint64_t> offsets;   ///< arena offset of each layer's weights when held
  std::vector<Allocation> allocations;  ///< weight/state memory held on this device
  Allocation activations;               ///< ephemeral memory of the open unit, if any
  std::uint32_t ops_in_flight = 0;      ///< this job's unfinished ops on this device
  std::uint64_t bytes = 0;              ///< total bytes held

 private:
  void count(Residency r, int delta) noexcept {
    const auto d = static_cast<std::size_t>(delta);  // -1 wraps: unsigned arithmetic
    if (r == Residency::Absent) absent += d;
    if (r == Residency::Loading) loading += d;
  }
};

struct JobState {
  JobId id{};
  const JobSpec* spec = nullptr;
  const Model* model = nullptr;
  std::uint32_t layer_count = 0;  ///< model->layer_count(), kept here for the views
  JobPhase phase = JobPhase::NotArrived;
  TimeNs arrival_ns = 0;
  TimeNs first_start_ns = -1;  ///< first op start, -1 before
  TimeNs finish_ns = -1;

  /// The device its compute is placed on (set by dispatch, load and migrate).
  DeviceId device{};

  // progress
  std::uint64_t iterations_done = 0;  ///< training
  /// Training: the job completes (or, a tuning trial, reaches its epoch budget) at this many
  /// iterations. spec->iterations for an ordinary job; a trial's grows with its budget.
  std::uint64_t iterations_target = 0;
  /// A tuning trial its tuner paused (it waits for a promotion): nothing to dispatch.
  bool paused = false;
  std::uint64_t requests_done = 0;         ///< inference
  std::uint64_t requests_dropped = 0;      ///< inference: dropped by the policy (D38)
  std::deque<RequestId> pending_requests;  ///< arrived, not finished or dropped, oldest first
  /// Requests served by the unit at the dispatch cursor (dynamic batching, D38): set when a
  /// unit's first op is dispatched, kept for its later ops.
  std::uint32_t open_batch = 1;
  /// Device time of the completed ops of the unit now completing (ops of a job run in order).
  DurationNs unit_device_ns = 0;
  Cursor dispatched;  ///< next work to dispatch
  Cursor completed;   ///< next work to complete
  OpId last_op{};     ///< the job's latest compute/migrate/delay op
  bool has_last_op = false;
  std::uint32_t ops_in_flight = 0;  ///< submitted compute/copy ops not yet finished
  DurationNs attained_ns = 0;       ///< device time of its completed compute ops
  std::uint64_t ops_completed = 0;

  /// Residency by device index (CPU devices: always resident).
  std::vector<DeviceResidency> residency;

  // data parallelism (ReplicaFacet::set_replicas, resize)
  /// The compute streams of a job trained on several GPUs, on distinct GPUs, the first the
  /// primary (dispatch's stream); empty for a job on one GPU (the dispatch's stream, as ever).
  std::vector<StreamId> replica_streams;
  std::vector<DeviceId> replica_devices;  ///< the GPU of each replica stream
  /// The latest op of the job on each replica (index 0 unused: the primary's is last_op);
  /// valid where replica_has_last[i].
  std::vector<OpId> replica_last_op;
  std::vector<bool> replica_has_last;
  /// Samples each replica computes per iteration: ceil(batch / width) (valid with replicas).
  std::uint32_t replica_batch = 0;
  /// The gradient all-reduce over the replicas, ns (ring_allreduce_ns at set_replicas).
  DurationNs allreduce_ns = 0;

  /// GPUs the job trains on at once (1 without replicas).
  [[nodiscard]] std::uint32_t width() const noexcept {
    return replica_streams.empty() ? 1 : static_cast<std::uint32_t>(replica_streams.size());
  }
  /// Samples one GPU computes per iteration: the batch, or a replica's share of it.
  [[nodiscard]] std::uint32_t samples_per_gpu() const noexcept {
    return replica_streams.size() > 1 ? replica_batch : spec->batch;
  }

  [[nodiscard]] bool training() const noexcept { return spec->kind == JobKind::Training; }
  [[nodiscard]] bool inference() const noexcept { return spec->kind == JobKind::Inference; }
  [[nodiscard]] bool done() const noexcept {
    return phase == JobPhase::Finished || phase == JobPhase::Rejected;
  }
  [[nodiscard]] bool active() const noexcept {
    return phase == JobPhase::Waiting || phase == JobPhase::Running;
  }
  /// Whether dispatch() has something to issue now (a training iteration or a request in
  /// progress or waiting).
  [[nodiscard]] bool has_dispatchable_work() const noexcept;
  /// Whether an iteration/request has begun (some of it dispatched) and not ended.
  [[nodiscard]] bool unit_in_progress() const noexcept {
    return dispatched != Cursor{completed.unit, Pass::Forward, 0};
  }
  /// Layers of the current pass not yet dispatched.
  [[nodiscard]] std::uint32_t layers_left_in_pass() const noexcept;
  /// Whether all of [range] is Resident on `device` (CPU: always true).
  [[nodiscard]] bool resident(DeviceId device, LayerRange range) const;
  /// Whether every layer is Resident or Loading on `device`.
  [[nodiscard]] bool resident_or_loading(DeviceId device, LayerRange range) const;
  [[nodiscard]] std::uint64_t resident_bytes(DeviceId device) const;
  /// Number of work units (iterations or requests) in the whole job.
  [[nodiscard]] std::uint64_t total_units() const noexcept;
  [[nodiscard]] std::uint64_t units_done() const noexcept {
    return training() ? iterations_done : requests_done;
  }
  /// Inference: arrived requests not yet dispatched (the tail of pending_requests).
  [[nodiscard]] std::size_t requests_waiting() const noexcept {
    return inference() ? pending_requests.size() - (dispatched.unit - requests_done) : 0;
  }
};

}  // namespace gpumux
