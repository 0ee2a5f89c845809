// What a policy sees of a job: a read-only view of the engine's JobState with accessors, so
// the engine can change how it keeps a job (cursors, residency, allocations) without touching
// policies (D18). Views are cheap values (one pointer); Context::job hands them out and they
// stay valid for the whole run. Runtime thread only, like the state they read; a view reads
// the state as it is now, so a value read before a command may be stale after it.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <stdexcept>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/job_spec.hpp"
#include "gpumux/api/job_state.hpp"

namespace gpumux {

/// One job's residency on one device: per-layer state, bytes held, ops in flight there.
class ResidencyView {
 public:
  explicit ResidencyView(const DeviceResidency& r) noexcept : r_(&r) {}

  [[nodiscard]] std::size_t layer_count() const noexcept { return r_->layers.size(); }
  /// State of one layer's weights; `layer` < layer_count() (checked: std::out_of_range).
  [[nodiscard]] Residency layer(std::uint32_t layer) const { return r_->layers.at(layer); }
  [[nodiscard]] std::size_t absent_layers() const noexcept { return r_->absent; }
  [[nodiscard]] std::size_t loading_layers() const noexcept { return r_->loading; }
  /// Bytes of weights/state held on the device, as allocated (rounded; activations not
  /// included).
  [[nodiscard]] std::uint64_t bytes() const noexcept { return r_->bytes; }
  /// The job's unfinished ops on this device.
  [[nodiscard]] std::uint32_t ops_in_flight() const noexcept { return r_->ops_in_flight; }

 private:
  const DeviceResidency* r_;
};

class JobView {
 public:
  explicit JobView(const JobState& s) noexcept : s_(&s) {}

  // ---- identity -----------------------------------------------------------------------
  [[nodiscard]] JobId id() const noexcept { return s_->id; }
  [[nodiscard]] const JobSpec& spec() const noexcept { return *s_->spec; }
  [[nodiscard]] const Model& model() const noexcept { return *s_->model; }
  [[nodiscard]] bool training() const noexcept { return s_->training(); }
  [[nodiscard]] bool inference() const noexcept { return s_->inference(); }

  // ---- phase and times (ns) -----------------------------------------------------------
  [[nodiscard]] JobPhase phase() const noexcept { return s_->phase; }
  /// Waiting or Running.
  [[nodiscard]] bool active() const noexcept { return s_->active(); }
  /// Finished or Rejected.
  [[nodiscard]] bool done() const noexcept { return s_->done(); }
  [[nodiscard]] TimeNs arrival_ns() const noexcept { return s_->arrival_ns; }
  /// First op start; -1 before.
  [[nodiscard]] TimeNs first_start_ns() const noexcept { return s_->first_start_ns; }
  /// -1 before the job ends.
  [[nodiscard]] TimeNs finish_ns() const noexcept { return s_->finish_ns; }
  /// The device its compute is placed on (set by dispatch, load and migrate).
  [[nodiscard]] DeviceId device() const noexcept { return s_->device; }
  /// GPUs the job trains on at once (ReplicaFacet::set_replicas): 1 unless data-parallel.
  [[nodiscard]] std::uint32_t width() const noexcept { return s_->width(); }
  /// The replicas' GPUs and compute streams, the primary first; empty on one GPU. Valid until
  /// the job's next set_replicas or resize.
  [[nodiscard]] std::span<const DeviceId> replica_devices() const noexcept {
    return s_->replica_devices;
  }
  [[nodiscard]] std::span<const StreamId> replica_streams() const noexcept {
    return s_->replica_streams;
  }
  /// Samples each GPU computes per iteration: the batch, or ceil(batch / width()).
  [[nodiscard]] std::uint32_t samples_per_gpu() const noexcept { return s_->samples_per_gpu(); }

