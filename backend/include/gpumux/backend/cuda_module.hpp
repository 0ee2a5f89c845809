// The CUDA backend as a library loaded on first use. Runs on platform "sim" or "emulated" never
// load the CUDA runtime or cuBLAS: linked into the program, they cost every run about 0.07-0.27 s
// of CPU time and about 200 MiB at start-up (docs/performance.md, "Start-up"), most of a short
// simulation. In a CUDA build, platform "cuda" and `gpumux calibrate` load libgpumux_cuda.so with
// dlopen() and call it through the table below; the library resolves gpumux's own symbols against
// the program that loads it (executables are linked with exported symbols), so there is one copy of
// the registries and error types.
//
// Thread rules: cuda_module() may be called from any thread; the library is loaded once.
#pragma once

#include <filesystem>
#include <memory>

#include "gpumux/api/platform.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

/// Bumped whenever CudaModuleApi or the types it passes change layout, so a stale library
/// from an older build is refused instead of called.
inline constexpr int kCudaModuleAbi = 1;

/// The C symbol libgpumux_cuda.so exports: `const CudaModuleApi* gpumux_cuda_module_api()`.
inline constexpr const char* kCudaModuleSymbol = "gpumux_cuda_module_api";

struct CudaModuleApi {
  int abi_version = 0;
  /// Creates platform "cuda" (throws DeviceUnavailable without a usable GPU, CudaError).
  std::unique_ptr<Platform> (*create_platform)(const PlatformSetup& setup) = nullptr;
  /// `gpumux calibrate`; returns a process exit code.
  int (*run_calibration)(const CalibrationOptions& options) = nullptr;
};

/// Where the library is looked for: $GPUMUX_CUDA_MODULE if set, else the file the build
/// wrote (an absolute path compiled into the loader).
[[nodiscard]] std::filesystem::path cuda_module_path();

/// Loads the library (once) and returns its table. Throws DeviceUnavailable naming the path
/// and the loader's reason when it cannot be loaded or is from another build.
[[nodiscard]] const CudaModuleApi& cuda_module();

/// Defined inside libgpumux_cuda.so (backend/cuda/calibration.cpp): the calibration itself.
int run_calibration_on_gpu(const CalibrationOptions& options);

}  // namespace gpumux
