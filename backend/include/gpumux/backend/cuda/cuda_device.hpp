// A GPU of platform "cuda": the device contract (core/api/include/gpumux/api/device.hpp) on CUDA
// streams.
//
// Streams and ops
//   Every gpumux stream is a cudaStream_t created with a priority (StreamOptions.priority,
//   larger = more urgent, mapped linearly onto cudaDeviceGetStreamPriorityRange). Each keeps a
//   FIFO host queue; at most max_in_flight ops are issued. Issued ops are handed, in stream
//   order and one at a time, to a launcher thread that enqueues them on the CUDA stream; the GPU
//   then runs them in stream order, so only the head executes (as in the simulator).
//   An issued op is handed when each op of its `after` list is complete (observer->is_complete)
//   or is an op of this device already enqueued on its stream: then the dependency becomes a
//   cudaStreamWaitEvent on that op's end event, so a load of group i+1 on the copy stream
//   overlaps the compute of group i without a host round trip. Host ops (process start, context
//   creation: a sleep of solo_ns) and ops with setup_ns > 0 run on the host first, so they are
//   handed only as the head of their stream with every dependency complete: a copy's set-up is
//   the naive per-tensor cudaMalloc path (the launcher really calls cudaMalloc/cudaFree per
//   tensor of the range, then enqueues the copy); a compute op's is a sleep of setup_ns (a
//   policy's host-side synchronisation), as in the simulator. Host buffers a copy needs are
//   pinned before its start event (set-up, not transfer).
//   Work per op kind:
//   - Compute: each layer of the range through the CudaLayerExecutor (cuBLAS + kernels) on the
//     layer's weights at layer_offsets[i] in the arena and the job's activations at
//     activation_offset. Training layouts (weights, gradients, optimizer slots per layer) come
//     from op.state_factor.
//   - CopyH2D (LoadWeights): ONE cudaMemcpyAsync of op.bytes from the model's pinned store at
//     the range's first layer (or its pageable twin when op.pageable) to weight_offset.
//   - CopyH2D (MigrateState, CPU->GPU) from the device's pinned state buffer; CopyD2H from the
//     arena at source_offset into that buffer; CopyD2D from source_offset with
//     cudaMemcpyPeerAsync to the peer GPU's arena at the destination's first layer offset (a
//     device-to-device copy when both map to one physical GPU).
//
// Completion and time
//   Each op is bracketed by two timing events; after the end event, cudaLaunchHostFunc queues a
//   host function that only post()s to the runtime (CUDA forbids API calls there). On the
//   runtime thread the device reads the events: started/finished are device times (elapsed
//   time from a reference event whose host time was taken when it was recorded, re-anchored
//   every second so float milliseconds keep sub-microsecond resolution), clamped to
//   [submitted, now]. The observer is called back as device.hpp says (after the bookkeeping, on
//   the runtime thread, exactly once per op; it may re-enter).
//
// Preemption (device.hpp, "Drop and abort")
//   drop_pending() drops queued ops of the job (reported Dropped at once). abort() drops queued
//   ops and issued ones no launcher has taken yet (reported Aborted at once). CUDA cannot stop
//   kernels or copies already enqueued: they run to their end on the GPU, and only then is the
//   op reported Aborted (finished = when the runtime learnt of its end), so that the engine
//   does not hand its memory to another job while the GPU still writes it. An op a launcher
//   holds is skipped if it has not reached the GPU yet (reported when the launcher lets go).
//   Ops later enqueued on the same stream start after the aborted ones.
//
// Thread rules: public methods on the runtime thread only. The destructor waits for the GPU
// (cudaStreamSynchronize), joins its launchers and releases every CUDA resource.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <cuda_runtime.h>

#include "gpumux/api/device.hpp"
#include "gpumux/backend/cuda/completion_poller.hpp"
#include "gpumux/backend/cuda/cuda_arena.hpp"
#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/backend/cuda/pinned_weight_store.hpp"
#include "gpumux/backend/cuda/round_trip_stats.hpp"
#include "gpumux/backend/real_runtime.hpp"
#include "gpumux/backend/worker_pool.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/queued_device.hpp"
#include "gpumux/model/stream_queues.hpp"

