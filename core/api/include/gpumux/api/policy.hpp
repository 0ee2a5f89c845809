// The user-facing API: a Policy reacts to hooks and issues commands through a Context.
// Rules (the same on every platform):
//  - hooks run on one thread, one at a time; a policy never sees a clock, a thread or a
//    cudaStream_t, only ctx.now();
//  - commands take effect immediately and are validated; a nonsensical command (dispatching a
//    finished job, running layers whose weights are not on the device, an unknown stream,
//    waiting for an op never issued) throws PolicyError naming the policy and the command,
//    which ends the run; a refused command has changed nothing (D21);
//  - memory is finite: load() and dispatch() may throw OutOfMemory, which a policy may catch
//    (e.g. to reject the job).
// See docs/writing-a-policy.md for a complete example; a policy registers itself with
// GPUMUX_REGISTER_POLICY (gpumux/io/policy_registry.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/api/allocation.hpp"
#include "gpumux/api/device.hpp"
#include "gpumux/api/exec_time_window.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/job_view.hpp"

namespace gpumux {

class CostModel;       // gpumux/model/cost_model.hpp
struct DeviceProfile;  // gpumux/model/device_profile.hpp

/// A submitted op; `valid()` is false when a command issued nothing.
struct OpHandle {
  OpId op{};
  bool issued = false;
  [[nodiscard]] bool valid() const noexcept { return issued; }
};

struct DispatchOptions {
  /// Layers to cover; 0 = the rest of the current pass. The update pass is always one op.
  std::uint32_t layers = 0;
  /// Extra ops to wait for (the job's previous op and weight loads are waited for anyway);
  /// each must have been issued (a handle from an earlier command), else PolicyError.
  std::vector<OpHandle> after;
  /// Host-side cost paid after the dependencies are met and before the op starts, ns: a
  /// synchronisation (event wait, IPC message) per group, a yield check per node.
  DurationNs setup_ns = 0;
  /// Inference, dynamic batching (D38): the unit this op starts serves the oldest `requests`
  /// waiting requests as one batch (an op at batch size requests x the service's batch).
  /// 0 = one request. Only a unit's first op chooses; its later ops keep the batch (0 or the
  /// same number). A dynamic service's members decide what its ops run (the deepest exit:
  /// layers past it run nothing; the longest input, to which all are padded).
  std::uint32_t requests = 0;
};

struct LoadOptions {
  bool pageable = false;  ///< copy from pageable host memory instead of the pinned store
  /// Allocate device memory with one cudaMalloc per tensor on the switch path (the naive
  /// path PipeSwitch compares against) instead of from the pre-allocated pool.
  bool per_tensor_malloc = false;
  /// Ops to wait for; each must have been issued (a handle from an earlier command).
  std::vector<OpHandle> after;
};

enum class PreemptMode : std::uint8_t {
  DropQueued,  ///< drop compute not yet issued (queued copies still run); issued ops finish
  /// Kill the job's process: abort everything and lose its unfinished unit; its device memory
  /// is released only when the process is reaped, the profile's process_reap_ns later.
  Kill,
  /// Abort everything, lose the unfinished unit and drop the job's device memory at once: a
  /// task stopped inside a process that lives on (PipeSwitch's worker over a shared pool).
  Discard
};

enum class ContextStart : std::uint8_t {
  Warm,        ///< already running (standby worker): no start cost
  NewContext,  ///< create a context in a running process: context_create_ns
  /// Spawn a process and create its context: process_start_ns + context_create_ns, plus
  /// building a job's model when create_context names one (DeviceProfile::model_build_ns).
  ColdProcess
};

class Context {
 public:
  virtual ~Context() = default;

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
  [[nodiscard]] virtual MemoryStats memory(DeviceId id) const = 0;
  [[nodiscard]] virtual std::size_t queued(StreamId s) const = 0;
  [[nodiscard]] virtual std::size_t in_flight(StreamId s) const = 0;
  [[nodiscard]] virtual DeviceId device_of(StreamId s) const = 0;
  /// A context created by the engine at start on each device (warm).
  [[nodiscard]] virtual ContextId default_context(DeviceId id) const = 0;
  /// The arrival time of a request.
  [[nodiscard]] virtual TimeNs request_arrival(RequestId r) const = 0;
  /// Requests arrived so far: their ids are 0 .. request_count() - 1, in arrival order. A
  /// request counts from its arrival, before its on_request_arrival hook is delivered.
  [[nodiscard]] virtual std::size_t request_count() const noexcept = 0;
  /// The job a request belongs to.
  [[nodiscard]] virtual JobId request_job(RequestId r) const = 0;
  /// Predicted solo time of the job's next `layers` layers (0 = rest of pass) on `device`.
  [[nodiscard]] virtual DurationNs estimate_next_ns(JobId job, DeviceId device,
                                                    std::uint32_t layers = 0) const = 0;
  /// Predicted solo time of one whole unit (iteration or request) on `device`.
  [[nodiscard]] virtual DurationNs estimate_unit_ns(JobId job, DeviceId device) const = 0;
  /// Predicted gradient all-reduce of one iteration if the training job ran data-parallel on
  /// `gpus` (what set_replicas would charge: ring_allreduce_ns over the cluster's links); 0
  /// for fewer than two GPUs. Refused (PolicyError) as set_replicas is for GPUs without a
  /// peer link. For planners choosing a width (Fluid's d from a performance model).
  [[nodiscard]] virtual DurationNs estimate_allreduce_ns(JobId job,
                                                         std::span<const DeviceId> gpus) const = 0;
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
  [[nodiscard]] virtual std::mt19937_64& rng() noexcept = 0;

