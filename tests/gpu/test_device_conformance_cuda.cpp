// The device contract (core/api/include/gpumux/api/device.hpp) on platform "cuda": the bodies of
// tests/conformance/device_conformance.hpp, compiled for CudaDevice (label gpu: needs a GPU).
// Work ops are Host ops (a sleep on the stream's launcher), the one op kind that needs no
// model; they go through the same queues, launcher hand-off and abort path as GPU work.
#include "../conformance/device_conformance.hpp"

#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

conformance::DeviceRig cuda_rig() {
  if (cuda_device_count() == 0) FAIL("no usable GPU: the [gpu] tests need one");
  static const ModelCatalog catalog(test::source_dir() / "traces" / "models");
  PlatformSetup setup;
  setup.profiles.push_back(
      find_device_profile(test::source_dir() / "traces" / "devices", "h100-sxm"));
  setup.models = &catalog;
  setup.params = {{"preload", "none"}, {"arena_gib", 1}};
  conformance::DeviceRig rig;
  rig.platform = std::make_unique<CudaPlatform>(setup);
  rig.work_kind = OpKind::Host;
  return rig;
}

}  // namespace

GPUMUX_DEVICE_CONFORMANCE("cuda", "[gpu][device]", cuda_rig, true)
