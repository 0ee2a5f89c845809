// The wall-clock Runtime of platforms "emulated" and "cuda".
//
// Time is steady_clock time since the origin (set at construction, or again by reset_origin()
// when a platform finished a slow set-up), in ns. Timers live in a heap ordered by
// (time, scheduling order); the loop sleeps on a condition variable until the next timer is due
// or another thread post()s a callback, whichever comes first (the shape of ns-3's
// RealtimeSimulatorImpl with a Synchronizer that returns early).
//
// Threads
//   - The runtime thread is the thread that calls run(). Every callback (timers and posts) runs
//     on it, one at a time. schedule_at(), cancel() and lateness() are runtime-thread calls
//     (before run(), the thread that sets the experiment up counts as the runtime thread).
//   - post(), add_pending(), done_pending(), now() and stop() may be called from any thread
//     (CUDA host callbacks, device worker threads).
//
// Termination
//   run() returns when stop() was called, the horizon has passed, or there is nothing left: no
//   live timer, no posted callback and no outstanding device work. Device work in flight on
//   other threads is announced with add_pending() (when it is handed to a worker) and retired
//   with done_pending() (typically inside the callback that the worker post()s on completion),
//   so run() waits for that post instead of returning while a GPU or a worker is still busy.
//
// Lateness
//   Each timer's lateness (the time it actually ran minus the time it was due, clamped to the
//   time it was scheduled when it was scheduled in the past) is recorded in a histogram with
//   3% resolution (no allocation per event). Posted callbacks are not timers and not counted.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <queue>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpumux/api/runtime.hpp"

namespace gpumux {

/// Summary of timer lateness (actual minus scheduled run time), ns.
struct LatenessStats {
  std::uint64_t count = 0;
  double mean_ns = 0;
  std::int64_t max_ns = 0;
  std::int64_t p99_ns = 0;  ///< upper bound of the histogram bucket holding the 99th percentile
};

/// A log-linear histogram of non-negative ns values: 32 linear sub-buckets per power of two
/// (relative bucket width <= 1/32). Fixed size; add() never allocates. Not thread-safe.
class LatenessHistogram {
 public:
  void add(std::int64_t ns) noexcept;
  [[nodiscard]] LatenessStats stats() const noexcept;
  /// Upper bound (inclusive) of the bucket holding the q-quantile, q in [0, 1].
  [[nodiscard]] std::int64_t quantile(double q) const noexcept;
  void clear() noexcept { *this = LatenessHistogram{}; }

 private:
  static constexpr int kSubBits = 5;  // 32 sub-buckets
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;
  static std::size_t bucket_of(std::uint64_t v) noexcept;
  static std::uint64_t bucket_upper(std::size_t b) noexcept;

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  long double sum_ = 0;
  std::int64_t max_ = 0;
};

class RealRuntime final : public Runtime {
 public:
  using Clock = std::chrono::steady_clock;

  RealRuntime();
  ~RealRuntime() override;
  RealRuntime(const RealRuntime&) = delete;
  RealRuntime& operator=(const RealRuntime&) = delete;

  /// ns since the origin. Safe on any thread.
  [[nodiscard]] TimeNs now() const noexcept override { return to_ns(Clock::now()); }

  /// Runtime thread only. `when_ns` earlier than now() means "as soon as possible" (runs after
  /// timers already due, in scheduling order).
  TimerId schedule_at(TimeNs when_ns, Callback cb) override;
  /// Runtime thread only.
  bool cancel(TimerId id) noexcept override;
  /// Any thread. Callbacks posted by one thread run in the order they were posted.
  void post(Callback cb) override;
  /// Runs the loop on the calling thread (see the termination rules above). An exception from a
  /// callback propagates; the runtime stays usable. Not re-entrant (std::logic_error).
  void run(TimeNs horizon_ns = kTimeNever) override;
  /// Any thread: run() returns after the callback in progress.
  void stop() noexcept override;
  [[nodiscard]] std::uint64_t events_executed() const noexcept override {
    return executed_.load(std::memory_order_relaxed);
  }

  /// Any thread: device work was handed to another thread; run() will not return (unless
  /// stopped or past the horizon) until the matching done_pending().
  void add_pending() noexcept;
  /// Any thread: retires one add_pending().
  void done_pending() noexcept;
  /// Hands device work to another thread: add_pending(), then hand() (e.g. a WorkerPool
  /// submit whose task post()s back and retires it). If hand() throws, nothing was handed: the
  /// add_pending() is retired and the exception propagates.
  template <class Hand>
  void hand_off(Hand hand) {
    add_pending();
    try {
      hand();
    } catch (...) {
      done_pending();
      throw;
    }
  }
  [[nodiscard]] std::int64_t pending() const noexcept;

  /// Runtime thread (or after run() returned).
  [[nodiscard]] LatenessStats lateness() const noexcept { return lateness_.stats(); }

  /// Moves time 0 to the present. Call before any timer is scheduled (throws std::logic_error
  /// otherwise): platforms call it at the end of a slow set-up (pinning memory, contexts).
  void reset_origin();
  [[nodiscard]] Clock::time_point origin() const noexcept { return origin_; }
  [[nodiscard]] TimeNs to_ns(Clock::time_point t) const noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin_).count();
  }
  [[nodiscard]] Clock::time_point to_clock(TimeNs t) const noexcept {
    return origin_ + std::chrono::nanoseconds(t);
  }

  /// Whether the calling thread is the one inside run().
  [[nodiscard]] bool on_runtime_thread() const noexcept;

 private:
  struct TimerEntry {
    TimeNs when_ns;
    std::uint64_t seq;  // == timer id: increasing, so (when, seq) is the scheduling order
    bool operator>(const TimerEntry& o) const noexcept {
      return when_ns != o.when_ns ? when_ns > o.when_ns : seq > o.seq;
    }
  };
  struct TimerSlot {
    Callback cb;
    TimeNs due_ns;  // the time it was due (clamped to when it was scheduled)
  };

  bool run_posted();  // returns false if stop() was requested meanwhile
  bool pop_due_timer(TimeNs now_ns, Callback& cb, TimeNs& due_ns);
  void drop_dead_timers() noexcept;
  [[nodiscard]] TimeNs next_timer_ns() const noexcept;

  Clock::time_point origin_;

  // Runtime-thread state.
  std::priority_queue<TimerEntry, std::vector<TimerEntry>, std::greater<>> heap_;
  std::unordered_map<std::uint64_t, TimerSlot> live_;
  std::uint64_t next_seq_ = 1;
  LatenessHistogram lateness_;
  std::vector<Callback> draining_;  // posted callbacks being run (reused buffer)
  bool running_ = false;

  // Shared state, guarded by mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Callback> posted_;
  std::int64_t pending_ = 0;

  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> executed_{0};
  std::atomic<std::thread::id> loop_thread_{};
};

}  // namespace gpumux
