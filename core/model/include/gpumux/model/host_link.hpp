// A device's copy links, from its profile: the one place that turns the profile's link numbers
// (h2d/d2h latency and bandwidth, pageable_factor, peer_gbps) into what a copy costs and may
// use. The cost model (a copy alone), the simulator and the emulated device (copies sharing a
// direction) and the resize cost all read them through here, with one rounding rule.
// Bandwidths are GB/s, which is bytes per ns. Pure functions; thread-compatible.
#pragma once

#include <cstdint>

#include "gpumux/api/op.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

/// What one copy of `kind` crosses: the call latency paid before bytes move, the bandwidth of
/// the link direction it shares with the other copies on it, and the most it can draw alone.
struct CopyLink {
  DurationNs latency_ns = 0;
  double link_gbps = 0;  ///< the direction's bandwidth (0: no link, e.g. a CPU profile)
  double own_gbps = 0;   ///< one copy alone: x pageable_factor from pageable host memory
};

/// CopyH2D: the host-to-device direction; CopyD2H: device-to-host; CopyD2D (to a peer): the
/// device-to-host direction's latency and link, one copy capped at peer_gbps. `pageable`
/// scales a host copy's own rate by pageable_factor (pinned: 1). Compute and host ops have no
/// link: all zero.
[[nodiscard]] CopyLink copy_link(const DeviceProfile& profile, OpKind kind, bool pageable) noexcept;

/// The time `bytes` take at `gbps` bytes per ns, rounded up to a whole ns (ceil_ns); 0 without
/// a link (gbps <= 0).
[[nodiscard]] DurationNs transfer_ns(std::uint64_t bytes, double gbps) noexcept;

/// A copy alone on its link: latency + transfer_ns(bytes, own_gbps), saturating.
[[nodiscard]] DurationNs solo_copy_ns(const DeviceProfile& profile, OpKind kind,
                                      std::uint64_t bytes, bool pageable) noexcept;

}  // namespace gpumux
