// Placement: where jobs' state lives in device memory. Owns one memory resource per device
// (a best-fit pool over the device's arena) and keeps each job's residency (which
// allocations it holds, the arena offset of every layer) in step with it. Every allocation
// and release is logged (Alloc/Free events) through the engine's event sink.
//
// CPU devices hold everything: nothing is allocated there and weights are always resident.
//
// Internal to gpumux_core. Units: bytes, ns. Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine_events.hpp"
#include "gpumux/device.hpp"
#include "gpumux/job_state.hpp"
#include "gpumux/memory.hpp"
#include "gpumux/runtime.hpp"

namespace gpumux {

class Placement {
 public:
  /// Alignment of every allocation (what the CUDA allocator guarantees; memory.hpp).
  static constexpr std::uint64_t kAlign = kAllocationAlignBytes;

  Placement(const std::vector<Device*>& devices, Runtime& runtime, EngineEvents& events);

  [[nodiscard]] bool is_gpu(DeviceId d) const noexcept { return gpu_[index_of(d)]; }
  [[nodiscard]] MemoryStats stats(DeviceId d) const noexcept {
    return memory_[index_of(d)]->stats();
  }
  /// Whether the state `s` does not yet hold on `device` (absent layers, activations) could be
  /// allocated there now in one free block: a sufficient condition (two allocations may still
  /// fit in two smaller blocks). Always true on a CPU.
  [[nodiscard]] bool fits(const JobState& s, DeviceId device) const;

  /// Allocates and places the weights (training: with gradients and optimizer slots) of
  /// `range`, which must be absent; returns the allocation's index in the residency's list.
  std::size_t place_weights(JobState& s, DeviceId device, LayerRange range);
  /// Drops stale copies on `device` and allocates the job's whole state there (a migration's
  /// destination), placing every layer.
  void place_state(JobState& s, DeviceId device);
  /// Releases the allocation a load made (the load never happened).
  void release_load(JobState& s, DeviceId device, std::size_t allocation);
  /// Activations for the unit being dispatched, if not held yet (inline: once per dispatch).
  void ensure_activations(JobState& s, DeviceId device) {
    const auto& res = s.residency[index_of(device)];
    if (res.activations.valid() || !is_gpu(device)) return;
    allocate_activations(s, device);
  }
  void release_activations(JobState& s, DeviceId device) {
    if (s.residency[index_of(device)].activations.valid()) free_activations(s, device);
  }
  /// Releases every weight allocation; every layer becomes absent.
  void release_weights(JobState& s, DeviceId device);
  /// The job loses its state on `device` at once; the memory returns to the pool `reap_ns`
  /// later (a killed process's memory stays allocated until it is reaped), or now when 0.
  void abandon(JobState& s, DeviceId device, DurationNs reap_ns);

 private:
  void allocate_activations(JobState& s, DeviceId device);
  void free_activations(JobState& s, DeviceId device);
  Allocation allocate(const JobState& s, DeviceId device, std::uint64_t bytes,
                      std::string_view what);
  void release(JobId job, DeviceId device, const Allocation& a, std::string_view what);
  /// Records where each layer of `range` lives when the layers' state is packed from `offset`.
  static void place_layers(const JobState& s, DeviceResidency& res, LayerRange range,
                           std::uint64_t offset);

  const std::vector<Device*>& devices_;
  Runtime& runtime_;
  EngineEvents& events_;
  std::vector<std::unique_ptr<MemoryResource>> memory_;  // per device
  std::vector<bool> gpu_;                                // per device
};

}  // namespace gpumux
