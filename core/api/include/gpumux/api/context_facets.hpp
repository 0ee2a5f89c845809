// The facets of a Context (gpumux/api/context.hpp): each capability beyond the core of
// dispatching and timing is a small interface a policy reaches through the Context
// (`ctx.memory().fits(job, gpu)`), so a new capability adds a facet instead of methods on one
// facade. The engine implements every facet; the rules of gpumux/api/policy.hpp hold for each
// command (validated, refused with PolicyError, a refused command changes nothing).
// Thread rules: the policy's hook thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "gpumux/api/allocation.hpp"
#include "gpumux/api/commands.hpp"
#include "gpumux/api/device.hpp"
#include "gpumux/api/exec_time_window.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/api/work.hpp"

namespace gpumux {

/// Device memory: what a job's state takes, whether it fits, and the commands that put it on a
/// device, take it off and move it (`ctx.memory()`).
class MemoryFacet {
 public:
  [[nodiscard]] virtual MemoryStats stats(DeviceId id) const = 0;
  /// Bytes a load of [range] moves (training: weights plus optimizer state).
  [[nodiscard]] virtual std::uint64_t load_bytes(JobId job, LayerRange range) const = 0;
  /// Device memory a job needs while a unit runs (activations), and to hold its state.
  [[nodiscard]] virtual std::uint64_t ephemeral_bytes(JobId job) const = 0;
  [[nodiscard]] virtual std::uint64_t persistent_bytes(JobId job) const = 0;
  /// Whether what the job does not yet hold on `device` can be allocated there now, answered
  /// by the engine's placement on the device's memory resource (a dry run, exact): its
  /// absent layers' state as one allocation (as a whole-model load or a migration places
  /// it), then its activations if it holds none. Always true on a CPU.
  [[nodiscard]] virtual bool fits(JobId job, DeviceId device) const = 0;
  /// Whether the job's absent layers' state can be allocated on `device` now (one
  /// allocation, as fits()) and, with it in place and every job's activations released, one
  /// free block of the device's memory still holds `reserve_bytes`. Answers "after loading
  /// this job, can any unit of `reserve_bytes` activations still run?". Always true on a CPU.
  [[nodiscard]] virtual bool fits_after(JobId job, DeviceId device,
                                        std::uint64_t reserve_bytes) const = 0;
  /// Copies weights (training: weights and optimizer state) of [range] host -> device on a
  /// copy stream; allocates their device memory now. Layers become Resident when it ends.
  virtual OpHandle load(JobId job, StreamId copy_stream, LayerRange range,
                        LoadOptions options = {}) = 0;
  /// Frees the job's weights/state on a GPU: afterwards the job holds none there. Refused
  /// (PolicyError) for a job that has not arrived or has finished (the engine frees a finished
  /// job's memory itself), for a CPU (a job's state in host memory is never evicted) and while
  /// the job has ops in flight on the device. With nothing held there it is a no-op by
  /// contract (D21): evict may be repeated, like cancel_timer.
  virtual void evict(JobId job, DeviceId device) = 0;
  /// Moves a training job's state to `to` (GPU->CPU, CPU->GPU, GPU->GPU) on `copy_stream`,
  /// after its in-flight work; the source memory is freed when the copy ends.
  virtual OpHandle migrate(JobId job, DeviceId to, StreamId copy_stream) = 0;

 protected:
  ~MemoryFacet() = default;  // not owned through a facet
};

/// Inference requests: arrivals, deadlines, the execution-time estimates serving policies
/// plan with (D38), and dropping a request (`ctx.serving()`).
class ServingFacet {
 public:
  /// The arrival time of a request.
  [[nodiscard]] virtual TimeNs request_arrival(RequestId r) const = 0;
  /// Requests arrived so far: their ids are 0 .. request_count() - 1, in arrival order. A
  /// request counts from its arrival, before its on_request_arrival hook is delivered.
  [[nodiscard]] virtual std::size_t request_count() const noexcept = 0;
  /// The job a request belongs to.
  [[nodiscard]] virtual JobId request_job(RequestId r) const = 0;
  /// A request's deadline: its arrival plus its service's SLO; kTimeNever without an SLO.
  [[nodiscard]] virtual TimeNs request_deadline(RequestId r) const = 0;
  /// The device time of the service's completed batches of `requests` requests (one sample
  /// per batch: the summed time of its ops; the last 1000 kept), as an online distribution
  /// (Clockwork's per-(model, batch size) estimate). Empty until one completes.
  [[nodiscard]] virtual const ExecTimeWindow& batch_times(JobId job,
                                                          std::uint32_t requests) const = 0;
  /// The solo-equivalent time of the service's completed requests, one sample per request:
  /// the predicted time of that request's own work (its exit depth, its input length) alone
  /// at the service's batch, as an observed exit or length maps to a profiled time (Orloj's
  /// per-application distribution). A static service's samples are all equal.
  [[nodiscard]] virtual const ExecTimeWindow& request_times(JobId job) const = 0;
  /// Predicted solo time of a batch of `requests` requests of the job on `device`, each
  /// running the whole model (its last exit; its model's own sequence length).
  [[nodiscard]] virtual DurationNs estimate_batch_ns(JobId job, DeviceId device,
                                                     std::uint32_t requests) const = 0;
  /// Drops a waiting (arrived, not dispatched) request of an inference service: it is never
  /// served, counts as a failure in the finish rate, and is logged with `reason` (D38).
  /// Refused (PolicyError) for an unknown, served, dropped or dispatched request.
  virtual void drop_request(RequestId r, std::string_view reason) = 0;