namespace gpumux {

struct CudaDeviceOptions {
  int ordinal = 0;                ///< physical GPU
  std::uint64_t arena_bytes = 0;  ///< 0: the profile's memory, capped by free memory - margin
  std::uint64_t margin_bytes = std::uint64_t{2} << 30;
  CudaExecutorOptions executor;
  /// Re-anchor the event clock this often (ns).
  DurationNs anchor_interval_ns = 1'000'000'000;
  /// Fault injection (tests): the launcher of the op with this id enqueues a faulting kernel
  /// after the op's start event (-1: never). The run must end with a CudaError naming an op.
  std::int64_t fault_at_op = -1;
};

/// A pool of CUDA events (timing enabled), shared by ops through shared_ptr so that an event
/// a later op waits on is not recycled before that op has enqueued its wait. Thread-safe.
class EventPool {
 public:
  explicit EventPool(int ordinal) : ordinal_(ordinal) {}
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  struct Pair {
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
  };
  /// A start/end pair, returned to the pool when the last holder lets go.
  [[nodiscard]] std::shared_ptr<Pair> acquire();

 private:
  void release(Pair p) noexcept;
  int ordinal_;
  std::mutex mutex_;
  std::vector<Pair> free_;
  std::vector<Pair> all_;
};

/// CudaDevice's op and stream state (StreamQueues' payload types, named before the class
/// because its base QueuedDevice takes them).
namespace cuda_device_detail {

enum class Phase : std::uint8_t { Free, Queued, Issued, Launching, Enqueued };

struct OpState {
  OpSpec spec;
  TimeNs submitted_ns = 0;
  TimeNs handed_ns = 0;
  TimeNs launched_ns = 0;        ///< host time its launcher recorded the start event
  TimeNs reported_start_ns = 0;  ///< what on_op_started said (when start_reported)
  bool start_reported = false;
  bool waits_on_gpu = false;  ///< enqueued behind a GPU-side wait on another stream's op
  std::uint32_t stream = 0;
  Phase phase = Phase::Free;
  bool host_side = false;
  std::shared_ptr<EventPool::Pair> events;
  std::shared_ptr<CancelToken> cancel;
};

struct StreamState : QueuedStream {
  cudaStream_t cuda = nullptr;
  bool launching = false;  ///< its launcher is enqueuing an op (keeps CUDA order)
  TimeNs last_end_ns = 0;  ///< end of its last reported GPU op (ops run in stream order)
};

}  // namespace cuda_device_detail

class CudaDevice final
    : public QueuedDevice<cuda_device_detail::OpState, cuda_device_detail::StreamState> {
 public:
  /// `runtime` and `store` must outlive the device; profile.memory_bytes becomes the arena's
  /// real size (so the Engine never places memory beyond it). Throws CudaError, OutOfMemory.
  CudaDevice(DeviceId id, DeviceProfile profile, RealRuntime& runtime, PinnedWeightStore& store,
             CudaDeviceOptions options);
  ~CudaDevice() override;

  // Contexts are recorded (QueuedDevice::add_context): all gpumux contexts of a device share
  // this process's CUDA context (no MPS model).
  /// Creates the CUDA stream. Throws std::invalid_argument (duplicate, unknown context,
  /// max_in_flight == 0), CudaError.
  void add_stream(StreamId stream, ContextId ctx, StreamOptions options) override;
  /// Throws as SimDevice::submit.
  void submit(const OpSpec& op) override;
  void dependencies_changed() override;
  [[nodiscard]] void* arena_base() noexcept override { return arena_.base(); }

  /// Records the reference event that maps device time onto the runtime's clock. The
  /// platform calls it right after RealRuntime::reset_origin(). Runtime thread.
  void sync_clock();
  [[nodiscard]] int ordinal() const noexcept { return options_.ordinal; }
  [[nodiscard]] const CudaArena& arena() const noexcept { return arena_; }
  [[nodiscard]] CudaLayerExecutor& executor() noexcept { return executor_; }
  /// The device a CopyD2D targets (by DeviceId index; null where it is not a GPU).
  void set_peers(std::vector<CudaDevice*> peers) { peers_ = std::move(peers); }
  /// The stream's CUDA handle (tests).
  [[nodiscard]] cudaStream_t cuda_stream(StreamId stream) const;
  /// The pinned buffer D2H state copies land in (tests).
  [[nodiscard]] PinnedStateBuffer& state_buffer() noexcept { return state_; }

 private:
  using Phase = cuda_device_detail::Phase;

  /// Everything a launcher needs (copied: slots are reused).
  struct Launch : WorkTicket<CudaDevice> {
    OpSpec spec;
    cudaStream_t cuda = nullptr;
    bool host_side = false;
    std::shared_ptr<EventPool::Pair> events;
    std::vector<std::shared_ptr<EventPool::Pair>> wait_for;
    std::shared_ptr<CancelToken> cancel;
    std::vector<std::uint64_t> layer_offsets;  ///< [layers.first, layers.last), copied
    std::uint32_t state_factor = 1;            ///< per-layer arena bytes / weight bytes
    std::byte* peer_base = nullptr;            ///< CopyD2D destination arena
    std::uint64_t peer_capacity = 0;
    int peer_ordinal = 0;
  };

  void free_slot(std::uint32_t slot);
  void issue(StreamState& s);
  void evaluate();
  bool try_hand(StreamState& s);
  [[nodiscard]] OpRecord make_record(const OpState& op, OpStatus status, TimeNs start,
                                     TimeNs end) const;
  std::size_t remove_job(JobId job, bool issued_too) override;
  [[nodiscard]] TimeNs event_time(cudaEvent_t e);
  void maybe_reanchor(TimeNs now);
  void release_clock() noexcept;

  // Launcher side (worker threads).
  static void launch(const Launch& l) noexcept;
  /// The host memory of a copy (H2D source, D2H destination), pinned before it starts.
  struct HostSide {
    const std::byte* src = nullptr;
    std::byte* dst = nullptr;
  };
  void enqueue_work(const Launch& l, HostSide host);
  void enqueue_compute(const Launch& l);
  void enqueue_copy(const Launch& l, HostSide host);
  void naive_allocations(const Launch& l);
  HostSide stage_host_memory(const Launch& l);

  // Runtime side of the launchers' posts.
  void on_enqueued(std::uint32_t stream, std::uint32_t slot, std::uint64_t token, bool gpu,
                   TimeNs launched_ns);
  /// Reports the start of each stream's head that is on the GPU and no longer waits (its
  /// predecessor ended, its dependencies are complete): at the later of its launch and its
  /// predecessor's end, or now for one that waited on another stream. Runtime posts only.
  void report_starts();
  void report_started(OpState& op, TimeNs when);
  void on_host_started(std::uint32_t stream, std::uint32_t slot, std::uint64_t token, TimeNs t0);
  void on_gpu_done(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                   TimeNs callback_ns);
  /// on_gpu_done's report (the completion is taken in order and retires its pending unit).
  void finish_gpu_op(std::uint32_t stream, std::uint32_t slot, std::uint64_t token,
                     TimeNs callback_ns);
  /// Whether the op in `slot` waited on the GPU for an op of this device not yet reported.
  [[nodiscard]] bool waits_for_unreported(std::uint32_t slot, std::uint64_t token) const;
  /// Reports the aborted op of `token` (if one is parked in aborting_) as ended at `end`.
  void report_aborted(std::uint64_t token, TimeNs end);
  void on_host_done(std::uint32_t stream, std::uint32_t slot, std::uint64_t token, TimeNs t0,
                    TimeNs t1);

  RealRuntime& runtime_;
  PinnedWeightStore& store_;
  CudaDeviceOptions options_;
  CudaArena arena_;
  CudaLayerExecutor executor_;
  EventPool events_;
  PinnedStateBuffer state_;
  std::vector<CudaDevice*> peers_;
  int priority_low_ = 0, priority_high_ = 0;  ///< CUDA's range (numerically high = low)

  std::unordered_map<std::uint64_t, std::uint32_t> enqueued_;  ///< OpId -> slot (Enqueued ops)
  /// Token -> record of an aborted op a launcher or the GPU still holds (reported at its end).
  struct Aborting {
    OpRecord record;
    bool started = false;  ///< its start was reported: the record keeps that start
  };
  std::unordered_map<std::uint64_t, Aborting> aborting_;
  /// Completions seen before a dependency's on another stream (the poller sweeps the streams
  /// one after another, so a dependant can be seen done first), and those behind them on their
  /// stream: reported, in arrival order per stream, once the dependencies are.
  struct DoneLater {
    std::uint32_t stream, slot;
    std::uint64_t token;
    TimeNs callback_ns;
  };
  std::vector<DoneLater> done_later_;
  RoundTripStats round_trips_;
  CompletionPoller poller_{options_.ordinal};

  // Clock: device time of `anchor_` is `anchor_ns_` on the runtime's clock. Re-anchoring
  // records `next_anchor_` and swaps the two.
  cudaStream_t anchor_stream_ = nullptr;
  cudaEvent_t anchor_ = nullptr;
  cudaEvent_t next_anchor_ = nullptr;
  TimeNs anchor_ns_ = 0;

  WorkerPool launchers_;  // declared last: joined first
};

}  // namespace gpumux
