// The device seam: what the Engine drives on every platform. A device owns streams; each
// stream has a host-side queue and at most `max_in_flight` ops issued to the hardware. Issued
// ops run in stream order and cannot be stopped (as on CUDA); queued ones can be dropped. This
// bound defines what preemption can and cannot stop, identically on every platform.
// All calls and all callbacks happen on the runtime thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpumux/device_profile.hpp"
#include "gpumux/ids.hpp"
#include "gpumux/op.hpp"

namespace gpumux {

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
  /// An op began executing (after its dependencies and setup cost).
  virtual void on_op_started(OpId op, TimeNs when_ns) = 0;
  /// An op finished (Ok), or was dropped/aborted; exactly once per submitted op.
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

  /// Queues an op on its stream. Non-blocking; completion arrives through the observer.
  virtual void submit(const OpSpec& op) = 0;
  /// Drops queued (not issued) compute and host ops of `job` on every stream; returns how many.
  /// Each dropped op is reported with status Dropped. Queued copies (weight loads, state
  /// migrations) are kept: ops already issued elsewhere may depend on them.
  virtual std::size_t drop_pending(JobId job) = 0;
  /// Drops queued ops and aborts issued ones of `job` (process kill). Reported as Aborted.
  virtual std::size_t abort(JobId job) = 0;
  /// Some op completed somewhere: re-check ops blocked on cross-device dependencies.
  virtual void dependencies_changed() = 0;

  [[nodiscard]] virtual std::size_t queued(StreamId stream) const = 0;
  [[nodiscard]] virtual std::size_t in_flight(StreamId stream) const = 0;

  /// Base address of the device arena (nullptr where memory is bookkeeping only).
  [[nodiscard]] virtual void* arena_base() noexcept { return nullptr; }
};

}  // namespace gpumux
