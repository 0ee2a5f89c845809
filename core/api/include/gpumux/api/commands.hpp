// The arguments and results of a policy's commands (gpumux/api/context.hpp and its facets):
// op handles, dispatch and load options, how to preempt, how a context starts.
#pragma once

#include <cstdint>
#include <vector>

#include "gpumux/api/ids.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

/// A submitted op; `valid()` is false when a command issued nothing.
struct OpHandle {
  OpId op{};
  bool issued = false;
  [[nodiscard]] bool valid() const noexcept { return issued; }
};

struct DispatchOptions {
  /// Layers to cover; 0 = the rest of the current pass. The update pass is always one op.
  std::uint32_t layers = 0;
  /// Extra ops to wait for (the job's previous op and weight loads are waited for anyway);
  /// each must have been issued (a handle from an earlier command), else PolicyError.
  std::vector<OpHandle> after;
  /// Host-side cost paid after the dependencies are met and before the op starts, ns: a
  /// synchronisation (event wait, IPC message) per group, a yield check per node.
  DurationNs setup_ns = 0;
  /// Inference, dynamic batching (D38): the unit this op starts serves the oldest `requests`
  /// waiting requests as one batch (an op at batch size requests x the service's batch).
  /// 0 = one request. Only a unit's first op chooses; its later ops keep the batch (0 or the
  /// same number). A dynamic service's members decide what its ops run (the deepest exit:
  /// layers past it run nothing; the longest input, to which all are padded).
  std::uint32_t requests = 0;
};

struct LoadOptions {
  bool pageable = false;  ///< copy from pageable host memory instead of the pinned store
  /// Allocate device memory with one cudaMalloc per tensor on the switch path (the naive
  /// path PipeSwitch compares against) instead of from the pre-allocated pool.
  bool per_tensor_malloc = false;
  /// Ops to wait for; each must have been issued (a handle from an earlier command).
  std::vector<OpHandle> after;
};

enum class PreemptMode : std::uint8_t {
  DropQueued,  ///< drop compute not yet issued (queued copies still run); issued ops finish
  /// Kill the job's process: abort everything and lose its unfinished unit; its device memory
  /// is released only when the process is reaped, the profile's process_reap_ns later.
  Kill,
  /// Abort everything, lose the unfinished unit and drop the job's device memory at once: a
  /// task stopped inside a process that lives on (PipeSwitch's worker over a shared pool).
  Discard
};

enum class ContextStart : std::uint8_t {
  Warm,        ///< already running (standby worker): no start cost
  NewContext,  ///< create a context in a running process: context_create_ns
  /// Spawn a process and create its context: process_start_ns + context_create_ns, plus
  /// building a job's model when create_context names one (DeviceProfile::model_build_ns).
  ColdProcess
};

}  // namespace gpumux
