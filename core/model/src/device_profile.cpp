// Device profiles: strict loading of traces/devices/<name>.json (schema in traces/formats.md).
#include "gpumux/model/device_profile.hpp"

#include <algorithm>
#include <cmath>
#include <system_error>

#include "gpumux/api/errors.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

Precision parse_precision(std::string_view text) {
  if (const auto p = kPrecisionNames.parse(text)) return *p;
  throw UsageError("unknown precision '" + std::string(text) +
                   "'; valid names: " + kPrecisionNames.list());
}

double DeviceProfile::peak_tflops(Precision p) const noexcept {
  // A profile without tensor cores for a precision runs it on the fp32 pipeline.
  const double peak = [&] {
    switch (p) {
      case Precision::Tf32:
        return tf32_tflops;
      case Precision::Fp16:
        return fp16_tflops;
      case Precision::Bf16:
        return bf16_tflops;
      case Precision::Fp32:
        break;
    }
    return fp32_tflops;
  }();
  return peak > 0 ? peak : fp32_tflops;
}

DurationNs DeviceProfile::malloc_ns(std::uint64_t bytes) const noexcept {
  // Integer ceil(per_gib * bytes / 2^30); 128-bit so terabyte requests cannot overflow.
  __extension__ using U128 = unsigned __int128;
  const auto per_gib = static_cast<U128>(std::max<DurationNs>(malloc_per_gib_ns, 0));
  const U128 scaled = (per_gib * bytes + ((1ull << 30) - 1)) >> 30;
  const auto capped = static_cast<DurationNs>(std::min<U128>(scaled, kMaxDurationNs));
  return saturating_add(malloc_base_ns, capped);
}

DurationNs DeviceProfile::model_build_ns(const Model& model) const noexcept {
  // Construction: base + per_mparam x params / 10^6; the read: bytes / (GB/s = bytes per ns).
  const long double construct = static_cast<long double>(construct_per_mparam_ns) *
                                static_cast<long double>(model.params()) / 1e6L;
  const long double read = weight_read_gbps > 0 ? static_cast<long double>(model.weight_bytes()) /
                                                      static_cast<long double>(weight_read_gbps)
                                                : 0.0L;
  const long double total = static_cast<long double>(construct_base_ns) + construct + read;
  if (!(total < static_cast<long double>(kMaxDurationNs))) return kMaxDurationNs;
  return static_cast<DurationNs>(std::llround(static_cast<double>(total)));
}

}  // namespace gpumux
