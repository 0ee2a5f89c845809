// The clock-and-executor seam. "sim" implements it with a virtual-time event queue; the real
// backends with a wall-clock loop. Everything above this seam (Engine, policies, devices'
// bookkeeping) runs on the runtime thread only.
#pragma once

#include <cstdint>
#include <functional>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/small_function.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

class Runtime {
 public:
  /// Callbacks are move-only, stored inline (no heap allocation) up to 48 bytes of capture.
  using Callback = SmallFunction<void(), 48>;

  virtual ~Runtime() = default;

  /// Current time, ns since the experiment started. Runtime thread only.
  [[nodiscard]] virtual TimeNs now() const noexcept = 0;

  /// Runs `cb` on the runtime thread at `when_ns` (clamped to now() if earlier). Events at the
  /// same time run in scheduling order. Runtime thread only.
  virtual TimerId schedule_at(TimeNs when_ns, Callback cb) = 0;

  /// Cancels a timer that has not run yet; returns false if it already ran or was cancelled.
  virtual bool cancel(TimerId id) noexcept = 0;

  /// Thread-safe: the only call other threads (CUDA host callbacks, worker threads) may make.
  /// Runs `cb` on the runtime thread as soon as possible.
  virtual void post(Callback cb) = 0;

  /// Runs until no work is left, stop() is called, or the horizon is passed.
  virtual void run(TimeNs horizon_ns = kTimeNever) = 0;

  /// Makes run() return after the current callback. Runtime thread only.
  virtual void stop() noexcept = 0;

  /// Number of callbacks executed so far (a performance statistic).
  [[nodiscard]] virtual std::uint64_t events_executed() const noexcept = 0;

  TimerId schedule_after(DurationNs delay_ns, Callback cb) {
    return schedule_at(now() + delay_ns, std::move(cb));
  }
};

}  // namespace gpumux