  // ---- serving (D38) ---------------------------------------------------------------------
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

  // ---- commands --------------------------------------------------------------------------
  /// `build`: with ColdProcess, the job whose model the new process constructs (and whose
  /// weights it reads) before its streams run; the copy to the device is still a load().
  virtual ContextId create_context(DeviceId device, ContextOptions options, ContextStart start,
                                   std::optional<JobId> build = std::nullopt) = 0;
  virtual StreamId create_stream(ContextId ctx, StreamOptions options) = 0;
  /// Submits the job's next compute op on `stream` (its device becomes the job's device).
  virtual OpHandle dispatch(JobId job, StreamId stream, DispatchOptions options = {}) = 0;
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
  /// Stops a job's queued (and, with Kill, running) work. Returns ops dropped or aborted.
  /// DropQueued is refused for a job on several GPUs (its replicas would fall out of step).
  virtual std::size_t preempt(JobId job, PreemptMode mode) = 0;
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
  /// A host-side delay on a stream (IPC, synchronisation), accounted to `job`.
  virtual OpHandle delay(JobId job, StreamId stream, DurationNs duration_ns) = 0;
  virtual TimerId set_timer(DurationNs delay_ns, std::uint64_t tag) = 0;
  virtual void cancel_timer(TimerId id) = 0;
  /// Ends a job that will not run, with a reason recorded in the events.
  virtual void reject(JobId job, std::string_view reason) = 0;
  /// Drops a waiting (arrived, not dispatched) request of an inference service: it is never
  /// served, counts as a failure in the finish rate, and is logged with `reason` (D38).
  /// Refused (PolicyError) for an unknown, served, dropped or dispatched request.
  virtual void drop_request(RequestId r, std::string_view reason) = 0;
  /// Records a policy-specific metric sample (appears in events.jsonl and summary.json).
  /// The value must be finite (JSON has no NaN or infinity), else PolicyError.
  virtual void record(std::string_view metric, double value) = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  virtual void on_start(Context&) {}
  virtual void on_job_arrival(Context&, JobId) {}
  virtual void on_request_arrival(Context&, JobId, RequestId) {}
  virtual void on_op_complete(Context&, const OpRecord&) {}
  virtual void on_request_complete(Context&, JobId, RequestId) {}
  virtual void on_iteration_end(Context&, JobId) {}
  /// Also for a tuning trial its tuner stopped (EndReason::Stopped: done, not rejected).
  virtual void on_job_finish(Context&, JobId) {}
  /// A paused tuning trial (JobView::paused) was promoted: it has work again.
  virtual void on_job_resumed(Context&, JobId) {}
  virtual void on_timer(Context&, TimerId, std::uint64_t /*tag*/) {}
};

}  // namespace gpumux
