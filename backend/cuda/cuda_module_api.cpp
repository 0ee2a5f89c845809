// The one symbol libgpumux_cuda.so exports to the program that loads it
// (backend/loader/cuda_module_loader.cpp); cuda_module.hpp explains the split.
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/backend/cuda_module.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace {

std::unique_ptr<gpumux::Platform> create_platform(const gpumux::PlatformSetup& setup) {
  return std::make_unique<gpumux::CudaPlatform>(setup);
}

const gpumux::CudaModuleApi kApi{gpumux::kCudaModuleAbi, create_platform,
                                 gpumux::run_calibration_on_gpu};

}  // namespace

extern "C" __attribute__((visibility("default"))) const gpumux::CudaModuleApi*
gpumux_cuda_module_api() {
  return &kApi;
}
