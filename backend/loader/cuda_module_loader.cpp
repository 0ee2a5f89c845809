// Platform "cuda" and `gpumux calibrate` in a CUDA build: both load libgpumux_cuda.so on first
// use (cuda_module.hpp says why). Bad platform parameters are input errors (exit 2) checked
// before anything is loaded, as in builds without CUDA.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda_module.hpp"
#include "gpumux/backend/cuda_platform_params.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

std::filesystem::path cuda_module_path() {
  if (const char* env = std::getenv("GPUMUX_CUDA_MODULE"); env != nullptr && *env != '\0') {
    return env;
  }
  return GPUMUX_CUDA_MODULE_FILE;
}

namespace {

const CudaModuleApi& load_cuda_module() {
  const std::filesystem::path path = cuda_module_path();
  // RTLD_GLOBAL is not needed: the library only uses symbols, it exports none but the table.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw DeviceUnavailable("platform 'cuda': cannot load the CUDA backend " + path.string() +
                            ": " + (why != nullptr ? why : "unknown reason") +
                            " (set GPUMUX_CUDA_MODULE to its path if it was moved)");
  }
  using Entry = const CudaModuleApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kCudaModuleSymbol));
  const CudaModuleApi* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->abi_version != kCudaModuleAbi || api->create_platform == nullptr ||
      api->run_calibration == nullptr) {
    throw DeviceUnavailable("platform 'cuda': " + path.string() +
                            " is not this build's CUDA backend (missing or mismatched " +
                            kCudaModuleSymbol + "); rebuild gpumux");
  }
  // The handle is never closed: CUDA's runtime and cuBLAS must stay loaded until exit.
  return *api;
}

}  // namespace

const CudaModuleApi& cuda_module() {
  static const CudaModuleApi& api = load_cuda_module();
  return api;
}

int run_calibration(const CalibrationOptions& options) {
  return cuda_module().run_calibration(options);
}

namespace {

std::unique_ptr<Platform> create_cuda_platform(const PlatformSetup& setup) {
  (void)parse_cuda_platform_params(setup);  // exit 2 on a bad key, before loading anything
  return cuda_module().create_platform(setup);
}

[[maybe_unused]] const bool cuda_platform_registered = PlatformRegistry::instance().add(
    "cuda",
    "real NVIDIA GPU: CUDA streams and events, cuBLAS layer executor, pinned weight store, "
    "device arena",
    create_cuda_platform);

}  // namespace

}  // namespace gpumux
