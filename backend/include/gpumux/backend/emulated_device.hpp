// A device of platform "emulated" (and the CPU device of platform "cuda"): the device contract
// of core/api/include/gpumux/api/device.hpp in wall-clock time, with the work done for real on
// worker threads.
//
// Streams and ops (device.hpp)
//   The head of a stream, once its `after` list is complete, is handed to a worker thread,
//   which spends `setup_ns`, reports the start (on_op_started) and runs the main phase:
//   - Host op, and Compute on a GPU: a sleep of solo_ns (the profile's prediction).
//   - Compute on a CPU: the layers through Eigen (CpuExecutor); its duration is real.
//   - CopyH2D / CopyD2H / CopyD2D: the link latency, then `bytes` paced to the link bandwidth
//     (h2d_gbps, d2h_gbps; D2D on the D2H direction capped at peer_gbps; pinned or x
//     pageable_factor), never faster than latency + bytes / bandwidth, while the bytes really
//     move: memcpy between the model's host weight store, this device's host buffer standing
//     in for device memory (its "arena", capped, offsets wrap around), a host state buffer
//     (D2H and CPU->GPU migration) and a peer's arena (D2D). The physical bytes are capped by
//     those buffers and by max_copy_bytes, spread evenly over the paced time, which always
//     covers all of op.bytes. The first load of a model creates its host store on the worker
//     (before the op's start).
//   No time slicing or MPS model: ops of different streams simply overlap (each on its own
//   worker thread); concurrent copies in one direction share the link (LinkPacer).
//   A CPU device has no link: submitting a copy to it throws std::logic_error.
//
// Completion and abort (device.hpp)
//   Workers post() their start and end (times measured on the worker, experiment clock) to the
//   runtime; the device's bookkeeping and every observer call happen on the runtime thread.
//   A finished op is reported exactly once (on_op_finished, status Ok) after its stream was
//   updated; the observer may call any method of this or another device from inside it.
//   drop_pending() reports queued ops of the job as Dropped and abort() queued ones as Aborted,
//   synchronously (started = finished = now). An aborted op already handed to a worker is
//   cancelled there (sleeps and paced copies end at once, Eigen stops at the next GEMM chunk)
//   and reported Aborted only when the worker has let go of it (finished = the worker's end,
//   after abort() returned): until then it still writes the arena. Its stream starts its next
//   op only then, and a start the worker posts after the abort is not reported.
//
// Time: ns (experiment clock of the RealRuntime); bandwidths in bytes per ns (= GB/s).
// `time_scale` multiplies every emulated duration (sleeps, latencies, link time), not the
// real Eigen compute: a knob for CI, 1 for experiments.
//
// Thread rules: every public method on the runtime thread only. Destroy the device only after
// RealRuntime::run() returned; the destructor cancels work in progress and joins its workers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "gpumux/api/device.hpp"
#include "gpumux/backend/host_store.hpp"
#include "gpumux/backend/link_pacer.hpp"
#include "gpumux/backend/real_runtime.hpp"
#include "gpumux/backend/worker_pool.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/queued_device.hpp"
#include "gpumux/model/stream_queues.hpp"

