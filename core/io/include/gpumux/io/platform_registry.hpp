// Where platforms register (name -> factory) and what a factory is given: the devices'
// profiles, the models and precision, and the config's platform.params.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/platform.hpp"
#include "gpumux/api/registry.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

class ModelCatalog;

/// How the workload uses a model: what a real backend pins and warms up before time 0.
struct ModelUse {
  std::string model;
  std::uint32_t batch = 1;
  bool training = false;
  /// Host bytes a weight load copies per weight byte: 1 (inference) or, for training,
  /// weights, gradients and optimizer slots (2 + optimizer_slots).
  std::uint32_t state_factor = 1;
  friend bool operator==(const ModelUse&, const ModelUse&) = default;
  friend bool operator<(const ModelUse& a, const ModelUse& b) {
    return std::tie(a.model, a.batch, a.training, a.state_factor) <
           std::tie(b.model, b.batch, b.training, b.state_factor);
  }
};

struct PlatformSetup {
  std::vector<DeviceProfile> profiles;   ///< one per device, DeviceId = index
  const ModelCatalog* models = nullptr;  ///< for backends that stage real weights
  /// The models the workload's jobs name (sorted, unique): what a real backend stages first.
  std::vector<std::string> workload_models;
  /// Each (model, batch, kind) the workload's jobs use (sorted, unique).
  std::vector<ModelUse> workload_uses;
  /// The experiment's `precision`: what a real backend computes in unless its params override.
  Precision precision = Precision::Fp32;
  nlohmann::json params = nlohmann::json::object();  ///< platform-specific options
  std::string config_file = "<config>";  ///< where `params` came from, for error messages
};

using PlatformRegistry = Registry<Platform, const PlatformSetup&>;

/// Registers platform TYPE under NAME, with the parameters TYPE::param_specs() declares.
#define GPUMUX_REGISTER_PLATFORM(NAME, TYPE, SUMMARY)                                 \
  [[maybe_unused]] static const bool gpumux_platform_registered_##TYPE =              \
      ::gpumux::PlatformRegistry::instance().add(                                     \
          NAME, SUMMARY,                                                              \
          [](const ::gpumux::PlatformSetup& s) { return std::make_unique<TYPE>(s); }, \
          ::gpumux::plugin_param_specs<TYPE>())

}  // namespace gpumux
