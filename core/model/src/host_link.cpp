// A device's copy links (host_link.hpp).
#include "gpumux/model/host_link.hpp"

#include <algorithm>

namespace gpumux {

CopyLink copy_link(const DeviceProfile& profile, OpKind kind, bool pageable) noexcept {
  const double factor = pageable ? profile.pageable_factor : 1.0;
  switch (kind) {
    case OpKind::CopyH2D:
      return {profile.h2d_latency_ns, profile.h2d_gbps, profile.h2d_gbps * factor};
    case OpKind::CopyD2H:
      return {profile.d2h_latency_ns, profile.d2h_gbps, profile.d2h_gbps * factor};
    case OpKind::CopyD2D:
      return {profile.d2h_latency_ns, profile.d2h_gbps,
              std::min(profile.d2h_gbps, profile.peer_gbps)};
    case OpKind::Compute:
    case OpKind::Host:
      break;
  }
  return {};
}

DurationNs transfer_ns(std::uint64_t bytes, double gbps) noexcept {
  if (!(gbps > 0)) return 0;
  return ceil_ns(static_cast<double>(bytes) / gbps);
}

DurationNs solo_copy_ns(const DeviceProfile& profile, OpKind kind, std::uint64_t bytes,
                        bool pageable) noexcept {
  const CopyLink link = copy_link(profile, kind, pageable);
  return saturating_add(link.latency_ns, transfer_ns(bytes, link.own_gbps));
}

}  // namespace gpumux
