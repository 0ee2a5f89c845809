// The virtual-time Runtime of platform "sim": an EventQueue over int64 ns. Events run in
// (time, scheduling order); now() jumps from event to event. There are no threads: every call,
// post() included, must come from the thread that calls run() (or before run(), from the
// thread that set the simulation up).
#pragma once

#include <cstdint>

#include "gpumux/runtime.hpp"
#include "gpumux/sim/event_queue.hpp"

namespace gpumux {

class SimRuntime final : public Runtime {
 public:
  SimRuntime() = default;
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  [[nodiscard]] TimeNs now() const noexcept override { return now_; }

  /// Times before now() are clamped to now() (the event then runs after the events already
  /// scheduled at now()).
  TimerId schedule_at(TimeNs when_ns, Callback cb) override {
    return queue_.push(when_ns < now_ ? now_ : when_ns, std::move(cb));
  }

  bool cancel(TimerId id) noexcept override { return queue_.cancel(id); }

  /// Same as schedule_at(now()): no threads in simulation, so not actually thread-safe here.
  void post(Callback cb) override { queue_.push(now_, std::move(cb)); }

  /// Pops events in (time, seq) order until the queue is empty, stop() is called, or the next
  /// event lies after `horizon_ns`; in that last case now() becomes `horizon_ns` (time never
  /// goes backwards). Events at exactly the horizon run. Not re-entrant (std::logic_error).
  /// An exception from a callback propagates; the runtime stays usable.
  void run(TimeNs horizon_ns = kTimeNever) override;

  void stop() noexcept override { stop_ = true; }

  [[nodiscard]] std::uint64_t events_executed() const noexcept override { return executed_; }

  /// Live pending events (a statistic; includes device timers).
  [[nodiscard]] std::size_t pending() const noexcept { return queue_.size(); }

 private:
  EventQueue queue_;
  TimeNs now_ = 0;
  std::uint64_t executed_ = 0;
  bool stop_ = false;
  bool running_ = false;
};

}  // namespace gpumux
