// A platform bundles the runtime and the devices: "sim" (virtual time), "emulated" (wall
// clock, no GPU), "cuda" (real GPU). It is the only thing that differs between them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpumux/api/device.hpp"
#include "gpumux/api/runtime.hpp"

namespace gpumux {

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

}  // namespace gpumux