 protected:
  ~ServingFacet() = default;  // not owned through a facet
};

/// Data-parallel training over several GPUs (D47): its all-reduce estimate, set_replicas and
/// resize (`ctx.replicas()`).
class ReplicaFacet {
 public:
  /// Predicted gradient all-reduce of one iteration if the training job ran data-parallel on
  /// `gpus` (what set_replicas would charge: ring_allreduce_ns over the cluster's links); 0
  /// for fewer than two GPUs. Refused (PolicyError) as set_replicas is for GPUs without a
  /// peer link. For planners choosing a width (Fluid's d from a performance model).
  [[nodiscard]] virtual DurationNs estimate_allreduce_ns(JobId job,
                                                         std::span<const DeviceId> gpus) const = 0;
  /// Data parallelism: trains `job` on `compute_streams`, one per GPU (distinct
  /// GPUs; the first is the primary, the stream dispatch() is then given). From then on each
  /// dispatch issues its op on every replica at ceil(batch / width) samples, each an ordinary
  /// compute op of its GPU (activations allocated there); before the update pass, a gradient
  /// all-reduce on every replica (a host-side op, OpPurpose::AllReduce, of ring_allreduce_ns
  /// over the replicas' GPUs: the config's cluster links, else each profile's peer link; it
  /// starts when the slowest replica's backward pass has ended; NCCL's SM use is not
  /// modelled); after the update a zero-length barrier (OpPurpose::Barrier): the iteration
  /// ends when every replica's update has. Each replica GPU must hold the job's whole state
  /// before a dispatch (load it there: weights and optimizer state). One stream restores a
  /// single-GPU job. Refused (PolicyError) for an inference job, no stream, a stream not on a
  /// GPU, two streams on one GPU, GPUs without a peer link, and while an iteration is in
  /// progress or compute of the job is in flight: call it before the job's first dispatch or
  /// at an iteration boundary once its ops have completed.
  virtual void set_replicas(JobId job, std::span<const StreamId> compute_streams) = 0;
  /// Resizes a training job as Fluid's code does (stop, restart, reload the checkpoint:
  /// SymbioticLab/Fluid fluid/trainer.py; resize_cost.hpp): its work is killed (as preempt Kill:
  /// in-flight ops aborted, the unit lost, its device memory on every GPU released once the process
  /// is reaped), its progress goes back to its last checkpoint (a tuning trial: its last epoch
  /// boundary; any other job: its start, its only checkpoint), the replicas are set as set_replicas
  /// does, and a host op of stop + restart (resize_cost.hpp: the new primary's process_reap_ns,
  /// process_start_ns + context_create_ns + model_build_ns) is issued on the new primary; every
  /// replica's next op waits for it. Returns that op: the checkpoint reload is the policy's load()
  /// on each new replica, after it (LoadOptions::after). Logged as a job_resize event. Refused as
  /// set_replicas is, except that work may be in progress.
  virtual OpHandle resize(JobId job, std::span<const StreamId> compute_streams) = 0;

 protected:
  ~ReplicaFacet() = default;  // not owned through a facet
};

/// Contexts and streams: creating them (process start, context creation) and their queues
/// (`ctx.streams()`).
class StreamFacet {
 public:
  /// A context created by the engine at start on each device (warm).
  [[nodiscard]] virtual ContextId default_context(DeviceId id) const = 0;
  /// `build`: with ColdProcess, the job whose model the new process constructs (and whose
  /// weights it reads) before its streams run; the copy to the device is still a load().
  virtual ContextId create_context(DeviceId device, ContextOptions options, ContextStart start,
                                   std::optional<JobId> build = std::nullopt) = 0;
  virtual StreamId create_stream(ContextId ctx, StreamOptions options) = 0;
  [[nodiscard]] virtual std::size_t queued(StreamId s) const = 0;
  [[nodiscard]] virtual std::size_t in_flight(StreamId s) const = 0;
  [[nodiscard]] virtual DeviceId device_of(StreamId s) const = 0;

 protected:
  ~StreamFacet() = default;  // not owned through a facet
};

}  // namespace gpumux
