#include "gpumux/sim/sim_platform.hpp"

#include <limits>
#include <stdexcept>

#include "gpumux/json_reader.hpp"

namespace gpumux {

SimPlatform::SimPlatform(const PlatformSetup& setup) {
  if (!setup.params.is_null()) {
    JsonReader(setup.params, setup.config_file, "platform_params").finish();
  }
  if (setup.profiles.size() > std::numeric_limits<std::uint16_t>::max()) {
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
  std::vector<Device*> out;
  out.reserve(devices_.size());
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

std::string SimPlatform::describe() const {
  std::string out = "sim (";
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (i > 0) out += ", ";
    out += devices_[i]->profile().name;
  }
  return out + ")";
}

namespace {
GPUMUX_REGISTER_PLATFORM("sim", SimPlatform,
                         "discrete-event simulation in virtual time (simulated GPUs and CPUs)");
}  // namespace

}  // namespace gpumux
