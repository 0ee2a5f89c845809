// The device contract (core/api/include/gpumux/api/device.hpp) on platforms "sim" and "emulated":
// the bodies of device_conformance.hpp, compiled once per platform. Platform "cuda" instantiates
// them in tests/gpu (label gpu).
#include "device_conformance.hpp"

#include "gpumux/backend/emulated_platform.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/sim/sim_platform.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

PlatformSetup gpu_setup() {
  static const ModelCatalog catalog(test::source_dir() / "traces" / "models");
  PlatformSetup setup;
  setup.profiles.push_back(
      find_device_profile(test::source_dir() / "traces" / "devices", "v100-pcie3x16"));
  setup.models = &catalog;
  return setup;
}

conformance::DeviceRig sim_rig() {
  conformance::DeviceRig rig;
  rig.platform = std::make_unique<SimPlatform>(gpu_setup());
  return rig;
}

conformance::DeviceRig emulated_rig() {
  PlatformSetup setup = gpu_setup();
  setup.params = {{"host_arena_mib", 16}, {"host_weights_mib", 16}};
  conformance::DeviceRig rig;
  rig.platform = std::make_unique<EmulatedPlatform>(setup);
  return rig;
}

}  // namespace

GPUMUX_DEVICE_CONFORMANCE("sim", "[conformance][device]", sim_rig, true)
GPUMUX_DEVICE_CONFORMANCE("emulated", "[conformance][device]", emulated_rig, true)
