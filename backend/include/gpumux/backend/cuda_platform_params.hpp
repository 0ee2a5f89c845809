// The platform_params of platform "cuda", parsed without CUDA: both the real platform and the
// stub of builds without nvcc check them first, so a bad parameter is a ConfigError (exit 2)
// on every machine, whether or not a GPU or the CUDA toolkit is there. The keys are
// documented in gpumux/backend/cuda/cuda_platform.hpp.
//
// Thread rules: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpumux/api/platform.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

struct CudaPlatformParams {
  std::vector<int> gpus;  ///< physical GPU of each GPU profile, in order (empty: i mod count)
  double arena_gib = 0;   ///< 0: the profile's memory, capped by free memory - margin
  double margin_gib = 2;
  Precision precision = Precision::Fp32;  ///< default: the experiment's precision
  std::vector<std::string> preload;       ///< resolved model names to pin at start-up
  /// Run each (model, batch, kind) of the workload once on every GPU before time 0, so that
  /// cuBLAS set-up and lazy kernel loading (157 ms for ResNet-50's first forward pass on an
  /// H100, 2026-11-25) stay out of the measured run, as in a long-running server.
  bool warmup = true;
  /// Fault injection for tests: a faulting kernel before op `fault_at_op`'s work (-1: none).
  std::int64_t fault_at_op = -1;
  std::int64_t workspace_mib = 640;
  std::int64_t cpu_region_mib = 16;
};

/// Throws ConfigError naming setup.config_file and the key.
[[nodiscard]] CudaPlatformParams parse_cuda_platform_params(const PlatformSetup& setup);

}  // namespace gpumux