namespace gpumux {

struct EmulatedDeviceOptions {
  double time_scale = 1.0;
  /// GPU: bytes of the host buffer standing in for device memory (0: min(profile memory,
  /// 256 MiB)). Offsets beyond it wrap around. Its pages are touched at construction so that
  /// first-touch page faults do not slow the first copies down.
  std::uint64_t arena_bytes = 0;
  /// GPU: bytes of the host state buffer (D2H destination; 0: min(arena, 64 MiB)).
  std::uint64_t host_state_bytes = 0;
  /// Most bytes one copy really moves (the paced time always covers all of op.bytes): host
  /// memcpy is slower than a Gen5 link, so an uncapped copy would outlast its prediction.
  std::uint64_t max_copy_bytes = std::uint64_t{16} << 20;
  /// CPU: size of each Eigen scratch operand region.
  std::size_t cpu_region_bytes = std::size_t{16} << 20;
};

/// EmulatedDevice's op and stream state (StreamQueues' payload types, named before the class
/// because its base QueuedDevice takes them).
namespace emulated_device_detail {

enum class Phase : std::uint8_t { Free, Queued, Issued, Running };

struct OpState {
  OpSpec spec;
  TimeNs submitted_ns = 0;
  TimeNs started_ns = 0;
  std::uint32_t stream = 0;
  Phase phase = Phase::Free;
  bool start_reported = false;
  std::shared_ptr<CancelToken> cancel;  ///< while Running
};

struct StreamState : QueuedStream {
  bool busy = false;  ///< a worker is executing (or winding down) an op
  /// The record of an aborted op its worker still holds: reported when the worker lets go.
  std::optional<OpRecord> aborting;
  bool aborting_started = false;  ///< its start was reported
};

}  // namespace emulated_device_detail

class EmulatedDevice final
    : public QueuedDevice<emulated_device_detail::OpState, emulated_device_detail::StreamState> {
 public:
  /// `runtime` and `store` must outlive the device. Throws std::invalid_argument for a bad
  /// time_scale or profile (as SimDevice).
  EmulatedDevice(DeviceId id, DeviceProfile profile, RealRuntime& runtime, HostStore& store,
                 EmulatedDeviceOptions options = {});
  ~EmulatedDevice() override;

  // Contexts are recorded (QueuedDevice::add_context); no time slicing is modelled.
  /// Throws std::invalid_argument for a duplicate stream, an unknown context or
  /// max_in_flight == 0.
  void add_stream(StreamId stream, ContextId ctx, StreamOptions options) override;

  /// Throws as SimDevice::submit.
  void submit(const OpSpec& op) override;
  void dependencies_changed() override;

  /// The host buffer standing in for device memory (GPU; nullptr for a CPU).
  [[nodiscard]] void* arena_base() noexcept override { return arena_.data(); }
  [[nodiscard]] std::uint64_t arena_bytes() const noexcept { return arena_.size(); }
  /// The host buffer D2H copies write to and CPU->GPU migrations read from (GPU only).
  [[nodiscard]] std::span<std::byte> host_state() noexcept {
    return {host_state_.data(), host_state_.size()};
  }
  /// The devices a CopyD2D may target (by DeviceId index). Set by the platform.
  void set_peers(std::vector<EmulatedDevice*> peers) { peers_ = std::move(peers); }
  /// Worker threads created so far (a statistic).
  [[nodiscard]] std::size_t worker_threads() const { return pool_.threads(); }
  /// Cancels the work in progress and joins the workers; nothing may be submitted afterwards.
  /// Idempotent; the destructor calls it. Platforms call it on every device before destroying
  /// any (a D2D copy writes into its peer's buffer).
  void shutdown();

 private:
  using Phase = emulated_device_detail::Phase;

  /// What a worker needs to execute one op (copied out of OpState: slots are reused).
  struct Task : WorkTicket<EmulatedDevice> {
    OpKind kind = OpKind::Host;
    DurationNs setup_ns = 0;     ///< scaled
    DurationNs solo_ns = 0;      ///< scaled
    HostStore* store = nullptr;  ///< CPU compute and weight loads read it (on the worker)
    // compute on a CPU
    const Model* model = nullptr;
    LayerRange layers{};
    Pass pass = Pass::Forward;
    std::uint32_t batch = 1;
    bool inference = false;
    // copies
    const Model* src_model = nullptr;  ///< a weight load: source is this model's host store
    std::uint64_t src_offset = 0;      ///< ... from this offset (wraps around the store)
    const std::byte* src = nullptr;    ///< otherwise the source
    std::byte* dst = nullptr;
    std::uint64_t copy_len = 0;  ///< physical bytes moved (before the store cap)
    std::uint64_t bytes = 0;     ///< logical bytes paced
    DurationNs latency_ns = 0;   ///< scaled
    double link_gbps = 0;        ///< bandwidth of the link direction
    double own_gbps = 0;         ///< this copy's cap (pageable / peer)
    LinkPacer* pacer = nullptr;
    std::mutex* lock_a = nullptr;  ///< memory locks held while bytes move (see memory_mutex_)
    std::mutex* lock_b = nullptr;
    std::shared_ptr<CancelToken> cancel;
  };

  void free_slot(std::uint32_t slot);
  void issue(StreamState& s);
  void evaluate();
  void dispatch(StreamState& s, std::uint32_t slot);
  void prepare_copy(const OpState& op, Task& t);
  [[nodiscard]] DurationNs scaled(DurationNs ns) const noexcept;
  [[nodiscard]] OpRecord make_record(const OpState& op, OpStatus status, TimeNs now) const;
  std::size_t remove_job(JobId job, bool issued_too) override;

  // Worker side.
  static void execute(const Task& t) noexcept;
  static bool run_copy(const Task& t, std::chrono::steady_clock::time_point start);
  // Runtime side of the worker's posts.
  void on_started(std::uint32_t stream, std::uint32_t slot, std::uint64_t token, TimeNs t);
  void on_finished(std::uint32_t stream, std::uint32_t slot, std::uint64_t token, TimeNs t0,
                   TimeNs t1);

  RealRuntime& runtime_;
  HostStore& store_;
  EmulatedDeviceOptions options_;

  HostBuffer arena_;       ///< GPU: stands in for device memory
  HostBuffer host_state_;  ///< GPU: D2H destination / migration source
  /// Held by a worker while it memcpy's a chunk into or out of arena_ / host_state_: wrapped
  /// offsets may make two copies touch the same bytes, which must not be a data race.
  std::mutex memory_mutex_;
  LinkPacer h2d_, d2h_;
  std::vector<EmulatedDevice*> peers_;

  // Declared last: destroyed (joined) first, while everything the workers touch still lives.
  WorkerPool pool_;
};

}  // namespace gpumux
