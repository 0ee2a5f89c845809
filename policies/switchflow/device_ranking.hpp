// SwitchFlow's device ranking: the fastest GPU first, the other GPUs by falling peak, the CPUs
// last. SwitchFlow's TF fork ranks devices by CUDA compute capability and pins the CPU to 1.0
// (shizukanaskytree/tensorflow direct_session.cc); gpumux profiles carry peak FLOP/s instead, which
// orders the paper's pairs the same way (RTX 2080 Ti > GTX 1080 Ti > Xeon; V100 > Xeon).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpumux/api/policy.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux::policies::switchflow {

/// Peak FLOP/s (TFLOPS) of a device at the run's precision.
inline double device_peak_tflops(const Context& ctx, DeviceId d) {
  const CostModel& cost = ctx.cost(d);
  return cost.profile().peak_tflops(cost.options().precision);
}

/// Whether `d` is one of the platform's GPUs (Context::gpus is in DeviceId order).
inline bool is_gpu(const Context& ctx, DeviceId d) {
  return std::binary_search(ctx.gpus().begin(), ctx.gpus().end(), d);
}

/// Every device of the run: GPUs by falling peak, then CPUs by falling peak; ties keep the
/// config's order (deterministic).
inline std::vector<DeviceId> rank_devices(const Context& ctx) {
  std::vector<DeviceId> ranked;
  for (std::size_t i = 0; i < ctx.device_count(); ++i) {
    ranked.push_back(DeviceId{static_cast<std::uint16_t>(i)});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&ctx](DeviceId a, DeviceId b) {
    const bool gpu_a = is_gpu(ctx, a), gpu_b = is_gpu(ctx, b);
    if (gpu_a != gpu_b) return gpu_a;
    return device_peak_tflops(ctx, a) > device_peak_tflops(ctx, b);
  });
  return ranked;
}

}  // namespace gpumux::policies::switchflow
