// Platform "sim": a SimRuntime (virtual time) and one SimDevice per profile of the setup
// (DeviceId = index). Accepts no platform parameters. Runtime thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpumux/api/platform.hpp"
#include "gpumux/io/platform_registry.hpp"
#include "gpumux/sim/sim_device.hpp"
#include "gpumux/sim/sim_runtime.hpp"

namespace gpumux {

class SimPlatform final : public RuntimePlatform<SimRuntime, /*kVirtualTime=*/true> {
 public:
  /// Throws ConfigError for any key in setup.params.
  explicit SimPlatform(const PlatformSetup& setup);
  ~SimPlatform() override;

  [[nodiscard]] std::vector<Device*> devices() noexcept override;
  /// "sim (" + the profile names, comma-separated + ")".
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] SimRuntime& sim_runtime() noexcept { return runtime_; }

 private:
  std::vector<std::unique_ptr<SimDevice>> devices_;
};

}  // namespace gpumux
