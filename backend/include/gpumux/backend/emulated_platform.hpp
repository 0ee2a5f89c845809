// Platform "emulated": a RealRuntime (wall clock) and one EmulatedDevice per profile of the
// setup (DeviceId = index). No GPU is needed: GPU work is slept for its predicted time, copies
// move real bytes between host buffers paced to the link, CPU compute runs through Eigen. It
// proves the real-time plumbing (threads, callbacks, preemption races) on any machine.
//
// platform_params: all optional, declared by param_specs() (`gpumux list platforms --params`);
// undeclared keys are a ConfigError. Offsets beyond the host arena or weight store wrap around,
// and a copy's paced time always covers the whole op, however few bytes it really moves.
//
// Thread rules: construct, run and destroy on one thread (the runtime thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpumux/api/platform.hpp"
#include "gpumux/backend/emulated_device.hpp"
#include "gpumux/backend/host_store.hpp"
#include "gpumux/backend/real_runtime.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

class EmulatedPlatform final : public RuntimePlatform<RealRuntime, /*kVirtualTime=*/false> {
 public:
  /// Throws ConfigError for an unknown or invalid platform parameter.
  explicit EmulatedPlatform(const PlatformSetup& setup);
  /// The platform_params this platform reads (name, type, unit, default, help).
  static const ParamSpecs& param_specs();
  ~EmulatedPlatform() override;

  [[nodiscard]] std::vector<Device*> devices() noexcept override;
  /// "emulated (<profiles>) ..." plus the timer lateness statistics once the run has timers.
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] RealRuntime& real_runtime() noexcept { return runtime_; }
  [[nodiscard]] EmulatedDevice& device(std::size_t i) { return *devices_.at(i); }
  [[nodiscard]] HostStore& store() noexcept { return *store_; }

 private:
  std::unique_ptr<HostWeightStore> store_;
  std::vector<std::unique_ptr<EmulatedDevice>> devices_;
  double time_scale_ = 1.0;
};

/// Formats lateness statistics for describe(): "timer lateness: n=.. mean=..us p99=..us max=..us".
[[nodiscard]] std::string describe_lateness(const LatenessStats& s);

}  // namespace gpumux