  // ---- progress -----------------------------------------------------------------------
  [[nodiscard]] std::uint64_t iterations_done() const noexcept { return s_->iterations_done; }
  [[nodiscard]] std::uint64_t requests_done() const noexcept { return s_->requests_done; }
  [[nodiscard]] std::uint64_t units_done() const noexcept { return s_->units_done(); }
  /// Work units (iterations or requests) in the whole job.
  [[nodiscard]] std::uint64_t total_units() const noexcept { return s_->total_units(); }
  /// Requests dropped by the policy (ServingFacet::drop_request).
  [[nodiscard]] std::uint64_t requests_dropped() const noexcept { return s_->requests_dropped; }
  /// Requests arrived and not yet dispatched: the last requests_waiting() entries of
  /// pending_requests(), oldest first (dispatch serves them from the front; D38).
  [[nodiscard]] std::size_t requests_waiting() const noexcept { return s_->requests_waiting(); }
  /// The i-th waiting request, oldest first (i < requests_waiting(), checked).
  [[nodiscard]] RequestId waiting_request(std::size_t i) const {
    if (i >= requests_waiting()) throw std::out_of_range("waiting_request: index past the queue");
    return s_->pending_requests[s_->pending_requests.size() - requests_waiting() + i];
  }
  /// Requests arrived and not finished (nor dropped), oldest first.
  [[nodiscard]] const std::deque<RequestId>& pending_requests() const noexcept {
    return s_->pending_requests;
  }
  /// Next work to dispatch, and next work to complete.
  [[nodiscard]] Cursor dispatched() const noexcept { return s_->dispatched; }
  [[nodiscard]] Cursor completed() const noexcept { return s_->completed; }
  /// Whether dispatch() has something to issue now.
  [[nodiscard]] bool has_dispatchable_work() const noexcept { return s_->has_dispatchable_work(); }
  /// A tuning trial its tuner paused: active, but nothing to dispatch until it is resumed
  /// (Policy::on_job_resumed). Its weights may stay or be evicted.
  [[nodiscard]] bool paused() const noexcept { return s_->paused; }
  /// Whether the job is a trial slot of a tuning job (JobSpec::trial).
  [[nodiscard]] bool trial() const noexcept { return s_->spec->trial != nullptr; }
  /// Whether an iteration/request has begun (some of it dispatched) and not ended.
  [[nodiscard]] bool unit_in_progress() const noexcept { return s_->unit_in_progress(); }
  /// Layers of the current pass not yet dispatched.
  [[nodiscard]] std::uint32_t layers_left_in_pass() const noexcept {
    return s_->layers_left_in_pass();
  }
  /// Device time of its completed compute ops, ns.
  [[nodiscard]] DurationNs attained_ns() const noexcept { return s_->attained_ns; }
  [[nodiscard]] std::uint64_t ops_completed() const noexcept { return s_->ops_completed; }

  // ---- ops and residency --------------------------------------------------------------
  /// Submitted compute/copy ops not yet finished, on any device.
  [[nodiscard]] std::uint32_t ops_in_flight() const noexcept { return s_->ops_in_flight; }
  /// Its unfinished ops on `device` (checked: std::out_of_range).
  [[nodiscard]] std::uint32_t ops_in_flight(DeviceId device) const {
    return residency(device).ops_in_flight();
  }
  /// Its residency on `device` (checked: std::out_of_range).
  [[nodiscard]] ResidencyView residency(DeviceId device) const {
    return ResidencyView(s_->residency.at(index_of(device)));
  }
  /// Whether all of `range` is Resident on `device` (CPU: always true).
  [[nodiscard]] bool resident(DeviceId device, LayerRange range) const {
    return s_->resident(device, range);
  }
  /// Whether every layer of `range` is Resident or Loading on `device`.
  [[nodiscard]] bool resident_or_loading(DeviceId device, LayerRange range) const {
    return s_->resident_or_loading(device, range);
  }
  /// Bytes of weights/state held on `device`, as allocated.
  [[nodiscard]] std::uint64_t resident_bytes(DeviceId device) const {
    return s_->resident_bytes(device);
  }

 private:
  const JobState* s_;
};

}  // namespace gpumux
