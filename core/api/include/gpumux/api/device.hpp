// The device seam: what the Engine drives on every platform, and THE device contract. Every
// implementation (SimDevice, EmulatedDevice, CudaDevice) follows the rules below; what a
// platform models beyond them (timing, sharing, real work) is in its own header. The device
// conformance suite (tests/conformance/device_conformance.hpp) checks them per platform.
//
// Streams and ops
//   The engine registers contexts and streams. Each stream has a FIFO host queue and a list of
//   issued ops: an op is issued (moved out of the host queue) while the stream has fewer than
//   max_in_flight issued, unfinished ops. Issued ops run in stream order and cannot be stopped
//   (as on CUDA); queued ones can be dropped. This bound defines what preemption can and cannot
//   stop, identically on every platform. Only the oldest issued op of a stream (its head)
//   executes: ops of one stream start, and finish Ok, in submission order (FIFO). The head waits
//   until every op of its `after` list is complete (observer->is_complete; re-checked after every
//   completion on this device and on dependencies_changed()), then spends `setup_ns` host-side,
//   then is reported started and runs its main phase. Ops of different streams are ordered only
//   by their `after` lists. An op with solo_ns == 0 (and no bytes) still starts and finishes.
//
// Notifications (DeviceObserver), all on the runtime thread
//   - submit(), drop_pending(), abort() and dependencies_changed() never call on_op_started
//     from inside themselves, and submit() / dependencies_changed() never call on_op_finished
//     from inside themselves: work is evaluated later (a runtime event or post).
//   - on_op_started at most once per op, before its on_op_finished; an op dropped or aborted
//     before it started gets none.
//   - on_op_finished exactly once per submitted op, with status Ok, Dropped or Aborted and
//     submitted_ns <= started_ns <= finished_ns; for a never-started op started == finished.
//   - Times are the device's clock (ns, the runtime's): a device's reported times never
//     decrease along one stream (an op's start >= its stream predecessor's finish).
//   - A notification is delivered after the device's bookkeeping is complete (queued() and
//     in_flight() already reflect it); the observer may call any method of this or another
//     device from inside it.
//
// Drop and abort (preemption)
//   - drop_pending(job): removes the job's queued (not issued) compute and host ops from every
//     host queue and reports each Dropped synchronously, before it returns. Queued copies stay.
//   - abort(job) (process kill): removes every queued op of the job and reports it Aborted
//     synchronously. An issued op of the job is aborted too: the device stops it as soon as
//     the hardware allows (SimDevice: at once; EmulatedDevice: the worker cancels its sleep,
//     copy or GEMM loop; CudaDevice: never, the kernels and copies already enqueued run to
//     their end) and reports it Aborted when it has stopped, which may be after abort()
//     returned. queued() and in_flight() stop counting it at once, but nothing after it on
//     that stream starts before it is reported.
//   - ABORT SEMANTICS: an Aborted report means the device no longer touches any memory the op
//     reads or writes. The memory of an aborted op is released when the device says so, i.e.
//     after its on_op_finished(Aborted), never at the moment abort() is called. The Engine
//     keeps a killed job's allocations out of the pool until every aborted op of the job on
//     that device has been reported (docs/decisions.md D20).
//   - Both return how many ops they removed or aborted (reported now or later).
//
// Thread rules: all calls and all callbacks happen on the runtime thread. Times are ns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/op.hpp"

namespace gpumux {

struct DeviceProfile;  // gpumux/model/device_profile.hpp

struct ContextOptions {
  /// MPS client: all MPS contexts of a device share one hardware context and run
  /// concurrently (spatial sharing); other contexts time-slice against each other.
  bool mps = false;
};

struct StreamOptions {
  int priority = 0;  ///< larger = more urgent (mapped to CUDA's inverted range by the backend)
  std::uint32_t max_in_flight = 2;
};

/// Receives device notifications. Implemented by the Engine.
class DeviceObserver {
 public:
  virtual ~DeviceObserver() = default;
  /// An op began executing (after its dependencies and setup cost). At most once per op.
  virtual void on_op_started(OpId op, TimeNs when_ns) = 0;
  /// An op finished (Ok), or was dropped/aborted; exactly once per submitted op. An Aborted
  /// report means the device has let go of the op's memory (see "Drop and abort" above).
  virtual void on_op_finished(const OpRecord& record) = 0;
  /// Whether `op` has completed successfully; devices poll it for cross-device dependencies.
  [[nodiscard]] virtual bool is_complete(OpId op) const noexcept = 0;
  /// Device-level trace events (time-slice switches), for the timeline. Optional.
  virtual void on_device_note(DeviceId, TimeNs, std::string_view /*what*/, std::int64_t) {}
};

class Device {
 public:
  virtual ~Device() = default;
  [[nodiscard]] virtual DeviceId id() const noexcept = 0;
  [[nodiscard]] virtual const DeviceProfile& profile() const noexcept = 0;

  virtual void set_observer(DeviceObserver* observer) noexcept = 0;
  virtual void add_context(ContextId ctx, ContextOptions options) = 0;
  virtual void add_stream(StreamId stream, ContextId ctx, StreamOptions options) = 0;

  /// Queues an op on its stream (FIFO). Non-blocking; start and completion arrive through
  /// the observer, never from inside this call.
  virtual void submit(const OpSpec& op) = 0;
  /// Drops queued (not issued) compute and host ops of `job` on every stream; returns how many.
  /// Each dropped op is reported with status Dropped. Queued copies (weight loads, state
  /// migrations) are kept: ops already issued elsewhere may depend on them.
  virtual std::size_t drop_pending(JobId job) = 0;
  /// Drops queued ops and aborts issued ones of `job` (process kill). Reported as Aborted:
  /// queued ones before this returns, issued ones when the device has stopped them.
  virtual std::size_t abort(JobId job) = 0;
  /// Some op completed somewhere: re-check ops blocked on cross-device dependencies.
  virtual void dependencies_changed() = 0;

  [[nodiscard]] virtual std::size_t queued(StreamId stream) const = 0;
  [[nodiscard]] virtual std::size_t in_flight(StreamId stream) const = 0;

  /// Base address of the device arena (nullptr where memory is bookkeeping only).
  [[nodiscard]] virtual void* arena_base() noexcept { return nullptr; }
};

}  // namespace gpumux
