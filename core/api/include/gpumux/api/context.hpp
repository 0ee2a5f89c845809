// What a policy sees of the run: the Context its hooks are given. The base holds the queries
// and commands every policy uses (time, devices, jobs, dispatch, preemption, timers); each
// further capability is a facet (gpumux/api/context_facets.hpp) reached through an accessor:
// memory(), serving(), replicas(), streams(). The rules are those of gpumux/api/policy.hpp.
// Thread rules: the policy's hook thread only.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string_view>

#include "gpumux/api/commands.hpp"
#include "gpumux/api/context_facets.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/job_view.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/api/work.hpp"

namespace gpumux {

class CostModel;       // gpumux/model/cost_model.hpp
struct DeviceProfile;  // gpumux/model/device_profile.hpp

class Context {
 public:
  virtual ~Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context(Context&&) = delete;
  Context& operator=(Context&&) = delete;

  // ---- facets ----------------------------------------------------------------------------
  [[nodiscard]] MemoryFacet& memory() noexcept { return *memory_; }
  [[nodiscard]] const MemoryFacet& memory() const noexcept { return *memory_; }
  [[nodiscard]] ServingFacet& serving() noexcept { return *serving_; }
  [[nodiscard]] const ServingFacet& serving() const noexcept { return *serving_; }
  [[nodiscard]] ReplicaFacet& replicas() noexcept { return *replicas_; }
  [[nodiscard]] const ReplicaFacet& replicas() const noexcept { return *replicas_; }
  [[nodiscard]] StreamFacet& streams() noexcept { return *streams_; }
  [[nodiscard]] const StreamFacet& streams() const noexcept { return *streams_; }

  // ---- queries ---------------------------------------------------------------------------
  [[nodiscard]] virtual TimeNs now() const noexcept = 0;
  [[nodiscard]] virtual std::size_t device_count() const noexcept = 0;
  [[nodiscard]] virtual const DeviceProfile& device(DeviceId id) const = 0;
  /// The platform's GPU devices, in DeviceId order (empty on a CPU-only platform). A policy
  /// that serves one GPU takes the first.
  [[nodiscard]] virtual std::span<const DeviceId> gpus() const noexcept = 0;
  /// The cost model of a device (for estimates: Olympian's profiles, PipeSwitch's grouping).
  [[nodiscard]] virtual const CostModel& cost(DeviceId id) const = 0;
  /// Jobs that have arrived (any phase but NotArrived), in arrival order.
  [[nodiscard]] virtual std::span<const JobId> arrived_jobs() const noexcept = 0;
  /// A read-only view of a job (D18), valid for the whole run.
  [[nodiscard]] virtual JobView job(JobId id) const = 0;
  /// The job's unfinished ops on `device` (a job with none there can be evicted from it).
  [[nodiscard]] virtual std::uint32_t ops_in_flight(JobId job, DeviceId device) const = 0;
  /// Predicted solo time of the job's next `layers` layers (0 = rest of pass) on `device`.
  [[nodiscard]] virtual DurationNs estimate_next_ns(JobId job, DeviceId device,
                                                    std::uint32_t layers = 0) const = 0;
  /// Predicted solo time of one whole unit (iteration or request) on `device`.
  [[nodiscard]] virtual DurationNs estimate_unit_ns(JobId job, DeviceId device) const = 0;
  [[nodiscard]] virtual std::mt19937_64& rng() noexcept = 0;

  // ---- commands --------------------------------------------------------------------------
  /// Submits the job's next compute op on `stream` (its device becomes the job's device).
  virtual OpHandle dispatch(JobId job, StreamId stream, DispatchOptions options = {}) = 0;
  /// Stops a job's queued (and, with Kill, running) work. Returns ops dropped or aborted.
  /// DropQueued is refused for a job on several GPUs (its replicas would fall out of step).
  virtual std::size_t preempt(JobId job, PreemptMode mode) = 0;
  /// A host-side delay on a stream (IPC, synchronisation), accounted to `job`.
  virtual OpHandle delay(JobId job, StreamId stream, DurationNs duration_ns) = 0;
  virtual TimerId set_timer(DurationNs delay_ns, std::uint64_t tag) = 0;
  virtual void cancel_timer(TimerId id) = 0;
  /// Ends a job that will not run, with a reason recorded in the events.
  virtual void reject(JobId job, std::string_view reason) = 0;
  /// Records a policy-specific metric sample (appears in events.jsonl and summary.json).
  /// The value must be finite (JSON has no NaN or infinity), else PolicyError.
  virtual void record(std::string_view metric, double value) = 0;

 protected:
  /// The implementation hands over its facets (usually itself, as each facet's implementer).
  Context(MemoryFacet& memory, ServingFacet& serving, ReplicaFacet& replicas,
          StreamFacet& streams) noexcept
      : memory_(&memory), serving_(&serving), replicas_(&replicas), streams_(&streams) {}

 private:
  MemoryFacet* memory_;
  ServingFacet* serving_;
  ReplicaFacet* replicas_;
  StreamFacet* streams_;
};

}  // namespace gpumux
