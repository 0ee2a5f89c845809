// Salus' parameters (sched, lanes, shared_lanes, work_conserving, lane_memory_gib,
// iteration_overhead_us): their declarations, with the sources of the defaults, and reading them.
#pragma once

#include <cstdint>

#include "common/job_runner.hpp"
#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/time.hpp"
#include "salus/iteration_order.hpp"
#include "salus/lane_manager.hpp"

namespace gpumux::policies::salus {

inline constexpr EnumNames<LaneMode, 2> kLaneModeNames{
    {{LaneMode::PerJob, "per_job"}, {LaneMode::Single, "single"}}};

struct Params {
  SchedPolicy sched = SchedPolicy::Pack;
  LaneMode lane_mode = LaneMode::PerJob;
  bool shared_lanes = true;
  bool work_conserving = true;
  DurationNs overhead_ns = 0;
  std::uint64_t lane_memory_bytes = 0;  // 0 = the whole GPU

  /// The declarations Salus registers.
  static const ParamSpecs& specs();
  /// Reads args.params through specs(); ConfigError for a bad or unknown key.
  static Params read(const PolicyArgs& args);
};

}  // namespace gpumux::policies::salus
