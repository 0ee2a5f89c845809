// Platform "cuda": a RealRuntime, one CudaDevice per GPU profile of the setup and one
// EmulatedDevice (Eigen compute on the host) per CPU profile, sharing a pinned weight store.
// DeviceId = index in the setup, as on every platform.
//
// Construction throws DeviceUnavailable when CUDA was compiled but no GPU is usable
// (cudaGetDeviceCount fails or reports 0), after the parameters were checked (ConfigError).
// Set-up cost (pinning and filling weight stores, arenas, contexts) is paid before time 0: the
// runtime's origin is reset at the end of the constructor.
//
// platform_params (all optional; unknown keys are a ConfigError):
//   "gpus":          [ordinal, ...] physical GPU of each GPU profile, in order (default: the
//                    i-th GPU profile uses GPU i modulo the number of GPUs)
//   "arena_gib":     device arena per GPU (default: the profile's memory, capped by free memory
//                    minus the margin; profiles sharing one GPU split its free memory evenly);
//                    the Engine's pools see this size as the device memory
//   "margin_gib":    device memory left outside the arena (default 2: cuBLAS, scratch, naive
//                    per-tensor cudaMalloc)
//   "precision":     "fp32" | "tf32" | "bf16" | "fp16" GEMM precision (default: the
//                    experiment's `precision`, which the simulator's cost model also uses)
//   "preload":       "workload" (default: the models the jobs name) | "all" | "none" |
//                    [model, ...]: models whose pinned weight store is created at start-up;
//                    others are pinned on their first load (slow: page-locking ~GB/s).
//                    A model a training job loads is pinned at its training size (weights,
//                    gradients, optimizer slots), what its first load copies
//   "warmup":        true (default) | false: before time 0, run every (model, batch, kind) of
//                    the workload once on each GPU (forward; backward and update for
//                    training), so that cuBLAS set-up and lazy kernel loading are not charged
//                    to the first op of the run (backend/cuda/warm_up.cpp)
//   "workspace_mib": per-GPU scratch of the layer executor (default 640)
//   "fault_at_op":   (tests) an op id: its launcher enqueues a kernel that faults the GPU,
//                    after the op's start event; the run must end with exit 1 and a message
//                    naming an op and the CUDA error, leaving no result folder (default -1)
//   "cpu_region_mib": Eigen scratch per operand on CPU devices (default 16)
//
// Thread rules: construct, run and destroy on one thread (the runtime thread). All device and
// pinned memory is released by the destructor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpumux/api/platform.hpp"
#include "gpumux/backend/cuda/cuda_device.hpp"
#include "gpumux/backend/cuda/pinned_weight_store.hpp"
#include "gpumux/backend/real_runtime.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

/// Number of usable GPUs: 0 when cudaGetDeviceCount fails (no driver, no device).
[[nodiscard]] int cuda_device_count() noexcept;
/// "NVIDIA H100 80GB HBM3 (132 SMs, 79.1 GiB), driver 580.95.05, CUDA runtime 13.0, ..."
[[nodiscard]] std::string describe_gpu(int ordinal);

class CudaPlatform final : public RuntimePlatform<RealRuntime, /*kVirtualTime=*/false> {
 public:
  explicit CudaPlatform(const PlatformSetup& setup);
  ~CudaPlatform() override;

  [[nodiscard]] std::vector<Device*> devices() noexcept override;
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] RealRuntime& real_runtime() noexcept { return runtime_; }
  /// The CudaDevice at setup index `i` (nullptr for a CPU device).
  [[nodiscard]] CudaDevice* gpu(std::size_t i) noexcept;
  [[nodiscard]] PinnedWeightStore& store() noexcept { return *store_; }

 private:
  std::unique_ptr<PinnedWeightStore> store_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<CudaDevice*> gpus_;  // by setup index, nullptr for CPUs
  std::string description_;
};

}  // namespace gpumux
