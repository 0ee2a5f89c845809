// Registers platform "cuda" in builds without nvcc: selecting it fails with a clear message
// instead of a missing-name error (Ginkgo-style stub, no #ifdef in the rest of the code).
#include "gpumux/api/errors.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/backend/cuda_platform_params.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace {

class CudaPlatformNotCompiled final : public gpumux::Platform {
 public:
  explicit CudaPlatformNotCompiled(const gpumux::PlatformSetup& setup) {
    // Bad parameters are input errors (exit 2) in every build, as in the real platform.
    (void)gpumux::parse_cuda_platform_params(setup);
    throw gpumux::NotCompiled(
        "platform 'cuda' was not compiled into this build (no nvcc found at configure time); "
        "install the CUDA toolkit and reconfigure with -DGPUMUX_CUDA=ON");
  }
  gpumux::Runtime& runtime() noexcept override { std::abort(); }
  std::vector<gpumux::Device*> devices() noexcept override { return {}; }
  [[nodiscard]] std::string describe() const override { return "cuda (not compiled)"; }
  [[nodiscard]] bool virtual_time() const noexcept override { return false; }
};

GPUMUX_REGISTER_PLATFORM("cuda", CudaPlatformNotCompiled,
                         "real NVIDIA GPU via CUDA streams, events and cuBLAS (not compiled)");

}  // namespace
