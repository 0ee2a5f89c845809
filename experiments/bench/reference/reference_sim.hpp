// Benchmark reference, not a second simulator: a plain C++ discrete-event loop (binary heap of
// POD events, switch on kind, no std::function, no allocation per event once set up) that
// reproduces gpumux's time_slicing run of the default experiment exactly, so that gpumux's
// events per CPU-second can be set beside what the same work costs without its generality
// (bench_simulation reports the ratio; tests/bench asserts the results equal).
//
// It mirrors gpumux's mechanics for this one shape (resolve_reference_inputs checks it): each
// job arrives into its own context with a compute stream (at most `depth` whole-pass ops) and
// a copy stream (one weight load); one GPU evaluated as SimDevice does: contexts never overlap,
// round-robin time slices with a context-switch gap, the context holding the GPU runs its
// single compute op at full rate, copies water-fill the host link. Times in ns.
//
// Events are counted as gpumux's SimRuntime counts runtime_events: callbacks executed, i.e.
// one per arrival instant and one per device evaluation timer that fires; a timer cancelled
// before it fires is a tombstone and not counted. Not thread-safe; one run per call.
#pragma once

#include <cstdint>
#include <vector>

#include "reference_inputs.hpp"

namespace gpumux::bench {

struct RefResult {
  /// By request id (gpumux's numbering: arrival order over all services), ns from arrival to
  /// the end of the request's forward op; -1 for requests not finished by the horizon.
  std::vector<DurationNs> latency_ns;
  std::vector<std::uint64_t> iterations;  ///< by job: training iterations completed
  TimeNs end_ns = 0;                      ///< the clock when the run stopped
  std::uint64_t events = 0;               ///< callbacks executed (see above)
  std::uint64_t context_switches = 0;
};

[[nodiscard]] RefResult run_reference(const RefInputs& inputs);

}  // namespace gpumux::bench
