// What the fakecuda test program adds to the tests of tests/gpu: platform "cuda" is the real
// CudaPlatform on the CUDA test double (no stub, no library loaded at run time), and each
// test case starts from a reset double (arithmetic exact for cases tagged [exact]).
#include <algorithm>

#define CATCH_CONFIG_EXTERNAL_INTERFACES  // TestEventListenerBase
#include <catch2/catch.hpp>

#include "gpumux/api/platform.hpp"
#include "gpumux/backend/calibration.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/backend/cuda_module.hpp"
#include "gpumux/backend/cuda_platform_params.hpp"
#include "gpumux/fakecuda/fakecuda.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

int run_calibration(const CalibrationOptions& options) {
  return run_calibration_on_gpu(options);
}

}  // namespace gpumux

namespace {

[[maybe_unused]] const bool cuda_on_fakecuda_registered = gpumux::PlatformRegistry::instance().add(
    "cuda", "the real CUDA backend on the CUDA test double (fakecuda test program only)",
    [](const gpumux::PlatformSetup& setup) -> std::unique_ptr<gpumux::Platform> {
      return std::make_unique<gpumux::CudaPlatform>(setup);
    });

class ResetDouble : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    gpumux::fakecuda::Options o;
    const bool exact = std::find(info.tags.begin(), info.tags.end(), "exact") != info.tags.end();
    o.arithmetic = exact ? gpumux::fakecuda::Arithmetic::Exact : gpumux::fakecuda::Arithmetic::Skip;
    gpumux::fakecuda::reset(o);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(ResetDouble)
