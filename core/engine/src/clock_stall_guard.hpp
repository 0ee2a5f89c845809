// Detects a run whose clock cannot advance: ops that take no time completing and being
// issued again, at one instant, with no finite input consumed in between. A model and device
// profile whose costs are all zero (each value accepted by the readers) do this forever: the
// horizon is never reached, and the event files grow without end.
//
// The cycle is counted, not the events: the counter holds the zero-length ops completed at the
// current instant since the last job or trace request arrived or an open-loop request ended.
// Those inputs are finite, so any work they cause at one instant ends; what repeats without
// them (training iterations, closed-loop clients, a tuner's trials) is the cycle.
//
// The bound. A legitimate run completes few zero-length ops at one instant between two
// inputs: an op of a model zoo layer takes at least 1 ns (the cost model rounds each layer's
// time up), so what completes at an instant without time passing is the work the engine and
// policies issue at zero length by design: data-parallel barriers (a tree of about W / 3
// barriers over W replicas, as DepList holds 4 dependencies: 21,845 for the documented
// maximum of 65,536 GPUs), zero-length delays, the empty pieces of a dynamic batch past its
// deepest exit (at most a model's layers). 2^18 = 262,144 is 12 times the widest barrier tree;
// a zero-cost run reaches it in well under a second of simulation.
//
// Wall-clock platforms (emulated, cuda) run ops in real time: an op of zero cost still takes
// the microseconds of a thread hand-off or a kernel launch, the clock moves on and the horizon
// ends the run, so the counter there restarts at every completion and never reaches the bound.
//
// Internal to gpumux_engine. Times in ns. Thread rules: runtime thread only.
#pragma once

#include <cstdint>

#include "gpumux/api/time.hpp"

namespace gpumux {

class ClockStallGuard {
 public:
  /// Zero-length ops at one instant, with no input consumed, that a run may complete.
  static constexpr std::uint64_t kMaxZeroLengthOps = std::uint64_t{1} << 18;

  /// Counts an op that completed at `now_ns` having taken no time; `inputs` counts the finite
  /// inputs consumed so far (RequestSources::inputs_consumed). Returns true once the bound is
  /// passed: the run cannot advance its clock.
  [[nodiscard]] bool zero_length_op(TimeNs now_ns, std::uint64_t inputs) noexcept {
    if (now_ns != instant_ns_ || inputs != inputs_) {
      instant_ns_ = now_ns;
      inputs_ = inputs;
      count_ = 0;
    }
    return ++count_ > kMaxZeroLengthOps;
  }

 private:
  TimeNs instant_ns_ = -1;
  std::uint64_t inputs_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace gpumux
