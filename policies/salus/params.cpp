// Salus' parameters (params.hpp).
#include "salus/params.hpp"

#include <optional>

namespace gpumux::policies::salus {

const ParamSpecs& Params::specs() {
  static const ParamSpecs specs{
      param::choice("sched", kSchedNames, SchedPolicy::Pack, "iteration scheduler"),
      param::choice("lanes", kLaneModeNames, LaneMode::PerJob,
                    "a lane per job, or one whole-GPU lane"),
      param::flag("shared_lanes", true, "jobs may share a lane (must be true with single)"),
      param::flag("work_conserving", true, "when the pick cannot run, run the next runnable job"),
      param::number("lane_memory_gib", "GiB", std::nullopt,
                    "memory the lane manager hands out (default: the whole GPU)"),
      // Assumption: one localhost ZeroMQ request/reply (Salus serves over ZeroMQ, its
      // src/main.cpp) plus one pass of its scheduling loop, ~100 us; not measured.
      param::duration("iteration_overhead_us", TimeUnit::Microseconds, 100.0,
                      "RPC + scheduling round paid by each iteration")};
  return specs;
}

Params Params::read(const PolicyArgs& args) {
  Params out;
  auto p = policy_params(args, specs());
  out.sched = p.choice("sched", kSchedNames);
  out.lane_mode = p.choice("lanes", kLaneModeNames);
  out.shared_lanes = p.flag("shared_lanes");
  if (out.lane_mode == LaneMode::Single && !out.shared_lanes) {
    p.fail("shared_lanes", "must be true with lanes = single (one lane that every job shares)");
  }
  out.work_conserving = p.flag("work_conserving");
  if (const auto gib = p.optional_number("lane_memory_gib")) {
    p.positive("lane_memory_gib", *gib);
    if (*gib > 1e6) p.fail("lane_memory_gib", "out of range");
    out.lane_memory_bytes = static_cast<std::uint64_t>(*gib * 1073741824.0 + 0.5);
  }
  out.overhead_ns = p.duration("iteration_overhead_us");
  p.finish();
  return out;
}

}  // namespace gpumux::policies::salus
