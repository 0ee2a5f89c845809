// Device profiles: the numbers the simulator (and the emulated backend) use to predict how
// long work takes on a device. Read from traces/devices/<name>.json; every number there names
// its source. See traces/formats.md for the schema and traces/devices/README.md for the model.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

enum class DeviceKind : std::uint8_t { Gpu, Cpu };
enum class Precision : std::uint8_t { Fp32, Tf32, Fp16, Bf16 };

inline constexpr EnumNames<Precision, 4> kPrecisionNames{{{Precision::Fp32, "fp32"},
                                                          {Precision::Tf32, "tf32"},
                                                          {Precision::Fp16, "fp16"},
                                                          {Precision::Bf16, "bf16"}}};
inline constexpr EnumNames<DeviceKind, 2> kDeviceKindNames{
    {{DeviceKind::Gpu, "gpu"}, {DeviceKind::Cpu, "cpu"}}};
[[nodiscard]] Precision parse_precision(std::string_view text);  // throws UsageError
[[nodiscard]] constexpr std::string_view to_string(Precision p) noexcept {
  return kPrecisionNames.name(p);
}

/// Measured per-layer times for one (model, batch) from a calibration run; they override the
/// analytic model when present.
struct LayerTimes {
  std::vector<DurationNs> forward_ns;
  std::vector<DurationNs> backward_ns;
};

struct DeviceProfile {
  std::string name;
  std::string display_name;
  DeviceKind kind = DeviceKind::Gpu;
  std::uint64_t memory_bytes = 0;
  std::uint32_t sm_count = 1;  ///< SMs for a GPU, cores for a CPU

  // compute
  double fp32_tflops = 0, tf32_tflops = 0, fp16_tflops = 0, bf16_tflops = 0;
  double mem_bandwidth_gbps = 0;                 ///< GB/s = bytes per ns
  std::array<double, kLayerKinds> efficiency{};  ///< by LayerKind
  double memory_efficiency = 1.0;
  std::uint32_t tile_m = 128, tile_n = 128;

  // kernels
  DurationNs launch_ns = 0;
  std::array<std::uint32_t, kLayerKinds> kernels_per_layer{};

  // host link
  double h2d_gbps = 0, d2h_gbps = 0, peer_gbps = 0;
  DurationNs h2d_latency_ns = 0, d2h_latency_ns = 0;
  double pageable_factor = 1.0;

  // runtime costs
  DurationNs context_create_ns = 0, stream_create_ns = 0;
  DurationNs malloc_base_ns = 0, malloc_per_gib_ns = 0, free_ns = 0, event_ns = 0,
             pin_per_gib_ns = 0;

  // process start (sources in each profile's "sources"): a cold worker process pays
  // interpreter + framework import + library init (+ context_create_ns on a GPU); building a
  // model in it adds construction, linear in its parameters, and reading its weights.
  DurationNs interpreter_start_ns = 0;     ///< spawn a bare Python child until it runs
  DurationNs framework_import_ns = 0;      ///< import the framework (import torch)
  DurationNs library_init_ns = 0;          ///< first kernel: cuDNN/cuBLAS handles, module load
  DurationNs construct_base_ns = 0;        ///< model construction, fixed part
  DurationNs construct_per_mparam_ns = 0;  ///< model construction per 10^6 parameters
  double weight_read_gbps = 0;             ///< reading a state dict from the page cache, GB/s
  /// Derived on load, not a key: interpreter_start_ns + framework_import_ns + library_init_ns,
  /// the model-independent part of a process start (ContextStart::ColdProcess adds
  /// context_create_ns).
  DurationNs process_start_ns = 0;
  /// A killed process's device memory is released only when the process is reaped:
  /// PreemptMode::Kill frees it this long after the kill.
  DurationNs process_reap_ns = 0;
  /// From an op's end on the GPU to the start of the next op of its stream when that op waited
  /// in the host queue (the stream had max_in_flight ops issued): the host learns of the end
  /// and launches the next. Key runtime.host_round_trip_ns, optional: 0 (not modelled) in the
  /// datasheet profiles, measured by `gpumux calibrate` for platform cuda's own path (36-56 us
  /// on an H100, docs/fidelity.md). The simulator starts such an op no earlier than its issue
  /// plus this (D33).
  DurationNs host_round_trip_ns = 0;

  // sharing
  DurationNs timeslice_ns = 0, context_switch_ns = 0;
  double mps_efficiency = 1.0, concurrent_efficiency = 1.0;

  /// Calibrated per-layer times: model name -> batch -> times (optional).
  std::map<std::string, std::map<std::uint32_t, LayerTimes>, std::less<>> calibrated;
  /// The precision `calibrated` was measured in (key calibrated_precision, default fp32: what
  /// `gpumux calibrate` runs). The cost model uses those times only at this precision (D37).
  Precision calibrated_precision = Precision::Fp32;
  /// Provenance of the profile as a whole ("datasheet", or a calibration run's GPU/driver/date).
  std::string provenance;

  [[nodiscard]] double peak_tflops(Precision p) const noexcept;
  /// cudaMalloc(bytes) cost in this profile.
  [[nodiscard]] DurationNs malloc_ns(std::uint64_t bytes) const noexcept;
  /// Building `model` in a freshly started process: construction (base + per 10^6
  /// parameters) plus reading its weights from host storage; the copy to the device is a load.
  [[nodiscard]] DurationNs model_build_ns(const Model& model) const noexcept;
};

}  // namespace gpumux
