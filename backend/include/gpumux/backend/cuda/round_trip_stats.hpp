// Where the time goes between two ops of one CUDA stream when the second could only be handed
// to its launcher after the first ended (the stream's max_in_flight was reached): the host
// round trip that the first GPU session measured at a median of 114 us between PipeSwitch's
// per-layer training ops on an H100 (docs/fidelity.md), against 7 us in the simulator.
//
// Segments, each a median over the stream's round trips (us):
//   callback  GPU end of op k -> its host function runs (CUDA's driver thread)
//   post      host function -> the runtime thread processes the completion
//   hand      completion processed -> op k+1 handed to the launcher (engine, policy, device)
//   launch    handed -> op k+1's start event recorded (launcher wake-up, host set-up)
//   gpu       start event recorded -> op k+1 starts on the GPU
// Printed to stderr when the device is destroyed, if GPUMUX_CUDA_ROUND_TRIP is set.
//
// Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpumux/api/time.hpp"

namespace gpumux {

class RoundTripStats {
 public:
  /// Op of `stream` done: handed/launched host times, GPU start/end (runtime clock), when its
  /// host function ran and when the runtime thread saw it.
  void op_done(std::uint32_t stream, TimeNs handed, TimeNs launched, TimeNs gpu_start,
               TimeNs gpu_end, TimeNs callback, TimeNs seen);
  [[nodiscard]] std::size_t count() const noexcept { return total_.size(); }
  /// "round trips n=..: median total .. us = callback .. + post .. + hand .. + launch .. + gpu .."
  [[nodiscard]] std::string report() const;

 private:
  struct Previous {
    bool valid = false;
    TimeNs gpu_end = 0, callback = 0, seen = 0;
  };
  std::vector<Previous> previous_;
  std::vector<double> total_, callback_, post_, hand_, launch_, gpu_;
};

}  // namespace gpumux
