#include "gpumux/sim/sim_platform.hpp"

#include <stdexcept>

#include "gpumux/api/ids.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

SimPlatform::SimPlatform(const PlatformSetup& setup) {
  if (!setup.params.is_null()) {
    JsonReader(setup.params, setup.config_file, "platform_params").finish();
  }
  if (setup.profiles.size() > kMaxDevices) {
    throw std::invalid_argument("platform sim: too many devices");
  }
  devices_.reserve(setup.profiles.size());
  for (std::size_t i = 0; i < setup.profiles.size(); ++i) {
    devices_.push_back(std::make_unique<SimDevice>(DeviceId{static_cast<std::uint16_t>(i)},
                                                   setup.profiles[i], runtime_));
  }
}

SimPlatform::~SimPlatform() = default;

std::vector<Device*> SimPlatform::devices() noexcept {
  return device_pointers(devices_);
}

std::string SimPlatform::describe() const {
  return describe_profiles("sim", devices_);
}

namespace {
GPUMUX_REGISTER_PLATFORM("sim", SimPlatform,
                         "discrete-event simulation in virtual time (simulated GPUs and CPUs)");
}  // namespace

}  // namespace gpumux
