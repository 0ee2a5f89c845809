// A platform bundles the runtime and the devices: "sim" (virtual time), "emulated" (wall
// clock, no GPU), "cuda" (real GPU). It is the only thing that differs between them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/device.hpp"
#include "gpumux/registry.hpp"
#include "gpumux/runtime.hpp"

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
  std::vector<DeviceProfile> profiles;  ///< one per device, DeviceId = index
  std::uint64_t seed = 0;
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

class Platform {
 public:
  virtual ~Platform() = default;
  [[nodiscard]] virtual Runtime& runtime() noexcept = 0;
  [[nodiscard]] virtual std::vector<Device*> devices() noexcept = 0;
  /// One line for run.json: "sim", or the GPU name, driver and CUDA version.
  [[nodiscard]] virtual std::string describe() const = 0;
  /// Whether time is virtual (decides e.g. whether wall-clock lateness is meaningful).
  [[nodiscard]] virtual bool virtual_time() const noexcept = 0;
};

/// Base of the platforms: owns the runtime (an R), which is thus built before and destroyed
/// after everything a platform adds (its devices set timers and run workers on it).
/// `kVirtualTime`: whether R's time is virtual.
template <class R, bool kVirtualTime>
class RuntimePlatform : public Platform {
 public:
  [[nodiscard]] Runtime& runtime() noexcept final { return runtime_; }
  [[nodiscard]] bool virtual_time() const noexcept final { return kVirtualTime; }

 protected:
  R runtime_;
};

/// What a platform's devices() returns for the devices it owns: their pointers, in order.
template <class D>
[[nodiscard]] std::vector<Device*> device_pointers(const std::vector<std::unique_ptr<D>>& devices) {
  std::vector<Device*> out;
  out.reserve(devices.size());
  for (const auto& d : devices) out.push_back(d.get());
  return out;
}

/// "<kind> (<profile names, comma-separated>)": how describe() begins.
template <class D>
[[nodiscard]] std::string describe_profiles(std::string_view kind,
                                            const std::vector<std::unique_ptr<D>>& devices) {
  std::string out(kind);
  out += " (";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) out += ", ";
    out += devices[i]->profile().name;
  }
  return out + ")";
}

using PlatformRegistry = Registry<Platform, const PlatformSetup&>;

/// Registers platform TYPE under NAME, with the parameters TYPE::param_specs() declares.
#define GPUMUX_REGISTER_PLATFORM(NAME, TYPE, SUMMARY)                                 \
  [[maybe_unused]] static const bool gpumux_platform_registered_##TYPE =              \
      ::gpumux::PlatformRegistry::instance().add(                                     \
          NAME, SUMMARY,                                                              \
          [](const ::gpumux::PlatformSetup& s) { return std::make_unique<TYPE>(s); }, \
          ::gpumux::plugin_param_specs<TYPE>())

}  // namespace gpumux
