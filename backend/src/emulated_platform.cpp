#include "gpumux/backend/emulated_platform.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "gpumux/json_reader.hpp"

namespace gpumux {

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
}  // namespace

std::string describe_lateness(const LatenessStats& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "timer lateness: n=%llu mean=%.1fus p99=%.1fus max=%.1fus",
                static_cast<unsigned long long>(s.count), s.mean_ns / 1e3,
                static_cast<double>(s.p99_ns) / 1e3, static_cast<double>(s.max_ns) / 1e3);
  return buf;
}

EmulatedPlatform::EmulatedPlatform(const PlatformSetup& setup) {
  std::int64_t arena_mib = 0;
  std::int64_t weights_mib = 16;
  std::int64_t copy_mib = 16;
  std::int64_t region_mib = 16;
  if (!setup.params.is_null()) {
    JsonReader r(setup.params, setup.config_file, "platform_params");
    if (r.has("host_arena_mib")) {
      arena_mib = r.required_int("host_arena_mib");
      if (arena_mib < 1) r.fail("host_arena_mib", "must be an integer >= 1");
    }
    weights_mib = r.int_or("host_weights_mib", weights_mib);
    if (weights_mib < 1) r.fail("host_weights_mib", "must be an integer >= 1");
    time_scale_ = r.number_or("time_scale", 1.0);
    if (!(time_scale_ > 0 && std::isfinite(time_scale_))) r.fail("time_scale", "must be > 0");
    copy_mib = r.int_or("max_copy_mib", copy_mib);
    if (copy_mib < 0) r.fail("max_copy_mib", "must be an integer >= 0");
    region_mib = r.int_or("cpu_region_mib", region_mib);
    if (region_mib < 1) r.fail("cpu_region_mib", "must be an integer >= 1");
    r.finish();
  }
  if (setup.profiles.size() > std::numeric_limits<std::uint16_t>::max()) {
    throw std::invalid_argument("platform emulated: too many devices");
  }
  store_ = std::make_unique<HostWeightStore>(static_cast<std::size_t>(weights_mib) * kMiB);
  std::vector<EmulatedDevice*> peers;
  for (std::size_t i = 0; i < setup.profiles.size(); ++i) {
    EmulatedDeviceOptions o;
    o.time_scale = time_scale_;
    o.arena_bytes = static_cast<std::uint64_t>(arena_mib) * kMiB;
    o.cpu_region_bytes = static_cast<std::size_t>(region_mib) * kMiB;
    o.max_copy_bytes = static_cast<std::uint64_t>(copy_mib) * kMiB;
    devices_.push_back(std::make_unique<EmulatedDevice>(DeviceId{static_cast<std::uint16_t>(i)},
                                                        setup.profiles[i], runtime_, *store_, o));
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
  std::vector<Device*> out;
  out.reserve(devices_.size());
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

std::string EmulatedPlatform::describe() const {
  std::string out = "emulated (";
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (i > 0) out += ", ";
    out += devices_[i]->profile().name;
  }
  out += ")";
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
