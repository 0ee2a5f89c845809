// Placement: where jobs' state lives in device memory. Owns one memory resource per device
// (a best-fit pool over the device's arena), keeps each job's residency (which allocations
// it holds, the arena offset of every layer) in step with it, and owns every layer's
// Absent -> Loading -> Resident transitions. Every allocation
// and release is logged (Alloc/Free events) through the engine's event sink.
//
// CPU devices hold everything: nothing is allocated there and weights are always resident.
//
// Internal to gpumux_engine. Units: bytes, ns. Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine_events.hpp"
#include "gpumux/api/device.hpp"
#include "gpumux/api/job_state.hpp"
#include "gpumux/api/runtime.hpp"
#include "gpumux/model/memory.hpp"
#include "job_progress.hpp"

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
  /// Whether what `s` does not yet hold on `device` can be allocated there now, exactly as
  /// the engine would: its absent layers' state as one allocation (as a whole-model load or
  /// a migration places it), then its activations if it holds none, both by the device's
  /// memory resource (a dry run: nothing changes). Always true on a CPU.
  [[nodiscard]] bool fits(const JobState& s, DeviceId device) const;
  /// Whether the absent layers' state of `s` can be allocated on `device` now (one
  /// allocation, as fits()) and, with it in place and every job's activations released
  /// (kills' parked activations included), one free block still holds `reserve_bytes`
  /// (rounded up to the alignment). Always true on a CPU.
  [[nodiscard]] bool fits_after(const JobState& s, DeviceId device,
                                std::uint64_t reserve_bytes) const;

  /// Allocates and places the weights (training: with gradients and optimizer slots) of
  /// `range`, which must be absent; returns the allocation's index in the residency's list.
  std::size_t place_weights(JobState& s, DeviceId device, LayerRange range);
  /// Drops stale copies on `device` and allocates the job's whole state there (a migration's
  /// destination), placing every layer.
  void place_state(JobState& s, DeviceId device);
  /// Releases the allocation a load made (the load never happened).
  void release_load(JobState& s, DeviceId device, std::size_t allocation);

  // ---- residency: the Absent -> Loading -> Resident state of each layer on each device ----
  // Placement owns these transitions; the engine calls them at a load's or a migration's
  // issue, completion and failure (inline: on the per-op path).

  /// A new job's residency on every device: its layers Resident on a CPU (host memory holds
  /// them), Absent on a GPU.
  static void init_residency(JobState& s, const std::vector<Device*>& devices);
  /// `op` (a load, or a migration to `device`) is copying `range` there.
  static void mark_loading(JobState& s, DeviceId device, LayerRange range, OpId op) noexcept {
    auto& res = s.residency[index_of(device)];
    for (std::uint32_t i = range.first; i < range.last; ++i) {
      res.set(i, Residency::Loading);
      res.loading_op[i] = op;
    }
  }
  /// `op` completed: the layers of `range` on `device` it was loading are Resident (a later
  /// load of the same layer may have taken them over: those stay its).
  static void mark_loaded(JobState& s, DeviceId device, LayerRange range, OpId op) noexcept {
    auto& res = s.residency[index_of(device)];
    for (std::uint32_t i = range.first; i < range.last; ++i) {
      if (res.layers[i] == Residency::Loading && res.loading_op[i] == op) {
        res.set(i, Residency::Resident);
      }
    }
  }
  /// A load of `range` on `device` was dropped or aborted: its Loading layers are Absent again,
  /// except those marked with no op.
  static void mark_load_failed(JobState& s, DeviceId device, LayerRange range) noexcept {
    auto& res = s.residency[index_of(device)];
    for (std::uint32_t i = range.first; i < range.last; ++i) {
      if (res.layers[i] == Residency::Loading && res.loading_op[i] == OpId{}) continue;
      if (res.layers[i] == Residency::Loading) res.set(i, Residency::Absent);
    }
  }
  /// A migration to `device` never happened: its Loading layers are Absent on a GPU, Resident
  /// on a CPU (host memory still holds them).
  void mark_migration_failed(JobState& s, DeviceId device) const noexcept {
    auto& res = s.residency[index_of(device)];
    const Residency back = is_gpu(device) ? Residency::Absent : Residency::Resident;
    for (std::uint32_t i = 0; i < res.layers.size(); ++i) {
      if (res.layers[i] == Residency::Loading) res.set(i, back);
    }
  }
  /// Activations for the unit being dispatched, if not held yet (inline: once per dispatch).
  /// Makes sure the job holds activations on `device` for a unit of `requests` requests
  /// (training: its iteration). May throw OutOfMemory, having changed nothing.
  void ensure_activations(JobState& s, DeviceId device, std::uint32_t requests = 1) {
    auto& res = s.residency[index_of(device)];
    if (!is_gpu(device)) return;
    if (!res.activations.valid()) {
      res.activations = allocate(s, device, progress::ephemeral_bytes(s, requests), "activations",
                                 /*settled=*/false);
      return;
    }
    // Held activations fit a unit of one request (or an iteration) whatever they were sized
    // for; a larger batch (D38) may need a larger block. The caller has checked that no op of
    // the job runs on the device, so the block can move: the new one is placed first, so an
    // OutOfMemory leaves the old one in place.
    if (requests <= 1) return;
    const std::uint64_t bytes = progress::ephemeral_bytes(s, requests);
    if (res.activations.bytes >= bytes) return;
    const Allocation old = res.activations;
    res.activations = allocate(s, device, bytes, "activations", /*settled=*/false);
    release(s.id, device, old, "activations", /*settled=*/false);
  }
  void release_activations(JobState& s, DeviceId device) {
    if (s.residency[index_of(device)].activations.valid()) free_activations(s, device);
  }
  /// Releases every weight allocation; every layer becomes absent.
  void release_weights(JobState& s, DeviceId device);
  /// The job loses its state on `device` at once; the memory returns to the pool `reap_ns`
  /// later (a killed process's memory stays allocated until it is reaped), or now when 0.
  /// `running`: the job's aborted ops the device has not let go of yet (device.hpp, abort
  /// semantics); then the memory is parked until unpark() has been called that many times,
  /// and returns at the later of that moment and `reap_ns` after now.
  void abandon(JobState& s, DeviceId device, DurationNs reap_ns, std::uint32_t running = 0);
  /// The device reported one of the job's aborted ops on `device` after abort() returned.
  void unpark(JobId job, DeviceId device);

 private:
  void allocate_activations(JobState& s, DeviceId device);
  void free_activations(JobState& s, DeviceId device);
  /// Bytes of the absent layers' state of `s` on `device` (not rounded).
  [[nodiscard]] std::uint64_t missing_state_bytes(const JobState& s, DeviceId device) const;
  /// `settled`: the allocation outlives the unit (everything but activations), so the
  /// device's settled view holds it too.
  Allocation allocate(const JobState& s, DeviceId device, std::uint64_t bytes,
                      std::string_view what, bool settled = true);
  void release(JobId job, DeviceId device, const Allocation& a, std::string_view what,
               bool settled = true);
  /// Releases a kill's memory; `activations`: the last of `held` is its activations.
  void reap(JobId job, DeviceId device, const std::vector<Allocation>& held, bool activations);
  /// Records where each layer of `range` lives when the layers' state is packed from `offset`.
  static void place_layers(const JobState& s, DeviceResidency& res, LayerRange range,
                           std::uint64_t offset);

  const std::vector<Device*>& devices_;
  Runtime& runtime_;
  EngineEvents& events_;
  std::vector<std::unique_ptr<MemoryResource>> memory_;  // per device
  // Per device: memory_ as it will be once every activation is released (the same
  // allocations at the same offsets, activations left out); answers fits_after().
  std::vector<std::unique_ptr<BestFitPool>> settled_;
  std::vector<bool> gpu_;  // per device
  // A kill's memory on a device, held until the device has reported its `ops` running ops
  // aborted; freed at due_ns at the earliest (process reaping).
  struct Parked {
    JobId job;
    DeviceId device;
    std::uint32_t ops;
    TimeNs due_ns;
    std::vector<Allocation> held;  // state, then activations if `activations`
    bool activations;
  };
  std::vector<Parked> parked_;
};

}  // namespace gpumux
