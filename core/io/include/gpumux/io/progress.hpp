// Progress of a long run or sweep for a person at a terminal: the text of the sweep progress
// line and of the run heartbeat, and an EventSink that hands every K-th event to a callback.
// The simulation has no clock here: the caller (the CLI) reads the wall clock in its callback,
// so the engine's outputs do not depend on whether anyone watches. The sink runs on the
// runtime thread, like every EventSink; the text functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "gpumux/api/events.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

/// Seconds as text a person reads at a glance: "42s", "3m07s", "2h05m" (rounded down to
/// whole seconds or minutes); negative or non-finite values print as "?".
[[nodiscard]] std::string format_wall_duration(double seconds);

/// "[done/total] 40% elapsed 1m10s, ETA 1m45s": `ran` of the done points were run (the
/// others were skipped as complete), and the ETA is the mean wall time per run point, as
/// observed with every worker busy, times the `to_run - ran` points still to run. No ETA
/// before the first run point ends ("ETA ?").
[[nodiscard]] std::string sweep_progress_line(std::size_t done, std::size_t total, std::size_t ran,
                                              std::size_t to_run, double elapsed_s);

/// "simulated 12.500 s of 60.000 s (20.8%), 1234567 events, 1m03s wall"; a run without a
/// horizon (kTimeNever) prints only the simulated time reached.
[[nodiscard]] std::string heartbeat_line(TimeNs simulated_ns, TimeNs horizon_ns,
                                         std::uint64_t events, double wall_s);

/// Calls `tick(event, events_so_far)` on every `every`-th event (every >= 1). Cheap enough to
/// stay attached for a whole run: one counter and one branch per event.
class EveryKEvents final : public EventSink {
 public:
  using Tick = std::function<void(const Event&, std::uint64_t)>;
  EveryKEvents(std::uint64_t every, Tick tick)
      : every_(every == 0 ? 1 : every), tick_(std::move(tick)) {}
  void on_event(const Event& e) override {
    if (++count_ % every_ == 0) tick_(e, count_);
  }
  [[nodiscard]] std::uint64_t events() const noexcept { return count_; }

 private:
  std::uint64_t every_;
  Tick tick_;
  std::uint64_t count_ = 0;
};

}  // namespace gpumux
