#include "gpumux/backend/emulated_platform.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/platform_registry.hpp"

namespace gpumux {

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
// Each MiB size is checked before it is multiplied into bytes: at most 2^30 MiB = 2^50 B, the
// largest memory a device profile may have (device_profile.cpp), so no product wraps.
constexpr std::int64_t kMaxMib = std::int64_t{1} << 30;
}  // namespace

std::string describe_lateness(const LatenessStats& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "timer lateness: n=%llu mean=%.1fus p99=%.1fus max=%.1fus",
                static_cast<unsigned long long>(s.count), s.mean_ns / 1e3,
                static_cast<double>(s.p99_ns) / 1e3, static_cast<double>(s.max_ns) / 1e3);
  return buf;
}

const ParamSpecs& EmulatedPlatform::param_specs() {
  static const ParamSpecs specs{
      param::integer("host_arena_mib", 0,
                     "host buffer standing in for each GPU's memory, MiB in [0, 2^30] "
                     "(0 = min(profile memory, 256 MiB))"),
      param::integer("host_weights_mib", 16,
                     "cap of each model's host weight store, MiB in [1, 2^30]"),
      param::number("time_scale", "", 1.0, "multiplies every emulated duration (a CI knob)"),
      param::integer("max_copy_mib", 16, "most bytes one copy really moves, MiB in [0, 2^30]"),
      param::integer("cpu_region_mib", 16,
                     "Eigen scratch per operand on CPU devices, MiB in [1, 2^30]")};
  return specs;
}

EmulatedPlatform::EmulatedPlatform(const PlatformSetup& setup) {
  std::int64_t arena_mib = 0;
  std::int64_t weights_mib = 16;
  std::int64_t copy_mib = 16;
  std::int64_t region_mib = 16;
  if (!setup.params.is_null()) {
    ParamReader r(setup.params, setup.config_file, "platform_params", param_specs());
    arena_mib = r.integer_in("host_arena_mib", 0, kMaxMib);  // 0: min(profile memory, 256 MiB)
    weights_mib = r.integer_in("host_weights_mib", 1, kMaxMib);
    // At most 1000: a scaled duration (at most 1e12 ns by the profiles' bounds) stays an
    // exact int64 number of ns.
    time_scale_ = r.number_in("time_scale", 0.0, 1000.0, Ends::OpenLow);
    copy_mib = r.integer_in("max_copy_mib", 0, kMaxMib);
    region_mib = r.integer_in("cpu_region_mib", 1, kMaxMib);
    r.finish();
  }
  if (setup.profiles.size() > kMaxDevices) {
    throw std::invalid_argument("platform emulated: too many devices");
  }
  // The buffers are allocated here, whole: a size in range that the host cannot hold is a
  // runtime failure naming the key that sized it, not a bare std::bad_alloc.
  const auto host_memory_error = [&](const std::string& what, const std::string& key) {
    return Error("platform emulated: cannot allocate host memory for " + what + " (" +
                 setup.config_file + ": platform_params." + key + "; " +
                 std::to_string(setup.profiles.size()) +
                 " devices): lower it, or run fewer devices");
  };
  try {
    store_ = std::make_unique<HostWeightStore>(static_cast<std::size_t>(weights_mib) * kMiB);
  } catch (const std::bad_alloc&) {
    throw host_memory_error("the weight store of " + std::to_string(weights_mib) + " MiB",
                            "host_weights_mib");
  }
  std::vector<EmulatedDevice*> peers;
  for (std::size_t i = 0; i < setup.profiles.size(); ++i) {
    EmulatedDeviceOptions o;
    o.time_scale = time_scale_;
    o.arena_bytes = static_cast<std::uint64_t>(arena_mib) * kMiB;
    o.cpu_region_bytes = static_cast<std::size_t>(region_mib) * kMiB;
    o.max_copy_bytes = static_cast<std::uint64_t>(copy_mib) * kMiB;
    try {
      devices_.push_back(std::make_unique<EmulatedDevice>(DeviceId{static_cast<std::uint16_t>(i)},
                                                          setup.profiles[i], runtime_, *store_, o));
    } catch (const std::bad_alloc&) {
      throw host_memory_error("device " + std::to_string(i) + "'s arena (profile '" +
                                  setup.profiles[i].name + "', " +
                                  (arena_mib == 0 ? "the default min(profile memory, 256 MiB)"
                                                  : std::to_string(arena_mib) + " MiB") +
                                  ")",
                              "host_arena_mib");
    }
    peers.push_back(devices_.back().get());
  }
  for (auto& d : devices_) d->set_peers(peers);
  runtime_.reset_origin();
}

EmulatedPlatform::~EmulatedPlatform() {
  // Devices copy into each other's arenas: stop every worker before freeing any buffer.
  for (auto& d : devices_) d->shutdown();
}

std::vector<Device*> EmulatedPlatform::devices() noexcept {
  return device_pointers(devices_);
}

std::string EmulatedPlatform::describe() const {
  std::string out = describe_profiles("emulated", devices_);
  if (time_scale_ != 1.0) out += " time_scale=" + std::to_string(time_scale_);
  const LatenessStats s = runtime_.lateness();
  if (s.count > 0) out += "; " + describe_lateness(s);
  return out;
}

namespace {
GPUMUX_REGISTER_PLATFORM("emulated", EmulatedPlatform,
                         "wall-clock emulation without a GPU: threads, sleeps for predicted GPU "
                         "times, paced real copies, Eigen compute on CPU devices");
}  // namespace

}  // namespace gpumux
