// Small helpers shared by policies: keeping a job's work flowing on a stream, loading a
// whole model, and reading policy parameters strictly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpumux/json_reader.hpp"
#include "gpumux/params.hpp"
#include "gpumux/policy.hpp"

namespace gpumux::policies {

/// Dispatches the job's work (whole passes, or `layers` at a time) until `depth` of its ops
/// are queued or in flight on `stream`, or it has nothing to dispatch. Returns ops issued.
inline std::size_t keep_busy(Context& ctx, JobId job, StreamId stream, std::size_t depth = 2,
                             std::uint32_t layers = 0) {
  std::size_t issued = 0;
  const JobView s = ctx.job(job);  // a view reads the job as it is now
  // Asked once: each dispatch adds one op to the stream, and no op leaves a stream inside a
  // hook (devices report finished ops from their own events, never from submit), so the
  // count goes up by one per dispatch (two virtual queries per op saved).
  std::size_t outstanding = ctx.queued(stream) + ctx.in_flight(stream);
  while (s.has_dispatchable_work() && outstanding < depth) {
    ctx.dispatch(job, stream, DispatchOptions{layers, {}});
    ++issued;
    ++outstanding;
  }
  return issued;
}

/// Loads every layer of a job that is not yet on the stream's device, in one copy.
inline OpHandle load_whole(Context& ctx, JobId job, StreamId copy_stream, LoadOptions o = {}) {
  const JobView s = ctx.job(job);
  const DeviceId d = ctx.device_of(copy_stream);
  const LayerRange all{0, s.model().layer_count()};
  if (s.resident_or_loading(d, all)) return OpHandle{};
  return ctx.load(job, copy_stream, all, std::move(o));
}

/// The GPU a single-GPU baseline serves: the platform's first; nullopt on a CPU-only platform.
inline std::optional<DeviceId> first_gpu(const Context& ctx) {
  if (ctx.gpus().empty()) return std::nullopt;
  return ctx.gpus().front();
}

/// Rejects `job` when the platform has no GPU (`policy` names who needs one); returns whether
/// it did.
inline bool reject_without_gpu(Context& ctx, JobId job, std::string_view policy) {
  if (!ctx.gpus().empty()) return false;
  ctx.reject(job, std::string(policy) + " needs a GPU device; none is configured");
  return true;
}

/// A policy's params object read through its declaration (the same list it registers):
/// undeclared keys are errors naming the file and "policy.params.<key>".
inline ParamReader policy_params(const PolicyArgs& args, const ParamSpecs& specs) {
  return ParamReader(args.params, args.file, "policy.params", specs);
}

/// The `depth` parameter of the simple baselines: ops of one job queued or in flight.
inline std::size_t read_depth(ParamReader& p) {
  const std::int64_t depth = p.integer("depth");
  if (depth < 1) p.fail("depth", "must be at least 1");
  return static_cast<std::size_t>(depth);
}

}  // namespace gpumux::policies
