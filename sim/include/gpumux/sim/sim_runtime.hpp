// The virtual-time Runtime of platform "sim": an EventQueue over int64 ns. Events run in
// (time, scheduling order); now() jumps from event to event. There are no threads: every call,
// post() included, must come from the thread that calls run() (or before run(), from the
// thread that set the simulation up).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpumux/api/runtime.hpp"
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

  /// Live pending events (a statistic; includes device timers, armed re-armable ones too).
  [[nodiscard]] std::size_t pending() const noexcept { return queue_.size() + armed_; }

  // ---- re-armable timers ----
  // A device keeps one timer that it moves on almost every event. Cancelling and pushing a
  // heap event for each move costs a heap insertion, a callback move and a tombstone pop; a
  // re-armable timer lives outside the heap and moving it only takes a new sequence number
  // from the queue. Arming is exactly schedule_at() of a fresh event (same clamping, same
  // place among equal times) and disarming exactly cancel(), so the order in which events run
  // and events_executed() are the same either way. Meant for a few timers (one per device):
  // the earliest armed one is found by a scan when it changes.

  /// Registers a disarmed timer that runs `cb` (not copied per firing); returns its handle.
  /// Throws std::invalid_argument for an empty callback.
  std::uint32_t add_timer(Callback cb);
  /// (Re-)arms timer `id` at `when_ns` (clamped to now()), replacing any pending firing.
  void arm_timer(std::uint32_t id, TimeNs when_ns);
  /// Disarms timer `id` (no effect if it is not armed).
  void disarm_timer(std::uint32_t id) noexcept;
  /// Disarms timer `id` and drops its callback; the handle is not reused.
  void remove_timer(std::uint32_t id) noexcept;

 private:
  struct Rearmable {
    Callback cb;
    TimeNs when_ns = kTimeNever;
    std::uint64_t seq = 0;
    bool armed = false;
  };
  void find_earliest() noexcept;
  [[nodiscard]] bool before(const Rearmable& a, const Rearmable& b) const noexcept {
    return a.when_ns < b.when_ns || (a.when_ns == b.when_ns && a.seq < b.seq);
  }

  EventQueue queue_;
  /// Boxed: a running callback's storage never moves, even if a timer is added meanwhile.
  std::vector<std::unique_ptr<Rearmable>> timers_;
  std::int64_t earliest_ = -1;  ///< index of the earliest armed timer, -1 if none
  std::size_t armed_ = 0;
  TimeNs now_ = 0;
  std::uint64_t executed_ = 0;
  bool stop_ = false;
  bool running_ = false;
};

}  // namespace gpumux
