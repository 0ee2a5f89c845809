// Shared by the model and device-profile harnesses: every cost the model derives from a
// parsed model and profile must be a duration in [0, kMaxDurationNs] (saturating, never an
// overflow; UBSan reports the overflow itself). A violation aborts: a finding.
//
// Thread rules: one thread, as libFuzzer calls the harness.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::fuzz {

inline void check_duration(DurationNs ns, const char* what) {
  if (ns < 0 || ns > kMaxDurationNs) {
    std::fprintf(stderr, "%s: duration %lld ns outside [0, kMaxDurationNs]\n", what,
                 static_cast<long long>(ns));
    std::abort();
  }
}

/// Costs of whole passes at batch 1 and the largest batch, copies and allocations.
inline void check_costs(const Model& model, const DeviceProfile& profile) {
  for (const Precision p : {Precision::Fp32, Precision::Tf32, Precision::Fp16, Precision::Bf16}) {
    const CostModel cm(profile, CostOptions{p, 1'000'000'000});
    const LayerRange all{0, model.layer_count()};
    for (const std::uint32_t batch : {1u, 1u << 20}) {
      for (const Pass pass : {Pass::Forward, Pass::Backward, Pass::Update}) {
        check_duration(cm.op_ns(model, all, batch, pass, pass == Pass::Forward), "op_ns");
        const double demand = cm.op_demand(model, all, batch, pass);
        if (!(demand > 0 && demand <= 1)) std::abort();
      }
    }
    check_duration(cm.update_ns(model, Optimizer::Adam), "update_ns");
    const auto most = std::numeric_limits<std::uint64_t>::max();
    for (const bool pageable : {false, true}) {
      check_duration(cm.h2d_ns(most, pageable), "h2d_ns");
      check_duration(cm.d2h_ns(most, pageable), "d2h_ns");
    }
  }
  check_duration(profile.malloc_ns(std::numeric_limits<std::uint64_t>::max()), "malloc_ns");
  check_duration(profile.model_build_ns(model), "model_build_ns");
  check_duration(profile.process_start_ns, "process_start_ns");
}

}  // namespace gpumux::fuzz
